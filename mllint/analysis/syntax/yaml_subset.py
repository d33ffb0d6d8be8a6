"""A small reader for the YAML of a project's configuration file (`yaml.safe_load(open("config.yaml"))`), or of
a string of the program (`yaml.safe_load(DEFAULTS)`), so its values are constants to the analyses: block mappings and block sequences by indentation, flow lists of
scalars (`[30, 60, 80]`), and scalars as PyYAML's safe loader reads them (ints, floats written with a dot,
`true`/`false`/`yes`/`no`/`on`/`off`, `null`/`~`, quoted and plain strings). It executes nothing.

`read_yaml(path)` gives the document as a Python expression tree (`Mapping`, `ast.List`, `ast.Constant`),
each node placed at `at`; None for a file larger than `MAX_BYTES`, unreadable, or holding anything else
(anchors, aliases, tags, block scalars, flow mappings, several documents): the reader is silent on what it
does not understand. A scalar PyYAML reads otherwise than Python (`1e-3` is a string to it, `0o7`, `10:30`,
dates) is an `Unread` node: a value, not a constant. `read_json`/`parse_json` give a JSON document the
same way (Python's own reader; `NaN`/`Infinity` are `Unread`).
"""
from __future__ import annotations

import ast
import json
import os
import re

MAX_BYTES = 64 * 1024
INT = re.compile(r"[-+]?[0-9]+\Z")
FLOAT = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)\Z")
WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False, "null": None, "~": None, "": None}
SPECIAL = set("&*!|>{%@`")


class _NotUnderstood(Exception):
    pass


class Mapping(ast.Dict):
    """A mapping of a configuration document: its items are read by attribute too (`cfg.model.head`, as
    OmegaConf's `DictConfig` reads them)."""


class Unread(ast.expr):
    """A scalar of the file whose value is not read."""

    _fields = ()


def read_yaml(path: str, at: ast.AST) -> ast.AST | None:
    """The document of the YAML file at `path` as an expression tree placed at `at`; None when not read."""
    text = _read(path)
    return parse_yaml(text, at) if text is not None else None


def parse_yaml(text: str, at: ast.AST) -> ast.AST | None:
    """The YAML document `text` (a file's, or a string of the program: `yaml.safe_load(DEFAULTS)`) as an
    expression tree placed at `at`; None when not read."""
    try:
        lines = _lines(text)
        if not lines:
            return None
        node, rest = _block(lines, lines[0][0])
        if rest:
            return None
    except _NotUnderstood:
        return None
    return _placed(node, at)


def read_json(path: str, at: ast.AST) -> ast.AST | None:
    """`read_yaml` of a JSON file."""
    text = _read(path)
    return parse_json(text, at) if text is not None else None


def parse_json(text: str, at: ast.AST) -> ast.AST | None:
    """The JSON document `text` as an expression tree placed at `at` (objects are `Mapping`s); None when it is
    no JSON, or holds a number Python's reader makes otherwise than a constant of the program would be."""
    try:
        value = json.loads(text, parse_constant=lambda name: _UNREAD)
    except (ValueError, RecursionError):
        return None
    return _placed(_tree(value), at) if isinstance(value, dict | list) else None


def _tree(value) -> ast.AST:
    if isinstance(value, dict):
        return Mapping(keys=[ast.Constant(k) for k in value], values=[_tree(v) for v in value.values()])
    if isinstance(value, list):
        return ast.List(elts=[_tree(v) for v in value], ctx=ast.Load())
    return _constant(value)


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _placed(node: ast.AST, at: ast.AST) -> ast.AST:
    for inner in ast.walk(node):
        ast.copy_location(inner, at)
    return node


def _lines(text: str) -> list[tuple[int, str]]:
    """(indentation, content) of each line that holds something, comments cut."""
    found = []
    for number, raw in enumerate(text.splitlines()):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise _NotUnderstood
        content = _uncommented(raw).rstrip()
        if not content.strip() or (number == 0 and content.strip() == "---"):
            continue
        if content.strip() in ("---", "..."):
            raise _NotUnderstood  # another document
        found.append((len(content) - len(content.lstrip()), content.strip()))
    return found


