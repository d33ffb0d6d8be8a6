"""The cost guard: does any rule or analysis grow faster than linear in the size of a file, on any shape?

    python benchmarks/growth.py                                  # every shape, every rule (--select ALL)
    python benchmarks/growth.py --shape loss-terms --sizes 2 4 6 8 10
    python benchmarks/growth.py --shape script --scripts cleanrl/ppo*.py --sizes 1 2 4 8 --all-only

Each shape is a file made of `size` units: `script` (a module-level training script, as cleanrl writes
them; `--scripts FILE...` replaces the made-up one by real scripts, concatenated), `functions` (many
training functions), `huge-function` (the script as the body of one function), `classes` (modules and
trainer classes), `notebook` (the script's cells, many times), `loss-terms` (one training loop whose loss
adds `size` optional terms, each under its own `if cfg.use_i:`), `elif-chain` (a loss chosen in a
`size`-long `if/elif` chain inside the loop). Each file is linted in this process, as the file alone
(no project), timed in CPU seconds (the fastest of `--runs`): bare `ast.parse` and `ast.walk` of it
(the floor: what the CPU caches alone make of a larger tree), the lint with every rule, each rule alone,
and, for each module of mllint's analyses and rules, the function calls it makes in the lint with every
rule (counted by a profile: exact, where times under a profile are not). A rule's time is its lint's minus the lint of no rule (parsing, suppressions): what the rule and
the analyses it asks for cost. Printed per shape: milliseconds at the largest size, the growth exponent
(the slope of log time against log lines) and the cost per line at the largest size over the smallest.
A rule is flagged when its exponent exceeds `ast.walk`'s by more than `--slack` and it costs at least
`--min-ms` at the largest size; a module when its calls' exponent exceeds 1 by more than `--slack`. A lint over `--budget` CPU seconds is stopped; that rule's
larger sizes are skipped (reported as `>budget`).
"""
from __future__ import annotations

import argparse
import ast
import cProfile
import dataclasses
import json
import math
import pstats
import signal
import time
from collections import defaultdict
from pathlib import Path

from mllint.engine import Selection, lint_notebook, lint_text
from mllint.notebook import load as load_notebook
from mllint.registry import all_rules, expand_selector

ROOT = Path(__file__).resolve().parent.parent

