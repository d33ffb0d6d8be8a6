"""The tolerant parse of code older than Python 3.7 (`async` and `await` as names): one ML002, and the
rest of the file linted as usual, with no fix offered (the fixed file would not parse either)."""
import ast

from mllint.source import parse_former_names

OLD = "import torch\nx = data.cuda(async=True)\ndef load(self, await=False):\n    return args.async\n"


def test_the_former_names_are_read_as_names_at_their_own_positions():
    tree, names = parse_former_names(OLD)
    assert names == ("async", "await")
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.keyword))
    assert (call.arg, call.value.lineno, call.value.col_offset) == ("_sync", 2, 20)
    attribute = next(n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "_sync")
    assert (attribute.lineno, attribute.end_col_offset) == (4, 21)


def test_other_syntax_errors_and_valid_code_are_not_recovered():
    assert parse_former_names("def train(model loader):\n    x.cuda(async=True)\n") is None
    assert parse_former_names("async def f():\n    await g()\n") is None
    assert parse_former_names("x = (\n") is None


def test_an_old_file_gets_one_syntax_error_and_its_findings_without_fixes(lint):
    source = (
        "import torch.nn.functional as F\n"
        "def step(logits, y):\n"
        "    y = y.cuda(async=True)\n"
        "    return F.cross_entropy(F.softmax(logits, dim=1), y)\n"
    )
    findings = lint(source)
    assert [(f.code, f.start.line) for f in findings] == [("ML002", 3), ("ML101", 4)]
    assert "`async` used as a name" in findings[0].message
    assert all(f.fix is None for f in findings)


LEGACY_SCRIPT = '''\
"""Training code written for PyTorch 0.3 and Python 3.6: `async` was still a name."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.softmax(self.fc2(x))


def main(loader, epochs):
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        for batch_idx, (data, target) in enumerate(loader):
            data, target = Variable(data.cuda(async=True)), Variable(target.cuda(async=True))
            output = model(data)
            loss = F.cross_entropy(output, target)
            loss.backward()
            optimizer.step()
'''
BROKEN = '''\
"""Not only an old name: a real syntax error, reported alone."""
import torch


def train(model, loader optimizer):
    for x, y in loader:
        x = x.cuda(async=True)
'''


def test_a_legacy_training_script_is_linted_and_a_broken_one_is_not(lint):
    assert [(f.code, f.start.line, f.start.column) for f in lint(LEGACY_SCRIPT)] == [
        ("ML002", 24, 47), ("ML101", 26, 36), ("ML201", 28, 13),
    ]
    assert [(f.code, f.start.line, f.start.column) for f in lint(BROKEN)] == [("ML002", 5, 25)]
