"""The options of ``precheck check`` (and of ``precheck probe``), declared once.

Each option is a field of an immutable record (:class:`CheckOptions`, :class:`ProbeOptions`:
``NamedTuple`` classes, as a dataclass costs ten times as much to create, on every cold start): the
field's name and default are the option's, and its type is annotated with :func:`flag`,
:func:`value`, :func:`values` or :func:`arguments`, which give its spellings, ``--help``
text, metavar and environment variable. From that one declaration:

- :mod:`precheck.cli` generates typer's ``check`` and ``probe`` commands;
- :func:`parse` reads a plain command line without importing typer (:mod:`precheck.entry`:
  the cold start of a pre-commit hook), and returns None for anything it does not read
  (``--help``, an unknown option, a missing value...), which typer then reads;
- the command line and the Python API run the same :func:`precheck.api.check` on a
  :class:`CheckOptions`.

Adding an option is one field here, and the code that uses it.
"""

import os
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, NamedTuple, TypeVar

# no ``from __future__ import annotations``: the declarations below are read at run time

#: ``flag``: ``--name``, True when given; ``value``: ``--name VALUE`` (the last one given);
#: ``values``: ``--name VALUE``, repeatable (every one given, in order); ``arguments``:
#: the positional arguments
Kind = Literal["flag", "value", "values", "arguments"]

T = TypeVar("T")


class Option(NamedTuple):
    """One option: what it takes, how it is spelt, its help line; its name and default are
    those of the field that declares it (:func:`declared` fills them in)."""

    kind: Kind
    #: ``--name`` first, then any short spelling (``-q``); none for the positional arguments
    flags: tuple[str, ...]
    help: str
    metavar: str | None = None
    #: an environment variable that gives the value when the option is not given
    env: str | None = None
    name: str = ""
    default: Any = None


def flag(*flags: str, help: str, env: str | None = None) -> Option:
    """A flag (its field's default: False)."""
    return Option("flag", flags, help, None, env)


def value(*flags: str, help: str, metavar: str, env: str | None = None) -> Option:
    """An option that takes one value; given twice, the last."""
    return Option("value", flags, help, metavar, env)


def values(*flags: str, help: str, metavar: str, env: str | None = None) -> Option:
    """A repeatable option: a tuple of every value given (its field's default: None)."""
    return Option("values", flags, help, metavar, env)


def arguments(*, help: str, metavar: str) -> Option:
    """The positional arguments: a tuple (its field's default: None)."""
    return Option("arguments", (), help, metavar)


def declared(options: type[tuple[Any, ...]]) -> tuple[Option, ...]:
    """The options a declaration (a ``NamedTuple`` of ``Annotated[type, Option]`` fields)
    holds, in order, each with its field's name and default."""
    defaults: dict[str, Any] = getattr(options, "_field_defaults", {})
    hints = options.__annotations__
    if not all(hasattr(h, "__metadata__") for h in hints.values()):  # annotations as text
        import typing

        hints = typing.get_type_hints(options, include_extras=True)
    return tuple(hint.__metadata__[0]._replace(name=name, default=defaults.get(name)) for name, hint in hints.items())


def build(options: type[T], given: Mapping[str, Any]) -> T:
    """``options`` from the values a parser read, by name: a repeated option's list becomes
    a tuple, and an empty one is not given (the parsers hand ``None``, ``()`` or ``[]``)."""
    return options(**{k: (tuple(v) or None) if isinstance(v, (list, tuple)) else v for k, v in given.items()})


