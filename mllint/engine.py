"""The engine: parse a file once with `ast`, run every enabled rule over it in one traversal, apply
suppressions and report what the meta rules (ML0xx) are about."""
from __future__ import annotations

import ast
import dataclasses
import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

from mllint import noqa
from mllint.analysis.program.project import ProjectIndex, forget_kept, module_name_of, release_let_go, stamps_held
from mllint.analysis.syntax.names import imported_modules
from mllint.budget import DEFAULT_SECONDS, CutShort, limit
from mllint.budget import check as check_budget
from mllint.context import FileContext
from mllint.findings import Applicability, Edit, Finding, Fix, Position, Severity
from mllint.notebook import load as load_notebook
from mllint.registry import rule_index
from mllint.rule import Rule
from mllint.source import MAX_FILE_BYTES, MAX_NOTEBOOK_BYTES, SourceError, SourceText, is_notebook, parse_former_names
from mllint.source import parse_python, read_source, too_large


class Event:
    """What meta rules report; a meta rule names one in its `event` attribute."""

    UNREADABLE = "unreadable-file"
    SYNTAX_ERROR = "syntax-error"
    UNUSED_NOQA = "unused-noqa"
    UNKNOWN_NOQA_CODE = "unknown-noqa-code"
    FIX_ERROR = "fix-error"
    CUT_SHORT = "analysis-cut-short"
    INTERNAL_ERROR = "internal-error"


@dataclass(frozen=True)
class Selection:
    """The rules enabled for one file and the severities they report with."""

    rules: tuple[type[Rule], ...]
    severities: dict[str, Severity] = field(default_factory=dict)
    unfixable: frozenset[str] = frozenset()  # codes whose findings carry no fix
    budget: float = DEFAULT_SECONDS  # the analysis budget of the file, in seconds (0: none)
    ignore_noqa: bool = False  # `--ignore-noqa`: `# noqa` comments silence nothing (nor are they checked)

    @classmethod
    def of(
        cls,
        codes: Iterable[str],
        severities: dict[str, Severity] | None = None,
        unfixable: Iterable[str] = (),
        seconds: float = DEFAULT_SECONDS,
    ) -> "Selection":
        known = rule_index()
        codes = set(codes) | {code for code, rule in known.items() if rule.mandatory}
        return cls(tuple(known[code] for code in sorted(codes)), severities or {}, frozenset(unfixable), seconds)

    def event_rule(self, event: str) -> type[Rule] | None:
        return next((rule for rule in self.rules if rule.event == event), None)

    @property
    def checkers(self) -> tuple[type[Rule], ...]:
        return tuple(rule for rule in self.rules if rule.event is None)


def lint_path(path: str, selection: Selection, display_path: str | None = None, project: ProjectIndex | None = None) -> list[Finding]:
    """Lint a file on disk, in the project of its package root unless another project is given."""
    display_path = display_path or path
    try:
        text = read_source(path).text
    except SourceError as error:
        return event_findings(selection, Event.UNREADABLE, display_path, error.position, error.message)
    project = project or ProjectIndex.for_paths([path])
    if is_notebook(path):
        return lint_notebook(text, display_path, selection, project, real_path=path)
    return lint_text(text, display_path, selection, project, real_path=path)


def lint_notebook(
    json_text: str, path: str, selection: Selection, project: ProjectIndex | None = None, real_path: str | None = None
) -> list[Finding]:
    """Lint a notebook's code cells as one program; its findings are reported per cell."""
    try:
        _within(json_text, MAX_NOTEBOOK_BYTES)
        notebook = load_notebook(json_text)
    except SourceError as error:
        return event_findings(selection, Event.UNREADABLE, path, error.position, error.message)
    return notebook.to_cells(lint_text(notebook.python, path, selection, project, real_path), notebook.python)


def lint_text(
    text: str, path: str, selection: Selection, project: ProjectIndex | None = None, real_path: str | None = None
) -> list[Finding]:
    """Lint a text as the module at `real_path` (default: `path`) of `project` (None: the text alone;
    its own classes and functions are still known). A text larger than a file mllint reads (an editor's
    buffer) is reported as the file would be."""
    try:
        _within(text, MAX_FILE_BYTES)
    except SourceError as error:
        return event_findings(selection, Event.UNREADABLE, path, error.position, error.message)
    with cycle_collector_off(), stamps_held(), project.running(real_path or path) if project is not None else nullcontext():
        return _lint(text, path, selection, project, real_path or path)


def _within(text: str, limit: int) -> None:
    """SourceError when `text` is larger than `limit` bytes in UTF-8 (encoded only when it may be)."""
    if len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit:
        raise too_large(len(text.encode("utf-8", "surrogatepass")), limit)


