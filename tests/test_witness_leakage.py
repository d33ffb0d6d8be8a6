"""Witnesses of leakage spread over a class or helpers (ML805): the rows that end up in the test split
change what the training split holds."""
import numpy as np
import pytest

from tests.witness import example, family_findings, instead, run

SERIES = '''
import numpy as np
from sklearn.preprocessing import StandardScaler


class Series:
    def __init__(self, values, flag="train"):
        self.flag = flag
        self.scaler = StandardScaler()
        self._read(values)

    def _read(self, values):
        n_train = int(len(values) * 0.7)
        self.scaler.fit(values)
        values = self.scaler.transform(values)
        if self.flag == "train":
            self.data = values[:n_train]
        else:
            self.data = values[n_train:]


train_rows = Series(VALUES, "train").data
'''
FITTED_ON_TRAINING = SERIES.replace("self.scaler.fit(values)", "self.scaler.fit(values[:n_train])")


@pytest.mark.parametrize("program, leaks", [(SERIES, True), (FITTED_ON_TRAINING, False)])
def test_ml805_a_scaler_fitted_before_the_flag_chooses_the_rows(program, leaks):
    assert family_findings(program, "ML805") == ([(14, "ML805")] if leaks else [])
    values = np.random.default_rng(0).random((100, 2))
    shifted = values.copy()
    shifted[70:] += 100.0  # only the rows of the test split change
    training = [run(program, VALUES=v)["train_rows"] for v in (values, shifted)]
    assert np.array_equal(*training) is not leaks


SELECTION_HARNESS = '''
def make_loader(n):
    return torch.randn(n, 8), torch.randint(0, 4, (n,))  # labels carry no signal: every model is at chance


def train_one_epoch(model, loader):
    torch.nn.init.normal_(model.weight)  # each epoch leaves a different model, none better than chance


def evaluate(model, loader):
    x, y = loader
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


model = torch.nn.Linear(8, 4)
loaders = {"train": make_loader(200), "val": make_loader(200), "test": make_loader(200)}
reported = fit(model, train_one_epoch, evaluate, loaders, 40)
'''


@pytest.mark.parametrize("program, selects_on_test", [(example("ML806"), True), (instead("ML806"), False)])
def test_ml806_the_best_test_score_over_epochs_overestimates_the_model(program, selects_on_test):
    assert family_findings(program, "ML806") == ([(6, "ML806")] if selects_on_test else [])
    reported = run("import torch\n" + program + SELECTION_HARNESS)["reported"]
    # Chance is 0.25; the standard error of an accuracy on 200 rows is 0.03.
    assert (reported > 0.25 + 0.05) is selects_on_test
    assert selects_on_test or abs(reported - 0.25) < 0.05


HISTORY = '''
def fit(model, train_one_epoch, evaluate, loaders, epochs):
    history = {"test_acc": []}
    for epoch in range(epochs):
        train_one_epoch(model, loaders["train"])
        history["test_acc"].append(evaluate(model, loaders["test"]))
    return max(history["test_acc"])
'''
HISTORY_BY_VALIDATION = '''
def fit(model, train_one_epoch, evaluate, loaders, epochs):
    history = {"val_acc": [], "test_acc": []}
    for epoch in range(epochs):
        train_one_epoch(model, loaders["train"])
        history["val_acc"].append(evaluate(model, loaders["val"]))
        history["test_acc"].append(evaluate(model, loaders["test"]))
    best = max(range(epochs), key=lambda e: history["val_acc"][e])
    return history["test_acc"][best]
'''


@pytest.mark.parametrize("program, selects_on_test", [(HISTORY, True), (HISTORY_BY_VALIDATION, False)])
def test_ml806_the_maximum_of_a_history_of_test_scores_overestimates_the_model(program, selects_on_test):
    assert family_findings(program, "ML806") == ([(7, "ML806")] if selects_on_test else [])
    reported = run("import torch\n" + program + SELECTION_HARNESS)["reported"]
    assert (reported > 0.25 + 0.05) is selects_on_test
    assert selects_on_test or abs(reported - 0.25) < 0.05


