"""Discovers the rules: every `Rule` subclass defined in a module of the `mllint.rules` package."""
from __future__ import annotations

import functools
import importlib
import pkgutil

from mllint.rule import Rule


class RegistryError(Exception):
    pass


@functools.cache
def all_rules() -> dict[str, type[Rule]]:
    """Rules by code, in code order."""
    import mllint.rules as package

    found: dict[str, type[Rule]] = {}
    for module_info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value.__module__ == module.__name__:
                if value.code in found:
                    raise RegistryError(f"rule code {value.code} is defined twice")
                found[value.code] = value
    return dict(sorted(found.items()))


def rule_by_event(event: str) -> type[Rule] | None:
    return next((rule for rule in all_rules().values() if rule.event == event), None)


def expand_selector(selector: str) -> list[str]:
    """The codes a selector names: `ALL` (every rule), a prefix (`ML`, `ML1`, `ML10`: its rules except
    the opt-in ones) or a code (opt-in or not). Raises on unknown."""
    selector = selector.strip().upper()
    rules = all_rules()
    if selector == "ALL":
        return list(rules)
    if selector in rules:
        return [selector]
    matched = [code for code in rules if code.startswith(selector)]
    if not matched:
        raise RegistryError(f"unknown rule selector: {selector}")
    return [code for code in matched if not rules[code].opt_in]
