"""Witness of ML807: a checkpoint fetched from a URL (a `file://` one here, no network) and loaded with
`weights_only=False` runs the code its author pickled into it; the fix refuses to load it and runs nothing."""
import pickle

import pytest
import torch

from tests.witness import example, family_findings, instead, run

RAN: list[str] = []


def mark(message: str) -> None:
    RAN.append(message)


class Payload:
    """What a hostile checkpoint holds: unpickling it calls `mark`."""

    def __reduce__(self):
        return mark, ("code from the checkpoint ran",)


def test_ml807_a_downloaded_checkpoint_loaded_with_weights_only_false_runs_its_code(tmp_path):
    model = torch.nn.Linear(2, 2)
    hostile = tmp_path / "hostile.pt"
    torch.save({"model": model.state_dict(), "payload": Payload()}, hostile)
    flagged, fixed = example("ML807"), instead("ML807")
    assert family_findings(flagged, "ML807") == [(8, "ML807")]
    assert family_findings(fixed, "ML807") == []

    RAN.clear()
    run(flagged)["resume"](model, hostile.as_uri(), path=str(tmp_path / "flagged.pt"))
    assert RAN == ["code from the checkpoint ran"]

    RAN.clear()
    with pytest.raises(pickle.UnpicklingError):
        run(fixed)["resume"](model, hostile.as_uri(), path=str(tmp_path / "fixed.pt"))
    assert RAN == []
