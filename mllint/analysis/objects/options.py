"""The command-line options a file's argparse parsers define: one index per file, `parser name -> {dest:
default}`, read once (`ParserOptions`); `points_to.argparse_default` asks it what an option of `args =
parser.parse_args()` holds when the command line does not set it (None for an option without a default). `parser.set_defaults(k=v)` sets a
default (over `add_argument`'s); `set_defaults(**cfg)` leaves every default of the parser unknown."""
from __future__ import annotations

import ast

from mllint.analysis.syntax.folding import UNKNOWN, known_constant
from mllint.analysis.syntax.tree import position

CONFLICT = object()  # two options of one dest: unknown


class ParserOptions:
    def __init__(self, ctx) -> None:
        self.options: dict[str, dict[str, object]] = {}  # parser name -> dest -> the default (a constant, CONFLICT, None)
        self.unread: set[str] = set()  # parsers given defaults from a mapping (`set_defaults(**cfg)`): none known
        overridden: set[tuple[str, str]] = set()  # (parser, dest) given by `set_defaults`: it wins over `add_argument`'s
        calls = [c for c in ctx.index.of_type(ast.Call) if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)]
        for call in sorted((c for c in calls if c.func.attr in ("add_argument", "set_defaults")), key=position):
            parser = call.func.value.id
            known = self.options.setdefault(parser, {})
            if call.func.attr == "set_defaults":
                for keyword in call.keywords:
                    if keyword.arg is None:
                        self.unread.add(parser)
                    else:
                        known[keyword.arg] = keyword.value if isinstance(keyword.value, ast.Constant) else None
                        overridden.add((parser, keyword.arg))
                continue
            dest, default = _option(call)
            if dest is not None and ((parser, dest) not in overridden or any(k.arg == "default" for k in call.keywords)):
                known[dest] = CONFLICT if dest in known and (parser, dest) not in overridden else default
                overridden.discard((parser, dest))

    def default(self, parser: str, dest: str) -> ast.Constant | None:
        """The default of `parser`'s option `dest` as a constant node (a tuple of constants for `default=[60,
        120]`; False for a `store_true` flag, True for a `store_false` one); None when not known."""
        found = self.options.get(parser, {}).get(dest)
        return None if found is CONFLICT or parser in self.unread else found


def _option(added: ast.Call) -> tuple[str | None, ast.Constant | None]:
    """(the dest of `parser.add_argument("--inplace-act", ...)`: `inplace_act`, its default as `default`
    tells; None for an option given no default, as argparse leaves it)."""
    keywords = {k.arg: k.value for k in added.keywords}
    names = [a.value for a in added.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    dest = keywords["dest"].value if isinstance(keywords.get("dest"), ast.Constant) else next(
        (n.lstrip("-").replace("-", "_") for n in names if n.startswith("--")), names[0].lstrip("-").replace("-", "_") if names else None)
    action = keywords.get("action")
    flag = action.value if isinstance(action, ast.Constant) else None
    default = keywords.get("default")
    listed = known_constant(default, {}) if isinstance(default, ast.List | ast.Tuple) else UNKNOWN
    if isinstance(default, ast.Constant):
        return dest, default
    if listed is not UNKNOWN:
        return dest, ast.copy_location(ast.Constant(listed), default)
    if default is None and flag in ("store_true", "store_false"):
        return dest, ast.Constant(flag == "store_false")
    if default is None and flag in (None, "store") and _optional(names, keywords):
        return dest, ast.copy_location(ast.Constant(None), added)  # argparse's own default
    return dest, None


def _optional(names: list[str], keywords: dict[str, ast.AST]) -> bool:
    """Is the option one the command line may leave out (`--config`, not `required=True`), holding None then?"""
    required = keywords.get("required")
    return bool(names) and all(n.startswith("-") for n in names) and (required is None or isinstance(required, ast.Constant) and not required.value)
