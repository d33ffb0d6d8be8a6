"""Witnesses for shapes and leakage that the code carries between functions: targets from a zero-argument
helper, from a dataset's dict or through `**inputs`; statistics fitted in one method and the split made in
another; a fit that a call site's flag turns on for validation data; early stopping stepped with the test
loss. Each flagged program misbehaves under torch as its rule says; the repaired one does not."""
import numpy as np
import pytest
import torch

from witness import family_findings, run

HEAD = """\
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

torch.manual_seed(0)
"""

# Targets built as `(N, 1)` columns by a helper called with no arguments; the model squeezes its `(B, 1)`.
HELPER_COLUMNS = HEAD + """\
def make_loader(n=64):
    x = torch.randn(n, 3)
    y = x @ torch.tensor([1.0, -2.0, 0.5])
    return DataLoader(TensorDataset(x, y.view(-1, 1)), batch_size=16)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x).squeeze()


model, losses = Net(), []
for xb, yb in make_loader():
    losses.append(F.mse_loss(model(xb), yb))
    seen.append((model(xb).detach(), yb))
"""

# A dataset whose samples are dicts with `y` as a one-element tensor; the loss called through `**inputs`.
DICT_BATCHES = HEAD + """\
class Rows(Dataset):
    def __init__(self, n=64):
        self.x = torch.randn(n, 3)
        self.y = (self.x.sum(1) - 0.5).tolist()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": torch.tensor([self.y[i]])}


model, criterion, losses = nn.Linear(3, 1), nn.SmoothL1Loss(), []
for batch in DataLoader(Rows(), batch_size=16):
    pred = model(batch["x"]).squeeze(-1)
    inputs = {"input": pred, "target": batch["y"]}
    losses.append(criterion(**inputs))
    seen.append((pred.detach(), batch["y"]))
"""


@pytest.mark.parametrize(
    "program, line, repair",
    [
        (HELPER_COLUMNS, 24, ("self.fc(x).squeeze()", "self.fc(x)")),
        (DICT_BATCHES, 23, ('"y": torch.tensor([self.y[i]])', '"y": torch.tensor(self.y[i])')),
    ],
)
def test_ml601_targets_from_helpers_and_dict_batches_broadcast_every_prediction_against_every_target(program, line, repair):
    """Found: the loss is the mean over every (prediction, target) pair, not over the samples. Repaired
    (the same shape on both sides): nothing is found and the loss is the per-sample one."""
    assert [f for f in family_findings(program, "ML6") if f[1] == "ML601"] == [(line, "ML601")]  # (ML604 on the `squeeze()`)
    with pytest.warns(UserWarning, match="broadcast"):
        namespace = run(program)
    for loss, (pred, target) in zip(namespace["losses"], namespace["seen"]):
        pairwise = (pred.reshape(1, -1) - target.reshape(-1, 1)).reshape(-1)
        per_sample = pred.reshape(-1) - target.reshape(-1)
        assert loss.shape == () and not torch.allclose(loss.detach(), _loss(program, per_sample))
        assert torch.allclose(loss.detach(), _loss(program, pairwise))
    repaired = program.replace(*repair)
    assert family_findings(repaired, "ML6") == []
    namespace = run(repaired)
    for loss, (pred, target) in zip(namespace["losses"], namespace["seen"]):
        assert torch.allclose(loss.detach(), _loss(program, pred.reshape(-1) - target.reshape(-1)))


def _loss(program: str, difference: torch.Tensor) -> torch.Tensor:
    if "SmoothL1Loss" in program:
        small = difference.abs() < 1
        return torch.where(small, 0.5 * difference**2, difference.abs() - 0.5).mean()
    return (difference**2).mean()


# The scaler is fitted in `read_data`, the rows are split in `divide`: the test rows shape the statistics.
DATA_MODULE = """\
import numpy as np
from sklearn.preprocessing import StandardScaler


class TabularData:
    def __init__(self, X):
        self.scaler = StandardScaler()
        self.raw = X

    def read_data(self):
        X = self.raw
        self.scaler.fit(X)
        self.X, self.y = X, None

    def divide(self):
        idx = np.arange(len(self.X))
        n_test = len(idx) // 4
        self.test_idx, self.train_idx = idx[:n_test], idx[n_test:]

    def train_features(self):
        return self.scaler.transform(self.X[self.train_idx])


data = TabularData(ROWS)
data.read_data()
data.divide()
features = data.train_features()
"""


def test_ml805_a_fit_in_one_method_before_a_split_in_another_lets_the_test_rows_into_training():
    """Found: moving only the test rows moves the training features. Repaired (the scaler fitted on the
    training rows after the split): nothing is found and the training features stay put."""
    pytest.importorskip("sklearn")
    assert family_findings(DATA_MODULE, "ML8") == [(12, "ML805")]
    rows = np.random.default_rng(0).random((40, 3))
    shifted = rows.copy()
    shifted[:10] += 100.0  # the test rows only

    def features(program, data):
        return run(program, ROWS=data)["features"]

    assert not np.allclose(features(DATA_MODULE, rows), features(DATA_MODULE, shifted))
    repaired = DATA_MODULE.replace("        self.scaler.fit(X)\n", "").replace(
        "    def train_features(self):\n", "    def train_features(self):\n        self.scaler.fit(self.X[self.train_idx])\n"
    )
    assert family_findings(repaired, "ML8") == []
    assert np.allclose(features(repaired, rows), features(repaired, shifted))


