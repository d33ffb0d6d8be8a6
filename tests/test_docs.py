"""The generated rule reference in docs/rules/: up to date with the rules' docstrings, and every link to it
(from the reporters, the language server and the pages themselves) leads to a file and heading that exist."""
import json
import re
from pathlib import Path

import pytest

from mllint import REPOSITORY_URL
from mllint.docs import COMMAND, DIRECTORY, pages
from mllint.findings import Finding, Position
from mllint.registry import all_rules
from mllint.reporters import Report, render
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


def assert_repository_link(url: str) -> None:
    prefix = f"{REPOSITORY_URL}/blob/main/"
    assert url.startswith(prefix), url
    path, _, anchor = url[len(prefix) :].partition("#")
    assert_resolves(ROOT / path, anchor or None, url)


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


def test_every_link_the_reporters_emit_resolves():
    report = Report(findings=[a_finding(rule) for rule in RULES], rules=RULES, sources={"train.py": "model\n"})
    urls = [entry["url"] for entry in json.loads(render(report, "json"))]
    driver = json.loads(render(report, "sarif"))["runs"][0]["tool"]["driver"]
    urls += [rule["helpUri"] for rule in driver["rules"] + driver["notifications"]]
    buffer = Buffer("model\n", None)
    urls += [to_diagnostic(a_finding(rule), buffer, 1).code_description.href for rule in RULES]
    urls += [LINK.search(rule_markdown(rule.code)).group(1) for rule in RULES]
    assert len(urls) == 4 * len(RULES)
    for url in urls:
        assert_repository_link(url)


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