class CheckOptions(NamedTuple):
    """What ``precheck check`` is asked to do: one field per option (``precheck check --help``
    shows their help lines), immutable (``options._replace(paths=...)`` makes another)."""

    paths: Annotated[
        tuple[str, ...] | None,
        arguments(metavar="PATH", help="Config files or folders (default: .); `-`: standard input."),
    ] = None
    gpu: Annotated[
        tuple[str, ...] | None,
        values(
            "--gpu",
            metavar="SPEC",
            help="Target GPU, repeatable, in CUDA order: V100, 8xA100-80GB, 'GTX 1080 Ti', sm_86:48GB.",
        ),
    ] = None
    hardware: Annotated[
        str | None, value("--hardware", metavar="FILE", help="Hardware file written by `precheck probe --json`.")
    ] = None
    format: Annotated[
        str,
        value("--format", metavar="FORMAT", help="Output format: text, concise, json, sarif, github, gitlab or junit."),
    ] = "text"
    select: Annotated[
        tuple[str, ...] | None, values("--select", metavar="RULES", help="Rules to run: code, prefix, name or ALL.")
    ] = None
    extend_select: Annotated[
        tuple[str, ...] | None,
        values("--extend-select", metavar="RULES", help="Rules to run on top of the selection."),
    ] = None
    ignore: Annotated[
        tuple[str, ...] | None, values("--ignore", metavar="RULES", help="Rules to skip: code, prefix or name.")
    ] = None
    assume_version: Annotated[
        tuple[str, ...] | None,
        values(
            "--assume-version",
            metavar="NAME==VERSION",
            help="The version of a framework the run uses (repeatable); beats pins and installs.",
        ),
    ] = None
    python: Annotated[
        str | None,
        value(
            "--python", metavar="PATH", help="Read installed framework versions from this interpreter's environment."
        ),
    ] = None
    fail_on: Annotated[
        str | None,
        value("--fail-on", metavar="LEVEL", help="Lowest severity that fails: error (default), warning or info."),
    ] = None
    exit_zero: Annotated[bool, flag("--exit-zero", help="Exit 0 even with failing findings.")] = False
    debug: Annotated[bool, flag("--debug", help="Show the traceback of an internal error.")] = False
    exclude: Annotated[
        tuple[str, ...] | None,
        values(
            "--exclude", metavar="PATTERN", help="Pass over matching files in folders (gitignore syntax, repeatable)."
        ),
    ] = None
    fix: Annotated[bool, flag("--fix", help="Apply the safe fixes in the files, then report the rest.")] = False
    diff: Annotated[bool, flag("--diff", help="Print the fixes as a unified diff; write nothing.")] = False
    unsafe_fixes: Annotated[bool, flag("--unsafe-fixes", help="With --fix or --diff, apply the unsafe fixes too.")] = (
        False
    )
    add_noqa: Annotated[
        bool,
        flag(
            "--add-noqa",
            help="Silence today's findings: `# precheck: ignore[CODE]` on each one's line "
            "(JSON: a per-file-ignores entry in the project configuration).",
        ),
    ] = False
    baseline: Annotated[
        str | None,
        value("--baseline", metavar="FILE", help="Report only the findings that are not in FILE (--write-baseline)."),
    ] = None
    write_baseline: Annotated[
        str | None,
        value("--write-baseline", metavar="FILE", help="Write today's findings to FILE, to check new ones against."),
    ] = None
    show_unused_suppressions: Annotated[
        bool, flag("--show-unused-suppressions", help="Report `# precheck: ignore` comments that silence nothing.")
    ] = False
    isolated: Annotated[
        bool, flag("--isolated", help="Ignore pyproject.toml / .precheck.toml project configuration.")
    ] = False
    deep: Annotated[
        bool,
        flag(
            "--deep",
            help="Also ask the installed transformers, TRL and accelerate: keys against their dataclasses, "
            "exact parameter counts on the meta device (needs precheck-ml[hf]).",
        ),
    ] = False
    config: Annotated[
        str | None,
        value(
            "--config",
            metavar="FILE",
            help="The project configuration to use (.precheck.toml keys, or a pyproject.toml with "
            "[tool.precheck]) instead of the closest one.",
        ),
    ] = None
    stdin_filename: Annotated[
        str | None,
        value(
            "--stdin-filename",
            metavar="NAME",
            help="Check standard input (path `-`) as the file NAME: its suffix is the format, its folder "
            "holds the files it names.",
        ),
    ] = None
    statistics: Annotated[bool, flag("--statistics", help="Count the findings by rule instead of listing them.")] = (
        False
    )
    quiet: Annotated[bool, flag("--quiet", "-q", help="Print the findings only: no summary or info lines.")] = False
    color: Annotated[
        str | None,
        value(
            "--color",
            metavar="WHEN",
            help="Colour the text output: auto (default: on a terminal, unless NO_COLOR is set; "
            "FORCE_COLOR forces it), always or never.",
        ),
    ] = None


class ProbeOptions(NamedTuple):
    """What ``precheck probe`` is asked to do."""

    json: Annotated[bool, flag("--json", help="Write the versioned document `--hardware` reads.")] = False
    torch: Annotated[bool, flag("--torch", help="Ask torch first (imports it; slower).")] = False


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
