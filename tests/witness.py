"""What the witness tests share: running a program under torch, and the programs and findings they check."""
import torch

from mllint.engine import Selection, lint_text
from mllint.registry import all_rules


def run(program: str, **names) -> dict:
    """Run `program` as module `witness` with torch seeded, and return its namespace. `names` are defined
    before it runs; `seen`, an empty list, is there for a program to record what each iteration saw."""
    torch.manual_seed(0)
    namespace: dict = {"__name__": "witness", "seen": [], **names}
    exec(compile(program, "<witness>", "exec"), namespace)
    return namespace


def example(code: str) -> str:
    return all_rules()[code].doc_code("Example")


def instead(code: str) -> str:
    return all_rules()[code].doc_code("Use instead")


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def family_findings(program: str, family: str) -> list[tuple[int, str]]:
    """(line, code) of what the rules of a family (e.g. "ML2") find in a program."""
    selection = Selection.of([code for code in all_rules() if code.startswith(family)])
    return [(f.start.line, f.code) for f in lint_text(program, "witness.py", selection)]
