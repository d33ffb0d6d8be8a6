"""What the witness tests share: running a program under torch, and the programs and findings they check."""
import subprocess
import sys
from pathlib import Path

import torch

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path, lint_text
from mllint.registry import all_rules


def run(program: str, **names) -> dict:
    """Run `program` as module `witness` with torch seeded, and return its namespace. `names` are defined
    before it runs; `seen`, an empty list, is there for a program to record what each iteration saw."""
    torch.manual_seed(0)
    namespace: dict = {"__name__": "witness", "seen": [], **names}
    exec(compile(program, "<witness>", "exec"), namespace)
    return namespace


def autograd_and_difference(program: str, setup: str, loss: str, weight: str) -> tuple[float, float]:
    """Run `program`, then `setup` in float64, and return autograd's gradient of `loss` (an expression)
    with respect to `weight[0, 0]` beside the central finite difference of the same loss."""
    check = f"""
torch.set_default_dtype(torch.float64)
{setup}
loss = lambda: {loss}
loss().backward()
weight, eps = {weight}, 1e-6
with torch.no_grad():
    weight[0, 0] += eps
    up = loss().item()
    weight[0, 0] -= 2 * eps
    down = loss().item()
    weight[0, 0] += eps
seen.append((weight.grad[0, 0].item(), (up - down) / (2 * eps)))
torch.set_default_dtype(torch.float32)
"""
    return run(program + check)["seen"][-1]


def example(code: str) -> str:
    return all_rules()[code].doc_code("Example")


def instead(code: str) -> str:
    return all_rules()[code].doc_code("Use instead")


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def assert_step_accumulates_until_it_clears(program: str) -> None:
    """A training step run over an epoch's batches (by `map`, a comprehension) without clearing: ML201 at
    its line 7, the gradients of identical batches grow 1x, 2x, 3x; cleared at the step's start, nothing
    is found and every batch's gradient is the same."""
    assert family_findings(program, "ML2") == [(7, "ML201")]
    grads = run(program)["seen"]
    assert torch.allclose(grads[1], 2 * grads[0]) and torch.allclose(grads[2], 3 * grads[0])
    repaired = program.replace("    x, y = batch\n", "    x, y = batch\n    optimizer.zero_grad()\n")
    assert family_findings(repaired, "ML2") == []
    grads = run(repaired)["seen"]
    assert all(torch.allclose(g, grads[0]) for g in grads)


def family_findings(program: str, family: str) -> list[tuple[int, str]]:
    """(line, code) of what the rules of a family (e.g. "ML2") find in a program."""
    selection = Selection.of([code for code in all_rules() if code.startswith(family)])
    return [(f.start.line, f.code) for f in lint_text(program, "witness.py", selection)]


def project_findings(directory: Path, code: str) -> list[str]:
    """`file.py:line: CODE` of what one rule finds in the `.py` files of a project directory."""
    project = ProjectIndex.for_paths([str(directory)])
    selection = Selection.of({code: all_rules()[code]})
    return [
        f"{path.name}:{f.start.line}: {f.code}"
        for path in sorted(directory.glob("*.py"))
        for f in lint_path(str(path), selection, display_path=path.name, project=project)
    ]


def printed(directory: Path, script: str) -> list[str]:
    """The words a script of a project directory prints, run there."""
    return subprocess.run([sys.executable, script], cwd=directory, capture_output=True, text=True, check=True).stdout.split()
