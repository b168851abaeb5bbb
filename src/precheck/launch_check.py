"""``precheck [options] -- CMD ARGS...`` and ``precheck run [options] -- CMD ARGS...``.

The first checks a launch command line before it runs; the second runs it only when the
check passes, so a launch can be prefixed: ``precheck run --gpu V100 -- torchrun train.py ...``.
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
    import shlex

    from .check_command import run_check
    from .options import CHECK, CheckOptions, parse

    verb = args[0]
    split = args.index("--", 1)
    options, command = args[1:split], args[split + 1 :]
    if not command:
        raise UsageError(f"nothing after `--`: give the command to check, e.g. precheck {verb} -- torchrun train.py")
    given = parse(CHECK, options)
    if given is None:
        raise UsageError(
            f"cannot read the options before `--` ({shlex.join(options)}): they are `precheck check`'s "
            "(see `precheck check --help`), each as --name VALUE or --name=VALUE"
        )
    wanted = CheckOptions(**given)
    if verb == "check":
        return run_check(wanted, command)
    with contextlib.redirect_stdout(sys.stderr):  # stdout stays the command's
        code = run_check(wanted, command)
    if code != 0:
        print(f"precheck: not running `{shlex.join(command)}`: the check failed (exit {code})", file=sys.stderr)
        return code
    return execute(command)


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
