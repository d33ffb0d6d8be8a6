"""Metamorphic forms: each transform rewrites one fixture file into the same program written another way
(a module-level script, a trainer class, builders in another module, the loop in another module, objects
in a dict, aliases), keeping its bug or its absence; one that does not apply to a file is skipped. The
rewritten file and the modules it adds are linted in a copy of their project (the other files as they
were) and compared with the file merely unparsed (comments, `noqa` included, go in both): the same rule
codes must be reported, none lost, none gained. Other files of the project are not linted again.
`python tests/forms.py [TRANSFORM...] [PROJECT/FILE...]` prints the matrix rule family x transform
(kept/lost/gained codes per file) and every failure."""
import ast
import builtins
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from mllint.analysis.program.project import ProjectIndex
from mllint.engine import Selection, lint_path
from mllint.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BUILTINS = set(dir(builtins))
OPTIMIZERS = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS"}
TRAINING_CALLS = {"backward", "step", "zero_grad", "eval", "train"}
MOVED_CALLS = {"to", "cuda", "cpu", "float", "double"}


# ---- names and scopes


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def own_nodes(scope: ast.AST):
    """The nodes of a function's or module's own scope (not of the functions, classes and lambdas in it)."""
    stack = list(scope.body) if isinstance(scope, (ast.Module, ast.FunctionDef)) else [scope]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend([*node.decorator_list, *(node.args.defaults if hasattr(node, "args") else node.bases)])
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def bound_names(scope: ast.AST) -> Counter:
    """How often each name is bound in a scope's own code (parameters count once)."""
    counts = Counter()
    if isinstance(scope, ast.FunctionDef):
        counts.update(a.arg for a in [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs])
        counts.update(a.arg for a in [scope.args.vararg, scope.args.kwarg] if a)
    for node in own_nodes(scope):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            counts.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            counts[node.name] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            counts.update({n: 99 for n in node.names})
    return counts


def all_names(tree: ast.AST) -> set[str]:
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    return names | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def binds_in_nested(node: ast.AST, name: str) -> bool:
    """Whether a function, lambda or comprehension binds `name` itself (its own reads of it are then local)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
        body = node if isinstance(node, ast.FunctionDef) else None
        return name in params or (body is not None and name in bound_names(body))
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return any(name in {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)} for g in node.generators)
    return False


class Replace(ast.NodeTransformer):
    """Replace reads of a name by an expression, not where a nested scope binds the name itself."""

    def __init__(self, name: str, make, skip: set[int] = frozenset()):
        self.name, self.make, self.skip = name, make, skip

    def visit(self, node):
        if id(node) in self.skip:
            return node
        if binds_in_nested(node, self.name):
            return node
        return super().visit(node)

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return ast.copy_location(self.make(), node)
        return node


def replace_reads(tree, name, make, skip=frozenset()):
    Replace(name, make, skip).generic_visit(tree)


def attr(obj: str, name: str) -> ast.Attribute:
    return ast.Attribute(ast.Name(obj, ast.Load()), name, ast.Load())


def name_refs(tree: ast.AST, name: str) -> list[ast.Name]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]


def calls_only(tree: ast.AST, name: str) -> list[ast.Call] | None:
    """The calls of `name` when every reference to it is a plain call (no *args), else None."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]
    if len(calls) != len(name_refs(tree, name)):
        return None
    if any(isinstance(a, ast.Starred) for c in calls for a in c.args) or any(k.arg is None for c in calls for k in c.keywords):
        return None
    return calls


def simple_params(f: ast.FunctionDef) -> list[str] | None:
    a = f.args
    if a.posonlyargs or a.vararg or a.kwarg or a.kwonlyargs or f.decorator_list:
        return None
    return [p.arg for p in a.args]


def defaults_of(f: ast.FunctionDef) -> dict[str, ast.expr]:
    params = f.args.args
    return {p.arg: d for p, d in zip(params[len(params) - len(f.args.defaults):], f.args.defaults)}


def bind_call(f: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr] | None:
    params = simple_params(f)
    bound = dict(zip(params, call.args))
    if len(call.args) > len(params):
        return None
    for k in call.keywords:
        if k.arg not in params or k.arg in bound:
            return None
        bound[k.arg] = k.value
    for p, d in defaults_of(f).items():
        bound.setdefault(p, d)
    return bound if set(bound) == set(params) else None


