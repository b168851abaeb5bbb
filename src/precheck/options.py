"""The options of ``precheck check`` (and of ``precheck probe``), declared once.

Each option is a field of a frozen dataclass (:class:`CheckOptions`, :class:`ProbeOptions`):
the field's name is the option's name, and its default comes from :func:`flag`,
:func:`value`, :func:`values` or :func:`arguments`, which give its spellings, ``--help`` text,
metavar and environment variable. From that one declaration:

- :mod:`precheck.cli` generates typer's ``check`` and ``probe`` commands;
- :func:`parse` reads a plain command line without importing typer (:mod:`precheck.entry`:
  the cold start of a pre-commit hook), and returns None for anything it does not read
  (``--help``, an unknown option, a missing value...), which typer then reads;
- the command line and the Python API run the same :func:`precheck.api.check` on a
  :class:`CheckOptions`.

Adding an option is one field here, and the code that uses it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeVar

#: ``flag``: ``--name``, True when given; ``value``: ``--name VALUE`` (the last one given);
#: ``values``: ``--name VALUE``, repeatable (every one given, in order); ``arguments``:
#: the positional arguments
Kind = Literal["flag", "value", "values", "arguments"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Option:
    """One option: its name (the field's), what it takes, how it is spelt, its help line."""

    name: str
    kind: Kind
    #: ``--name`` first, then any short spelling (``-q``); none for the positional arguments
    flags: tuple[str, ...]
    help: str
    default: Any = None
    metavar: str | None = None
    #: an environment variable that gives the value when the option is not given
    env: str | None = None


def _declare(kind: Kind, flags: tuple[str, ...], text: str, default: Any, metavar: str | None, env: str | None) -> Any:
    return field(default=default, metadata={"option": Option("", kind, flags, text, default, metavar, env)})


def flag(*flags: str, help: str, env: str | None = None) -> Any:
    """A flag: False unless given."""
    return _declare("flag", flags, help, False, None, env)


def value(*flags: str, help: str, metavar: str, default: str | None = None, env: str | None = None) -> Any:
    """An option that takes one value (given twice: the last)."""
    return _declare("value", flags, help, default, metavar, env)


def values(*flags: str, help: str, metavar: str, env: str | None = None) -> Any:
    """A repeatable option: a tuple of every value given, or None."""
    return _declare("values", flags, help, None, metavar, env)


def arguments(*, help: str, metavar: str) -> Any:
    """The positional arguments: a tuple, or None when there are none."""
    return _declare("arguments", (), help, None, metavar, None)


def declared(options: type) -> tuple[Option, ...]:
    """The options a dataclass declares, in order."""
    return tuple(replace(f.metadata["option"], name=f.name) for f in fields(options) if "option" in f.metadata)


def build(options: type[T], given: Mapping[str, Any]) -> T:
    """``options`` from the values a parser read, by name: a repeated option's list becomes
    a tuple, and an empty one is not given (the parsers hand ``None``, ``()`` or ``[]``)."""
    return options(**{k: (tuple(v) or None) if isinstance(v, (list, tuple)) else v for k, v in given.items()})


@dataclass(frozen=True)
class CheckOptions:
    """What ``precheck check`` is asked to do (``precheck check --help`` shows these lines)."""

    paths: tuple[str, ...] | None = arguments(
        metavar="PATH", help="Config files or folders (default: .); `-`: standard input."
    )
    gpu: tuple[str, ...] | None = values(
        "--gpu",
        metavar="SPEC",
        help="Target GPU, repeatable, in CUDA order: V100, 8xA100-80GB, 'GTX 1080 Ti', sm_86:48GB.",
    )
    hardware: str | None = value("--hardware", metavar="FILE", help="Hardware file written by `precheck probe --json`.")
    format: str = value(
        "--format", metavar="FORMAT", default="text", help="Output format: text, concise, json, sarif or github."
    )
    select: tuple[str, ...] | None = values(
        "--select", metavar="RULES", help="Rules to run: code, prefix, name or ALL."
    )
    extend_select: tuple[str, ...] | None = values(
        "--extend-select", metavar="RULES", help="Rules to run on top of the selection."
    )
    ignore: tuple[str, ...] | None = values("--ignore", metavar="RULES", help="Rules to skip: code, prefix or name.")
    assume_version: tuple[str, ...] | None = values(
        "--assume-version",
        metavar="NAME==VERSION",
        help="The version of a framework the run uses (repeatable); beats pins and installs.",
    )
    python: str | None = value(
        "--python", metavar="PATH", help="Read installed framework versions from this interpreter's environment."
    )
    fail_on: str | None = value(
        "--fail-on", metavar="LEVEL", help="Lowest severity that fails: error (default), warning or info."
    )
    exit_zero: bool = flag("--exit-zero", help="Exit 0 even with failing findings.")
    debug: bool = flag("--debug", help="Show the traceback of an internal error.")
    exclude: tuple[str, ...] | None = values(
        "--exclude", metavar="PATTERN", help="Pass over matching files in folders (gitignore syntax, repeatable)."
    )
    fix: bool = flag("--fix", help="Apply the safe fixes in the files, then report the rest.")
    diff: bool = flag("--diff", help="Print the fixes as a unified diff; write nothing.")
    unsafe_fixes: bool = flag("--unsafe-fixes", help="With --fix or --diff, apply the unsafe fixes too.")
    show_unused_suppressions: bool = flag(
        "--show-unused-suppressions", help="Report `# precheck: ignore` comments that silence nothing."
    )
    isolated: bool = flag("--isolated", help="Ignore pyproject.toml / .precheck.toml project configuration.")
    deep: bool = flag(
        "--deep",
        help="Also ask the installed transformers, TRL and accelerate: keys against their dataclasses, "
        "exact parameter counts on the meta device (needs precheck-ml[hf]).",
    )
    config: str | None = value(
        "--config",
        metavar="FILE",
        help="The project configuration to use (.precheck.toml keys, or a pyproject.toml with "
        "[tool.precheck]) instead of the closest one.",
    )
    stdin_filename: str | None = value(
        "--stdin-filename",
        metavar="NAME",
        help="Check standard input (path `-`) as the file NAME: its suffix is the format, its folder "
        "holds the files it names.",
    )
    statistics: bool = flag("--statistics", help="Count the findings by rule instead of listing them.")
    quiet: bool = flag("--quiet", "-q", help="Print the findings only: no summary or info lines.")
    color: str | None = value(
        "--color",
        metavar="WHEN",
        help="Colour the text output: auto (default: on a terminal, unless NO_COLOR is set; "
        "FORCE_COLOR forces it), always or never.",
    )


@dataclass(frozen=True)
class ProbeOptions:
    """What ``precheck probe`` is asked to do."""

    json: bool = flag("--json", help="Write the versioned document `--hardware` reads.")
    torch: bool = flag("--torch", help="Ask torch first (imports it; slower).")


CHECK = declared(CheckOptions)
PROBE = declared(ProbeOptions)


def parse(options: Sequence[Option], argv: Sequence[str]) -> dict[str, Any] | None:
    """The values a plain command line gives, by option name, or None: typer reads it.

    Read as click reads it: options and paths in any order, ``--name VALUE`` or
    ``--name=VALUE``, ``--`` ends the options, a repeatable option collects its values in a
    tuple, another keeps the last. None for anything else: ``-h``/``--help``, an unknown
    or misspelt option, ``--flag=VALUE``, a missing value or one that starts with ``-``,
    paths to a command that takes none, an option's environment variable set."""
    spelt = {spelling: option for option in options for spelling in option.flags}
    given: dict[str, Any] = {}
    words: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if token == "--":
            words.extend(argv[index:])
            break
        if not token.startswith("-") or token == "-":
            words.append(token)
            continue
        name, equals, text = token.partition("=") if token.startswith("--") else (token, "", "")
        option = spelt.get(name)
        if option is None:
            return None
        if option.kind == "flag":
            if equals:
                return None
            given[option.name] = True
            continue
        if not equals:
            if index >= len(argv) or argv[index].startswith("-"):
                return None
            text = argv[index]
            index += 1
        given[option.name] = (*given.get(option.name, ()), text) if option.kind == "values" else text
    if words:
        positional = [o for o in options if o.kind == "arguments"]
        if not positional:
            return None
        given[positional[0].name] = tuple(words)
    if any(o.env is not None and o.name not in given and o.env in os.environ for o in options):
        return None  # typer reads the variable as click does
    return given


__all__ = ["CHECK", "PROBE", "CheckOptions", "Option", "ProbeOptions", "build", "declared", "parse"]
