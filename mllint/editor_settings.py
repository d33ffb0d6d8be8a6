"""The language server's settings from the editor: `initializationOptions` at start, then what the client
answers to `workspace/configuration` (section `mllint`) or sends with `workspace/didChangeConfiguration`.

    {"select": ["ML1"], "extendSelect": ["ML801"], "ignore": ["ML4"], "unsafeFixes": false,
     "configuration": "path/to/mllint.toml", "logLevel": "warning"}

The keys may also sit under `"mllint"` (VS Code's `settings.json` nests them so). They override the
configuration files as the command line's options do; `configuration` names the file to use instead of the
closest one (relative to the workspace's root). A value of the wrong type is an error shown on every
document, as a broken configuration file is.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
KEYS = ("select", "extendSelect", "ignore", "unsafeFixes", "configuration", "logLevel")


class SettingsError(Exception):
    pass


@dataclass(frozen=True)
class EditorSettings:
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False  # fix-all applies the unsafe fixes too
    configuration: str | None = None
    log_level: str = "warning"
    error: str | None = None  # what was wrong with the settings the editor sent, if anything

    @classmethod
    def parse(cls, value: Any, root: str | None) -> "EditorSettings":
        """The settings in `value` (None, or not a table: the defaults); a wrong value gives the defaults
        with its error."""
        table = value.get("mllint", value) if isinstance(value, dict) else {}
        try:
            return cls._read(table if isinstance(table, dict) else {}, root)
        except SettingsError as error:
            return cls(error=f"mllint settings error: {error}")

    @classmethod
    def _read(cls, table: dict, root: str | None) -> "EditorSettings":
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            raise SettingsError(f"unknown setting {unknown[0]!r}; the settings are {', '.join(KEYS)}")
        configuration = _typed(table, "configuration", str, "a path", None)
        if configuration is not None and root is not None:
            configuration = os.path.join(root, os.path.expanduser(configuration))
        log_level = _typed(table, "logLevel", str, "a string", "warning").lower()
        if log_level not in LOG_LEVELS:
            raise SettingsError(f"`logLevel`: expected one of {', '.join(LOG_LEVELS)}, got {log_level!r}")
        return cls(
            select=_codes(table, "select"),
            extend_select=_codes(table, "extendSelect"),
            ignore=_codes(table, "ignore"),
            unsafe_fixes=_typed(table, "unsafeFixes", bool, "true or false", False),
            configuration=configuration,
            log_level=log_level,
        )

    def resolver(self):
        """The configuration of a lint: the files', overridden by these settings (ConfigError when a code
        or the configuration file is wrong)."""
        from mllint.overrides import command_line_resolver

        configs = (self.configuration,) if self.configuration else ()
        return command_line_resolver(configs, False, self.select, self.extend_select, self.ignore, (), None, None, (), ())


def _typed(table: dict, key: str, kind: type, expected: str, default: Any) -> Any:
    value = table.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise SettingsError(f"`{key}`: expected {expected}, got {value!r}")
    return value


def _codes(table: dict, key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise SettingsError(f"`{key}`: expected a list of codes, got {value!r}")
    return tuple(value)
