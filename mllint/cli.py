"""The command line: `mllint [check] PATHS`, `mllint rule CODE`."""
from __future__ import annotations

import collections
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import click

from mllint import __version__
from mllint.analysis.program.project import ProjectIndex
from mllint.cache import CACHE_DIRECTORY, Cache, clean
from mllint.config import ConfigError, Resolver, Settings
from mllint.discovery import discover
from mllint.engine import Event, event_findings
from mllint.findings import Applicability, Finding, Severity
from mllint.notebook import cell_sources
from mllint.overrides import command_line_resolver
from mllint.progress import Progress
from mllint.registry import RegistryError, all_rules, rule_by_event, rule_index
from mllint.reporters import FORMAT_NAMES, Report, render
from mllint.reporters.colour import use_colour
from mllint.runner import FileResult, Job, Mode, available_cpus, check_files, check_source, line_count
from mllint.source import SourceError, SourceFile, decode, read_source

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
LONG_RUN_SECONDS = 5.0  # a run that found nothing and took this long says, on a terminal, how much it checked


class DefaultToCheck(click.Group):
    """`mllint src/` means `mllint check src/`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not any(arg in ("--help", "-h", "--version") for arg in args[:1]) and (not args or args[0] not in self.commands):
            args = ["check", *args]
        # `--add-noqa[=REASON]` takes a reason only after `=`: `--add-noqa src/` names a path, not a reason.
        end = args.index("--") if "--" in args else len(args)
        args = ["--add-noqa=" if arg == "--add-noqa" and i < end else arg for i, arg in enumerate(args)]
        return super().parse_args(ctx, args)

    def main(self, *args, **kwargs):
        """A usage error is one line, `Error: ...`, without click's Usage block (as Ruff reports them)."""
        kwargs.pop("standalone_mode", None)
        try:
            status = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as error:
            click.echo(f"Error: {error.format_message()}", err=True)
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else EXIT_CLEAN)


@click.group(cls=DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mllint")
def main() -> None:
    """mllint: find the bugs in PyTorch training code that raise no error."""


@main.command()
@click.argument("paths", nargs=-1, type=str)
@click.option("--fix/--no-fix", default=False, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--fix-only", is_flag=True, help="Apply fixes, and report neither the findings left nor exit 1 for them.")
@click.option("--unsafe-fixes", is_flag=True,
              help="Also apply the unsafe fixes, which change what the training computes in a way to review "
              "(README: Safe and unsafe fixes).")
@click.option("--unfixable", multiple=True, metavar="CODES", help="Codes or prefixes whose fixes are never applied nor offered.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a fix was applied, even if no finding remains.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option("--show-fixes", is_flag=True, help="List the fixes that were applied.")
@click.option("--stdin-filename", help="The path to report for source read from `-`.")
@click.option("--select", multiple=True, help="Codes or prefixes to enable (`ML1`, `ML101`, `ALL`).")
@click.option("--extend-select", multiple=True, help="Codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option("--per-file-ignores", multiple=True, metavar="GLOB:CODES", help="Disable codes for matching files.")
@click.option("--config", "configs", multiple=True, help="A configuration file, or an inline `key = value`.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--exclude", multiple=True, metavar="PATTERN", help="Exclude matching paths instead of the configured ones.")
@click.option("--extend-exclude", multiple=True, metavar="PATTERN", help="Exclude matching paths too (names or globs).")
@click.option("--extend-per-file-ignores", multiple=True, metavar="GLOB:CODES",
              help="Disable codes for matching files, in addition to the configured per-file-ignores.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Skip (or lint) what git ignores, whatever the configuration says.")
@click.option("--ignore-noqa", is_flag=True, help="Ignore every `# noqa` comment: report what they silence.")
@click.option("--output-format", type=click.Choice(FORMAT_NAMES), default="concise", show_default=True)
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the output: on a terminal (auto: unless NO_COLOR is set), always, or never.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, writable=True), help="Write findings here.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--show-files", is_flag=True, help="List the files that would be checked, and stop.")
@click.option("--show-settings", is_flag=True, help="Print the settings of the first path, and stop.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--add-noqa", "add_noqa", is_flag=False, flag_value="", default=None, metavar="[REASON]",
              help="Add `# noqa` comments for every finding (with an optional reason).")
@click.option("--fail-on", type=click.Choice(["info", "warning", "error"]), default=None,
              help="The lowest severity that makes the exit status 1 (default: info).")
@click.option("--force-exclude/--no-force-exclude", default=None, help="Apply excludes to named files too.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the CPUs this process may use).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, envvar="MLLINT_CACHE_DIR",
              help=f"Where the result cache lives (default: ./{CACHE_DIRECTORY}).")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Report only findings this baseline lacks.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), help="Record the current findings here.")
