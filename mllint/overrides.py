"""The command line's settings: options and `--config` values, checked like a configuration file's keys,
on top of what the configuration files say."""
from __future__ import annotations

import glob
import os
from pathlib import Path

from mllint.config import ConfigError, Resolver, parse_table, tomllib


def split_codes(values: tuple[str, ...]) -> tuple[str, ...] | None:
    """`--select ML1,ML3 --select ML5` as ("ML1", "ML3", "ML5"); None when the option is not given."""
    if not values:
        return None
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def command_line_resolver(
    configs, isolated, select, extend_select, ignore, per_file_ignores, fail_on, force_exclude, extend_exclude, unfixable,
    exclude=(), extend_per_file_ignores=(), respect_gitignore=None,
) -> Resolver:
    """The settings of a run; a bad option or `--config` value raises ConfigError."""
    config_files = [c for c in configs if "=" not in c]
    inline_configs = [c for c in configs if "=" in c]
    if len(config_files) > 1:
        raise ConfigError("--config names more than one file")
    if config_files and not os.path.isfile(config_files[0]):
        raise ConfigError(f"--config {config_files[0]!r}: no such file")
    overrides = _overrides(
        split_codes(select), split_codes(extend_select), split_codes(ignore), per_file_ignores,
        fail_on, force_exclude, inline_configs,
    )  # fmt: skip
    if exclude:
        overrides["exclude"] = tuple(_from_working_directory(p) for p in parse_table({"exclude": list(exclude)}, "--exclude")["exclude"])
    if respect_gitignore is not None:
        overrides["respect_gitignore"] = respect_gitignore
    additions = parse_table({
        "extend-exclude": list(extend_exclude), "unfixable": list(split_codes(unfixable) or ()),
        "per-file-ignores": _per_file_table(extend_per_file_ignores, "--extend-per-file-ignores"),
    }, "command line")  # fmt: skip
    additions["extend_exclude"] = tuple(_from_working_directory(p) for p in additions["extend_exclude"])
    return Resolver(overrides, isolated, Path(config_files[0]) if config_files else None, additions)


def _from_working_directory(pattern: str) -> str:
    """A pattern naming a path (`experiments/old`) is relative to the working directory, not to the
    configuration's directory; a bare name (`*_pb2.py`) matches at any depth, as in a configuration file."""
    if "/" not in pattern.rstrip("/") or os.path.isabs(pattern):
        return pattern
    return Path(glob.escape(os.getcwd()), pattern).as_posix()


def _overrides(select, extend_select, ignore, per_file_ignores, fail_on, force_exclude, inline_configs) -> dict:
    """Command-line settings, checked like configuration-file settings."""
    table: dict = {}
    for text in inline_configs:
        try:
            table.update(tomllib.loads(text))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"--config {text!r}: not a path to a file nor a valid `key = value`: {error}") from None
    for key, value in (("select", select), ("extend-select", extend_select), ("ignore", ignore)):
        if value is not None:
            table[key] = list(value)
    if per_file_ignores:
        table["per-file-ignores"] = _per_file_table(per_file_ignores, "--per-file-ignores")
    if fail_on is not None:
        table["fail-on"] = fail_on
    if force_exclude is not None:
        table["force-exclude"] = force_exclude
    if "extend" in table:
        raise ConfigError("--config: `extend` names a file to inherit from: use `--config PATH` instead")
    return parse_table(table, "command line")


def _per_file_table(entries: tuple[str, ...], option: str) -> dict[str, list[str]]:
    """`GLOB:CODES` options as a `per-file-ignores` table."""
    table: dict[str, list[str]] = {}
    for entry in entries:
        pattern, _, codes = entry.rpartition(":")
        if not pattern:
            raise ConfigError(f"{option} {entry!r}: expected GLOB:CODES")
        table.setdefault(pattern, []).extend(codes.split(","))
    return table
