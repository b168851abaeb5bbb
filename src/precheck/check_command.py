"""``precheck check``: what the command does with its :class:`~precheck.options.CheckOptions`,
typer-free: run :func:`precheck.check` on them, fix, print the report, give the exit code.

Both readers of the command line call :func:`run_check`: typer's generated command
(:mod:`precheck.cli`) and the entry's fast path (:mod:`precheck.entry`), so that checking a
config does not import typer (see there); so does ``precheck [options] -- CMD``
(:mod:`precheck.launch_check`). The helpers the other commands share (``--format``,
internal-error messages) live here for the same reason.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .errors import InputError, UsageError
from .escape import printable
from .options import CheckOptions

if TYPE_CHECKING:
    from .engine import Report


def run_check(options: CheckOptions, command: list[str] | None = None) -> int:
    """Check config files and print the report; the exit code.

    ``command``: check that command line instead of files (``precheck [options] -- CMD``,
    :mod:`precheck.launch_check`); its findings point at ``<command line>``."""
    from . import api
    from .report import FORMATS, emit, use_color

    if command is not None:
        _refuse_with_command(options)
    check_format(options.format, FORMATS)
    use_color(options.color)  # a bad --color is a usage error before any work
    if options.statistics and options.format not in ("text", "json"):
        raise UsageError(f"--statistics prints text or json, not --format {options.format}")
    paths = read_stdin(list(options.paths) if options.paths else None, options.stdin_filename)
    if options.stdin_filename is not None and (options.fix or options.diff or options.add_noqa):
        raise UsageError("--fix/--diff/--add-noqa write files; with --stdin-filename there is none to write")
    _refuse_together(options)
    wanted = options._replace(paths=tuple(paths) if paths else None)

    def run() -> Report:
        # the report needs findings and counts: memory stays flat
        return api.check(wanted, details=False, command=command)

    report = run()
    if options.fix or options.diff:
        fixed = _fix(report, options.diff, options.unsafe_fixes, run)
        if isinstance(fixed, int):
            return fixed
        report = fixed
    if options.write_baseline is not None:
        return _write_baseline(report, options.write_baseline)
    if options.add_noqa:
        report = _add_noqa(report, run)
    if options.baseline is not None:
        _apply_baseline(report, options.baseline)
    if command is not None:
        _show_command(command, options)
    emit(report, options.format, options.color, options.quiet, options.statistics)
    warn_no_hardware(report)
    report_internal(report)
    code = report.exit_code()
    return 0 if options.exit_zero and code == 1 else code


def _refuse_together(options: CheckOptions) -> None:
    if options.baseline is not None and options.write_baseline is not None:
        raise UsageError("--baseline reads a baseline and --write-baseline writes one: give one of them")
    if options.add_noqa and (options.fix or options.diff or options.write_baseline is not None):
        raise UsageError("--add-noqa silences the findings: give it without --fix, --diff or --write-baseline")


def _write_baseline(report: Report, name: str) -> int:
    """``--write-baseline FILE``: today's findings, to check new ones against; exit 0 (2 when an
    input could not be read: what it holds is not in the baseline)."""
    from pathlib import Path

    from . import baseline

    count = baseline.write(report.findings, Path(name))
    print(
        f"precheck: wrote {count} finding{'' if count == 1 else 's'} to {name}; "
        f"`precheck --baseline {name}` reports only the findings that are not in it",
        file=sys.stderr,
    )
    for error in report.errors:
        print(f"precheck: {printable(str(error))}", file=sys.stderr)
    report_internal(report)
    return 2 if report.errors or report.internal_errors else 0


def _apply_baseline(report: Report, name: str) -> None:
    """``--baseline FILE``: drop the findings the baseline holds, and say how many."""
    from pathlib import Path

    from . import baseline

    known = baseline.load(Path(name))
    before = len(report.findings)
    report.findings = baseline.new(report.findings, Path(name), known)
    hidden = before - len(report.findings)
    if hidden:
        print(
            f"precheck: {hidden} finding{'' if hidden == 1 else 's'} in the baseline {name} not shown", file=sys.stderr
        )


def _add_noqa(report: Report, run: Callable[[], Report]) -> Report:
    """``--add-noqa``: silence today's findings where they are, then check again."""
    from .fix.noqa import add_noqa

    done = add_noqa(report.findings)
    for line in done.messages:  # they name files: a pull request's file names are escaped
        print(f"precheck: {printable(line)}", file=sys.stderr)
    print(f"precheck: added {done.summary()}", file=sys.stderr)
    return run() if done.changed else report


def warn_no_hardware(report: Report) -> None:
    """No GPU known (none found here, none named, no ``gpus`` configured): the hardware rules were
    skipped, so the result depends on the machine. Said as a warning on standard error, whatever
    the format (a CI runner has no GPU: a gate set up this way checks much less)."""
    skipped = report.hardware_rules_skipped
    if not skipped:
        return
    rules = f"{skipped} rule{'' if skipped == 1 else 's'}"
    print(
        f"precheck: warning: no GPU found and no target hardware configured: {rules} that need the target "
        "hardware were skipped; state the machine the runs train on once, for every machine that checks: "
        "`precheck init --gpu 8xA100-80GB` (writes `gpus = [...]` under [tool.precheck]), or --gpu/--hardware",
        file=sys.stderr,
    )


def _refuse_with_command(options: CheckOptions) -> None:
    """The options that name or edit files, given with ``-- CMD``."""
    import shlex

    if options.paths:
        raise UsageError(f"give config paths or `-- CMD`, not both ({shlex.join(options.paths)} before `--`)")
    if options.fix or options.diff:
        raise UsageError("--fix/--diff edit files; a command line has none to edit")
    if options.config or options.stdin_filename:
        raise UsageError("--config/--stdin-filename check files; give them without `-- CMD`")


