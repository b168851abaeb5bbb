"""``precheck [options] -- CMD ARGS...`` and ``precheck run [options] -- CMD ARGS...``.

The first checks a launch command line before it runs; the second runs it only when the
check passes, so a launch can be prefixed: ``precheck run --gpu V100 -- swift sft ...``.
Every option of ``precheck check`` (``--gpu``, ``--format``, ``--fail-on``, ``--select``...)
goes before the ``--``. Findings point at columns of ``<command line>``: line 1 is the
command as ``shlex.join`` quotes it, which ``precheck`` prints first in text output.

``run``: the report goes to stderr (stdout stays the command's); when the check fails the
command is not started and the exit code is the check's (1 findings, 2 bad input). When it
passes, precheck flushes its output and ``os.execvp``-s the command: the command *is* the
process, so its exit status and the signals it gets (Ctrl-C, ``kill``) are its own, with no
precheck in between. A command that cannot be started exits 127 (not found) or 126 (not
executable), as a shell does.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys

from .errors import UsageError

#: the verbs that take ``-- CMD``
VERBS = ("check", "run")


def wants_command(args: list[str], explicit: bool = False) -> bool:
    """``args`` (routed: ``check ...`` or ``run ...``) name a command after ``--``.

    ``explicit``: the user wrote the subcommand. ``precheck check [options] -- FILE...``
    then reads ``--`` as every command does, as the end of the options (pre-commit's hook
    passes file names so, since a file may be called ``--fix.yaml``); ``precheck [options]
    -- CMD`` (no subcommand) and ``precheck run [options] -- CMD`` check a command line."""
    if not args or "--" not in args[1:]:
        return False
    return args[0] == "run" or (args[0] == "check" and not explicit)


def main(args: list[str]) -> int:
    """``args``: ``["check"|"run", *options, "--", *command]``; the exit code."""
    from .entry import plain_check_args

    verb = args[0]
    split = args.index("--", 1)
    options, command = args[1:split], args[split + 1 :]
    if not command:
        raise UsageError(f"nothing after `--`: give the command to check, e.g. precheck {verb} -- swift sft ...")
    kwargs = plain_check_args(options)
    if kwargs is None:
        raise UsageError(
            f"cannot read the options before `--` ({shlex.join(options)}): they are `precheck check`'s "
            "(see `precheck check --help`), each as --name VALUE or --name=VALUE"
        )
    if kwargs.get("paths"):
        raise UsageError(f"give config paths or `-- CMD`, not both ({shlex.join(kwargs['paths'])} before `--`)")
    if kwargs.get("fix") or kwargs.get("diff"):
        raise UsageError("--fix/--diff edit files; a command line has none to edit")
    if verb == "check":
        return check(command, kwargs)
    with contextlib.redirect_stdout(sys.stderr):  # stdout stays the command's
        code = check(command, kwargs)
    if code != 0:
        print(f"precheck: not running `{shlex.join(command)}`: the check failed (exit {code})", file=sys.stderr)
        return code
    return execute(command)


def check(command: list[str], options: dict[str, object]) -> int:
    """Check ``command`` with ``precheck check``'s options; print the report; the exit code."""
    from . import api
    from .check_command import check_format, hardware_from_flags, report_internal
    from .report import FORMATS, emit
    from .rules.base import Severity

    fmt = str(options.get("fmt") or "text")
    check_format(fmt, FORMATS)
    if options.get("config") or options.get("stdin_filename"):
        raise UsageError("--config/--stdin-filename check files; give them without `-- CMD`")
    fail_on = options.get("fail_on")
    if fail_on is not None:
        try:
            Severity.parse(str(fail_on))
        except KeyError:
            raise UsageError(f"--fail-on {fail_on!r}: choose error, warning or info") from None
    extend = [*_strings(options.get("extend_select")), *(["PC907"] if options.get("show_unused_suppressions") else [])]
    target = hardware_from_flags(_strings(options.get("gpu")) or None, _string(options.get("hardware")))
    report = api.check(
        [],
        target,
        select=_strings(options.get("select")) if options.get("select") is not None else None,
        extend_select=extend,
        ignore=_strings(options.get("ignore")),
        fail_on=_string(fail_on),
        assume_versions=_strings(options.get("assume_version")),
        python=_string(options.get("python")),
        use_project=not options.get("isolated"),
        debug=bool(options.get("debug")),
        deep=bool(options.get("deep")),
        command=command,
    )
    if fmt == "text" and not options.get("statistics"):
        print(f"<command line>: {shlex.join(command)}")
    from .sources import STDIN
    from .sources.shell_source import COMMAND_LINE, command_text

    STDIN[COMMAND_LINE] = command_text(command)  # the text output's code frames show the command line
    emit(report, fmt, _string(options.get("color")), bool(options.get("quiet")), bool(options.get("statistics")))
    report_internal(report)
    code = report.exit_code()
    return 0 if options.get("exit_zero") and code == 1 else code


def execute(command: list[str]) -> int:
    """Become ``command`` (``os.execvp``); only returns when it cannot be started."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(command[0], command)
    except FileNotFoundError:
        print(f"precheck: cannot run `{command[0]}`: command not found", file=sys.stderr)
        return 127
    except OSError as error:
        print(f"precheck: cannot run `{command[0]}`: {error.strerror or error}", file=sys.stderr)
        return 126
    return 0  # pragma: no cover - execvp does not return


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def _string(value: object) -> str | None:
    return None if value is None else str(value)
