"""The ``precheck`` process: route the command line, run it, turn errors into exit codes.

``precheck PATH...`` means ``precheck check PATH...``. A plain command line of ``check``
or ``probe`` — paths, ``--name VALUE`` / ``--name=VALUE`` options and flags — is read here
from the options :mod:`precheck.options` declares (the declaration typer's commands are
generated from) and run without importing typer: typer and the click it vendors import
``subprocess``, ``platform``, ``shutil``..., and typer 0.29 coerces every option through a
pydantic ``TypeAdapter`` it builds at parse time (``typer/_coercion.py``; importing
pydantic scans every installed distribution's entry points for plugins), which together
cost more than checking a small config, on every commit a pre-commit hook checks.
Anything else — another subcommand, ``--help``, an unknown or misspelt option,
``--no-...``, a missing value, a value that starts with ``-`` — goes to the typer app in
:mod:`precheck.cli`, which gives its own messages. tests/test_cli_entry.py checks that
both read every declared option the same way.
"""

from __future__ import annotations

import atexit
import gc
import sys

from .errors import InputError, PrecheckError
from .escape import install, printable

#: the typer app's commands (tests/test_cli_entry.py checks this against it)
SUBCOMMANDS = {"check", "explain", "probe", "rules", "rule", "gpus", "smoke", "run", "init"}
#: the typer app's own options (not ``check``'s)
ROOT_OPTIONS = ("-h", "--help", "--version", "-V", "--install-completion", "--show-completion")
#: set by the shell when it asks for completions (typer's ``--install-completion`` script)
COMPLETE_VAR = "_PRECHECK_COMPLETE"


def route(args: list[str]) -> list[str]:
    """``precheck PATH...`` means ``precheck check PATH...``."""
    if not args:
        return ["check"]
    if args[0] in SUBCOMMANDS or args[0] in ROOT_OPTIONS:
        return args
    return ["check", *args]


#: the last :func:`main` ran a plain ``check`` or ``probe`` to its end (see :func:`console`)
_checked_plainly = False


def console() -> None:
    """The ``precheck`` command and ``python -m precheck``: :func:`main`, then, after a plain
    check or probe, the process ends without tearing the interpreter down once its output is
    flushed (``os._exit``, as mypy's ``hard_exit``): freeing every object a run made takes
    about 25 ms of a 400-file run, and nothing is left to do — a check opens no file it has
    not closed (``--fix`` writes through a closed temporary file), registers no exit handler
    that matters (``gc.freeze`` only) and starts no thread. Any other ending (a subcommand of
    the typer app, ``precheck -- CMD``, ``--debug``'s traceback, torch imported by
    ``probe --torch``) exits as Python does."""
    global _checked_plainly
    _checked_plainly = False
    try:
        main()
    except SystemExit as done:
        code = 0 if done.code is None else done.code
        if not _checked_plainly or not isinstance(code, int) or "torch" in sys.modules:
            raise
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # the reader went away: Python's own exit reports it as before
            raise done from None
        import os

        os._exit(code)


def main(argv: list[str] | None = None) -> None:
    global _checked_plainly
    import os

    # a short-lived process that builds many trees without cycles (Python ASTs, YAML nodes):
    # the cyclic collector's frequent passes over them find nothing, so it runs less often
    # (on ../shared/projects its passes took 39 ms at a threshold of 50,000 and 1 ms at
    # 200,000 when it read 403 files; on its 606 files, 90-160 ms in two passes at 200,000
    # and none at 1,000,000, peak memory 90 MiB and 94 MiB, and 31.4 MiB on 10,000 configs at both);
    # and not at exit, where its last pass would walk every object the process made (modules,
    # classes, tables: a tenth of a one-file check) to free what the process's end frees anyway
    gc.set_threshold(1_000_000, 20, 100)
    atexit.unregister(gc.freeze)  # once, however often main runs in one process
    atexit.register(gc.freeze)

    install()  # every line written passes the output boundary (precheck.escape)
    if COMPLETE_VAR in os.environ:  # the shell asks for completions: typer answers
        from .cli import app

        app(prog_name="precheck")
    given = list(sys.argv[1:] if argv is None else argv)
    if given in (["--version"], ["-V"]):  # answered before anything of the check is imported
        from . import __version__

        print(f"precheck {__version__}")
        _checked_plainly = True
        sys.exit(0)
    args = route(given)
    debug = "--debug" in args
    try:
        from .launch_check import wants_command

        # ``precheck [options] -- CMD ARGS...`` and ``precheck run [options] -- CMD ARGS...``;
        # after a named subcommand (``precheck check -- FILE...``) ``--`` ends the options
        if wants_command(args, explicit=bool(given) and given[0] == args[0]):
            from .launch_check import main as launch_main

            sys.exit(launch_main(args))
        code = run_plain(args)
        if code is None:
            from .cli import app

            app(args=args, prog_name="precheck")
        _checked_plainly = True
        sys.exit(code)
    except InputError as error:
        print(f"precheck: {printable(_relative(error))}", file=sys.stderr)
        sys.exit(2)
    except PrecheckError as error:
        print(f"precheck: error: {printable(str(error))}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        # the reader went away (`precheck ... | head -1`): stop quietly, as cat and grep do;
        # stdout goes to /dev/null so that the interpreter's final flush cannot fail again
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as error:  # the last line of defence: a message, not a traceback
        if debug:
            raise
        print(
            f"precheck: internal error: {type(error).__name__}: {printable(str(error))}\n"
            "This is a bug in precheck; please report it with the config that caused it "
            "(run again with --debug for the traceback).",
            file=sys.stderr,
        )
        sys.exit(2)


def _relative(error: InputError) -> str:
    """``path:line:col: message`` with the path relative to the current folder when it is
    below it, as findings show paths (a project configuration is found by its full path)."""
    import os.path

    path = error.path
    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive (Windows)
            relative = path
        if not relative.startswith(".."):
            path = relative
    return str(InputError(path, error.message, error.line, error.column))


def run_plain(args: list[str]) -> int | None:
    """Run a plain ``check`` or ``probe`` command line (routed); None: typer reads it."""
    from .options import CHECK, PROBE, CheckOptions, ProbeOptions, parse

    if args[0] == "check":
        given = parse(CHECK, args[1:])
        if given is not None:
            from .check_command import run_check

            return run_check(CheckOptions(**given))
    elif args[0] == "probe":
        given = parse(PROBE, args[1:])
        if given is not None:
            from .probe_report import print_probe

            options = ProbeOptions(**given)
            print_probe(options.json, options.torch)
            return 0
    return None
