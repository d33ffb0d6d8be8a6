"""The rule reference in `docs/rules/`, generated from the rules' docstrings (a test keeps it in sync):
one page per rule, `docs/rules/ml101.md`, and an index, `docs/rules/README.md`.
`python -m mllint.docs` rewrites it (run from the repository's root)."""
from __future__ import annotations

import sys
from pathlib import Path

from mllint.registry import all_rules
from mllint.rule import Rule

DIRECTORY = Path("docs/rules")
COMMAND = "python -m mllint.docs"
HEADER = f"<!-- Generated from the rules' docstrings by `{COMMAND}`: edit the rule, not this file. -->\n"
FIX = {
    None: "none",
    "safe": "safe (`--fix` applies it)",
    "unsafe": "unsafe (`--fix --unsafe-fixes` applies it)",
    "display-only": "shown, never applied",
}


def page_name(code: str) -> str:
    return f"{code.lower()}.md"


def rule_page(rule: type[Rule]) -> str:
    fix = FIX[rule.fix_applicability.value if rule.fix_applicability else None]
    enabled = f"opt-in, only by its exact code or `ALL` ({rule.opt_in_reason})" if rule.opt_in else "by default"
    facts = (
        f"Severity: {rule.severity.label}. Fix: {fix}. Enabled: {enabled}. "
        f"Fix safety is defined in the [README](../../README.md#safe-and-unsafe-fixes)."
    )
    return f"{HEADER}# {rule.code}: `{rule.name}`\n\n{facts}\n\n{rule.documentation()}\n"


def index_page() -> str:
    rows = ["| Code | Name | Severity | Fix | What it finds |", "| --- | --- | --- | --- | --- |"]
    for code, rule in all_rules().items():
        fix = rule.fix_applicability.value if rule.fix_applicability else ""
        severity = rule.severity.label + (", opt-in" if rule.opt_in else "")
        rows.append(f"| [{code}]({page_name(code)}) | `{rule.name}` | {severity} | {fix} | {rule.first_sentence()} |")
    return f"{HEADER}# Rules\n\n" + "\n".join(rows) + "\n"


def pages() -> dict[str, str]:
    """Every page of the rule reference, by file name."""
    return {"README.md": index_page(), **{page_name(code): rule_page(rule) for code, rule in all_rules().items()}}


def write(directory: Path = DIRECTORY) -> None:
    """Write the pages, and remove the pages of rules that no longer exist."""
    directory.mkdir(parents=True, exist_ok=True)
    expected = pages()
    for stale in set(p.name for p in directory.glob("*.md")) - expected.keys():
        (directory / stale).unlink()
    for name, text in expected.items():
        (directory / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else DIRECTORY)