# The pipeline refits its scaler whenever a call passes `fit=True`: here for the validation rows too.
PIPELINE = """\
import numpy as np
from sklearn.preprocessing import StandardScaler


class FeaturePipeline:
    def __init__(self):
        self.scaler = None

    def set_scaler(self, scaler):
        self.scaler = scaler

    def prepare(self, X, fit=False):
        if fit:
            self.scaler.fit(X)
        return self.scaler.transform(X)


X_train, X_val = TRAIN, VAL
pipe = FeaturePipeline()
pipe.set_scaler(StandardScaler())
train_x = pipe.prepare(X_train, fit=True)
val_x = pipe.prepare(X_val, fit=True)
"""


def test_ml804_a_call_site_flag_that_refits_on_validation_data_centres_it_on_itself():
    """Found (at the fit, under the call that passes `X_val` with `fit=True`): the validation features are
    centred on their own mean. Repaired (`fit=False` there): nothing is found and they keep the shift the
    training statistics show."""
    pytest.importorskip("sklearn")
    assert family_findings(PIPELINE, "ML8") == [(14, "ML804")]
    rng = np.random.default_rng(0)
    train, val = rng.random((50, 3)), rng.random((20, 3)) + 5.0
    leaked = run(PIPELINE, TRAIN=train, VAL=val)
    assert np.allclose(leaked["val_x"].mean(axis=0), 0.0)
    repaired = PIPELINE.replace("val_x = pipe.prepare(X_val, fit=True)", "val_x = pipe.prepare(X_val)")
    assert family_findings(repaired, "ML8") == []
    assert (run(repaired, TRAIN=train, VAL=val)["val_x"].mean(axis=0) > 10.0).all()


# Early stopping is stepped with the test loss: the weights kept are those that did best on the test set.
STOPPER = HEAD + """\
import copy


class EarlyStopping:
    def __init__(self, patience=3):
        self.patience, self.best, self.bad, self.state = patience, float("inf"), 0, None

    def step(self, loss, model):
        if loss < self.best:
            self.best, self.bad, self.state = loss, 0, copy.deepcopy(model.state_dict())
        else:
            self.bad += 1
        return self.bad >= self.patience


def run_training(model, train_data, test_data, epochs=30):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    stopper = EarlyStopping()
    (x, y), (x_test, y_test) = train_data, test_data
    for epoch in range(epochs):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            test_loss = F.mse_loss(model(x_test), y_test).item()
        if stopper.step(test_loss, model):
            break
    return stopper.best


x = torch.randn(64, 2)
y = x.sum(1, keepdim=True)
best = run_training(nn.Linear(2, 1), (x, y), (TEST_X, TEST_Y))
"""


def test_ml806_an_early_stopper_stepped_with_the_test_loss_reports_the_best_test_score():
    """Found: the score it reports is the minimum over epochs of the test loss, so it depends on the test
    labels it chose with. Repaired (stepped with a validation loss): nothing is found."""
    assert family_findings(STOPPER, "ML8") == [(33, "ML806")]
    test_x = torch.randn(16, 2)
    good, bad = run(STOPPER, TEST_X=test_x, TEST_Y=test_x.sum(1, keepdim=True)), run(STOPPER, TEST_X=test_x, TEST_Y=-test_x.sum(1, keepdim=True))
    assert good["best"] < bad["best"]  # the reported best is the test set's own minimum
    repaired = STOPPER.replace("test", "val")
    assert family_findings(repaired, "ML8") == []


# A checkpoint callback run as `cb(model, score, epoch)` for each callback of the epoch loop, handed the test loss.
CALLBACK = HEAD + """\
import copy


class KeepLowest:
    def __init__(self):
        self.best, self.state = float("inf"), None

    def __call__(self, model, score, epoch):
        if score < self.best:
            self.best, self.state = score, copy.deepcopy(model.state_dict())


def fit(model, train_data, test_data, callbacks=(), epochs=30):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    (x, y), (x_test, y_test) = train_data, test_data
    for epoch in range(epochs):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            test_loss = F.mse_loss(model(x_test), y_test).item()
        for callback in callbacks:
            callback(model, test_loss, epoch)


keeper = KeepLowest()
x = torch.randn(64, 2)
fit(nn.Linear(2, 1), (x, x.sum(1, keepdim=True)), (TEST_X, TEST_Y), callbacks=[keeper])
best = keeper.best
"""


def test_ml806_a_callback_handed_the_test_loss_keeps_the_best_test_score():
    """Found in the callback's `__call__`, which compares the score the epoch loop hands it: the score it
    keeps is the minimum over epochs of the test loss, so it depends on the test labels it chose with.
    Repaired (handed a validation loss): nothing is found."""
    assert family_findings(CALLBACK, "ML8") == [(15, "ML806")]
    test_x = torch.randn(16, 2)
    good, bad = run(CALLBACK, TEST_X=test_x, TEST_Y=test_x.sum(1, keepdim=True)), run(CALLBACK, TEST_X=test_x, TEST_Y=-test_x.sum(1, keepdim=True))
    assert good["best"] < bad["best"]  # the kept best is the test set's own minimum
    assert family_findings(CALLBACK.replace("test", "val"), "ML8") == []
