"""Configuration: `[tool.mllint]` in `pyproject.toml`, or `mllint.toml`; each file uses the closest one above
it, `extend` inherits explicitly, and the command line overrides what the files say."""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mllint import budget
from mllint.engine import Selection
from mllint.findings import Severity
from mllint.registry import RegistryError, expand_selector, rule_index
from mllint.source import SourceError, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILES = ("mllint.toml", "pyproject.toml")  # in a directory holding both, mllint.toml wins
MAX_CONFIG_BYTES = 1024 * 1024
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "*.egg-info", "build", "dist",
    "site-packages", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".mllint_cache",
    "node_modules", "__pypackages__", ".ipynb_checkpoints",
)  # fmt: skip


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    root: Path  # patterns in exclude and per-file-ignores are relative to this directory
    source: Path | None = None  # the configuration file, if any
    select: tuple[str, ...] = ("ML",)  # every rule but the opt-in ones
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unfixable: tuple[str, ...] = ()  # rules whose fixes are never applied nor offered
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    fail_on: Severity = Severity.INFO
    severity: dict[str, Severity] = field(default_factory=dict)
    analysis_budget: float = budget.DEFAULT_SECONDS  # CPU seconds of analysis per file (0: no limit)

    def codes(self) -> set[str]:
        selected = {code for selector in (*self.select, *self.extend_select) for code in expand_selector(selector)}
        return selected - {code for selector in self.ignore for code in expand_selector(selector)}

    def selection_for(self, path: str) -> Selection:
        codes = self.codes()
        relative = _relative(path, self.root)
        for pattern, ignored in self.per_file_ignores:
            if _matches(relative, pattern):
                codes -= {code for selector in ignored for code in expand_selector(selector)}
        unfixable = {code for selector in self.unfixable for code in expand_selector(selector)}
        return Selection.of(codes, self.severity, unfixable, self.analysis_budget)

    def is_excluded(self, path: str) -> bool:
        """Does an exclude pattern match the path's name or its path relative to the root?"""
        relative = _relative(path, self.root)
        absolute = Path(os.path.abspath(path)).as_posix()
        return any(
            _matches(absolute if os.path.isabs(pattern) else relative, pattern)
            for pattern in (*self.exclude, *self.extend_exclude)
        )  # the command line's patterns with a `/` are absolute: relative to the working directory

    def is_excluded_with_parents(self, path: str) -> bool:
        """The same for the path or any directory above it, up to the root (for explicitly named files)."""
        current = Path(os.path.abspath(path))
        while True:
            if self.is_excluded(str(current)):
                return True
            if current.parent == current or current == self.root:
                return False
            current = current.parent

    def describe(self) -> str:
        lines = [f"# settings from {self.source or 'defaults'} (root {self.root})"]
        for key, value in dataclasses.asdict(self).items():
            if key not in ("root", "source"):
                lines.append(f"{key.replace('_', '-')} = {_show(value)}")
        return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, Severity):
        return value.label
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


def _relative(path: str, root: Path) -> str:
    absolute = os.path.abspath(path)
    try:
        return Path(absolute).relative_to(root).as_posix()
    except ValueError:
        return Path(absolute).as_posix()


def _matches(relative: str, pattern: str) -> bool:
    """A glob matches a path by its name (`*.egg-info`, `build`) or by its path relative to the root."""
    pattern = pattern.rstrip("/")
    name = relative.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(relative, pattern)


# The schema: every key, the type it takes and how it is read. `where` names the file and the key.

