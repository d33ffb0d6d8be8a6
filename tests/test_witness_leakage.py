"""Witnesses of leakage spread over a class or helpers (ML805): the rows that end up in the test split
change what the training split holds."""
import numpy as np
import pytest

from tests.witness import family_findings, run

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
