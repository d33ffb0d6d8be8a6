"""The configuration Hydra hands a `@hydra.main(config_path="conf", config_name="config")` function: the primary
YAML file of the config folder with the options its defaults list picks merged in (`- loss: focal` puts
`conf/loss/focal.yaml` at `cfg.loss`; `- model/head: mlp` at `cfg.model.head`; a group file's own defaults
list nested under its group; `- /data: cifar` from the folder's top; `optional`, `override` and Hydra's own
`hydra/...` groups; `group@pkg: x` and a `# @package
trainer.loss` header place it elsewhere; `- base` merges `conf/base.yaml`; `_self_` orders the primary file's own keys).
Command-line overrides are not known: the answer is what the files choose by default.

`builds_target(function)`: is a function of the project its own `instantiate(cfg)` (it reads the `_target_` of
its first parameter and returns a call)?

`composed_config(ctx, function, at)` (and `composed_by_call(ctx, call)` for `compose(config_name=...)` under
`with initialize(config_path=...)`): the document as a `yaml_subset` tree placed at `at`; None when the
function has no such decorator, a file is missing or not read, an option is a list (several runs), or
more than `MAX_CONFIG_FILES` files are read. The files read are recorded with the project (the result cache).
"""
from __future__ import annotations

import ast
import os
import re

from mllint.analysis.program.summaries import returned_expressions
from mllint.analysis.syntax.names import call_argument
from mllint.analysis.syntax.yaml_subset import Mapping, read_yaml

MAX_CONFIG_FILES = 16  # files read for one composed configuration
HYDRA_MAIN = "hydra.main"
HYDRA_COMPOSE, HYDRA_INITIALIZE = "hydra.compose", "hydra.initialize"
TARGET = "_target_"
PACKAGE = re.compile(r"#\s*@package\s+(\S+)")


class _Missing(Exception):
    pass


def composed_config(ctx, function: ast.AST, at: ast.AST) -> ast.AST | None:
    """The configuration Hydra composes for `function` (of `ctx`), read as its decorator names it."""
    found = _main_files(ctx, function)
    return _composed(ctx, *found, at) if found is not None else None


def composed_by_call(ctx, call: ast.Call) -> ast.AST | None:
    """The configuration `compose(config_name="train")` of `hydra` gives under `with initialize(config_path=
    "conf")` (no overrides), placed at the call; None for any other call."""
    found = _compose_files(ctx, call)
    return _composed(ctx, *found, call) if found is not None else None


def _composed(ctx, folder: str, name: str, at: ast.AST) -> ast.AST | None:
    reader = _Reader(ctx, folder, at)
    try:
        found = reader.document(name, group="")
    except _Missing:
        return None
    for placed in reader.placed:
        found = _merged(found, placed)
    for node in ast.walk(found):
        ast.copy_location(node, at)
    return found


def builds_target(function: ast.AST) -> bool:
    """Does `function` build what the `_target_` of its first parameter names, as a project's own
    `instantiate(node, *args)` does (`locate(node.pop("_target_"))(*args, **node)`): it reads that key, every
    return is a call?"""
    named = [*function.args.posonlyargs, *function.args.args]
    if not named or named[0].arg in ("self", "cls"):
        return False
    returned = returned_expressions(function.body)
    reads = any(isinstance(n, ast.Constant) and n.value == TARGET for n in ast.walk(function))
    return reads and bool(returned) and all(isinstance(r, ast.Call) for r in returned)


def _compose_files(ctx, call: ast.Call) -> tuple[str, str] | None:
    """(the config folder, the primary config's name) of a `compose(...)` call in a `with initialize(...)`."""
    if ctx.qualified_name(call.func) != HYDRA_COMPOSE or ctx.real_path is None:
        return None
    name, overrides = call_argument(call, 0, "config_name"), call_argument(call, 1, "overrides")
    if not _text(name) or (overrides is not None and not (isinstance(overrides, ast.List | ast.Tuple) and not overrides.elts)):
        return None
    opened = [item.context_expr for w in ctx.scopes.ancestors(call) if isinstance(w, ast.With) for item in w.items]
    paths = [call_argument(c, len(c.args), "config_path") for c in opened if isinstance(c, ast.Call) and ctx.qualified_name(c.func) == HYDRA_INITIALIZE]
    if len(paths) != 1 or not _text(paths[0]) or os.path.isabs(paths[0].value):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(ctx.real_path)), paths[0].value), name.value