HEADER = """import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from sklearn.model_selection import train_test_split
"""
# A module-level training script (the shape of cleanrl's): data statistics, a split, a model, an
# optimizer, a rollout and an update loop with advantages normalised, a scheduler and logging.
SCRIPT = """
args = parse_args()
device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
data = np.load(args.path)
mean, std = data.mean(axis=0), data.std(axis=0)
features = (data - mean) / (std + 1e-8)
train_x, test_x = train_test_split(features, test_size=0.2)
envs = make_envs(args)
agent = Agent(envs).to(device)
optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=10)
obs = torch.zeros((args.num_steps, args.num_envs) + envs.observation_space.shape).to(device)
values = torch.zeros((args.num_steps, args.num_envs)).to(device)
next_obs = torch.Tensor(envs.reset(seed=args.seed)[0]).to(device)
for iteration in range(1, args.num_iterations + 1):
    if args.anneal_lr:
        frac = 1.0 - (iteration - 1.0) / args.num_iterations
        optimizer.param_groups[0]["lr"] = frac * args.learning_rate
    for step in range(0, args.num_steps):
        obs[step] = next_obs
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step] = value.flatten()
        next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
        rewards[step] = torch.tensor(reward).to(device).view(-1)
        next_obs = torch.Tensor(next_obs).to(device)
    with torch.no_grad():
        next_value = agent.get_value(next_obs).reshape(1, -1)
        advantages = torch.zeros_like(rewards).to(device)
        returns = advantages + values
    b_obs = obs.reshape((-1,) + envs.observation_space.shape)
    b_advantages = advantages.reshape(-1)
    b_returns = returns.reshape(-1)
    b_inds = np.arange(args.batch_size)
    for epoch in range(args.update_epochs):
        np.random.shuffle(b_inds)
        for start in range(0, args.batch_size, args.minibatch_size):
            mb_inds = b_inds[start:start + args.minibatch_size]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds])
            ratio = (newlogprob - b_logprobs[mb_inds]).exp()
            mb_advantages = b_advantages[mb_inds]
            if args.norm_adv:
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
            pg_loss = torch.max(-mb_advantages * ratio, -mb_advantages * torch.clamp(ratio, 0.8, 1.2)).mean()
            v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb_inds]) ** 2).mean()
            loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    scheduler.step()
    writer.add_scalar("losses/value_loss", v_loss.item(), iteration)
    print("SPS:", int(iteration / (time.time() - start_time)))
"""
# Training functions and model classes, each copy with its own names (@ is the copy's number).
FUNCTIONS = """

def train_epoch_@(model, loader, optimizer, criterion, device):
    model.train()
    total = 0.0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def evaluate_@(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for inputs, targets in loader:
            logits = model(inputs.to(device))
            correct += (logits.argmax(dim=1) == targets.to(device)).sum().item()
    return correct / len(loader.dataset)


def build_@(config):
    model = Net_@(config.hidden)
    optimizer = optim.SGD(model.parameters(), lr=config.lr, momentum=0.9)
    return model, optimizer
"""
CLASSES = """

class Net_@(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Dropout(0.1))
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.encoder(x.view(x.size(0), -1))
        return self.head(x)


class Trainer_@:
    def __init__(self, model, config):
        self.model = model
        self.optimizer = optim.Adam(model.parameters(), lr=config.lr)
        self.criterion = nn.CrossEntropyLoss()

    def train_step(self, batch):
        self.model.train()
        inputs, targets = batch
        self.optimizer.zero_grad()
        loss = self.criterion(self.model(inputs), targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def validate(self, loader):
        self.model.eval()
        with torch.no_grad():
            return sum(self.criterion(self.model(x), y).item() for x, y in loader) / len(loader)
"""
LOOP = """
model = Net(cfg)
optimizer = optim.Adam(model.parameters(), lr=cfg.lr)
criterion = nn.CrossEntropyLoss()
for epoch in range(cfg.epochs):
    for inputs, targets in loader:
        outputs = model(inputs)
"""
TERM = """        if cfg.use_@:
            loss += cfg.weight_@ * auxiliary_@(outputs, targets)
"""
CHOICE = """        {keyword} cfg.loss == "loss_@":
            loss = criterion_@(outputs, targets)
"""
STEP = """        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def numbered(unit: str, size: int) -> str:
    return "".join(unit.replace("@", str(i)) for i in range(size))


def script_text(size: int, scripts: list[Path]) -> str:
    if scripts:
        return "\n\n".join(path.read_text(encoding="utf-8") for path in scripts * size)
    return HEADER + SCRIPT * size


def notebook_text(size: int, scripts: list[Path]) -> str:
    body = script_text(size, scripts)
    chunks: list[str] = []  # cells: the script cut at top-level statements, every ten lines or so
    cell: list[str] = []
    for line in body.splitlines(keepends=True):
        if cell and line[:1] not in (" ", "\t", "\n", ")", "]", "}") and len(cell) > 8:
            chunks.append("".join(cell))
            cell = []
        cell.append(line)
    chunks.append("".join(cell))
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": chunk}
             for chunk in chunks]  # fmt: skip
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


SHAPES = {
    "script": script_text,
    "functions": lambda size, _: HEADER + numbered(FUNCTIONS, size),
    "huge-function": lambda size, scripts: "def main():\n"
    + "".join(f"    {line}" if line.strip() else line for line in script_text(size, scripts).splitlines(True)),
    "classes": lambda size, _: HEADER + numbered(CLASSES, size),
    "notebook": notebook_text,
    "loss-terms": lambda size, _: HEADER + LOOP + "        loss = criterion(outputs, targets)\n"
    + numbered(TERM, size) + STEP,
    "elif-chain": lambda size, _: HEADER + LOOP
    + "".join(CHOICE.replace("{keyword}", "elif" if i else "if").replace("@", str(i)) for i in range(size))
    + "        else:\n            loss = criterion(outputs, targets)\n" + STEP,
}  # fmt: skip
DEFAULT_SIZES = {"loss-terms": [2, 4, 6, 8, 10], "elif-chain": [4, 8, 16, 32]}


SAMPLE = 0.05


class OverBudget(BaseException):
    """Raised by the CPU timer; a BaseException, so that the engine does not take it for a rule's crash."""


