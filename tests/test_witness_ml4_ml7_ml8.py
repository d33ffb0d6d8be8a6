"""Witnesses: each flagged documentation example misbehaves under torch as its rule says; the fixed or
recommended version does not."""
import pytest
import torch


from witness import example, instead, run


def test_ml401_the_callers_tensor_changes_and_not_after_the_fix(fix):
    fixed = fix(example("ML401"), "ML401")
    assert fixed == instead("ML401")
    for program, changes in ((example("ML401"), True), (fixed, False)):
        batch = torch.full((2, 3), 255.0)
        run(program)["Net"]()(batch)
        assert torch.equal(batch, torch.ones(2, 3)) is changes


def test_ml402_the_typo_does_not_freeze_the_layer(fix):
    training_step = (
        "optimizer = torch.optim.SGD(backbone.parameters(), lr=0.1)\n"
        "before = backbone.weight.detach().clone()\n"
        "backbone(torch.randn(2, 4, requires_grad=True)).sum().backward()\n"
        "optimizer.step()\n"
        "changed = not torch.equal(before, backbone.weight)\n"
    )
    assert run(example("ML402") + training_step)["changed"]
    fixed = fix(example("ML402"), "ML402")
    assert fixed == instead("ML402")
    assert not run(fixed + training_step)["changed"]


def test_ml701_log_of_softmax_underflows_to_minus_infinity(fix):
    logits = "\nlogits = torch.tensor([[0.0, -200.0]])\nlog_probs = {}\n"
    flagged = "import torch\nimport torch.nn.functional as F" + logits.format("torch.log(F.softmax(logits, dim=1))")
    fixed = fix(flagged, "ML701")
    assert "F.log_softmax(logits, dim=1)" in fixed
    assert torch.isinf(run(flagged)["log_probs"]).any()
    assert torch.isfinite(run(fixed)["log_probs"]).all()
    assert run(fixed)["log_probs"][0, 1].item() == pytest.approx(-200.0)


def test_ml701_log_of_one_minus_sigmoid_is_minus_infinity_for_a_confident_logit(lint):
    flagged = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "logits, targets = torch.tensor([20.0, -3.0]), torch.tensor([0.0, 1.0])\n"
        "p = torch.sigmoid(logits)\n"
        "pt = torch.where(targets > 0, p, 1 - p)\n"
        "log_pt = torch.log(pt)\n"
    )
    assert [f.code for f in lint(flagged, "ML701")] == ["ML701"]
    assert torch.isinf(run(flagged)["log_pt"][0])  # float32: sigmoid(20) rounds to 1, 1 - p to 0
    stable = flagged.replace("torch.log(pt)", "torch.where(targets > 0, F.logsigmoid(logits), F.logsigmoid(-logits))")
    assert lint(stable, "ML701") == []
    assert run(stable)["log_pt"][0].item() == pytest.approx(-20.0, abs=1e-6)


def test_ml701_log_of_sigmoid_is_minus_infinity_for_a_badly_ranked_pair(lint):
    flagged = (
        "import torch\nimport torch.nn.functional as F\n\n"
        "pos, neg = torch.tensor([1.0, 0.0]), torch.tensor([0.5, 120.0])\n"
        "loss = -torch.log(torch.sigmoid(pos - neg))\n"
    )
    assert [f.code for f in lint(flagged, "ML701")] == ["ML701"]
    assert torch.isinf(run(flagged)["loss"][1])  # float32: sigmoid(-120) underflows to 0
    stable = flagged.replace("torch.log(torch.sigmoid(pos - neg))", "F.logsigmoid(pos - neg)")
    assert lint(stable, "ML701") == []
    assert run(stable)["loss"][1].item() == pytest.approx(120.0)


def test_ml702_bce_on_sigmoid_loses_the_gradient_of_confident_mistakes():
    setup = "\nlogits = torch.tensor([-120.0], requires_grad=True)\ntargets = torch.tensor([1.0])\n"
    flagged = example("ML702").replace("logits, targets = torch.randn(8), torch.rand(8)", setup)
    recommended = instead("ML702").replace("logits, targets = torch.randn(8), torch.rand(8)", setup)
    bad, good = run(flagged), run(recommended)
    bad["loss"].backward()
    good["loss"].backward()
    assert bad["logits"].grad.abs().item() == 0.0  # saturated: the mistake teaches nothing
    assert good["logits"].grad.abs().item() == pytest.approx(1.0)
    assert bad["loss"].item() == pytest.approx(100.0)  # BCELoss clamps log(0) at -100