def _toml_type(value: Any) -> str:
    """The TOML name of a value's type, for error messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string ({value!r})"
    names = {int: "an integer", float: "a float", list: "an array", dict: "a table"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), "a date or time")


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected an array of strings, got {_toml_type(value)}")
    wrong = [v for v in value if not isinstance(v, str)]
    if wrong:
        raise ConfigError(f"{where}: expected an array of strings, got an array holding {_toml_type(wrong[0])}")
    return tuple(value)


def _selectors(value: Any, where: str) -> tuple[str, ...]:
    selectors = tuple(s.strip().upper() for v in _string_list(value, where) for s in v.split(",") if s.strip())
    for selector in selectors:
        try:
            expand_selector(selector)
        except RegistryError as error:
            raise ConfigError(f"{where}: {error}") from None
    return selectors


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {_toml_type(value)}")
    return value


def _severity(value: Any, where: str) -> Severity:
    if not isinstance(value, str):
        raise ConfigError(f'{where}: expected "error", "warning" or "info", got {_toml_type(value)}')
    try:
        return Severity.parse(value)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None


def _table(value: Any, where: str, expected: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table of {expected}, got {_toml_type(value)}")
    return value


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    table = _table(value, where, "glob = [codes]")
    return tuple((pattern, _selectors(codes, f"{where}.{pattern}")) for pattern, codes in table.items())


def _severity_overrides(value: Any, where: str) -> dict[str, Severity]:
    table = _table(value, where, 'CODE = "error" | "warning" | "info"')
    known = rule_index()
    overrides = {}
    for code, level in table.items():
        if code.upper() not in known:
            raise ConfigError(f"{where}: unknown rule code {code}")
        overrides[code.upper()] = _severity(level, f"{where}.{code}")
    return overrides


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        got = value if isinstance(value, (int, float)) and not isinstance(value, bool) else _toml_type(value)
        raise ConfigError(f"{where}: expected a number of seconds, 0 or more (0: no limit), got {got}")
    return float(value)


def _path(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a path, got {_toml_type(value)}")
    return value


@dataclass(frozen=True)
class Key:
    field: str | None  # the Settings field it sets
    read: Callable[[Any, str], Any]  # checks the TOML value's type and allowed values, and converts it


SCHEMA = {
    "extend": Key(None, _path),  # read by load_file: the file whose settings this one overrides
    "select": Key("select", _selectors),
    "extend-select": Key("extend_select", _selectors),
    "ignore": Key("ignore", _selectors),
    "per-file-ignores": Key("per_file_ignores", _per_file_ignores),
    "unfixable": Key("unfixable", _selectors),
    "exclude": Key("exclude", _string_list),
    "extend-exclude": Key("extend_exclude", _string_list),
    "respect-gitignore": Key("respect_gitignore", _boolean),
    "force-exclude": Key("force_exclude", _boolean),
    "fail-on": Key("fail_on", _severity),
    "severity": Key("severity", _severity_overrides),
    "analysis-budget": Key("analysis_budget", _seconds),
}


def parse_table(table: dict[str, Any], where: str, key_prefix: str = "", file: Path | None = None) -> dict[str, Any]:
    """Settings fields from a configuration table, checked against SCHEMA; a problem raises ConfigError
    naming `where` (the file, with the line and column of the key when the table is `file`'s) and the key
    (`key_prefix` + key: `tool.mllint.select` in a pyproject.toml)."""
    fields: dict[str, Any] = {}
    for key, value in table.items():
        position = _key_position(file, key_prefix, key) if file is not None else None
        here = f"{where}:{position[0]}:{position[1]}" if position else where
        if key not in SCHEMA:
            import difflib  # here: loaded only for an unknown key

            close = difflib.get_close_matches(key, list(SCHEMA), n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{here}: unknown key `{key_prefix}{key}`{hint}; the keys are {', '.join(SCHEMA)}")
        read = SCHEMA[key].read(value, f"{here}: `{key_prefix}{key}`")
        if SCHEMA[key].field is not None:
            fields[SCHEMA[key].field] = read
    return fields


TABLE_HEADER = re.compile(r"\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?")


def _key_position(file: Path, key_prefix: str, key: str) -> tuple[int, int] | None:
    """Where `key` of the mllint table is written in `file` (1-based line and column): its assignment
    (`key = ...`, `key.sub = ...`) in the table, or the header of its own table (`[tool.mllint.severity]`).
    Only computed for a key being checked, so the file is read again rather than kept."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    names = {key, f'"{key}"', f"'{key}'"}
    table = ""
    for number, line in enumerate(lines, 1):
        header = TABLE_HEADER.fullmatch(line)
        if header:
            table = re.sub(r"\s*\.\s*", ".", header.group(1)).replace('"', "").replace("'", "") + "."
            if table == f"{key_prefix}{key}.":
                return number, line.index("[") + 1
            continue
        stripped = line.lstrip()
        name = re.split(r"\s*[=.]", stripped, maxsplit=1)[0]
        if table == key_prefix and name in names:
            return number, len(line) - len(stripped) + 1
    return None


def _table_of(path: Path) -> dict[str, Any] | None:
    """The mllint table of a configuration file, or None for a pyproject.toml without one."""
    try:
        stat = path.stat()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    return _parse_table_file(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _parse_table_file(path: Path, mtime_ns: int, size: int) -> dict[str, Any] | None:
    """Cached by modification time and size, so an edited file is read again (the LSP server lives long)."""
    try:
        data = tomllib.loads(read_regular(str(path), MAX_CONFIG_BYTES).decode("utf-8"))
    except SourceError as error:
        raise ConfigError(f"{path}: cannot read: {error.message}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        position = re.search(r" \(at line (\d+), column (\d+)\)$", str(error))
        where, message = (f"{path}:{position[1]}:{position[2]}", str(error)[: position.start()]) if position else (path, error)
        raise ConfigError(f"{where}: invalid TOML: {message}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("mllint") if isinstance(tool, dict) else None
        if table is not None and not isinstance(table, dict):
            raise ConfigError(f"{path}: `tool.mllint`: expected a table")
        return table
    return data


def load_file(path: Path, seen: tuple[Path, ...] = ()) -> Settings:
    """Settings from one configuration file, with what it `extend`s underneath."""
    path = path.resolve()
    if path in seen:
        raise ConfigError(f"{path}: `extend` cycle: {' -> '.join(map(str, (*seen, path)))}")
    table = _table_of(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.mllint] table")
    key_prefix = "tool.mllint." if path.name == "pyproject.toml" else ""
    fields = parse_table(table, str(path), key_prefix, file=path)
    base = Settings(root=path.parent)
    if "extend" in table:
        extended = load_file(path.parent / os.path.expanduser(table["extend"]), (*seen, path))
        base = dataclasses.replace(extended, root=path.parent)
    return dataclasses.replace(base, source=path, **fields)


def find_config_file(directory: Path) -> Path | None:
    """The closest configuration file at or above `directory` that configures mllint."""
    for folder in (directory, *directory.parents):
        for name in CONFIG_FILES:
            candidate = folder / name
            if _is_file(candidate) and _table_of(candidate) is not None:
                return candidate
    return None


def _is_file(path: Path) -> bool:
    """Is there a file at `path`? Not when a directory above cannot be searched (permission denied)."""
    try:
        return path.is_file()
    except OSError:
        return False


class Resolver:
    """Settings for each file: from the closest configuration above it, then the command-line overrides."""

    def __init__(
        self,
        overrides: dict[str, Any],
        isolated: bool = False,
        config_file: Path | None = None,
        additions: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.overrides = overrides
        self.additions = additions or {}  # fields the command line extends (`--extend-exclude`, `--unfixable`)
        self.isolated = isolated
        self.config_file = config_file
        self._by_directory: dict[Path, Settings] = {}

    def settings_for(self, path: str) -> Settings:
        directory = Path(os.path.abspath(path))
        if not directory.is_dir():
            directory = directory.parent
        if directory not in self._by_directory:
            base = self._base(directory)
            settings = dataclasses.replace(base, **self.overrides)
            extended = {name: getattr(settings, name) + added for name, added in self.additions.items()}
            for name in ("extend_select", "ignore"):  # they add to the file's, unless `--select` replaces it
                if "select" in self.overrides:
                    extended[name] = self.overrides.get(name, ())
                elif name in self.overrides:
                    extended[name] = getattr(base, name) + self.overrides[name]
            self._by_directory[directory] = dataclasses.replace(settings, **extended)
        return self._by_directory[directory]

    def _base(self, directory: Path) -> Settings:
        if self.config_file is not None:
            return load_file(self.config_file)
        if self.isolated:
            return Settings(root=Path.cwd())
        found = find_config_file(directory)
        return load_file(found) if found else Settings(root=Path.cwd())
