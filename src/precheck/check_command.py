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
    if options.stdin_filename is not None and (options.fix or options.diff):
        raise UsageError("--fix/--diff write files; with --stdin-filename there is none to write")
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
    if command is not None:
        _show_command(command, options)
    emit(report, options.format, options.color, options.quiet, options.statistics)
    report_internal(report)
    code = report.exit_code()
    return 0 if options.exit_zero and code == 1 else code


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


def _fix(report: Report, diff: bool, unsafe: bool, run: Callable[[], Report]) -> Report | int:
    """``--fix``: write the fixes and check again; ``--diff``: print them and stop (the exit code)."""
    from .fix import applicable, apply, plan_fixes

    fixes = plan_fixes(report.findings, unsafe)
    for finding, why in fixes.skipped:
        where = printable(finding.origin.location())
        print(f"precheck: not fixed: {where}: {finding.rule}: {printable(why)}", file=sys.stderr)
    files = len(fixes.changes)
    counted = f"{fixes.fixed} finding{'' if fixes.fixed == 1 else 's'} in {files} file{'' if files == 1 else 's'}"
    if not unsafe:  # as ruff does: say that more would be fixed with the flag
        hidden = sum(1 for f in report.findings if applicable(f, True) and not applicable(f))
        if hidden:
            counted += f" ({hidden} more with --unsafe-fixes)"
    if diff:
        for change in fixes.changes:
            sys.stdout.write(change.diff())
        print(f"precheck: would fix {counted}", file=sys.stderr)
        report_internal(report)
        return 2 if report.errors or report.internal_errors else 1 if fixes.changes else 0
    failures = apply(fixes)  # a file that cannot be written is its own error; the others are fixed
    if failures:
        counted += f"; {len(failures)} of the files could not be written"
    print(f"precheck: fixed {counted}", file=sys.stderr)
    fixed = run() if fixes.changes else report
    _add_errors(fixed, failures)
    return fixed


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
