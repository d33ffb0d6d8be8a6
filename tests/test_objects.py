"""The objects layer: which objects an expression may be (`objects.Objects`), and the mode rules reading
it: aliases, receiver-returning calls, builders' tuples, containers, attributes written anywhere, loops
over literal phases."""
import ast

from mllint.analysis.objects.call_sites import built
from mllint.analysis.objects.constants import fold, unrolled
from mllint.analysis.objects.points_to import NONE, Objects
from mllint.context import FileContext
from mllint.source import SourceText, parse_python

from test_ml3 import NET, positions

BUILDERS = (
    "import torch\n"
    "from torch import nn\n"
    "def build(cfg):\n"
    "    model = nn.Linear(2, 2)\n"
    "    return model, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss()\n"
    "class Trainer:\n"
    "    def __init__(self, model):\n"
    "        self.model = model\n"
    "        self.losses = {'ce': nn.CrossEntropyLoss(), 'l1': nn.L1Loss()}\n"
    "        self.nets = nn.ModuleList([nn.Linear(1, 1)])\n"
    "        self.nets.append(nn.ReLU())\n"
    "    def fit(self):\n"
    "        model = self.model\n"
    "        model = torch.nn.DataParallel(model.to('cuda'))\n"
    "        return model.module, self.losses['ce'], [n for n in self.nets]\n"
    "def main(flag):\n"
    "    net, opt, crit = build(None)\n"
    "    other, _, _ = build(None)\n"
    "    trainer = Trainer(net)\n"
    "    best = None\n"
    "    if flag:\n"
    "        best = net.cuda()\n"
    "    return trainer.model, best, other\n"
)


def objects_of(source: str):
    ctx = FileContext("t.py", SourceText(source), parse_python(source), None, "t.py")
    objects = ctx.analysis(Objects)
    returns = {n.lineno: n.value for n in ast.walk(ctx.tree) if isinstance(n, ast.Return)}
    return ctx, objects, returns


def made_lines(found) -> list:
    return sorted(((obj.node.lineno, obj.node.col_offset) if obj is not NONE else (0, 0)) for obj in found)


def test_points_to_follows_builders_aliases_wrappers_containers_and_attributes():
    ctx, objects, returns = objects_of(BUILDERS)
    model, loss, nets = returns[15].elts
    # The parameter of __init__, through .to and DataParallel; its `.module` is its own until a call site
    # says what it holds (a wrapper's model, or an attribute of a project class), and keyed as it.
    [module] = objects.points_to(model)
    assert (module.kind, module.name, module.base.kind, module.base.name) == ("field", "module", "parameter", "model")
    assert objects.key(model, module.base.node) == "model"
    assert made_lines(objects.points_to(loss)) == [(9, 29)]  # the constant key of a dict literal
    assert made_lines(objects.points_to(nets.elt)) == [(10, 35), (11, 25)]  # the ModuleList's items and what is appended
    attribute, best, other = returns[23].elts
    # What `__init__` writes, with what the construction `Trainer(net)` passes for its parameter: `net`.
    assert objects.points_to(attribute) == objects.points_to(best) - {NONE}
    assert made_lines(objects.points_to(best)) == [(0, 0), (4, 12)]  # an arm that assigns None adds None
    [built_for_net] = objects.points_to(best) - {NONE}
    [built_for_other] = objects.points_to(other)
    assert built_for_net != built_for_other  # two calls of a builder make two objects


def test_a_loop_over_literal_constants_is_unrolled_and_its_tests_fold():
    tree = ast.parse("for phase in ['train', 'val']:\n    pass\nfor p in phases:\n    pass\nfor i in [1, 2]:\n    i = 3\n")
    loops = [n for n in tree.body]
    assert [unrolled(loop, None) for loop in loops] == [["train", "val"], None, None]
    test = ast.parse("phase == 'train' and not is_test", mode="eval").body
    assert [fold(test, {"phase": "val"}), fold(test, {"phase": "train"}), fold(test, {})] == [False, None, None]
    assert fold(ast.parse("phase in ('a', 'b')", mode="eval").body, {"phase": "b"}) is True


PHASES = NET + (
    "def fit(loaders, criterion):\n"
    "    model = Net()\n"
    "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    for epoch in range(3):\n"
    "        for phase in ['train', 'val']:\n"
    "            if phase == 'train':\n"
    "                model.train()\n"
    "            else:\n"
    "                model.eval()\n"
    "            for x, y in loaders[phase]:\n"
    "                with torch.set_grad_enabled(phase == 'train'):\n"
    "                    loss = criterion(model(x), y)\n"
    "                    if phase == 'train':\n"
    "                        loss.backward()\n"
    "                        opt.step()\n"
)