def test_ml802_forward_skips_hooks(fix):
    calls = []
    hooked = example("ML802").replace(
        "outputs = ", "model.register_forward_hook(lambda *args: calls.append(1))\noutputs = "
    )
    namespace = {"calls": calls}
    exec(compile(hooked, "<witness>", "exec"), namespace)
    assert calls == []
    exec(compile(fix(hooked, "ML802"), "<witness>", "exec"), namespace)
    assert calls == [1]


def test_ml803_a_module_without_super_init_fails_far_from_the_cause():
    head = run(example("ML803"))["Head"](4)  # constructing it raises nothing
    with pytest.raises(AttributeError):
        head.state_dict()
    assert run(instead("ML803"))["Head"](4).state_dict() == {}


class Payload:
    """Unpickling this runs code: it writes a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (_write_marker, (self.marker,))


def _write_marker(path: str) -> str:
    with open(path, "w") as handle:
        handle.write("ran")
    return path


def test_ml801_weights_only_refuses_a_checkpoint_that_runs_code(tmp_path, fix):
    checkpoint, marker = tmp_path / "checkpoint.pt", tmp_path / "marker"
    torch.save({"weights": torch.ones(2), "extra": Payload(str(marker))}, checkpoint)
    # What `torch.load` did by default before torch 2.6: the checkpoint's code runs.
    torch.load(checkpoint, weights_only=False)
    assert marker.exists()
    marker.unlink()

    fixed = fix(f"import torch\nstate = torch.load({str(checkpoint)!r})\n", "ML801", unsafe=True)
    assert fixed.endswith(", weights_only=True)\n")
    with pytest.raises(Exception, match="Weights only load failed"):
        run(fixed)
    assert not marker.exists()


def test_ml703_a_constant_input_turns_the_normalisation_into_nan():
    assert torch.isnan(run(example("ML703"))["normalized"]).all()
    assert torch.isfinite(run(instead("ML703"))["normalized"]).all()


def test_ml403_an_update_outside_no_grad_raises_and_inside_it_works():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        run(example("ML403"))
    model = run(instead("ML403"))["model"]
    assert model.weight.grad is not None


def test_ml404_no_gradient_reaches_the_model_and_after_the_fix_it_does():
    detached = run(example("ML404"))
    assert detached["loss"].requires_grad  # backward ran without an error
    assert all(p.grad is None for p in detached["model"].parameters())
    trained = run(instead("ML404"))
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in trained["model"].parameters())


def _encoder_changes(program: str) -> bool:
    training = (
        "\nbefore = model.encoder.weight.detach().clone()\n"
        "for _ in range(3):\n"
        "    optimizer.zero_grad()\n"
        "    model(torch.randn(8, 4)).pow(2).mean().backward()\n"
        "    optimizer.step()\n"
        "changed = not torch.equal(before, model.encoder.weight)\n"
    )
    return run(program + training)["changed"]


def test_ml405_the_detached_encoder_never_learns_and_without_the_detach_it_does():
    assert not _encoder_changes(example("ML405"))
    assert _encoder_changes(instead("ML405"))


def test_ml406_backward_raises_after_the_in_place_change_and_not_without_it():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(example("ML406"))
    assert run(instead("ML406"))["model"].weight.grad is not None


def test_ml804_the_scaler_learns_the_test_sets_statistics_and_after_the_fix_the_training_sets():
    pytest.importorskip("sklearn")
    keep = "\nraw_train, raw_test = X_train.copy(), X_test.copy()\n"
    data = "X_train, X_test = np.random.rand(80, 3), np.random.rand(20, 3)"
    for program, fitted_on in ((example("ML804"), "raw_test"), (instead("ML804"), "raw_train")):
        assert data in program
        namespace = run(program.replace(data, data + keep))
        assert namespace["scaler"].mean_ == pytest.approx(namespace[fitted_on].mean(axis=0))
    leaked, honest = run(example("ML804").replace(data, data + keep)), run(instead("ML804").replace(data, data + keep))
    assert leaked["X_test"].mean(axis=0) == pytest.approx(0.0, abs=1e-9)  # the test set is centred on itself
    assert honest["X_test"].mean(axis=0) != pytest.approx(0.0, abs=1e-3)


def test_ml704_a_row_of_dead_units_turns_the_normalisation_into_nan():
    assert torch.isnan(run(example("ML704"))["normalized"]).all()
    assert torch.isfinite(run(instead("ML704"))["normalized"]).all()
