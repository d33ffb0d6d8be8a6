"""Checking one file end to end: lint, or fix and write, or compute the diff; and `--add-noqa`."""
from __future__ import annotations

import dataclasses
import enum
import gc
import itertools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mllint.analysis.program.project import ProjectIndex, install_calls
from mllint.cache import Cache
from mllint.engine import Event, Selection, cycle_collector_off, event_findings, lint_text
from mllint.findings import Finding, Position
from mllint.fixer import FileChanged, allowed, fix_text, write_atomically
from mllint.noqa import with_noqa
from mllint.registry import rule_by_event
from mllint.notebook import Notebook
from mllint.notebook import load as load_notebook
from mllint.source import LINE_BREAK, SourceError, SourceFile, is_notebook, read_source, syntax_tree_dump


class Mode(enum.Enum):
    CHECK = "check"
    FIX = "fix"  # write the fixed file
    DIFF = "diff"  # only compute the diff
    ADD_NOQA = "add-noqa"


@dataclass(frozen=True)
class Job:
    """What to do with every file of a run."""

    mode: Mode = Mode.CHECK
    unsafe: bool = False
    noqa_reason: str | None = None
    cache: Cache | None = None
    project: ProjectIndex | None = None  # the project of the run, which cross-file analyses look into


@dataclass
class FileResult:
    path: str
    findings: list[Finding]  # what is left to report
    fixed: list[Finding] = field(default_factory=list)
    diff: str = ""
    text: str | None = None  # the fixed source (standard input's goes to standard output)
    noqa_added: int = 0
    lines: int = 0  # how many lines the file has (the summary of a run that found nothing counts them)


FILES_PER_COLLECTION = 500
_files_checked = itertools.count(1)  # in this process


