"""`steps.step_of`: what a `.step(...)` steps, decided by what made its receiver before by its name."""
import ast

import pytest

from mllint.analysis.objects.steps import StepKind, step_of
from mllint.context import FileContext
from mllint.source import SourceText

HEAD = """
import gym
import torch
from torch import nn
net = nn.Linear(2, 2)
"""
CASES = [
    ("opt = torch.optim.SGD(net.parameters(), lr=0.1)\nopt.step()", StepKind.OPTIMIZER, "opt"),
    ("solver = torch.optim.Adam(net.parameters())\nsolver.step()", StepKind.OPTIMIZER, "solver"),
    ("s = torch.amp.GradScaler()\nopt = torch.optim.SGD(net.parameters())\ns.step(opt)", StepKind.OPTIMIZER, "opt"),
    ("scaler.step(optimizer)", StepKind.OPTIMIZER, "optimizer"),
    ("opt = torch.optim.SGD(net.parameters())\nlr = torch.optim.lr_scheduler.StepLR(opt, 10)\nlr.step()", StepKind.SCHEDULER, "lr"),
    ("opt = torch.optim.SGD(net.parameters())\nplateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)\nplateau.step(1.0)", StepKind.PLATEAU, "plateau"),
    ("self.scheduler.step()", StepKind.SCHEDULER, "self.scheduler"),
    ("optimizer = gym.make('CartPole-v1')\noptimizer.step(0)", StepKind.OPTIMIZER, "optimizer"),  # the name, when the maker says nothing
    ("env = gym.make('CartPole-v1')\nenv.step(0)", StepKind.OTHER, "env"),
    ("stopper.step(0.5)", StepKind.OTHER, "stopper"),
]


@pytest.mark.parametrize("code, kind, stepped", CASES)
def test_step_of(code, kind, stepped):
    text = HEAD + code + "\n"
    ctx = FileContext("t.py", SourceText(text), ast.parse(text))
    call = ctx.tree.body[-1].value
    step = step_of(ctx, call)
    assert (step.kind, ast.unparse(step.stepped)) == (kind, stepped)


def test_not_a_step():
    text = HEAD + "net.zero_grad()\ntorch.optim.step()\n"
    ctx = FileContext("t.py", SourceText(text), ast.parse(text))
    assert [step_of(ctx, s.value) for s in ctx.tree.body[-2:]] == [None, None]
