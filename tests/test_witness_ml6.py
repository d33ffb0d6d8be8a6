"""Witnesses: the programs the shape rules flag misbehave under torch as the rules say; the fixed or
recommended versions do not."""
import pytest
import torch
import torch.nn.functional as F


from witness import example, instead, run


def test_ml601_the_loss_compares_every_prediction_with_every_target(fix, recwarn):
    fixed = fix(example("ML601"), "ML601", unsafe=True)
    assert fixed == instead("ML601")
    bad = run(example("ML601"))
    predictions = bad["model"](bad["inputs"])
    assert (predictions - bad["targets"]).shape == (64, 64)
    torch.manual_seed(0)
    assert not torch.isclose(bad["loss"], F.mse_loss(predictions.squeeze(-1), bad["targets"]))
    # Trained on the broadcast loss, the model learns to predict the mean; on the aligned one it fits.
    for program, fits in ((example("ML601"), False), (fixed, True)):
        torch.manual_seed(0)
        namespace = run(program.replace("loss = ", "def loss_of(model):\n    return "))
        model, optimizer = namespace["model"], None
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(300):
            optimizer.zero_grad()
            namespace["loss_of"](model).backward()
            optimizer.step()
        aligned = F.mse_loss(model(namespace["inputs"]).squeeze(-1), namespace["targets"]).item()
        assert (aligned < 0.01) is fits


def test_ml602_the_reduction_averages_every_pair():
    bad, good = run(example("ML602")), run(instead("ML602"))
    predictions, targets = bad["predictions"], bad["targets"]
    pairs = ((predictions[:, None, 0] - targets[None, :]) ** 2).mean()
    assert torch.isclose(bad["mse"], pairs)
    assert torch.isclose(good["mse"], ((good["predictions"][:, 0] - good["targets"]) ** 2).mean())
    assert not torch.isclose(bad["mse"], ((predictions[:, 0] - targets) ** 2).mean())


def test_ml603_the_view_mixes_positions_with_heads():
    split, correct = run(example("ML603"))["split_heads"], run(instead("ML603"))["split_heads"]
    x = torch.arange(2 * 5 * 6, dtype=torch.float32).view(2, 5, 6)
    wrong, right = split(x, 3), correct(x, 3)
    assert wrong.shape == right.shape == (2, 3, 5, 2)  # nothing raises
    assert not torch.equal(wrong, right)
    # The correct split keeps each position's features together; the view does not.
    assert torch.equal(right[0, :, 1].flatten(), x[0, 1])
    assert not torch.equal(wrong[0, :, 1].flatten(), x[0, 1])


def test_ml604_squeeze_drops_the_batch_dimension_of_a_batch_of_one(fix):
    fixed = fix(example("ML604"), "ML604", unsafe=True)
    assert fixed == instead("ML604")
    flagged = run(example("ML604"))["binary_loss"]
    flagged(4)  # fine for most batches
    with pytest.raises(ValueError, match="must be the same as input size"):
        flagged(1)  # the last batch of an epoch holds one sample
    assert run(fixed)["binary_loss"](1).shape == ()


def test_ml604_regression_losses_give_the_same_value_for_a_batch_of_one(recwarn, lint):
    """Why ML604 leaves the element-wise regression losses alone: the squeezed batch of one broadcasts
    against its target to the same values."""
    predictions, targets = torch.randn(1, 1), torch.randn(1)
    for loss in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        assert torch.equal(loss(predictions.squeeze(), targets), loss(predictions.squeeze(1), targets))
    wide, wide_targets = torch.randn(1, 5), torch.randn(1, 5)
    assert torch.equal(F.mse_loss(wide.squeeze(), wide_targets), F.mse_loss(wide, wide_targets))
    program = "import torch.nn.functional as F\ndef f(model, x, y):\n    return F.mse_loss(model(x).squeeze(), y)\n"
    assert lint(program, "ML604") == []


POOLED = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(self.pool(self.conv(x)).squeeze())


model = Net()
loader = DataLoader(TensorDataset(torch.randn(12, 3, 8, 8), torch.randint(0, 5, (12,))), batch_size=1)
counted = 0
for images, labels in loader:
    counted += model(images).size(0)
"""


def test_ml604_a_pooled_squeeze_on_a_batch_of_one_counts_the_classes_instead_of_the_samples(lint):
    """A `(1, C, 1, 1)` pooled map squeezed without a dim loses its batch dimension: the logits are `(K,)`,
    and the loop counts K per image. Squeezing the spatial dims only counts the 12 images."""
    line = next(i for i, text in enumerate(POOLED.splitlines(), 1) if "counted +=" in text)
    assert [(f.start.line, f.code) for f in lint(POOLED, "ML604")] == [(line, "ML604")]
    assert run(POOLED)["counted"] == 12 * 5
    fixed = POOLED.replace(".squeeze())", ".flatten(1))")
    assert lint(fixed, "ML604") == []
    assert run(fixed)["counted"] == 12


def test_ml605_softmax_over_a_size_one_dim_gives_all_ones_and_no_gradient():
    from witness import family_findings

    assert family_findings(example("ML605"), "ML605") == [(11, "ML605")]
    assert family_findings(instead("ML605"), "ML605") == []
    program = "\npool = AttentionPool(4)\nh = torch.randn(2, 5, 4)\nout = pool(h)\nout.sum().backward()\n"
    bad, good = run(example("ML605") + program), run(instead("ML605") + program)
    weights = torch.softmax(bad["pool"].score(bad["h"]), dim=-1)
    assert torch.equal(weights, torch.ones_like(weights)) and torch.allclose(bad["out"], bad["h"].sum(dim=1))
    assert torch.count_nonzero(bad["pool"].score.weight.grad) == 0
    assert torch.count_nonzero(good["pool"].score.weight.grad) > 0


ACCURACY = """
import torch

logits = torch.tensor([[2.0], [-1.0], [3.0], [-2.0]])
labels = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
accuracy = ((logits.squeeze(1) > 0).float() == labels).float().mean()
"""


def test_ml602_a_comparison_of_n_and_n_by_1_makes_an_accuracy_of_every_pair():
    from witness import family_findings

    assert family_findings(ACCURACY, "ML602") == [(6, "ML602")]
    assert run(ACCURACY)["accuracy"].item() == 0.5  # every prediction against every label: a coin flip
    fixed = ACCURACY.replace("== labels)", "== labels.squeeze(1))")
    assert fixed != ACCURACY and family_findings(fixed, "ML602") == []
    assert run(fixed)["accuracy"].item() == 1.0