@click.option("-w", "--watch", is_flag=True, help="Lint again whenever a linted file or a configuration changes.")
@click.option("--watch-runs", type=int, default=None, hidden=True)  # tests: stop after this many runs
@click.option("-v", "--verbose", is_flag=True, help="Print the traceback of mllint's internal errors (ML009).")
def check(paths, fix, fix_only, unsafe_fixes, unfixable, exit_non_zero_on_fix, diff, show_fixes, stdin_filename,
          select, extend_select, ignore, per_file_ignores, configs, isolated, exclude, extend_exclude,
          extend_per_file_ignores, respect_gitignore, ignore_noqa, output_format, color, output_file, statistics,
          exit_zero, show_files, show_settings, quiet, add_noqa, fail_on, force_exclude, jobs, no_cache, cache_dir,
          baseline, write_baseline, watch, watch_runs, verbose) -> None:  # fmt: skip
    """Lint PATHS (files, directories, or `-` for standard input)."""
    started = time.monotonic()
    paths = list(paths) or ["."]
    _require_existing(paths)
    if watch:
        if "-" in paths:
            raise click.UsageError("--watch cannot read standard input")
        from mllint.watch import watch_paths  # each of the commands' rarer parts is imported when used

        params = {**click.get_current_context().params, "watch": False}
        sys.exit(watch_paths(paths, lambda: check.callback(**params), watch_runs))  # each run: this, unwatched
    fix = fix or fix_only
    mode = Mode.ADD_NOQA if add_noqa is not None else Mode.DIFF if diff else Mode.FIX if fix else Mode.CHECK
    cache = None if no_cache else Cache(Path(cache_dir or CACHE_DIRECTORY))
    job = Job(mode, unsafe_fixes, add_noqa, cache)
    show_summary = not quiet and output_format in ("concise", "full", "grouped")  # and the progress: not in machine formats
    try:
        resolver = command_line_resolver(
            configs, isolated, select, extend_select, ignore, per_file_ignores, fail_on, force_exclude, extend_exclude, unfixable,
            exclude, extend_per_file_ignores, respect_gitignore,
        )  # fmt: skip
    except (ConfigError, RegistryError) as error:
        raise click.UsageError(str(error)) from None
    try:
        files = discover([p for p in paths if p != "-"], resolver)
        if show_settings:
            click.echo(resolver.settings_for(files[0] if files else stdin_filename or ".").describe())
            return
        if show_files:
            click.echo("\n".join(files))
            return
        items = [(path, _selection(resolver, path, ignore_noqa)) for path in files]
        projects = ProjectIndex.of_run([p for p in paths if p != "-"], files)  # README: Projects
        progress = Progress(len(items), sys.stderr, shown=show_summary and _on_terminal(sys.stderr))
        try:
            results = check_files(items, job, jobs or available_cpus(), progress.done, projects)
        finally:
            progress.close()
        if mode in (Mode.FIX, Mode.DIFF):
            from mllint.cross_file import apply_cross_file_fixes

            apply_cross_file_fixes(results, mode, unsafe_fixes, dict(items))
        stdin_output = b""
        if "-" in paths:
            stdin_job = dataclasses.replace(job, project=ProjectIndex.for_paths([stdin_filename]) if stdin_filename else None)
            stdin_result, stdin_output = _check_stdin(stdin_filename, resolver, stdin_job, ignore_noqa)
            results.append(stdin_result)
    except ConfigError as error:
        click.echo(f"Configuration error: {error}", err=True)
        sys.exit(EXIT_ERROR)

    if mode is Mode.ADD_NOQA:
        added = sum(r.noqa_added for r in results)
        click.echo(f"Added {_count(added, 'noqa directive')}.", err=True)
        sys.exit(EXIT_CLEAN)
    if mode is Mode.DIFF:
        diffs = "".join(r.diff for r in results)
        click.echo(diffs, nl=False)
        failures = [f for r in results for f in r.findings if f.code in _tool_failures()]  # a fix rejected...
        for failure in failures:
            click.echo(f"{failure.path}:{failure.start.line}:{failure.start.column}: {failure.code} {failure.message}", err=True)
        if not quiet:
            fixed = sum(len(r.fixed) for r in results)
            click.echo(f"Would fix {_count(fixed, 'finding')}.", err=True)
        sys.exit(EXIT_FINDINGS if diffs or failures else EXIT_CLEAN)

    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key)
    if write_baseline or baseline:
        from mllint import baseline as baselines
    if write_baseline:
        try:
            recorded = baselines.write(write_baseline, findings, _sources(findings, results))
        except baselines.BaselineError as error:
            click.echo(f"mllint: {error}", err=True)
            sys.exit(EXIT_ERROR)
        click.echo(f"Recorded {_count(recorded, 'finding')} in {write_baseline}.", err=True)
        sys.exit(EXIT_CLEAN)
    if baseline:
        try:
            findings = baselines.new_findings(baseline, findings, _sources(findings, results))
        except baselines.BaselineError as error:
            raise click.UsageError(str(error)) from None
    fixed = [f for r in results for f in r.fixed]
    stdin_fixed = "-" in paths and mode is Mode.FIX
    if fix_only:  # what is left is not reported (mllint's own failures are)
        findings = [f for f in findings if f.code in _tool_failures()]
    colour = not output_file and (color == "always" or color == "auto" and use_colour(sys.stderr if stdin_fixed else sys.stdout))
    output = _statistics(findings) if statistics else _render(findings, fixed, items, results, resolver, output_format, colour)
    threshold = _fail_on(fail_on, resolver, files or [stdin_filename or "stdin.py"])
    summary = _summary(findings, fixed, show_fixes, unsafe_fixes, fix_only, threshold) if show_summary else ""
    summary_stream = sys.stderr if output_file or stdin_fixed else sys.stdout
    if summary and not findings and _on_terminal(summary_stream) and time.monotonic() - started >= LONG_RUN_SECONDS:
        summary += f"Checked {_count(len(results), 'file')}, {_count(sum(r.lines for r in results), 'line')}.\n"
    _emit(output, summary, output_file, to_stderr=stdin_fixed, colour=colour)
    _report_internal_errors(findings, verbose, quiet)
    if stdin_fixed:
        sys.stdout.flush()
        sys.stdout.buffer.write(stdin_output)
        sys.stdout.buffer.flush()
    status = _exit_status(findings, threshold, exit_zero)
    if status == EXIT_CLEAN and fixed and exit_non_zero_on_fix and not exit_zero:
        status = EXIT_FINDINGS
    sys.exit(status)