def parents_of(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}


def module_level_statement(tree: ast.Module, node: ast.AST, parents) -> tuple[list, int] | None:
    """The statement list and index holding `node`'s statement when it runs at module level."""
    stmt = parents.get(id(node))
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = parents.get(id(stmt))
    holder = parents.get(id(stmt))
    while holder is not None and holder is not tree:
        if not isinstance(holder, (ast.If, ast.With, ast.Try)):
            return None
        holder = parents.get(id(holder))
    container = parents.get(id(stmt))
    for field in ("body", "orelse", "finalbody"):
        block = getattr(container, field, None)
        if isinstance(block, list) and stmt in block:
            return block, block.index(stmt)
    return None


def add_import(tree: ast.Module, statement: ast.stmt) -> None:
    at = 0
    while at < len(tree.body) and (
        isinstance(tree.body[at], ast.ImportFrom) and tree.body[at].module == "__future__"
        or isinstance(tree.body[at], ast.Expr) and isinstance(tree.body[at].value, ast.Constant)
    ):
        at += 1
    tree.body.insert(at, statement)


def module_imports(tree: ast.Module) -> dict[str, ast.stmt]:
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (isinstance(node, ast.ImportFrom) and node.level):
            for a in node.names:
                found[(a.asname or a.name).split(".")[0]] = node
    return found