def _over_budget(signum, frame):
    raise OverBudget


def cpu_seconds(function, runs: int, budget: float) -> float | None:
    """CPU seconds of one call: the fastest of `runs` samples, a sample calling the function until it
    has taken SAMPLE seconds; None when a sample runs over the budget."""
    best = math.inf
    for _ in range(runs):
        signal.setitimer(signal.ITIMER_PROF, budget)
        calls, start = 0, time.process_time()
        try:
            while (elapsed := time.process_time() - start) < SAMPLE or not calls:
                function()
                calls += 1
        except OverBudget:
            return None
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        best = min(best, elapsed / calls)
    return best


def selection_of(codes: list[str]) -> Selection:
    """The rules, without mllint's own analysis budget (a wall-time limit: on a busy machine it cuts a large
    file short, and the guard would time less work at larger sizes); the guard's CPU budget holds."""
    return dataclasses.replace(Selection.of(codes), budget=0)


def linter(shape: str, text: str, selection: Selection):
    if shape == "notebook":
        return lambda: lint_notebook(text, "shape.ipynb", selection)
    return lambda: lint_text(text, "shape.py", selection)


def module_calls(shape: str, text: str, selection: Selection) -> dict[str, int]:
    """Function calls per module of mllint's analyses and rules (and the engine) in one lint, counted
    by a profile: unlike times, counts do not vary from run to run, nor with the profile's overhead."""
    profile = cProfile.Profile()
    profile.runcall(linter(shape, text, selection))
    calls: dict[str, int] = defaultdict(int)
    for (filename, _, _), (_, total, _, _, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        path = Path(filename)
        if "analysis" in path.parts[:-1] or path.parent.name == "rules" or path.name == "engine.py":
            calls[f"{path.parent.name}/{path.stem}"] += total  # an analysis by its layer: facets/leakage
    return calls


def exponent(lines: list[int], seconds: list[float]) -> float:
    """The least-squares slope of log seconds against log lines."""
    xs, ys = [math.log(n) for n in lines], [math.log(max(s, 1e-6)) for s in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(sum((x - mx) ** 2 for x in xs), 1e-12)


def measure_shape(shape: str, sizes: list[int], args: argparse.Namespace, codes: list[str]) -> list[str]:
    texts = [SHAPES[shape](size, args.scripts) for size in sizes]
    programs = [text if shape != "notebook" else load_notebook(text).python for text in texts]
    lines = [program.count("\n") + 1 for program in programs]
    none, every = selection_of([]), selection_of(codes)
    timed: dict[str, list[tuple[int, float | None]]] = defaultdict(list)  # (lines, seconds; None: over budget)
    counted: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for text, program, size_lines in zip(texts, programs, lines):
        tree = ast.parse(program)
        timed["ast.parse"].append((size_lines, cpu_seconds(lambda: ast.parse(program), args.runs, args.budget)))
        timed["ast.walk"].append((size_lines, cpu_seconds(lambda: sum(1 for _ in ast.walk(tree)), args.runs, args.budget)))
        empty = cpu_seconds(linter(shape, text, none), args.runs, args.budget) or 0.0
        alone = [] if args.all_only else [(code, selection_of([code])) for code in codes]
        for name, selection in [("ALL", every), *alone]:
            if timed[name] and timed[name][-1][1] is None:
                continue  # over budget at a smaller size
            took = cpu_seconds(linter(shape, text, selection), args.runs, args.budget)
            timed[name].append((size_lines, None if took is None else max(took - empty, 1e-6)))
        if args.profile and timed["ALL"][-1][1] is not None:
            for module, calls in module_calls(shape, text, every).items():
                counted[module].append((size_lines, calls))
    walk = exponent(lines, [s for _, s in timed["ast.walk"]])  # type: ignore[misc]
    out = [f"shape {shape}: sizes {sizes}, lines {lines}", f"  {'':<34}{'ms':>9}{'exponent':>10}{'x per line':>11}"]
    flagged = []
    for name, points in timed.items():
        if points[-1][1] is None:
            at = sizes[len(points) - 1]
            out.append(f"  {name:<34}{'>' + str(args.budget):>9}  OVER BUDGET at size {at}")
            flagged.append(f"{shape} {name}: over {args.budget} CPU s at size {at}")
            continue
        slope = exponent([n for n, _ in points], [s for _, s in points])  # type: ignore[misc]
        (first_lines, first), (last_lines, last) = points[0], points[-1]
        per_line = (last / last_lines) / max(first / first_lines, 1e-12)  # type: ignore[operator]
        mark = ""
        if not name.startswith("ast.") and slope > walk + args.slack and last * 1000 >= args.min_ms:  # type: ignore[operator]
            mark = "  SUPERLINEAR"
            flagged.append(f"{shape} {name}: exponent {slope:.2f} (ast.walk {walk:.2f}), {per_line:.1f}x per line")
        if last * 1000 >= args.show_ms or mark or name in ("ast.parse", "ast.walk", "ALL"):  # type: ignore[operator]
            out.append(f"  {name:<34}{last * 1000:>9.1f}{slope:>10.2f}{per_line:>11.2f}{mark}")  # type: ignore[operator]
    out.append(f"  {'calls of':<34}{'calls':>9}{'exponent':>10}{'x per line':>11}")
    for module, points in sorted(counted.items(), key=lambda item: -item[1][-1][1]):
        if len(points) < len(sizes) or points[-1][1] < args.min_calls:
            continue
        slope = exponent([n for n, _ in points], [c for _, c in points])
        per_line = (points[-1][1] / points[-1][0]) / (points[0][1] / points[0][0])
        mark = ""
        if slope > 1 + args.slack:
            mark = "  SUPERLINEAR"
            flagged.append(f"{shape} calls of {module}: exponent {slope:.2f}, {per_line:.1f}x per line")
        out.append(f"  {module:<34}{points[-1][1]:>9}{slope:>10.2f}{per_line:>11.2f}{mark}")
    return out + [f"  flagged: {flag}" for flag in flagged]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", nargs="+", choices=list(SHAPES), default=list(SHAPES))
    parser.add_argument("--sizes", type=int, nargs="+", help="units per file (default: 4 8 16 32; loss-terms 2..10)")
    parser.add_argument("--scripts", type=Path, nargs="+", default=[], help="real scripts as the script unit")
    parser.add_argument("--select", default="ALL", help="the rules, as mllint's --select (default ALL)")
    parser.add_argument("--ignore", default="", help="rules left out, as mllint's --ignore")
    parser.add_argument("--runs", type=int, default=1, help="runs per measurement; the fastest counts")
    parser.add_argument("--budget", type=float, default=10.0, help="CPU seconds a lint may take (default 10)")
    parser.add_argument("--slack", type=float, default=0.25, help="exponent above ast.walk's that is flagged")
    parser.add_argument("--min-ms", type=float, default=20.0, help="cost at the largest size below which nothing is flagged")
    parser.add_argument("--show-ms", type=float, default=5.0, help="print rules and modules costing at least this")
    parser.add_argument("--all-only", action="store_true", help="time every rule together, not each alone")
    parser.add_argument("--min-calls", type=int, default=1000, help="calls at the largest size below which a module is not shown")
    parser.add_argument("--no-profile", dest="profile", action="store_false", help="skip counting calls per module")
    args = parser.parse_args()
    ignored = {code for selector in args.ignore.split(",") if selector for code in expand_selector(selector)}
    codes = [code for selector in args.select.split(",") for code in expand_selector(selector)
             if all_rules()[code].event is None and code not in ignored]  # fmt: skip
    for shape in args.shape:
        sizes = args.sizes or DEFAULT_SIZES.get(shape, [4, 8, 16, 32])
        print("\n".join(measure_shape(shape, sizes, args, codes)), flush=True)


if __name__ == "__main__":
    main()
