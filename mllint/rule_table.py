"""The README's rule table, generated from the registry (a test keeps the README in sync):
`python -m mllint.rule_table` prints it, `python -m mllint.rule_table README.md` rewrites it there."""
import re
import sys

from mllint.registry import all_rules

FIX_MARK = {"safe": "safe fix", "unsafe": "unsafe fix", "display-only": ""}
# Silent bugs of the same checklists that depend on the data, not on the code: no rule can decide them.
RUNTIME_CHECKS = {
    "class-imbalance": "Not a static rule: whether classes are imbalanced is a property of the data. Count the "
    "training labels at run time (`torch.bincount(labels)`) and weight the loss or resample when they are skewed.",
}
TABLE = re.compile(r"(<!-- rule-table:start -->\n).*?(<!-- rule-table:end -->)", re.DOTALL)


def rule_table() -> str:
    rows = ["| Code | Name | Severity | Fix | Default | What it finds |", "| --- | --- | --- | --- | --- | --- |"]
    for code, rule in all_rules().items():
        fix = FIX_MARK[rule.fix_applicability.value] if rule.fix_applicability else ""
        default = f"opt-in: {rule.opt_in_reason}" if rule.opt_in else "on"
        rows.append(f"| {code} | `{rule.name}` | {rule.severity.label} | {fix} | {default} | {rule.summary()} |")
    for name, text in RUNTIME_CHECKS.items():
        rows.append(f"| — | `{name}` | runtime check |  |  | {text} |")
    return "\n".join(rows) + "\n"


def readme_table(text: str) -> str | None:
    match = TABLE.search(text)
    return match.group(0)[len(match.group(1)) : -len(match.group(2))] if match else None


if __name__ == "__main__":
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as handle:
            text = handle.read()
        table = rule_table()  # before the file is opened for writing: a rule that fails to import leaves it whole
        with open(sys.argv[1], "w", encoding="utf-8") as handle:
            handle.write(TABLE.sub(lambda m: m.group(1) + table + m.group(2), text))
    else:
        print(rule_table(), end="")