def _require_existing(paths: list[str]) -> None:
    """A path that does not exist is a usage error: a typo must not pass a CI step silently. When the first
    one is close to a command's name (`mllint chek src/`), say so, as click does for commands."""
    for path in paths:
        if path != "-" and not os.path.lexists(path):
            close = _close_matches(path, main.commands) if path == paths[0] else []
            hint = f"\nDid you mean the command '{close[0]}'?" if close else ""
            raise click.UsageError(f"Path '{path}' does not exist.{hint}")


def _close_matches(word: str, names) -> list[str]:
    import difflib  # here: loaded only for a typo

    return difflib.get_close_matches(word, names, n=1)


def _tool_failures() -> set[str]:
    """The codes of findings that say mllint could not do its job on a file."""
    return {code for code, rule in rule_index().items() if rule.tool_failure}


def _fail_on(fail_on: str | None, resolver: Resolver, files: list[str]) -> Severity:
    """The lowest severity that fails the run: `--fail-on`, or the first file's configuration."""
    return Severity.parse(fail_on) if fail_on else resolver.settings_for(files[0] if files else ".").fail_on


def _exit_status(findings: list[Finding], threshold: Severity, exit_zero: bool) -> int:
    internal = rule_by_event(Event.INTERNAL_ERROR)
    if internal and any(f.code == internal.code for f in findings):
        return EXIT_ERROR
    failing = any(f.severity >= threshold for f in findings)
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN


def _selection(resolver: Resolver, path: str, ignore_noqa: bool):
    selection = resolver.settings_for(path).selection_for(path)
    return dataclasses.replace(selection, ignore_noqa=True) if ignore_noqa else selection


def _check_stdin(stdin_filename: str | None, resolver: Resolver, job: Job, ignore_noqa: bool) -> tuple[FileResult, bytes]:
    """The result for standard input, and what `--fix` prints: the fixed source in the input's encoding,
    or the input unchanged when it cannot be decoded (never nothing: an editor would empty its buffer)."""
    path = stdin_filename or "-"
    selection = _selection(resolver, stdin_filename or "stdin.py", ignore_noqa)
    data = sys.stdin.buffer.read()
    try:
        source = SourceFile(*decode(data, path), data)
    except SourceError as error:
        return FileResult(path, event_findings(selection, Event.UNREADABLE, path, error.position, error.message)), data
    # Standard input is never written back: the fixed source goes to standard output.
    mode = Mode.CHECK if job.mode is Mode.ADD_NOQA else job.mode
    result = check_source(source, path, selection, Job(mode, job.unsafe, project=job.project))
    result.lines = line_count(source.text)
    return result, data if result.text is None else result.text.encode(source.encoding)


def _sources(findings: list[Finding], results: list[FileResult]) -> dict[str, str]:
    """The text of every file with a finding, for formats that show code or fingerprint lines (and of a
    notebook's cells, by `path:cell N`)."""
    texts = {r.path: r.text for r in results if r.text is not None}
    for path in {f.path for f in findings} - texts.keys():
        try:
            texts[path] = read_source(path).text
        except SourceError:
            pass
    for path in {f.path for f in findings if f.cell is not None} & texts.keys():
        texts.update(cell_sources(path, texts[path]))
    return texts


def _working_directory_settings(resolver: Resolver) -> Settings:
    """The settings of the working directory, for what belongs to no file (the report's root). Its
    configuration may configure none of the linted files: if it is broken, that is not their problem."""
    try:
        return resolver.settings_for(".")
    except ConfigError:
        return Settings(root=Path.cwd())


def _render(findings, fixed, items, results, resolver: Resolver, output_format: str, colour: bool) -> str:
    rules = {rule for _, selection in items for rule in selection.rules}
    settings = _working_directory_settings(resolver)
    report = Report(
        findings=findings,
        rules=tuple(sorted(rules or settings.selection_for(".").rules, key=lambda r: r.code)),
        sources=_sources(findings, results),
        root=str(settings.root),
        fixed=fixed,
        colour=colour,
    )
    return render(report, output_format)


def _statistics(findings: list[Finding]) -> str:
    counts = collections.Counter(f.code for f in findings)
    fixable = {f.code for f in findings if f.fix and f.fix.applicability is Applicability.SAFE}
    rules = rule_index()
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*] ' if code in fixable else '    '}{rules[code].name}\n"
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 or noun == 'info' else 'es' if noun.endswith('x') else 's'}"


def _by_severity(findings: list[Finding]) -> str:
    """`1 error, 2 warnings`: the findings counted by severity, most severe first."""
    counts = collections.Counter(f.severity for f in findings)
    return ", ".join(_count(counts[s], s.label) for s in sorted(counts, reverse=True))


def _summary(findings: list[Finding], fixed: list[Finding], show_fixes: bool, unsafe: bool, fix_only: bool, fail_on: Severity) -> str:
    lines = []
    if show_fixes and fixed:
        lines.append(f"Fixed {_count(len(fixed), 'finding')}:")
        by_path = collections.defaultdict(collections.Counter)
        for f in fixed:
            by_path[f.path][(f.code, f.name)] += 1
        for path, counts in sorted(by_path.items()):
            lines.append(f"- {path}:")
            lines += [f"    {n} × {code} ({name})" for (code, name), n in sorted(counts.items())]
    if fix_only:  # like Ruff: only what was fixed
        lines += [f"Fixed {_count(len(fixed), 'finding')}."] if fixed and not show_fixes else []
        return "".join(line + "\n" for line in lines)
    remaining = f": {_by_severity(findings)}" if findings else ""
    if fixed:
        total = _count(len(findings) + len(fixed), "finding")
        lines.append(f"Found {total} ({len(fixed)} fixed, {len(findings)} remaining{remaining}).")
    elif len({f.severity for f in findings}) == 1:
        lines.append(f"Found {_by_severity(findings)}.")
    elif findings:
        lines.append(f"Found {_count(len(findings), 'finding')}{remaining}.")
    else:
        lines.append("All checks passed!")
    if findings and not any(f.severity >= fail_on for f in findings):
        lines.append(f"None is at or above `fail-on = {fail_on.label}`: they do not fail the run.")
    safe = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.SAFE)
    unsafe_only = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.UNSAFE)
    if safe:
        lines.append(f"[*] {safe} fixable with the `--fix` option.")
    if unsafe_only and not unsafe:
        lines.append(f"{_count(unsafe_only, 'hidden fix')} can be enabled with the `--unsafe-fixes` option.")
    return "\n".join(lines) + "\n"