def test_the_phase_loop_trains_in_training_mode(lint):
    assert positions(lint(PHASES, "ML302", "ML303")) == []
    chosen = PHASES.replace(
        "            if phase == 'train':\n                model.train()\n            else:\n                model.eval()\n",
        "            model.train() if phase == 'train' else model.eval()\n",
    )
    assert positions(lint(chosen, "ML302", "ML303")) == []


def test_a_phase_loop_that_never_switches_back_to_training_is_reported(lint):
    forgets = PHASES.replace(
        "            if phase == 'train':\n                model.train()\n            else:\n                model.eval()\n",
        "            if phase == 'val':\n                model.eval()\n",
    )
    assert positions(lint(forgets, "ML303")) == [("ML303", 19, 38)]


def test_an_alias_of_the_trainers_model_moved_to_a_device_is_the_same_model(lint):
    source = NET + (
        "class Trainer:\n"
        "    def __init__(self, model, loader, opt):\n"
        "        self.model, self.loader, self.opt = model, loader, opt\n"
        "    def step(self, x, y):\n"
        "        model = self.model\n"
        "        return F.mse_loss(model(x), y)\n"
        "    def test(self):\n"
        "        model = self.model\n"
        "        with torch.no_grad():\n"
        "            model.eval()\n"
        "            return [model(x) for x, y in self.loader]\n"
        "    def train(self):\n"
        "        model = self.model\n"
        "        model = model.to('cpu')\n"
        "        for i, (x, y) in enumerate(self.loader):\n"
        "            model.train()\n"
        "            self.step(x, y).backward()\n"
        "            self.opt.step()\n"
        "            if i % 10 == 0:\n"
        "                self.test()\n"
    )
    assert positions(lint(source, "ML303")) == []
    assert positions(lint(source.replace("            model.train()\n", ""), "ML303")) == [("ML303", 15, 27)]


TEACHER = NET + (
    "student, teacher = Net(), Net()\n"
    "teacher.load_state_dict({})\n"
    "opt = torch.optim.SGD(student.parameters(), lr=0.1)\n"
    "for epoch in range(3):\n"
    "    teacher.eval()\n"
    "    for x, y in []:\n"
    "        target = teacher(x)\n"
    "        opt.zero_grad()\n"
    "        F.mse_loss(student(x) + teacher(x), target).backward()\n"
    "        opt.step()\n"
)


def test_a_teacher_no_optimizer_updates_is_kept_in_eval_on_purpose(lint):
    assert positions(lint(TEACHER, "ML303")) == []
    both = TEACHER.replace("student.parameters()", "[*student.parameters(), *teacher.parameters()]")
    assert positions(lint(both, "ML303")) == [("ML303", 16, 18), ("ML303", 18, 33)]


PASSED_TEACHER = NET + (
    "def train(model, teacher, loader):\n"
    "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    for epoch in range(3):\n"
    "        model.train()\n"
    "        for x, y in loader:\n"
    "            opt.zero_grad()\n"
    "            F.mse_loss(model(x), teacher(x)).backward()\n"
    "            opt.step()\n"
    "        teacher.eval()\n"
    "        with torch.no_grad():\n"
    "            teacher(x)\n"
    "train(Net(), Net(), [])\n"
)


def test_a_teacher_passed_in_that_the_function_does_not_optimize_is_kept_in_eval_on_purpose(lint):
    assert positions(lint(PASSED_TEACHER, "ML303")) == []
    given = PASSED_TEACHER.replace("    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n", "").replace("loader):", "loader, opt):")
    assert positions(lint(given, "ML303")) == [("ML303", 15, 34)]


RESTORES = NET + (
    "class Trainer:\n"
    "    def __init__(self, loader):\n"
    "        self.model = Net()\n"
    "        self.loader = loader\n"
    "        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)\n"
    "    def validate(self):\n"
    "        training = self.model.training\n"
    "        self.model.eval()\n"
    "        with torch.no_grad():\n"
    "            [self.model(x) for x, y in self.loader]\n"
    "        if training:\n"
    "            self.model.train()\n"
    "    def train_epoch(self):\n"
    "        self.model.train()\n"
    "        for i, (x, y) in enumerate(self.loader):\n"
    "            if i % 10 == 0:\n"
    "                self.validate()\n"
    "            self.opt.zero_grad()\n"
    "            F.mse_loss(self.model(x), y).backward()\n"
    "            self.opt.step()\n"
)


def test_a_validation_that_saves_and_restores_the_mode_leaves_training_on(lint):
    assert positions(lint(RESTORES, "ML303")) == []
    argument = RESTORES.replace("        if training:\n            self.model.train()\n", "        self.model.train(training)\n")
    assert positions(lint(argument, "ML303")) == []
    forgets = RESTORES.replace("        if training:\n            self.model.train()\n", "")
    assert positions(lint(forgets, "ML303")) == [("ML303", 21, 9)]