def _uncommented(line: str) -> str:
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _block(lines: list, indent: int) -> tuple[ast.AST, list]:
    """The mapping or sequence whose entries start at `indent`, and the lines after it."""
    if lines[0][1].startswith("- ") or lines[0][1] == "-":
        return _sequence(lines, indent)
    return _mapping(lines, indent)


def _mapping(lines: list, indent: int) -> tuple[ast.AST, list]:
    keys, values = [], []
    while lines and lines[0][0] == indent:
        text = lines[0][1]
        key, colon, value = text.partition(": ") if ": " in text else (text[:-1], ":", "") if text.endswith(":") else ("", "", "")
        if not colon or not key or key[0] in SPECIAL or key in [k.value for k in keys if isinstance(k, ast.Constant)]:
            raise _NotUnderstood
        keys.append(_constant(_scalar(key)))
        if not isinstance(keys[-1], ast.Constant):
            raise _NotUnderstood
        lines = lines[1:]
        if value.strip():
            values.append(_value(value.strip()))
        elif lines and lines[0][0] > indent:
            node, lines = _block(lines, lines[0][0])
            values.append(node)
        elif lines and lines[0][0] == indent and lines[0][1].startswith("-"):
            node, lines = _sequence(lines, indent)  # a sequence at its key's indentation
            values.append(node)
        else:
            values.append(ast.Constant(None))
    if lines and lines[0][0] > indent:
        raise _NotUnderstood
    return Mapping(keys=keys, values=values), lines


def _sequence(lines: list, indent: int) -> tuple[ast.AST, list]:
    items = []
    while lines and lines[0][0] == indent and (lines[0][1].startswith("- ") or lines[0][1] == "-"):
        item = lines[0][1][1:].strip()
        if not item:
            raise _NotUnderstood
        if ": " in item or item.endswith(":"):  # `- model: tagger`: a mapping whose keys start after the dash
            inner = indent + len(lines[0][1]) - len(item)
            node, lines = _mapping([(inner, item), *lines[1:]], inner)
            items.append(node)
            continue
        items.append(_value(item))
        lines = lines[1:]
    if lines and lines[0][0] > indent:
        raise _NotUnderstood
    return ast.List(elts=items, ctx=ast.Load()), lines


_UNREAD = object()


def _constant(value) -> ast.AST:
    return Unread() if value is _UNREAD else ast.Constant(value)


def _value(text: str) -> ast.AST:
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        parts = [p.strip() for p in inner.split(",")] if inner else []
        if any(not p or p[0] in "[{" for p in parts):
            raise _NotUnderstood
        return ast.List(elts=[_constant(_scalar(p)) for p in parts], ctx=ast.Load())
    return _constant(_scalar(text))


def _scalar(text: str):
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        if "\\" in inner or text[0] in inner.replace(text[0] * 2, ""):
            raise _NotUnderstood
        return inner.replace(text[0] * 2, text[0]) if text[0] == "'" else inner
    if text[0] in SPECIAL or text[0] in "'\"[]," or ": " in text or "_" in text and INT.match(text.replace("_", "")):
        raise _NotUnderstood
    if re.match(r"[-+]?0[0-9]|[0-9]+:[0-9]|[0-9]{4}-[0-9]|[-+]?[0-9.]+[eE]|0[xo]|[-+]?\.(inf|nan)", text, re.IGNORECASE):
        return _UNREAD  # octal, sexagesimal, dates, exponents, hexadecimal, infinities
    if INT.match(text):
        return int(text)
    if FLOAT.match(text):
        return float(text)
    lowered = text.lower()
    if lowered in WORDS and text in (lowered, lowered.capitalize(), lowered.upper()):
        return WORDS[lowered]
    return text
