"""Regressions met on the training corpus while closing issue 21's gaps."""


def test_a_loss_added_to_twice_in_a_loop_is_no_crash(lint):
    source = (
        "import torch\n"
        "def step(model, x, sims):\n"
        "    scores = model(x)\n"
        "    log_z = 0.0\n"
        "    for s in sims:\n"
        "        log_z += torch.logsumexp(s, dim=1)\n"
        "        log_z += 1\n"
        "    (scores - log_z).mean().backward()\n"
    )
    assert lint(source) == []


def test_a_scheduler_step_whose_order_warning_is_silenced_on_purpose_is_not_reported(lint):
    source = (
        "import warnings\n"
        "import torch\n"
        "class Trainer:\n"
        "    def __init__(self, model):\n"
        "        self.model = model\n"
        "        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "        self.scheduler = None\n"
        "    def setup(self):\n"
        "        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda e: 0.9 ** e)\n"
        "    def fit(self, loader, epochs):\n"
        "        for epoch in range(epochs):\n"
        "            with warnings.catch_warnings():\n"
        "                warnings.simplefilter('ignore')\n"
        "                self.scheduler.step()\n"
        "            for x, y in loader:\n"
        "                self.optimizer.zero_grad()\n"
        "                torch.nn.functional.mse_loss(self.model(x), y).backward()\n"
        "                self.optimizer.step()\n"
    )
    assert lint(source, "ML204") == []
    unsilenced = source.replace("            with warnings.catch_warnings():\n                warnings.simplefilter('ignore')\n    ", "")
    assert [(f.code, f.start.line) for f in lint(unsilenced, "ML204")] == [("ML204", 12)]