SHARED_STEP = NET + (
    "def compute_loss(model, x, y, is_training):\n"
    "    with torch.set_grad_enabled(is_training):\n"
    "        return F.mse_loss(model(x), y)\n"
    "def validate(model, loader):\n"
    "    return [compute_loss(model, x, y, is_training=False) for x, y in loader]\n"
    "def train(loader):\n"
    "    model = Net()\n"
    "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    model.train()\n"
    "    for i, (x, y) in enumerate(loader):\n"
    "        opt.zero_grad()\n"
    "        compute_loss(model, x, y, is_training=True).backward()\n"
    "        opt.step()\n"
    "        if i % 10 == 0:\n"
    "            model.eval()\n"
    "            validate(model, loader)\n"
    "            model.train()\n"
)


def test_a_flag_passed_as_a_constant_decides_the_callees_gradients(lint):
    assert positions(lint(SHARED_STEP, "ML303")) == []
    forgets = SHARED_STEP.replace("            model.train()\n", "")
    assert positions(lint(forgets, "ML303")) == [("ML303", 18, 5)]


OWN_EVAL = NET + (
    "class Trainer:\n"
    "    def __init__(self, loader):\n"
    "        self.model = Net()\n"
    "        self.loader = loader\n"
    "        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)\n"
    "    def eval(self, report=True):\n"
    "        for x, y in self.loader:\n"
    "            print(x)\n"
    "    def fit(self):\n"
    "        self.model.train()\n"
    "        for x, y in self.loader:\n"
    "            self.opt.zero_grad()\n"
    "            F.mse_loss(self.model(x), y).backward()\n"
    "            self.opt.step()\n"
    "            self.eval()\n"
)


def test_a_trainers_own_method_named_eval_is_not_module_eval(lint):
    assert positions(lint(OWN_EVAL, "ML303")) == []
    switching = OWN_EVAL.replace("            print(x)\n", "            print(x)\n        self.model.eval()\n")
    assert positions(lint(switching, "ML303")) == [("ML303", 20, 9)]


def test_items_of_a_container_filled_with_its_own_items_end_unknown():
    # `hops[start] = hop` then `hop = hops[s][item]`: each round of the fixed point made an item of an
    # item one level deeper, without end (a RecursionError in transformers' jukebox model, 8 ML009).
    source = (
        "def align(starts, item):\n"
        "    hops = {}\n"
        "    for start in starts:\n"
        "        hops[start] = hop\n"
        "        for s in starts:\n"
        "            hop = hops[s][item]\n"
        "    return hop\n"
    )
    ctx, objects, returns = objects_of(source)
    assert objects.points_to(returns[7]) is None


def test_a_submodule_replaced_by_one_built_from_its_own_part_ends_unknown(lint):
    # `self.conv = fuse(self.conv.conv, ...)`: what holds `self.conv` is read through `self.conv` itself; the
    # makers of `self.conv.conv` were looked for through `self.conv` without end (a RecursionError in
    # ultralytics' nn/modules/block.py: ML009 on every ML1 rule, ML401 and ML605).
    source = (
        "from torch import nn\n"
        "\n"
        "def fuse(conv, bn):\n"
        "    return conv\n"
        "\n"
        "class Conv(nn.Module):\n"
        "    def __init__(self, c):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(c, c, 3)\n"
        "        self.bn = nn.BatchNorm2d(c)\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.bn(self.conv(x))\n"
        "\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, c):\n"
        "        super().__init__()\n"
        "        self.conv = Conv(c)\n"
        "        self.act = nn.SiLU()\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.act(self.conv(x))\n"
        "\n"
        "    def fuse(self):\n"
        "        self.conv = fuse(self.conv.conv, self.conv.bn)\n"
    )
    assert lint(source) == []


def test_items_appended_to_a_module_attribute():
    """`self.blocks.append(Block(c))` in a module's `__init__` adds to the `nn.ModuleList()` written there, which
    points-to keeps as the attribute itself: a loop over `self.blocks` in `forward` takes the appended blocks."""
    source = (
        "from torch import nn\n"
        "class Block(nn.Module):\n"
        "    pass\n"
        "class Stack(nn.Module):\n"
        "    def __init__(self, widths):\n"
        "        super().__init__()\n"
        "        self.blocks = nn.ModuleList()\n"
        "        for w in widths:\n"
        "            self.blocks.append(Block())\n"
        "    def forward(self, x):\n"
        "        return [blk for blk in self.blocks]\n"
    )
    ctx, _, returns = objects_of(source)
    assert [call.lineno for _, call in built(ctx, returns[11].elt)] == [9]