def _show_command(command: list[str], options: CheckOptions) -> None:
    """The command line the findings point at: printed first (text), and the text the code frames show."""
    import shlex

    from .sources import STDIN
    from .sources.shell_source import COMMAND_LINE, command_text

    if options.format == "text" and not options.statistics:
        print(f"<command line>: {shlex.join(command)}")
    STDIN[COMMAND_LINE] = command_text(command)


def read_stdin(paths: list[str] | None, name: str | None) -> list[str] | None:
    """``--stdin-filename NAME -`` (or NAME with no path): the text on standard input is
    checked as the file NAME (its format, its folder for the files it names); the paths."""
    given = list(paths or [])
    if name is None and "-" in given and os.path.isfile("-"):  # a committed file named `-` (pre-commit)
        return ["./-" if path == "-" else path for path in given]
    if name is None:
        if "-" in given:
            raise UsageError(
                "`-` reads standard input: name the file it stands for with --stdin-filename NAME "
                "(its suffix is the format; the files it names are looked for next to it)"
            )
        return paths
    if given and given != ["-"]:
        raise UsageError("--stdin-filename checks standard input only: give `-` or no path")
    from .errors import FileTooLarge
    from .sources import MAX_BYTES, STDIN, decode

    data = sys.stdin.buffer.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise FileTooLarge(name, f"standard input is over the {MAX_BYTES // (1024 * 1024)} MiB limit")
    STDIN[name] = decode(name, data)
    return [name]


#: ``--fix`` applies fixes, checks again and applies what the new check finds, at most this
#: many times (ruff's ``MAX_ITERATIONS`` is 100; precheck's fixes rarely take more than two):
#: a fix can uncover another (turning fp16 off shows the bf16 key it needs set)
MAX_FIX_PASSES = 10


def _fix(report: Report, diff: bool, unsafe: bool, run: Callable[[], Report]) -> Report | int:
    """``--fix``: write the fixes and check again, until no fix is left that it can apply (at most
    :data:`MAX_FIX_PASSES` passes); ``--diff``: print the first pass's fixes and stop (the exit code)."""
    from .fix import apply, plan_fixes

    fixes = plan_fixes(report.findings, unsafe)
    if diff:
        for finding, why in fixes.skipped:
            where = printable(finding.origin.location())
            print(f"precheck: not fixed: {where}: {finding.rule}: {printable(why)}", file=sys.stderr)
        for change in fixes.changes:
            sys.stdout.write(change.diff())
        print(
            f"precheck: would fix {_counted(fixes.fixed, len(fixes.changes))}{_hidden(report, unsafe)}", file=sys.stderr
        )
        report_internal(report)
        return 2 if report.errors or report.internal_errors else 1 if fixes.changes else 0
    total = passes = 0
    touched: set[str] = set()
    failures: list[InputError] = []
    written: set[tuple[str, str]] = set()
    while fixes.changes and passes < MAX_FIX_PASSES:
        passes += 1
        failures = apply(fixes)  # a file that cannot be written is its own error; the others are fixed
        total += fixes.fixed
        touched.update(change.path for change in fixes.changes)
        written.update((change.path, change.after) for change in fixes.changes)
        report = run()
        if failures:  # the next pass would plan the same edits again
            break
        fixes = plan_fixes(report.findings, unsafe)
        if all((change.path, change.after) in written for change in fixes.changes):
            break  # a fix that does not remove its finding: writing it again changes nothing
    for finding, why in fixes.skipped:
        where = printable(finding.origin.location())
        print(f"precheck: not fixed: {where}: {finding.rule}: {printable(why)}", file=sys.stderr)
    counted = _counted(total, len(touched))
    if passes > 1:
        counted += f" in {passes} passes"
    if passes == MAX_FIX_PASSES and fixes.changes and not failures:
        counted += f"; fixes still apply after {MAX_FIX_PASSES} passes: run --fix again, or report the loop"
    if failures:
        counted += f"; {len(failures)} of the files could not be written"
    left = len(report.findings)
    counted += f"; {left} finding{'' if left == 1 else 's'} left" if left else "; no finding left"
    print(f"precheck: fixed {counted}{_hidden(report, unsafe)}", file=sys.stderr)
    _add_errors(report, failures)
    return report


def _counted(findings: int, files: int) -> str:
    return f"{findings} finding{'' if findings == 1 else 's'} in {files} file{'' if files == 1 else 's'}"


def _hidden(report: Report, unsafe: bool) -> str:
    """`` (N more with --unsafe-fixes)``, as ruff says that more would be fixed with the flag."""
    if unsafe:
        return ""
    from .fix import applicable

    hidden = sum(1 for f in report.findings if applicable(f, True) and not applicable(f))
    return f" ({hidden} more with --unsafe-fixes)" if hidden else ""


def _add_errors(report: Report, errors: list[InputError]) -> None:
    from .engine import FileResult

    for error in errors:
        report.files.append(FileResult(error.path, error=error))


def report_internal(report: Report) -> None:
    for error in report.internal_errors:
        print(
            f"precheck: internal error while checking {printable(error.path)}: {printable(str(error))}\n"
            "This is a bug in precheck; please report it with that file "
            "(run again with --debug for the traceback).",
            file=sys.stderr,
        )


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise UsageError(f"--format {fmt!r}: choose one of {', '.join(allowed)}")