def check_files(
    items: list[tuple[str, Selection]],
    job: Job,
    jobs: int = 1,
    done: Callable[[FileResult], None] | None = None,
    projects: dict[str, ProjectIndex] | None = None,
) -> list[FileResult]:
    """Check (path, selection) pairs, in a process pool when there are several files and jobs; the
    results come back in the order of `items` whatever the number of workers, each passed to `done` as
    it comes. `projects`: each path's project, when not the job's."""
    item_jobs = [dataclasses.replace(job, project=projects[path]) if projects else job for path, _ in items]
    results: list[FileResult] = []
    if jobs <= 1 or len(items) <= 1:
        with cycle_collector_off():  # for the whole run, not only during each lint (see there)
            for item, item_job in zip(items, item_jobs):
                results.append(_check_item(item, item_job))
                if done:
                    done(results[-1])
        return results
    from concurrent.futures import ProcessPoolExecutor  # here: ~20 ms of imports a one-file run does without

    chunk = max(1, min(64, len(items) // (jobs * 8)))
    # The projects' word indexes are built here once, not by every worker (with `fork`, not even copied).
    distinct = {id(j.project): j.project for j in item_jobs if j.project is not None}
    shared = [project.shared_calls() for project in distinct.values()]
    with ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker, initargs=(shared,)) as pool:
        for result in pool.map(_check_item, items, item_jobs, chunksize=chunk):
            results.append(result)
            if done:
                done(result)
    return results


def _start_worker(shared_calls: list[tuple]) -> None:
    """A worker of a run: no cyclic garbage collection (see `engine.cycle_collector_off`), and the word
    indexes its run built."""
    gc.disable()
    for shared in shared_calls:
        install_calls(shared)


def available_cpus() -> int:
    """The CPUs this process may use: its affinity, capped by a cgroup v2 CPU quota."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            count = min(count, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return count


def _check_item(item: tuple[str, Selection], job: Job) -> FileResult:
    """One file; a bug of mllint's outside any rule is reported on that file, and the run goes on."""
    path, selection = item
    try:
        return check_path(path, selection, job)
    except Exception as error:  # the other files must still be checked
        message = f"mllint crashed on this file: {type(error).__name__}: {error}"
        import traceback  # here: loaded only when mllint crashed

        trace = traceback.format_exc()
        return FileResult(path, event_findings(selection, Event.INTERNAL_ERROR, path, Position(1, 1), message, trace))
    finally:
        if next(_files_checked) % FILES_PER_COLLECTION == 0:
            gc.collect()  # with the collector off, a cycle no test foresaw is still freed


def check_path(path: str, selection: Selection, job: Job) -> FileResult:
    try:
        source = read_source(path)
    except SourceError as error:
        return FileResult(path, event_findings(selection, Event.UNREADABLE, path, error.position, error.message))
    result = _check_read(source, path, selection, job)
    result.lines = line_count(source.text)
    return result


def line_count(text: str) -> int:
    return len(LINE_BREAK.findall(text)) + (not LINE_BREAK.fullmatch(text[-1:]) and text != "")


def _check_read(source: SourceFile, path: str, selection: Selection, job: Job) -> FileResult:
    if job.cache is None or job.mode not in (Mode.CHECK, Mode.FIX, Mode.DIFF):
        return check_source(source, path, selection, job, real_path=path)
    cached = job.cache.get(source.data, path, selection, job.project)
    if cached is not None and (job.mode is Mode.CHECK or not any(allowed(f.fix, job.unsafe) for f in cached)):
        return FileResult(path, cached)
    if job.project is None:
        result, consulted = check_source(source, path, selection, job, real_path=path), {}
    else:
        with job.project.recording() as consulted:
            result = check_source(source, path, selection, job, real_path=path)
    # What was linted is what is on disk; a crash is mllint's bug, and an analysis cut short may finish
    # next time: both are tried again.
    cut_short = rule_by_event(Event.CUT_SHORT)
    if not result.fixed and not any(f.traceback or (cut_short and f.code == cut_short.code) for f in result.findings):
        job.cache.put(source.data, path, selection, result.findings, consulted)
    return result


def check_source(source: SourceFile, path: str, selection: Selection, job: Job, real_path: str | None = None) -> FileResult:
    """Check one file's source (`real_path` is where to write it back; None for standard input). A
    notebook's code cells are checked as one program, and its findings reported per cell."""
    try:
        program = Program(source.text, load_notebook(source.text) if is_notebook(path) else None)
    except SourceError as error:
        return FileResult(path, event_findings(selection, Event.UNREADABLE, path, error.position, error.message))

    def lint(text: str) -> list[Finding]:
        return program.fixable(lint_text(text, path, selection, job.project, real_path), text)

    if job.mode is Mode.CHECK:
        return FileResult(path, program.report(lint(program.python), program.python))
    if job.mode is Mode.ADD_NOQA:
        return _add_noqa(source, program, path, lint, job.noqa_reason, real_path)
    outcome = fix_text(program.python, lint, job.unsafe)
    result = FileResult(path, program.report(outcome.remaining, outcome.text), text=source.text)
    if outcome.error:
        result.findings += event_findings(selection, Event.FIX_ERROR, path, Position(1, 1), outcome.error)
        return result
    if not outcome.changed:
        return result
    try:
        cells = program.cell_texts(outcome.text)
    except SourceError as error:
        result.findings = program.report(lint(program.python), program.python)
        result.findings += event_findings(selection, Event.FIX_ERROR, path, Position(1, 1), error.message)
        return result
    result.fixed, result.text = program.report(outcome.fixed, program.python), program.file_text(cells, outcome.text)
    if job.mode is Mode.DIFF:
        result.diff = program.diff(path, cells, outcome.text)
    elif real_path is not None:
        try:
            write_atomically(real_path, result.text, source.encoding, source.data)
        except (FileChanged, OSError) as error:
            message = str(error) if isinstance(error, FileChanged) else f"cannot write the fixed file: {error}"
            result.findings = program.report(lint(program.python), program.python) + event_findings(
                selection, Event.FIX_ERROR, path, Position(1, 1), message
            )
            result.fixed, result.text = [], source.text
    return result


@dataclass(frozen=True)
class Program:
    """What is linted and fixed of a file: its text, or a notebook's code cells as one program."""

    text: str
    notebook: Notebook | None

    @property
    def python(self) -> str:
        return self.notebook.python if self.notebook else self.text

    def fixable(self, findings: list[Finding], python: str) -> list[Finding]:
        """The findings without the fixes that could not be written back (over a cell boundary...)."""
        return self.notebook.fixable(findings, python) if self.notebook else findings

    def report(self, findings: list[Finding], python: str) -> list[Finding]:
        return self.notebook.to_cells(findings, python) if self.notebook else findings

    def cell_texts(self, python: str) -> list[str]:
        """A notebook's cell sources in a changed program (SourceError when it no longer splits)."""
        return self.notebook.cell_texts(python) if self.notebook else []

    def file_text(self, cells: list[str], python: str) -> str:
        return self.notebook.with_cell_texts(cells) if self.notebook else python

    def diff(self, path: str, cells: list[str], python: str) -> str:
        if self.notebook is None:
            return unified_diff(self.text, python, path)
        return "".join(
            unified_diff(_with_final_break(cell.text), _with_final_break(text), f"{path}:cell {cell.number}")
            for cell, text in zip(self.notebook.cells, cells)
            if text != cell.text
        )


def _with_final_break(text: str) -> str:
    return text if text.endswith(("\n", "\r")) else text + "\n"


def unified_diff(before: str, after: str, path: str) -> str:
    import difflib  # here: a check that shows no diff does not load it

    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _add_noqa(
    source: SourceFile, program: Program, path: str, lint, reason: str | None, real_path: str | None
) -> FileResult:
    """Add `# noqa: CODES` to every line with a finding, merged with an existing `# noqa:` there."""
    python = program.python
    findings = lint(python)
    by_line: dict[int, set[str]] = {}
    for finding in findings:
        if finding.code.startswith("ML00"):
            continue  # files that cannot be linted, and mllint's own errors: nothing a noqa should hide
        by_line.setdefault(finding.noqa_line or finding.start.line, set()).add(finding.code)
    lines = LINE_BREAK.split(python)
    breaks = LINE_BREAK.findall(python)
    original = syntax_tree_dump(python)
    edits = {number: with_noqa(lines[number - 1], codes, reason) for number, codes in by_line.items()}

    def with_edits(chosen: dict[int, str]) -> str:
        return _join([chosen.get(i + 1, line) for i, line in enumerate(lines)], breaks)

    # A comment added where a line ends inside a string or after a backslash would change the program:
    # keep only additions that leave the syntax tree as it was.
    if syntax_tree_dump(with_edits(edits)) != original:
        edits = {n: line for n, line in edits.items() if syntax_tree_dump(with_edits({n: line})) == original}
    python = with_edits(edits)
    text = program.file_text(program.cell_texts(python), python)
    added = sum(1 for n, line in edits.items() if line != lines[n - 1])
    if added and real_path is not None:
        write_atomically(real_path, text, source.encoding, source.data)
    return FileResult(path, [], text=text, noqa_added=added)


def _join(lines: list[str], breaks: list[str]) -> str:
    return "".join(line + (breaks[i] if i < len(breaks) else "") for i, line in enumerate(lines))
