"""Discovers the rules: every `Rule` subclass defined in a module of the `mllint.rules` package.

Selecting rules, reporting events and naming findings need only what `mllint/rule_index.py` holds (written
from the rules by `python -m mllint.registry`; a test keeps it in sync): a rule's module, which imports the
analyses it reads, is imported when a file first gets past its text gate, or its documentation is asked for.
"""
from __future__ import annotations

import functools
import importlib
import sys

from mllint.findings import Severity
from mllint.rule import Rule

INDEX_FIELDS = ("module", "class_name", "name", "severity", "opt_in", "mandatory", "event", "requires_any_text", "tool_failure")


class RegistryError(Exception):
    pass


@functools.cache
def all_rules() -> dict[str, type[Rule]]:
    """Rules by code, in code order."""
    import pkgutil

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


class IndexedRule:
    """A rule as the index knows it: its attributes the index holds, the rest (its documentation, its
    check) from the rule's class, imported when first needed. Called with a file's context, it is the rule."""

    def __init__(self, code: str, module: str, class_name: str, name: str, severity: str, opt_in: bool,
                 mandatory: bool, event: str | None, requires_any_text: tuple[str, ...], tool_failure: bool) -> None:  # fmt: skip
        self.code, self.module, self.class_name, self.name = code, module, class_name, name
        self.severity, self.opt_in, self.mandatory, self.event = Severity.parse(severity), opt_in, mandatory, event
        self.requires_any_text, self.tool_failure = requires_any_text, tool_failure

    @functools.cached_property
    def rule(self) -> type[Rule]:
        return getattr(importlib.import_module(f"mllint.rules.{self.module}"), self.class_name)

    def __getattr__(self, attribute: str):
        if attribute.startswith("__") or attribute == "rule":
            raise AttributeError(attribute)
        return getattr(self.rule, attribute)

    def __call__(self, ctx) -> Rule:
        return self.rule(ctx)

    def __reduce__(self):  # to a worker process: the same code, that process's index
        return _indexed, (self.code,)

    def __repr__(self) -> str:
        return f"<rule {self.code}>"


@functools.cache
def rule_index() -> dict[str, IndexedRule]:
    """Rules by code, in code order, without importing them."""
    from mllint.rule_index import RULES

    return {code: IndexedRule(code, *row) for code, row in RULES.items()}


def _indexed(code: str) -> IndexedRule:
    return rule_index()[code]


def index_rows() -> dict[str, tuple]:
    """What the index holds of each rule, read from the rules themselves."""
    return {
        code: (rule.__module__.rpartition(".")[2], rule.__name__, rule.name, rule.severity.label,
               *(getattr(rule, field) for field in INDEX_FIELDS[4:]))
        for code, rule in all_rules().items()
    }  # fmt: skip


def rule_by_event(event: str) -> IndexedRule | None:
    return next((rule for rule in rule_index().values() if rule.event == event), None)


def expand_selector(selector: str) -> list[str]:
    """The codes a selector names: `ALL` (every rule), a prefix (`ML`, `ML1`, `ML10`: its rules except
    the opt-in ones) or a code (opt-in or not). Raises on unknown."""
    selector = selector.strip().upper()
    rules = rule_index()
    if selector == "ALL":
        return list(rules)
    if selector in rules:
        return [selector]
    matched = [code for code in rules if code.startswith(selector)]
    if not matched:
        raise RegistryError(f"unknown rule selector: {selector}")
    return [code for code in matched if not rules[code].opt_in]


def index_text() -> str:
    rows = index_rows()
    fields = ", ".join(INDEX_FIELDS)
    return (
        f'"""The rule index, written by `python -m mllint.registry` from the rules (a test keeps it in sync): for\n'
        f'each code, ({fields})."""\n'
        "RULES = {\n" + "".join(f"    {code!r}: {row!r},\n" for code, row in rows.items()) + "}\n"
    )


if __name__ == "__main__":
    text = index_text()  # before the file is opened for writing: a rule that fails to import leaves it whole
    with open(sys.argv[1] if len(sys.argv) > 1 else "mllint/rule_index.py", "w", encoding="utf-8") as handle:
        handle.write(text)
