"""The ``precheck`` process: route the command line, run it, turn errors into exit codes.

``precheck PATH...`` means ``precheck check PATH...``. A plain command line of ``check``
or ``probe`` — paths, ``--name VALUE`` / ``--name=VALUE`` options and flags of the
function that does the command (:data:`PLAIN`) — is read here and run without importing
typer: typer and the click it vendors import ``subprocess``, ``platform``, ``shutil``...,
and typer 0.29 coerces every option through a pydantic ``TypeAdapter`` it builds at parse
time (``typer/_coercion.py``; importing pydantic scans every installed distribution's
entry points for plugins), which together cost more than checking a small config, on
every commit a pre-commit hook checks. Anything else — another subcommand, ``--help``, an
unknown or misspelt option, ``--no-...``, a missing value, a value that starts with ``-``
— goes to the typer app in :mod:`precheck.cli`, which gives its own messages.
tests/test_cli_entry.py checks that both read every option the same way.
"""

from __future__ import annotations

import gc
import importlib
import sys
import typing
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from .errors import InputError, PrecheckError

#: the typer app's commands (tests/test_cli_entry.py checks this against it)
SUBCOMMANDS = {"check", "explain", "probe", "rules", "rule", "gpus", "smoke", "run"}


class Plain(NamedTuple):
    """A command whose plain command lines are read here: the typer-free function that does
    it (its parameters are the options), the parameters spelt other than ``--name-with-dashes``,
    and the one that takes the positional arguments."""

    module: str
    function: str
    spellings: tuple[tuple[str, str], ...] = ()
    positional: str | None = None
    #: short spellings: (``-q``, parameter)
    shorts: tuple[tuple[str, str], ...] = ()

    def target(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.module, __package__), self.function)  # type: ignore[no-any-return]


PLAIN = {
    "check": Plain(".check_command", "run_check", (("fmt", "--format"),), "paths", (("-q", "quiet"),)),
    "probe": Plain(".probe_report", "print_probe", (("as_json", "--json"), ("use_torch", "--torch"))),
}

_FLAG, _VALUE, _VALUES = "flag", "value", "values"

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


def main(argv: list[str] | None = None) -> None:
    import os

    # a short-lived process that builds many trees without cycles (Python ASTs, YAML nodes):
    # the cyclic collector's frequent passes over them find nothing, so it runs less often
    gc.set_threshold(50_000, 20, 100)

    if COMPLETE_VAR in os.environ:  # the shell asks for completions: typer answers
        from .cli import app

        app(prog_name="precheck")
    given = list(sys.argv[1:] if argv is None else argv)
    args = route(given)
    debug = "--debug" in args
    try:
        from .launch_check import wants_command

        # ``precheck [options] -- CMD ARGS...`` and ``precheck run [options] -- CMD ARGS...``;
        # after a named subcommand (``precheck check -- FILE...``) ``--`` ends the options
        if wants_command(args, explicit=bool(given) and given[0] == args[0]):
            from .launch_check import main as launch_main

            sys.exit(launch_main(args))
        command = PLAIN.get(args[0])
        plain = plain_args(command, args[1:]) if command is not None else None
        if command is None or plain is None:
            from .cli import app

            app(args=args, prog_name="precheck")
        else:
            code = command.target()(**plain)
            sys.exit(code if isinstance(code, int) else 0)
    except InputError as error:
        print(f"precheck: {_relative(error)}", file=sys.stderr)
        sys.exit(2)
    except PrecheckError as error:
        print(f"precheck: error: {error}", file=sys.stderr)
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
            f"precheck: internal error: {type(error).__name__}: {error}\n"
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


def plain_check_args(argv: Sequence[str]) -> dict[str, Any] | None:
    """``run_check``'s keyword arguments for a plain ``check`` command line, or None."""
    return plain_args(PLAIN["check"], argv)


def plain_args(command: Plain, argv: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments of ``command``'s function for a plain command line, or None
    (typer reads it).

    Read as click reads it: options and paths in any order, ``--`` ends the options, a
    repeated option collects its values (a single-valued one keeps the last)."""
    options, defaults = plain_options(command)
    given: dict[str, Any] = {}
    paths: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if token == "--":
            paths.extend(argv[index:])
            break
        if not token.startswith("-") or token == "-":
            paths.append(token)
            continue
        if not token.startswith("--") and token not in options:
            return None  # -h and any other short option
        name, equals, value = token.partition("=")
        found = options.get(name)
        if found is None:
            return None
        param, kind = found
        if kind == _FLAG:
            if equals:
                return None
            given[param] = True
            continue
        if not equals:
            if index >= len(argv) or argv[index].startswith("-"):
                return None
            value = argv[index]
            index += 1
        if kind == _VALUES:
            given.setdefault(param, []).append(value)
        else:
            given[param] = value
    if paths:
        if command.positional is None:
            return None
        given[command.positional] = paths
    return {**defaults, **given}


@lru_cache(maxsize=8)
def plain_options(command: Plain) -> tuple[dict[str, tuple[str, str]], dict[str, Any]]:
    """Option spelling → (parameter, ``flag`` | ``value`` | ``values``), and every default,
    read from the signature of ``command``'s function (``bool``, ``str``, ``list[str]``,
    each maybe ``| None``; every parameter has a default)."""
    import inspect

    function = command.target()
    hints = typing.get_type_hints(function)
    spellings = dict(command.spellings)
    options: dict[str, tuple[str, str]] = {}
    defaults: dict[str, Any] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.default is inspect.Parameter.empty:
            raise TypeError(f"{command.function}'s {name}: a command-line option needs a default")
        defaults[name] = parameter.default
        if name == command.positional:
            continue
        kind = _kind(hints[name])
        if kind is None:
            raise TypeError(f"{command.function}'s {name}: a command-line option is a bool, a str or a list[str]")
        options[spellings.get(name, "--" + name.replace("_", "-"))] = (name, kind)
    for short, name in command.shorts:
        options[short] = options[spellings.get(name, "--" + name.replace("_", "-"))]
    return options, defaults


def _kind(annotation: Any) -> str | None:
    members = [a for a in typing.get_args(annotation) if a is not type(None)] if _is_union(annotation) else [annotation]
    if len(members) != 1:
        return None
    only = members[0]
    if only is bool:
        return _FLAG
    if only is str:
        return _VALUE
    if typing.get_origin(only) is list and typing.get_args(only) == (str,):
        return _VALUES
    return None


def _is_union(annotation: Any) -> bool:
    import types

    return typing.get_origin(annotation) in (typing.Union, types.UnionType)
