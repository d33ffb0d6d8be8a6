"""The README's rule table, generated from the registry (a test keeps the README in sync):
`python -m mllint.rule_table` prints it."""
from mllint.registry import all_rules

FIX_MARK = {"safe": "safe fix", "unsafe": "unsafe fix", "display-only": ""}


def rule_table() -> str:
    rows = ["| Code | Name | Severity | Fix | What it finds |", "| --- | --- | --- | --- | --- |"]
    for code, rule in all_rules().items():
        fix = FIX_MARK[rule.fix_applicability.value] if rule.fix_applicability else ""
        severity = rule.severity.label + (", opt-in" if rule.opt_in else "")
        rows.append(f"| {code} | `{rule.name}` | {severity} | {fix} | {rule.summary()} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(rule_table(), end="")