def _text(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _main_files(ctx, function: ast.AST) -> tuple[str, str] | None:
    """(the config folder, the primary config's name) of a `@hydra.main(...)` around `function`."""
    for decorator in getattr(function, "decorator_list", ()):
        if not (isinstance(decorator, ast.Call) and ctx.qualified_name(decorator.func) == HYDRA_MAIN) or ctx.real_path is None:
            continue
        passed = dict(zip(("config_path", "config_name"), decorator.args))
        passed.update((k.arg, k.value) for k in decorator.keywords if k.arg in ("config_path", "config_name"))
        path, name = (passed.get(k) for k in ("config_path", "config_name"))
        if not (isinstance(path, ast.Constant) and isinstance(path.value, str) and isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        if os.path.isabs(path.value):
            return None
        return os.path.join(os.path.dirname(os.path.abspath(ctx.real_path)), path.value), name.value
    return None


class _Reader:
    def __init__(self, ctx, folder: str, at: ast.AST) -> None:
        self.ctx, self.folder, self.at = ctx, folder, at
        self.read = 0
        self.placed: list[Mapping] = []  # the configs a `# @package` header places from the top

    def document(self, name: str, group: str) -> ast.AST:
        """The config `name` of the folder `group` ("a/b", "" at the top) with its defaults list merged in,
        as a mapping relative to the package it is placed at."""
        tree, package = self._file(os.path.join(group, name))
        keys = [k.value for k in tree.keys]
        defaults = tree.values[keys.index("defaults")] if "defaults" in keys else None
        own = Mapping(keys=[k for k in tree.keys if k.value != "defaults"], values=[v for k, v in zip(tree.keys, tree.values) if k.value != "defaults"])
        if defaults is None:
            return self._placed(own, package)
        if not isinstance(defaults, ast.List):
            raise _Missing
        before, after, mine = Mapping(keys=[], values=[]), Mapping(keys=[], values=[]), False
        for entry in defaults.elts:
            if isinstance(entry, ast.Constant) and entry.value == "_self_":  # what follows overrides the file's own keys
                mine = True
                continue
            chosen = self._chosen(entry, group)
            if chosen is not None and mine:
                after = _merged(after, chosen)
            elif chosen is not None:
                before = _merged(before, chosen)
        return self._placed(_merged(_merged(before, own), after), package)

    def _chosen(self, entry: ast.AST, group: str) -> ast.AST | None:
        """What one entry of a defaults list adds, relative to the package of the config holding it."""
        if isinstance(entry, ast.Constant) and isinstance(entry.value, str):  # `- base`: a config of the same folder
            return self.document(entry.value.lstrip("/"), "" if entry.value.startswith("/") else group)
        if not (isinstance(entry, Mapping) and len(entry.keys) == 1 and isinstance(entry.keys[0].value, str)):
            raise _Missing
        key, option = entry.keys[0].value, entry.values[0]
        words = key.split()
        optional = "optional" in words[:-1]
        key = words[-1]
        if (isinstance(option, ast.Constant) and option.value is None) or key.lstrip("/").split("/")[0].partition("@")[0] == "hydra":
            return None  # no option; Hydra's own groups (`override hydra/job_logging: colorlog`) configure no objects
        if not (isinstance(option, ast.Constant) and isinstance(option.value, str)):
            raise _Missing  # a list of options (several runs), or not read
        name, _, package = key.partition("@")
        folder = name.lstrip("/") if name.startswith("/") else "/".join(p for p in (group, name) if p)
        try:
            chosen = self.document(option.value, folder)
        except _Missing:
            if optional:
                return None
            raise
        place = (package or name.lstrip("/")).split("/" if not package else ".")
        return _nested(chosen, [p for p in place if p])

    def _placed(self, tree: Mapping, package: str | None) -> Mapping:
        """A config's mapping where its `# @package` header puts it: its group's place (none, `_group_`), or
        from the top (`_global_`, `_global_.trainer`, `trainer.loss`): then kept apart, nothing at its group's."""
        if package is None or package == "_group_":
            return tree
        place = package.removeprefix("_global_").strip(".")
        if "_group_" in place or "_name_" in place:
            raise _Missing  # (Hydra 1.0's placeholders: not followed)
        self.placed.append(_nested(tree, place.split(".") if place else []))
        return Mapping(keys=[], values=[])

    def _file(self, name: str) -> tuple[Mapping, str | None]:
        """The mapping of a config file (`name` without `.yaml`) and the package its header names."""
        path = os.path.join(self.folder, name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
        self.read += 1
        if self.read > MAX_CONFIG_FILES or not os.path.isfile(path):
            raise _Missing
        if self.ctx.project is not None:
            self.ctx.project.read_file(path)
        tree = read_yaml(path, self.at)
        if not isinstance(tree, Mapping):
            raise _Missing
        with open(path, encoding="utf-8", errors="replace") as handle:
            header = PACKAGE.match(handle.readline().strip())
        return tree, header.group(1) if header else None


def _nested(tree: Mapping, place: list[str]) -> Mapping:
    """`tree` under the keys `place` (`model.head`)."""
    for key in reversed(place):
        tree = Mapping(keys=[ast.Constant(key)], values=[tree])
    return tree


def _merged(base, extra) -> Mapping:
    """`extra` merged into `base` as Hydra merges configs: mappings key by key, anything else replaced."""
    keys = [k.value for k in base.keys]
    values = list(base.values)
    for key, value in zip(extra.keys, extra.values):
        if key.value in keys:
            at = keys.index(key.value)
            values[at] = _merged(values[at], value) if isinstance(values[at], Mapping) and isinstance(value, Mapping) else value
        else:
            keys.append(key.value)
            values.append(value)
    return Mapping(keys=[ast.Constant(k) for k in keys], values=values)