@contextmanager
def cycle_collector_off() -> Iterator[None]:
    """A lint leaves no reference cycles (tests/test_no_cycles.py): what it builds, the syntax tree's many
    small objects first, is freed by reference counting, and the cyclic garbage collector would only
    spend a fifth of the time scanning it, and the summaries and parsed modules a run keeps, again and
    again. Whatever cycles a rule creates anyway are collected once it is back on."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _lint(text: str, path: str, selection: Selection, project: ProjectIndex | None, real_path: str) -> list[Finding]:
    source = SourceText(text)
    syntax_error: list[Finding] = []
    try:
        tree = parse_python(text, path)
    except SyntaxError as error:
        position = Position(error.lineno or 1, max(error.offset or 1, 1))
        message = f"{type(error).__name__}: {error.msg}"
        recovered = parse_former_names(text, path)
        if recovered is None:
            return event_findings(selection, Event.SYNTAX_ERROR, path, position, message)
        tree, names = recovered
        message += f" (`{'`, `'.join(names)}` used as a name, a keyword since Python 3.7: linted as a name)"
        syntax_error = event_findings(selection, Event.SYNTAX_ERROR, path, position, message)
    except (ValueError, RecursionError, MemoryError) as error:
        message = "too deeply nested to parse" if isinstance(error, RecursionError) else str(error)
        return event_findings(selection, Event.SYNTAX_ERROR, path, Position(1, 1), message)

    ctx = FileContext(path, source, tree, module_name_of(real_path)[1], real_path, project)
    checkers = _meeting_text_gates(selection.checkers, text, ctx)
    # A crash is mllint's bug, not the file's: no `# noqa` (a bare one on line 1, say) may hide it.
    crashes, stopped = _run_checkers(ctx, checkers, selection.budget)
    errors = [
        finding
        for crash in crashes
        for finding in event_findings(selection, Event.INTERNAL_ERROR, path, crash.position, crash.message, crash.traceback)
    ]
    if stopped is not None:
        errors += event_findings(selection, Event.CUT_SHORT, path, stopped, _cut_short_message(stopped, selection.budget))
    findings = _finish(ctx.findings, ctx, selection, path, complete=stopped is None)
    ctx.release()
    release_let_go()
    if syntax_error:  # a fixed file would not parse either: report only
        findings = [dataclasses.replace(f, fix=None) for f in findings] + syntax_error
    return sorted(findings + errors, key=lambda f: f.sort_key)


def _meeting_text_gates(rules: tuple[type[Rule], ...], text: str, ctx: FileContext) -> tuple[type[Rule], ...]:
    """The rules whose `requires_any_text` the text meets, or the text of a project module it imports: the
    objects a builder there makes (`model, criterion, opt = build(cfg)`) are the file's to check. Each word
    is looked for once (rules share them)."""
    found: dict[str, bool] = {}
    imported = _imported_project_modules(ctx)

    def mentions(word: str) -> bool:
        if word not in found:
            found[word] = word in text or any(ctx.project.mentions(m, word) for m in imported)
        return found[word]

    return tuple(rule for rule in rules if not rule.requires_any_text or any(map(mentions, rule.requires_any_text)))


def _imported_project_modules(ctx: FileContext) -> list[str]:
    """The modules of the project the file's import statements name (wherever they stand)."""
    if ctx.project is None:
        return []
    named = {m for node in ctx.index.of_type(ast.Import, ast.ImportFrom) for m in imported_modules(node, ctx.module)}
    return sorted(m for m in named if ctx.project.locate(m) is not None)


@dataclass(frozen=True)
class Crash:
    """A rule that raised: where (the node it was checking, else the file's start), what, and how."""

    position: Position
    message: str
    traceback: str


def _run_checkers(ctx: FileContext, checkers: tuple[type[Rule], ...], seconds: float) -> tuple[list[Crash], Position | None]:
    """Run the rules over the tree in one traversal; a rule that raises is stopped and named. Past the
    budget of `seconds`, all stop: the second value is where (None: the analysis was complete)."""
    failed: dict[Rule, Crash] = {}
    node: ast.AST | None = None
    with limit(seconds):
        try:
            instances = [rule(ctx) for rule in checkers]
            dispatch: dict[type, list[tuple[Rule, Callable]]] = defaultdict(list)
            for instance in instances:
                for node_type, method_name in _visitors(type(instance)):
                    dispatch[node_type].append((instance, getattr(instance, method_name)))
            for node in ctx.index.nodes if dispatch else ():
                check_budget()
                for instance, visit in dispatch.get(type(node), ()):
                    if instance not in failed:
                        try:
                            visit(node)
                        except Exception as error:  # a rule's bug must not stop the other rules
                            failed[instance] = _crash(ctx, instance, error, node)
            node = None
            for instance in instances:
                if instance not in failed:
                    try:
                        instance.end_file()
                    except Exception as error:
                        failed[instance] = _crash(ctx, instance, error, None)
        except CutShort:
            forget_kept()  # what was being worked out for other modules may be half-built
            located = node is not None and hasattr(node, "lineno")
            return list(failed.values()), ctx.start(node) if located else Position(1, 1)
    return list(failed.values()), None


def _cut_short_message(stopped: Position, seconds: float) -> str:
    return (
        f"the analysis of this file was cut short at line {stopped.line}, past its budget of {seconds:g} s of CPU time "
        "(`analysis-budget`): the findings before that point are reported, the rest of the file is unchecked"
    )


