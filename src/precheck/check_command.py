"""``precheck check``: what the command does once its command line is read, typer-free.

:mod:`precheck.cli` declares the command for typer (options, help) and calls
:func:`run_check`; :mod:`precheck.entry` calls it directly for a plain command line, so
that checking a config does not import typer (see there). The helpers the other
commands share (``--gpu``/``--hardware``, ``--format``, internal-error messages) live here
for the same reason.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .errors import InputError, UsageError

if TYPE_CHECKING:
    from . import api
    from .engine import Report
    from .hardware import Hardware


def run_check(
    paths: list[str] | None = None,
    gpu: list[str] | None = None,
    hardware: str | None = None,
    fmt: str = "text",
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    assume_version: list[str] | None = None,
    python: str | None = None,
    fail_on: str | None = None,
    exit_zero: bool = False,
    debug: bool = False,
    exclude: list[str] | None = None,
    fix: bool = False,
    diff: bool = False,
    unsafe_fixes: bool = False,
    show_unused_suppressions: bool = False,
    isolated: bool = False,
    deep: bool = False,
    config: str | None = None,
    stdin_filename: str | None = None,
    statistics: bool = False,
    quiet: bool = False,
    color: str | None = None,
) -> int:
    """Check config files and print the report; the exit code. The parameters are the
    options of ``precheck check`` (:func:`precheck.cli.check` documents them)."""
    from . import api
    from .report import FORMATS, emit, use_color
    from .rules.base import Severity

    check_format(fmt, FORMATS)
    use_color(color)  # a bad --color is a usage error before any work
    if statistics and fmt not in ("text", "json"):
        raise UsageError(f"--statistics prints text or json, not --format {fmt}")
    paths = read_stdin(paths, stdin_filename)
    if stdin_filename is not None and (fix or diff):
        raise UsageError("--fix/--diff write files; with --stdin-filename there is none to write")
    if fail_on is not None:
        try:
            Severity.parse(fail_on)
        except KeyError:
            raise UsageError(f"--fail-on {fail_on!r}: choose error, warning or info") from None
    extend = [*(extend_select or []), *(["PC907"] if show_unused_suppressions else [])]
    if deep:  # before any work: a clear message when the hf extra is missing
        from .deep import require

        require()
    target = hardware_from_flags(gpu, hardware)

    def run() -> api.Report:
        return api.check(
            paths or ["."],
            target,
            select=select,
            extend_select=extend,
            ignore=ignore,
            exclude=exclude,
            fail_on=fail_on,
            assume_versions=assume_version or [],
            python=python,
            use_project=not isolated,
            debug=debug,
            deep=deep,
            details=False,  # the report needs findings and counts: memory stays flat
            config=config,
        )

    report = run()
    if fix or diff:
        fixed = _fix(report, diff, unsafe_fixes, run)
        if isinstance(fixed, int):
            return fixed
        report = fixed
    emit(report, fmt, color, quiet, statistics)
    report_internal(report)
    code = report.exit_code()
    return 0 if exit_zero and code == 1 else code


def read_stdin(paths: list[str] | None, name: str | None) -> list[str] | None:
    """``--stdin-filename NAME -`` (or NAME with no path): the text on standard input is
    checked as the file NAME (its format, its folder for the files it names); the paths."""
    given = list(paths or [])
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


def _fix(report: api.Report, diff: bool, unsafe: bool, run: Callable[[], api.Report]) -> api.Report | int:
    """``--fix``: write the fixes and check again; ``--diff``: print them and stop (the exit code)."""
    from .fix import applicable, apply, plan_fixes

    fixes = plan_fixes(report.findings, unsafe)
    for finding, why in fixes.skipped:
        print(f"precheck: not fixed: {finding.origin.location()}: {finding.rule}: {why}", file=sys.stderr)
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


def hardware_from_flags(gpu: list[str] | None, hardware_file: str | None) -> Hardware | None:
    """The hardware the flags name, or None: the project's ``gpus``, else a probe, decide."""
    from .hardware import from_specs

    if gpu and hardware_file:
        raise UsageError("--gpu and --hardware are exclusive: name the hardware one way")
    if gpu:
        return from_specs(gpu, os.environ)
    if hardware_file:
        from .probe import load_hardware_file  # not on the --gpu path: it imports subprocess, threading

        return load_hardware_file(hardware_file, os.environ)
    return None


def report_internal(report: Report) -> None:
    for error in report.internal_errors:
        print(
            f"precheck: internal error while checking {error.path}: {error}\n"
            "This is a bug in precheck; please report it with that file "
            "(run again with --debug for the traceback).",
            file=sys.stderr,
        )


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise UsageError(f"--format {fmt!r}: choose one of {', '.join(allowed)}")