def _report_internal_errors(findings: list[Finding], verbose: bool, quiet: bool) -> None:
    """On standard error: the tracebacks of mllint's own crashes, or how to get them."""
    crashes = [f for f in findings if f.traceback]
    if verbose:
        for crash in crashes:
            click.echo(f"{crash.location}:{crash.start.line}:{crash.start.column}: {crash.code} {crash.message}", err=True)
            click.echo(crash.traceback, nl=False, err=True)
    elif crashes and not quiet:
        click.echo(
            f"mllint crashed ({_count(len(crashes), 'internal error')}): a bug in mllint, not in your code. "
            "Run with --verbose for the traceback, and please report it to mllint's developers.",
            err=True,
        )


def _on_terminal(stream) -> bool:
    return stream.isatty()


def _emit(output: str, summary: str, output_file: str | None, to_stderr: bool, colour: bool) -> None:
    if output_file:
        try:
            with open(output_file, "w", encoding="utf-8") as handle:
                handle.write(output)
        except OSError as error:  # a full disk, a directory gone: the user's to mend, not mllint's bug
            click.echo(f"mllint: cannot write {output_file}: {error.strerror or error}", err=True)
            sys.exit(EXIT_ERROR)
        if summary:
            click.echo(summary, nl=False, err=True)
        return
    click.echo(output, nl=False, err=to_stderr, color=colour)
    if summary:
        click.echo(summary, nl=False, err=to_stderr)


@main.command()
@click.argument("code", required=False, metavar="CODE_OR_NAME")
@click.option("--all", "show_all", is_flag=True, help="Every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rule(code: str | None, show_all: bool, output_format: str) -> None:
    """Print a rule's documentation (`mllint rule ML101` or `mllint rule softmax-into-cross-entropy`), or
    every rule's with --all."""
    rules = all_rules()
    if show_all:
        selected = list(rules.values())
    elif code and code.upper() in rules:
        selected = [rules[code.upper()]]
    elif code and (named := [r for r in rules.values() if r.name == code.lower().replace("_", "-")]):
        selected = named
    else:
        close = _close_matches(code.lower(), [r.name for r in rules.values()]) if code else []
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        raise click.UsageError(f"unknown rule: {code}{hint}" if code else "name a rule by code or name, or pass --all")
    if output_format == "json":
        entries = [_rule_json(r) for r in selected]
        click.echo(json.dumps(entries if show_all else entries[0], indent=2))
    else:
        click.echo("\n\n".join(f"# {r.name} ({r.code})\n\n{r.documentation()}" for r in selected))


@main.command("clean")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, envvar="MLLINT_CACHE_DIR")
def clean_cache(cache_dir: str | None) -> None:
    """Remove the result cache."""
    directory = Path(cache_dir or CACHE_DIRECTORY)
    click.echo(f"Removed {directory}" if clean(directory) else f"No cache at {directory}", err=True)


def _rule_json(rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "summary": rule.summary(),
        "message": rule.message,
        "severity": rule.severity.label,
        "fix": rule.fix_applicability.value if rule.fix_applicability else None,
        "explanation": rule.documentation(),
    }


@main.command()
@click.option("--stdio", is_flag=True, hidden=True, help="Accepted for clients that pass it: stdio is the transport.")
def server(stdio: bool) -> None:
    """Run the language server for editors, over standard input and output."""
    from mllint.server import start  # imported here: `mllint check` never loads pygls

    start()