def _crash(ctx: FileContext, rule: Rule, error: Exception, node: ast.AST | None) -> Crash:
    located = node is not None and hasattr(node, "lineno")
    where = f" at line {node.lineno}" if located else ""
    message = f"rule {rule.code} ({rule.name}) crashed{where}: {type(error).__name__}: {error}"
    import traceback  # here: loaded only when a rule crashed

    return Crash(ctx.start(node) if located else Position(1, 1), message, traceback.format_exc())


_VISITOR_CACHE: dict[type, list[tuple[type, str]]] = {}


def _visitors(rule_class: type[Rule]) -> list[tuple[type, str]]:
    if rule_class not in _VISITOR_CACHE:
        _VISITOR_CACHE[rule_class] = [
            (getattr(ast, name[len("visit_") :]), name)
            for name in dir(rule_class)
            if name.startswith("visit_") and isinstance(getattr(ast, name[len("visit_") :], None), type)
        ]
    return _VISITOR_CACHE[rule_class]


def _finish(findings: list[Finding], ctx: FileContext, selection: Selection, path: str, complete: bool = True) -> list[Finding]:
    if selection.ignore_noqa:
        kept = list(findings)
    else:
        suppressions = noqa.parse(ctx.source.lines, lambda: _string_spans(ctx))
        kept = [f for f in findings if not suppressions.suppresses(f)]
        # The findings about `# noqa` comments are silenced by the file-level directives only; after an
        # analysis cut short, a directive may be unused only because its finding was not reached.
        kept += [
            f for f in _noqa_findings(suppressions, ctx.source, selection, path, complete)
            if not (suppressions.whole_file or f.code in suppressions.file_codes)
        ]  # fmt: skip
    if selection.severities:
        kept = [
            dataclasses.replace(f, severity=selection.severities[f.code]) if f.code in selection.severities else f
            for f in kept
        ]
    if selection.unfixable:
        kept = [dataclasses.replace(f, fix=None) if f.code in selection.unfixable and f.fix else f for f in kept]
    return sorted(kept, key=lambda f: f.sort_key)


def _string_spans(ctx: FileContext) -> list[tuple[Position, Position]]:
    strings = [
        node
        for node in ctx.index.of_type(ast.Constant, ast.JoinedStr)
        if isinstance(node, ast.JoinedStr) or isinstance(node.value, (str, bytes))
    ]
    return [(ctx.start(node), ctx.end(node)) for node in strings]


def _noqa_findings(suppressions: noqa.Suppressions, source: SourceText, selection: Selection, path: str, complete: bool):
    unused_rule = selection.event_rule(Event.UNUSED_NOQA) if complete else None
    unknown_rule = selection.event_rule(Event.UNKNOWN_NOQA_CODE)
    known = rule_index()
    enabled = {rule.code for rule in selection.rules}
    for directive in suppressions.lines.values():
        if directive.codes is None:
            continue
        ours = [code for code in directive.codes if code.startswith("ML")]
        unknown = [code for code in ours if code not in known]
        # A code that is not enabled here may be used by another configuration: only enabled ones count.
        unused = [code for code in ours if code in enabled and code not in directive.used]
        start = Position(directive.line, directive.column + 1)
        end = Position(directive.line, directive.end_column + 1)
        if unknown and unknown_rule:
            message = f"unknown rule code in `# noqa`: {', '.join(unknown)}"
            yield _finding(unknown_rule, path, start, end, message, directive.line)
        if unused and unused_rule:
            message = f"unused `noqa` directive (unused: {', '.join(unused)})"
            fix = _remove_codes_fix(directive, unused, source)
            yield _finding(unused_rule, path, start, end, message, directive.line, fix)


def _remove_codes_fix(directive: noqa.Directive, unused: list[str], source: SourceText) -> Fix:
    remaining = [code for code in directive.codes or () if code not in unused]
    line_text = source.line(directive.line)
    start_column, end_column = directive.column, directive.end_column
    after = line_text[end_column:]
    if remaining:
        content = f"# noqa: {', '.join(remaining)}"
    elif after.lstrip().startswith("#"):
        content = ""  # another comment follows (`# noqa: ML301  # why`): it stays, where the noqa was
        end_column += len(after) - len(after.lstrip())
    elif after.strip():
        content = "#"  # other comment text follows: keep it a comment
    else:
        content = ""
        while start_column > 0 and line_text[start_column - 1] in " \t":
            start_column -= 1
    edit = Edit(Position(directive.line, start_column + 1), Position(directive.line, end_column + 1), content)
    return Fix("Remove unused `noqa` codes", (edit,), Applicability.SAFE)


def event_findings(
    selection: Selection, event: str, path: str, position: Position, message: str, trace: str | None = None
) -> list[Finding]:
    rule = selection.event_rule(event)
    if rule is None:
        return []
    finding = _finding(rule, path, position, position, message, position.line)
    severity = selection.severities.get(rule.code, rule.severity)  # ML001/ML002 skip `_finish`
    return [dataclasses.replace(finding, severity=severity, traceback=trace)]


def _finding(rule, path, start, end, message, noqa_line, fix=None) -> Finding:
    return Finding(path, start, end, rule.code, rule.name, message, rule.severity, fix, noqa_line)