def module_definitions(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def free_reads(nodes: list[ast.AST]) -> list[str]:
    """Names read by statements and not bound by them first (lambda and comprehension names excluded)."""
    inner = {a.arg for s in nodes for a in ast.walk(s) if isinstance(a, ast.arg)}
    for s in nodes:
        for c in ast.walk(s):
            if isinstance(c, ast.comprehension):
                inner |= {n.id for n in ast.walk(c.target) if isinstance(n, ast.Name)}
    seen, bound = [], set()
    for s in nodes:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound | inner and n.id not in seen:
                seen.append(n.id)
        bound |= {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return seen


def new_module_name(ctx, stem: str) -> str:
    name, n = stem, 2
    while (ctx.root / ctx.package_dir / f"{name}.py").exists() or name in ctx.other_text:
        name, n = f"{stem}_{n}", n + 1
    return name


def header_for(tree: ast.Module, ctx, names: list[str]) -> tuple[list[ast.stmt], list[str]]:
    """Imports a new module needs for `names` (the module's imports, its definitions from the original
    module) and the names left over (values the new code must receive)."""
    imports, definitions, rest = module_imports(tree), module_definitions(tree), []
    header, taken = [], []
    for n in names:
        if n in imports:
            if imports[n] not in header:
                header.append(imports[n])
        elif n in definitions:
            taken.append(n)
        elif n in BUILTINS and n not in bound_names(tree):
            continue
        else:
            rest.append(n)
    if taken:
        header.append(ast.ImportFrom(ctx.module, [ast.alias(n) for n in taken], 0))
    return header, rest


def is_module_class(tree: ast.Module, name: str, depth: int = 0) -> bool:
    for c in tree.body:
        if isinstance(c, ast.ClassDef) and c.name == name:
            bases = [dotted(b) for b in c.bases]
            return any(b.endswith("Module") or depth < 3 and is_module_class(tree, b, depth + 1) for b in bases)
    return False


def construction(tree: ast.Module, value: ast.AST) -> str | None:
    """What a constructing call makes: module, loss, optimizer, scheduler, loader (None: not one)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in MOVED_CALLS:
        value = value.func.value
    if not isinstance(value, ast.Call):
        return None
    name = dotted(value.func)
    last = name.rsplit(".", 1)[-1]
    if last.endswith("Loss"):
        return "loss"
    if last in OPTIMIZERS or ".optim." in f".{name}" and "lr_scheduler" not in name:
        return "optimizer"
    if "lr_scheduler" in name or last.endswith("LR") or last == "ReduceLROnPlateau":
        return "scheduler"
    if last == "DataLoader":
        return "loader"
    if name.startswith(("nn.", "torch.nn.")) or is_module_class(tree, name):
        return "module"
    return None


def block_constructions(tree, block: list[ast.stmt], kinds) -> list[tuple[int, str, str]]:
    out = []
    for i, s in enumerate(block):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            kind = construction(tree, s.value)
            if kind in kinds:
                out.append((i, s.targets[0].id, kind))
    return out


def scopes_of(tree: ast.Module) -> list[ast.AST]:
    return [tree, *(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef))]


# ---- transforms: each takes the tree and a context, returns {relative path: new text} or None


def t_script(tree, ctx):
    """Inline a function called once at module level into the module, keeping its names."""
    parents, changed = parents_of(tree), False
    for f in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        params = simple_params(f)
        calls = calls_only(tree, f.name)
        if params is None or not calls or len(calls) != 1 or ctx.mentioned(f.name):
            continue
        call = calls[0]
        where = module_level_statement(tree, call, parents)
        stmt = where and where[0][where[1]]
        if not where or not (isinstance(stmt, ast.Expr) and stmt.value is call or isinstance(stmt, ast.Assign) and stmt.value is call):
            continue
        body = list(f.body)
        if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        last = body[-1] if body else None
        returns = [n for n in own_nodes(f) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal))]
        if returns and returns != [last]:
            continue
        if isinstance(stmt, ast.Assign):
            if not isinstance(last, ast.Return) or last.value is None:
                continue
            body[-1] = ast.Assign(stmt.targets, last.value)
        elif isinstance(last, ast.Return):
            body[-1] = ast.Expr(last.value) if last.value is not None else ast.Pass()
        bound = bind_call(f, call)
        if bound is None:
            continue
        outside = set()
        for node in tree.body:
            if node is not f:
                outside |= all_names(node)
        local = set(bound_names(f)) - set(params)
        same = {p for p, v in bound.items() if isinstance(v, ast.Name) and v.id == p}
        if local & outside or (set(params) - same) & outside:
            continue
        if any(bound_names(f)[p] > 1 for p in same):
            continue
        prelude = [ast.Assign([ast.Name(p, ast.Store())], v) for p, v in bound.items() if p not in same]
        block, index = where
        block[index:index + 1] = [*prelude, *body]
        tree.body.remove(f)
        parents, changed = parents_of(tree), True
    return {} if changed else None


def t_trainer(tree, ctx):
    """A training or evaluation function becomes a class: `__init__` stores what it used as `self.`
    attributes, and its method reads them there."""
    changed = False
    for f in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        params = simple_params(f)
        trains = any(isinstance(n, (ast.For, ast.While)) for n in own_nodes(f)) or any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in TRAINING_CALLS
            for n in own_nodes(f))
        if not params or not trains or "self" in all_names(f) or ctx.mentioned(f.name):
            continue
        calls = calls_only(tree, f.name)
        if calls is None:
            continue
        counts = bound_names(f)
        nested_params = {a.arg for n in ast.walk(f) if n is not f and isinstance(n, (ast.FunctionDef, ast.Lambda)) for a in ast.walk(n.args) if isinstance(a, ast.arg)}
        kept = [p for p in params if counts[p] == 1 and p not in nested_params]
        if not kept:
            continue
        bindings = [bind_call(f, c) for c in calls]
        if any(b is None for b in bindings):
            continue
        defaults = defaults_of(f)
        cls = "".join(w.title() for w in f.name.split("_")) + "Runner"
        if cls in all_names(tree):
            continue
        originals = {a.arg: a for a in f.args.args}
        init_args = ast.arguments([], [ast.arg("self"), *[originals[p] for p in kept]], None, [], [], None,
                                  [defaults[p] for p in kept if p in defaults])
        init = ast.FunctionDef("__init__", init_args, [
            ast.Assign([ast.Attribute(ast.Name("self", ast.Load()), p, ast.Store())], ast.Name(p, ast.Load())) for p in kept
        ], [], None)
        rest = [p for p in params if p not in kept]
        for p in kept:
            replace_reads(f, p, lambda p=p: attr("self", p))
        f.args = ast.arguments([], [ast.arg("self"), *[originals[p] for p in rest]], None, [], [], None,
                               [defaults[p] for p in rest if p in defaults])
        tree.body[tree.body.index(f)] = ast.ClassDef(cls, [], [], [init, f], [])
        for call, bound in zip(calls, bindings):
            made = ast.Call(ast.Name(cls, ast.Load()), [bound[p] for p in kept], [])
            call.func = ast.Attribute(made, f.name, ast.Load())
            call.args, call.keywords = [bound[p] for p in rest], []
        changed = True
    return {} if changed else None


def t_builder(tree, ctx):
    """Move the constructions of a scope (models, losses, optimizers, schedulers, loaders) into
    `build(...)` of a new module `builders.py`, returning a tuple unpacked where they were made."""
    functions, new_name, taken = [], new_module_name(ctx, "builders"), all_names(tree)
    for scope in scopes_of(tree):
        block = scope.body
        found = block_constructions(tree, block, {"module", "loss", "optimizer", "scheduler", "loader"})
        chosen = []
        for i, name, _ in found:
            if chosen:
                between = [s for j, s in enumerate(block[chosen[0]:i], chosen[0]) if j not in chosen]
                touched = {n.id for s in between for n in ast.walk(s) if isinstance(n, ast.Name)}
                made = {block[j].targets[0].id for j in chosen} | {name}
                reads = set(free_reads([block[j] for j in chosen] + [block[i]]))
                stored = {n.id for s in between for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
                if touched & made or stored & reads:
                    break
            chosen.append(i)
        if len(chosen) < 2:
            continue
        moved = [block[j] for j in chosen]
        header, params = header_for(tree, ctx, free_reads(moved))
        targets = [s.targets[0].id for s in moved]
        fname, n = "build", 2  # a name the file does not bind already (its own `build` would shadow the import)
        while fname in taken:
            fname, n = f"build_{n}", n + 1
        taken.add(fname)
        body = [*moved, ast.Return(ast.Tuple([ast.Name(t, ast.Load()) for t in targets], ast.Load()))]
        functions.append((header, ast.FunctionDef(fname, ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, []), body, [], None)))
        unpack = ast.Assign([ast.Tuple([ast.Name(t, ast.Store()) for t in targets], ast.Store())],
                            ast.Call(ast.Name(fname, ast.Load()), [ast.Name(p, ast.Load()) for p in params], []))
        for j in reversed(chosen[1:]):
            del block[j]
        block[chosen[0]] = unpack
    if not functions:
        return None
    module = ast.Module([], [])
    for header, _ in functions:
        module.body.extend(h for h in header if h not in module.body)
    module.body.extend(f for _, f in functions)
    add_import(tree, ast.ImportFrom(ctx.sibling(new_name), [ast.alias(f.name) for _, f in functions], 0))
    return {ctx.new_path(new_name): ast.unparse(ast.fix_missing_locations(module))}


def t_params(tree, ctx):
    """Move a function holding a loop into a new module; what it read of its module's variables it now
    receives as parameters from its callers."""
    moved, new_name = [], new_module_name(ctx, "loops")
    definitions, module_bound = module_definitions(tree), bound_names(tree)
    for f in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        if f.decorator_list or not any(isinstance(n, (ast.For, ast.While)) for n in own_nodes(f)):
            continue
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(f)):
            continue
        calls = calls_only(tree, f.name)
        if calls is None:
            continue
        reads = [n for n in free_reads([f]) if n not in bound_names(f) and n != f.name]
        header, rest = header_for(tree, ctx, reads)
        added = [n for n in rest if n in module_bound and n not in definitions]
        if any(n not in module_bound for n in rest) or added and ctx.mentioned(f.name):
            continue
        if any(binds_in_caller(tree, c, added) for c in calls):
            continue
        params = {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)}
        if set(added) & params:
            continue
        if added:
            if f.args.defaults or f.args.vararg or f.args.kwarg or f.args.kwonlyargs:
                f.args.kwonlyargs.extend(ast.arg(n) for n in added)
                f.args.kw_defaults.extend(None for _ in added)
            else:
                f.args.args.extend(ast.arg(n) for n in added)
            for c in calls:
                c.keywords.extend(ast.keyword(n, ast.Name(n, ast.Load())) for n in added)
        moved.append((header, f))
    if not moved:
        return None
    module = ast.Module([], [])
    for header, f in moved:
        module.body.extend(h for h in header if h not in module.body)
        tree.body.remove(f)
    module.body.extend(f for _, f in moved)
    add_import(tree, ast.ImportFrom(ctx.sibling(new_name), [ast.alias(f.name) for _, f in moved], 0))
    return {ctx.new_path(new_name): ast.unparse(ast.fix_missing_locations(module))}


def binds_in_caller(tree, call, names) -> bool:
    parents = parents_of(tree)
    node = parents.get(id(call))
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
        node = parents.get(id(node))
    return node is not None and bool(set(names) & (set(bound_names(node)) if isinstance(node, ast.FunctionDef) else set(names)))


def rebinding_sites(tree, ctx, kinds):
    """Constructions `x = C(...)` of the given kinds whose name is bound once in its scope."""
    for scope in scopes_of(tree):
        counts = bound_names(scope)
        for block in statement_blocks(scope):
            for i, name, kind in block_constructions(tree, block, kinds):
                if counts[name] != 1 or scope is tree and ctx.mentioned(name):
                    continue
                yield scope, block, block[i], name, kind


def statement_blocks(scope):
    blocks = [scope.body]
    for node in own_nodes(scope):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(node, (ast.For, ast.While, ast.If, ast.With, ast.Try)) and isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                blocks.append(block)
    return blocks


def t_dict(tree, ctx):
    """Keep losses and optimizers in a dict literal and read them by constant key."""
    sites = list(rebinding_sites(tree, ctx, {"loss", "optimizer"}))
    taken = all_names(tree)
    for scope, block, stmt, name, kind in sites:
        holder = f"{kind}s"
        n = 2
        while holder in taken:
            holder, n = f"{kind}s_{n}", n + 1
        taken.add(holder)
        block[block.index(stmt)] = ast.Assign([ast.Name(holder, ast.Store())],
                                              ast.Dict([ast.Constant(name)], [stmt.value]))
        replace_reads(scope, name, lambda h=holder, k=name: ast.Subscript(ast.Name(h, ast.Load()), ast.Constant(k), ast.Load()))
    return {} if sites else None


def t_alias(tree, ctx):
    """Build each object under another name, rebind a built module with `x = x.to(device)`, and read it
    through an alias with the name it had (`model = built_model`), so names a rule reads stay as they were."""
    sites = list(rebinding_sites(tree, ctx, {"module", "loss", "optimizer", "scheduler"}))
    if not sites:
        return None
    taken = all_names(tree)
    device = "device" not in taken and any(kind in ("module", "loss") for *_, kind in sites)
    for scope, block, stmt, name, kind in sites:
        built, n = f"built_{name}", 2
        while built in taken:
            built, n = f"built_{name}_{n}", n + 1
        taken.add(built)
        stmt.targets = [ast.Name(built, ast.Store())]
        added = []
        if kind in ("module", "loss"):
            moved = ast.Call(attr(built, "to"), [ast.Name("device", ast.Load()) if device else ast.Constant("cpu")], [])
            added.append(ast.Assign([ast.Name(built, ast.Store())], moved))
        added.append(ast.Assign([ast.Name(name, ast.Store())], ast.Name(built, ast.Load())))
        at = block.index(stmt) + 1
        block[at:at] = added
    if device:
        if "torch" not in module_imports(tree):
            add_import(tree, ast.Import([ast.alias("torch")]))
        at = max((i + 1 for i, s in enumerate(tree.body) if isinstance(s, (ast.Import, ast.ImportFrom))), default=0)
        tree.body.insert(at, ast.parse('device = torch.device("cpu")').body[0])
    return {}


TRANSFORMS = {"script": t_script, "trainer": t_trainer, "builder": t_builder, "params": t_params, "dict": t_dict, "alias": t_alias}


# ---- running


class Context:
    def __init__(self, root: Path, relative: str, texts: dict[str, str]):
        self.root, self.relative = root, relative
        self.package_dir = Path(relative).parent
        self.module = ".".join(Path(relative).with_suffix("").parts)
        self.other_text = "\n".join(t for p, t in texts.items() if p != relative)
        stem = re.escape(Path(relative).stem)
        notebooks = [p.read_text() for p in sorted(root.rglob("*.ipynb"))]  # their cells import the module too
        self.importers = "\n".join(t for t in [*(t for p, t in texts.items() if p != relative), *notebooks] if re.search(rf"\b{stem}\b", t))

    def mentioned(self, name: str) -> bool:
        """Whether a file naming this module names `name` too (a change to it could reach there)."""
        return re.search(rf"\b{re.escape(name)}\b", self.importers) is not None

    def sibling(self, name: str) -> str:
        return ".".join([*self.package_dir.parts, name])

    def new_path(self, name: str) -> str:
        return (self.package_dir / f"{name}.py").as_posix()


def projects() -> list[Path]:
    return sorted(p.parent for p in FIXTURES.rglob("expected.txt"))


def project_files(directory: Path) -> dict[str, str]:
    nested = [p for p in projects() if p != directory and directory in p.parents]
    return {
        p.relative_to(directory).as_posix(): p.read_text()
        for p in sorted(directory.rglob("*.py"))
        if not any(n in p.parents for n in nested)
    }


def lint_codes(root: Path, paths: list[str]) -> set[str]:
    selection = Selection.of(all_rules())
    project = ProjectIndex.for_paths([str(root)])
    return {
        f.code for p in paths for f in lint_path(str(root / p), selection, display_path=p, project=project)
        if not f.code.startswith("ML0")
    }


def run_case(directory: Path, relative: str, names: list[str], scratch: Path) -> dict[str, tuple[set, set] | None]:
    """For one file: each transform's (codes before, codes after), None where it does not apply."""
    texts = project_files(directory)
    identity = ast.unparse(ast.parse(texts[relative]))
    forms = {}
    for name in names:
        tree = ast.parse(texts[relative])
        added = TRANSFORMS[name](tree, Context(directory, relative, texts))
        text = added is not None and ast.unparse(ast.fix_missing_locations(tree))
        if added is not None and (added or text != identity):
            forms[name] = (text, added)
    results = {name: lint_form(directory, relative, text, added, scratch) for name, (text, added) in forms.items()}
    base = lint_form(directory, relative, identity, {}, scratch) if forms else set()
    return {n: (base, results[n]) if n in results else None for n in names}


def lint_form(directory: Path, relative: str, text: str, added: dict[str, str], scratch: Path) -> set[str]:
    """The codes found in a file rewritten to `text` and in the modules the rewrite `added`, in a copy of
    the project (the other files as they were)."""
    target = Path(tempfile.mkdtemp(dir=scratch)) / directory.name
    shutil.copytree(directory, target)
    (target / relative).write_text(text)
    for path, new in added.items():
        (target / path).write_text(new)
    return lint_codes(target, [relative, *added])


def failures(only=None, names=None) -> tuple[dict, list[tuple[str, str, str, str]]]:
    """Run every transform over every fixture file (or those whose "project/file" key `only` accepts).
    Returns the matrix {(family, transform): Counter(kept, lost, gained)} and the failures
    (file key, transform, "lost"/"gained", code)."""
    names = names or list(TRANSFORMS)
    matrix, found = {}, []
    with tempfile.TemporaryDirectory() as scratch:
        for directory in projects():
            for relative in project_files(directory):
                key = f"{directory.relative_to(FIXTURES).as_posix()}/{relative}"
                if only is not None and not only(key):
                    continue
                for name, result in run_case(directory, relative, names, Path(scratch)).items():
                    if result is None:
                        continue
                    before, after = result
                    matrix.setdefault(("files", name), Counter())["applied"] += 1
                    for code in before | after:
                        cell = matrix.setdefault((code[:3], name), Counter())
                        outcome = "kept" if code in before and code in after else "lost" if code in before else "gained"
                        cell[outcome] += 1
                        if outcome != "kept":
                            found.append((key, name, outcome, code))
    return matrix, found


def show(matrix) -> str:
    names = list(TRANSFORMS)
    rows = sorted({f for f, _ in matrix})
    lines = ["family  " + "".join(f"{n:>18}" for n in names), "(kept/lost/gained; files: transformed files)"]
    for family in rows:
        cells = []
        for n in names:
            c = matrix.get((family, n), Counter())
            cells.append(f"{c['applied']:>18}" if family == "files" else f"{c['kept']:>8}/{c['lost']:>3}/{c['gained']:>3}   ")
        lines.append(f"{family:<8}" + "".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    keys = {a for a in sys.argv[1:] if "/" in a}
    matrix, found = failures(only=keys.__contains__ if keys else None, names=[a for a in sys.argv[1:] if "/" not in a] or None)
    print(show(matrix))
    for f in sorted(found):
        print(*f)
