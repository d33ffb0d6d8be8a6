"""Witnesses for the train/eval mode rules: each flagged program misbehaves under torch as its rule says
(dropout active or batch-norm statistics moving during evaluation, dropout off during training), and the
recommended or fixed program does not. CPU only, seeded, a few elements."""
from pathlib import Path

import torch


from witness import example, instead, run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ml3"


def test_ml302_example_evaluates_with_dropout_active_and_not_after_eval(lint):
    assert [f.code for f in lint(example("ML302"), "ML302")] == ["ML302"]
    assert lint(instead("ML302"), "ML302") == []
    again = "\nwith torch.no_grad():\n    again = model(torch.ones(3, 4))\n"
    flagged, recommended = run(example("ML302") + again), run(instead("ML302") + again)
    assert not torch.equal(flagged["scores"], flagged["again"])  # two dropout masks: noisy validation
    assert torch.equal(recommended["scores"], recommended["again"])


def test_ml302_fixture_trainer_validation_moves_batch_norm_statistics(lint):
    source = (FIXTURES / "trainer.py").read_text()
    assert [(f.code, f.start.line) for f in lint(source, "ML302")] == [("ML302", 41)]
    loader = [(torch.randn(2, 3, 5, 5), torch.tensor([0, 1]))]
    trainer = run(source)["Trainer"](loader, [(torch.randn(2, 3, 5, 5) + 3.0, torch.tensor([1, 0]))])
    trainer.model.train()
    trainer.train_epoch()
    before = trainer.model.features[1].running_mean.clone()
    trainer.validate()  # as `fit` calls it: in training mode
    assert not torch.equal(before, trainer.model.features[1].running_mean)  # validation data leaks into BN
    trainer.model.eval()
    before = trainer.model.features[1].running_mean.clone()
    trainer.validate()
    assert torch.equal(before, trainer.model.features[1].running_mean)


def test_ml303_example_trains_the_second_epoch_with_dropout_off(lint):
    assert [f.code for f in lint(example("ML303"), "ML303")] == ["ML303"]
    assert lint(instead("ML303"), "ML303") == []
    probe = "    modes.append(model[1].training)\n    loss = model("
    flagged_modes: list = []
    run(example("ML303").replace("    loss = model(", probe), modes=flagged_modes)
    assert flagged_modes == [True, False]  # epoch 2 trains in eval mode: dropout is off
    fixed_modes: list = []
    run(instead("ML303").replace("    loss = model(", probe), modes=fixed_modes)
    assert fixed_modes == [True, True]


def test_ml303_fixture_loop_trains_in_eval_mode_after_evaluate(lint):
    source = (FIXTURES / "train_loop.py").read_text()
    assert [(f.code, f.start.line) for f in lint(source, "ML303")] == [("ML303", 32)]
    namespace = run(source)
    modes: list = []
    loader = [(torch.randn(4, 16), torch.tensor([0, 1, 2, 3]))]

    class Data(list):
        dataset = loader

    original = namespace["Net"].forward

    def recording_forward(self, x):
        modes.append(self.training)
        return original(self, x)

    namespace["Net"].forward = recording_forward
    namespace["fit"](Data(loader), Data(loader), epochs=2)
    # epoch 1 trains, evaluates; epoch 2 trains in eval mode, evaluates
    assert modes == [True, False, False, False]


def test_ml304_example_keeps_dropout_in_eval_mode_and_the_fix_does_not(fix):
    fixed = fix(example("ML304"), "ML304")
    assert fixed == instead("ML304")
    x = torch.ones(4, 4)
    net = run(example("ML304"))["Net"]().eval()
    with torch.no_grad():
        first, second = net(x), net(x)
    assert not torch.equal(first, second) and (first == 0).any()  # dropout ignores eval()
    net = run(fixed)["Net"]().eval()
    with torch.no_grad():
        assert torch.equal(net(x), net.fc(x))  # dropout is the identity in eval mode
    net.train()
    assert (net(torch.ones(64, 4)) == 0).any()  # and still drops in training


def test_ml302_fixture_mnist_tests_with_dropout_active_after_train(lint):
    source = (FIXTURES / "mnist.py").read_text()
    assert [(f.code, f.start.line) for f in lint(source, "ML302")] == [("ML302", 35)]
    namespace = run(source)

    class Data(list):
        dataset = range(4)

    data = Data([(torch.randn(4, 1, 28, 28), torch.tensor([0, 1, 2, 3]))])
    model = namespace["Net"]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    namespace["train"](model, "cpu", data, optimizer, 1)
    first, second = namespace["test"](model, "cpu", data), namespace["test"](model, "cpu", data)
    assert first != second  # the test loss is a random draw of dropout masks
    model.eval()
    assert namespace["test"](model, "cpu", data) == namespace["test"](model, "cpu", data)
