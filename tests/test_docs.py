"""The generated rule reference in docs/rules/: up to date with the rules' docstrings, and every link to it
(from the reporters, the language server and the pages themselves) leads to a file and heading that exist."""
import json
import re
from pathlib import Path

import pytest
from pygls.protocol import default_converter

import mllint
from mllint.docs import COMMAND, DIRECTORY, pages
from mllint.findings import Finding, Position
from mllint.registry import all_rules
from mllint.reporters import FORMAT_NAMES, Report, render
from mllint.reporters.machine import SARIF_SCHEMA
from mllint.server import Buffer, rule_markdown, to_diagnostic

ROOT = Path(__file__).resolve().parent.parent
RULES = tuple(all_rules().values())
LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def assert_resolves(target: Path, anchor: str | None, link: str) -> None:
    assert target.is_file(), f"{link}: no file {target}"
    if anchor:
        headings = re.findall(r"^#+ (.*)$", target.read_text(encoding="utf-8"), re.MULTILINE)
        assert anchor in {github_anchor(h) for h in headings}, f"{link}: no heading #{anchor} in {target}"


def test_the_rule_reference_is_up_to_date():
    expected = pages()
    directory = ROOT / DIRECTORY
    on_disk = {path.name: path.read_text(encoding="utf-8") for path in directory.glob("*.md")}
    stale = sorted(name for name in expected if on_disk.get(name) != expected[name])
    extra = sorted(on_disk.keys() - expected.keys())
    assert not stale and not extra, (
        f"docs/rules/ is out of date with the rules' docstrings (changed: {stale}, no longer a rule: {extra}); "
        f"regenerate it with `{COMMAND}` from the repository's root"
    )


def a_finding(rule) -> Finding:
    return Finding("train.py", Position(1, 1), Position(1, 6), rule.code, rule.name, rule.message, rule.severity)


URL = re.compile(r"https?://[^\s\"'<>()\[\]]+")
DOCS = "https://docs.example.org/mllint/rules"  # a documentation base URL, as a release would set it


def printed_urls() -> list[str]:
    """Every URL mllint prints: each output format, the rule documentation (text and JSON), every
    command's help, the editor's diagnostics and hover, the message of an internal error."""
    from click.testing import CliRunner

    from mllint.cli import main

    report = Report(findings=[a_finding(rule) for rule in RULES], rules=RULES, sources={"train.py": "model\n"})
    texts = [render(report, name) for name in FORMAT_NAMES]
    runner = CliRunner()
    for command in (["rule", "--all"], ["rule", "--all", "--output-format", "json"], ["--help"], ["server", "--help"],
                    ["check", "--help"], ["rule", "--help"], ["clean", "--help"]):  # fmt: skip
        texts.append(runner.invoke(main, command).output)
    buffer = Buffer("model\n", None)
    diagnostics = [to_diagnostic(a_finding(rule), buffer, 1) for rule in RULES]
    texts += [json.dumps(default_converter().unstructure(d)) for d in diagnostics]
    texts += [rule_markdown(rule.code) for rule in RULES]
    return [url for text in texts for url in URL.findall(text)]


def test_no_link_is_printed_until_a_documentation_url_is_set(monkeypatch):
    monkeypatch.setattr(mllint, "DOCS_URL", "")
    assert set(printed_urls()) <= {SARIF_SCHEMA}  # the schema's page exists; nothing else is linked


def test_with_a_documentation_url_every_rule_links_to_its_page(monkeypatch):
    monkeypatch.setattr(mllint, "DOCS_URL", DOCS + "/")
    urls = [url for url in printed_urls() if url != SARIF_SCHEMA]
    # per rule: json, json-lines, SARIF's helpUri, rdjson's code, the diagnostic, the hover; the tool's
    # page: SARIF's informationUri, rdjson's source
    assert len(urls) == 6 * len(RULES) + 2
    for url in urls:
        assert url == DOCS or url.startswith(DOCS + "/"), url
        path, _, anchor = url.removeprefix(DOCS).lstrip("/").partition("#")
        assert_resolves(ROOT / DIRECTORY / (path or "README.md"), anchor or None, url)


def test_the_walk_sees_every_url_in_mllints_source():
    """A URL written in mllint's code is either one of the walk's or printed nowhere (the README's
    placeholder repository address, kept for the release checks)."""
    import ast

    literals = set()
    for path in [*(ROOT / "mllint").rglob("*.py"), *(ROOT / "rules").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.update(URL.findall(node.value))
    assert literals == {SARIF_SCHEMA, mllint.REPOSITORY_URL}
    assert mllint.REPOSITORY_URL not in "".join(printed_urls())


def test_sarif_carries_every_rules_full_documentation_as_help():
    report = Report(findings=[], rules=RULES)
    driver = json.loads(render(report, "sarif"))["runs"][0]["tool"]["driver"]
    for descriptor in driver["rules"] + driver["notifications"]:
        documentation = all_rules()[descriptor["id"]].documentation()
        assert descriptor["help"] == {"text": documentation, "markdown": documentation}
        assert "## What it does" in documentation


@pytest.mark.parametrize("name", sorted(pages()))
def test_every_link_in_the_rule_reference_resolves(name):
    for link in LINK.findall(pages()[name]):
        path, _, anchor = link.partition("#")
        assert_resolves((ROOT / DIRECTORY / path).resolve(), anchor or None, f"{name}: {link}")


def test_every_rule_page_is_its_docstring():
    for rule in RULES:
        page = pages()[f"{rule.code.lower()}.md"]
        assert page.startswith(f"<!-- Generated from the rules' docstrings by `{COMMAND}`")
        assert f"# {rule.code}: `{rule.name}`\n" in page and page.endswith(rule.documentation() + "\n")


@pytest.mark.parametrize("rule", [r for r in RULES if r.fix_applicability], ids=lambda rule: rule.code)
def test_a_rules_fix_safety_section_says_what_its_fixes_are(rule):
    """The README defines safe and unsafe fixes; each rule's documentation says which its fix is."""
    section = " ".join(rule.doc_section("Fix safety").split())
    says_safe, says_unsafe = re.search(r"\b[Ii]t is safe\b", section), re.search(r"\b[Ii]t is unsafe\b", section)
    if rule.fix_applicability.value == "safe":
        assert says_safe, section
    else:
        assert says_unsafe and not says_safe, section


def test_the_readme_and_the_help_define_safe_fixes_in_one_place():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("### Safe and unsafe fixes\n") == 1
    from click.testing import CliRunner

    from mllint.cli import main

    help_text = " ".join(CliRunner().invoke(main, ["check", "--help"]).stdout.split())
    assert "--unsafe-fixes Also apply the unsafe fixes, which change what the training computes in a way to review (README: Safe and unsafe fixes)." in help_text