DATASET = '''
import torch
from torch.utils.data import Dataset


class Windows(Dataset):
    def __init__(self, x):
        self.x = x
        self.mu, self.sigma = x.mean(0), x.std(0)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return (self.x[i] - self.mu) / self.sigma


def parts(x):
    full = Windows(x)
    return torch.utils.data.random_split(full, [70, 30], generator=torch.Generator().manual_seed(0))


train_part, test_part = parts(VALUES)
train_rows = torch.stack([train_part[i] for i in range(len(train_part))])
'''
SPLIT_FIRST = DATASET.replace(
    "    full = Windows(x)\n    return torch.utils.data.random_split(full, [70, 30], generator=torch.Generator().manual_seed(0))",
    "    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))\n    return Windows(x[order[:70]]), Windows(x[order[70:]])",
)


@pytest.mark.parametrize("program, leaks", [(DATASET, True), (SPLIT_FIRST, False)])
def test_ml805_a_dataset_normalised_by_its_own_statistics_then_split(program, leaks):
    assert [code for _, code in family_findings(program, "ML805")] == (["ML805"] if leaks else [])
    import torch

    values = torch.rand(100, 2)
    first = run(program, VALUES=values)
    changed = values.clone()  # only the rows of the test part change
    if leaks:
        changed[list(first["test_part"].indices)] += 100.0
    else:
        order = torch.randperm(100, generator=torch.Generator().manual_seed(0))
        changed[order[70:]] += 100.0
    assert torch.equal(first["train_rows"], run(program, VALUES=changed)["train_rows"]) is not leaks


RETURNED_THEN_DIVIDED = '''
import numpy as np
from sklearn.preprocessing import MinMaxScaler


class Data:
    def __init__(self, values):
        self.values = values
        self.scaler = MinMaxScaler()

    def read(self):
        x = self.values.copy()
        self.scaler.fit(x)
        return x

    def divide(self, x):
        order = np.arange(len(x))
        parts = np.split(order, [70])
        return [x[p] for p in parts]

    def setup(self):
        x = self.read()
        train, test = self.divide(x)
        return self.scaler.transform(train)


train_rows = Data(VALUES).setup()
'''
DIVIDED_THEN_FITTED = RETURNED_THEN_DIVIDED.replace("        self.scaler.fit(x)\n", "").replace(
    "return self.scaler.transform(train)", "return self.scaler.fit(train).transform(train)"
)


@pytest.mark.parametrize("program, leaks", [(RETURNED_THEN_DIVIDED, True), (DIVIDED_THEN_FITTED, False)])
def test_ml805_a_scaler_fitted_on_returned_data_that_another_method_divides(program, leaks):
    assert family_findings(program, "ML805") == ([(13, "ML805")] if leaks else [])
    values = np.random.default_rng(0).random((100, 2))
    shifted = values.copy()
    shifted[70:] += 100.0  # only the rows of the test part change
    training = [run(program, VALUES=v)["train_rows"] for v in (values, shifted)]
    assert np.array_equal(*training) is not leaks


HELD_BY_KEY = '''
def fit(model, train_one_epoch, evaluate, loaders, epochs):
    held = loaders["test"]
    best_acc = 0.0
    for epoch in range(epochs):
        train_one_epoch(model, loaders["train"])
        acc = evaluate(model, held)
        if acc > best_acc:
            best_acc = acc
    return best_acc
'''
HELD_OUT_ONCE = (
    HELD_BY_KEY.replace('held = loaders["test"]', 'held = loaders["val"]')
    .replace("best_acc = 0.0", "best_acc, test_at_best = 0.0, 0.0")
    .replace("best_acc = acc", 'best_acc, test_at_best = acc, evaluate(model, loaders["test"])')
    .replace("return best_acc", "return test_at_best")
)


@pytest.mark.parametrize("program, selects_on_test", [(HELD_BY_KEY, True), (HELD_OUT_ONCE, False)])
def test_ml806_an_evaluation_of_data_read_by_the_test_key_overestimates_the_model(program, selects_on_test):
    assert family_findings(program, "ML806") == ([(8, "ML806")] if selects_on_test else [])
    reported = run("import torch\n" + program + SELECTION_HARNESS)["reported"]
    assert (reported > 0.25 + 0.05) is selects_on_test
    assert selects_on_test or abs(reported - 0.25) < 0.05
