"""Command-line arguments → positioned :class:`Node` mappings, typed as each framework's parser types them.

A launch command's words (``--fp16 false``, ``--precision=bf16-true``, ``lr=1e-4``) become
the same ``dict[str, Node]`` a YAML file gives, so the dialects read them unchanged: each
value node sits at the value's line and column, with ``key``/``key_line``/``key_column``
at the flag (findings point at the flag), and ``raw`` the token as written.

Values are strings on a command line; what they become depends on the parser that reads
them (:data:`STYLES`):

- ``hf``: ``transformers.HfArgumentParser`` (HF example scripts, TRL, and the frameworks
  whose command line it parses). A bool field is ``nargs="?", const=True, type=string_to_bool``
  (``--fp16`` alone is True; ``string_to_bool`` accepts yes/no, true/false, t/f, y/n, 1/0
  case-insensitively: transformers ``hf_argparser.py``); numbers go through the field's
  type; ``None``/``null`` stay strings.
- ``omegaconf``: ``OmegaConf.from_cli``/``from_dotlist`` (``key=value`` overrides): each
  value is loaded with omegaconf's YAML loader (PyYAML's SafeLoader, YAML 1.1 booleans
  ``yes``/``on``..., plus a float resolver that reads ``1e-4``; ``omegaconf/_utils.py``
  ``get_yaml_loader``).
- ``omegaconf-none``: the same, after the framework's own pass that turns ``None`` into
  null (``config/_utils.py`` ``_merge_yaml_and_cli_args`` of the recipe framework that
  merges its ``key=value`` overrides so).
- ``python``: python-fire (``fire.Fire`` entry points): Python literals (``True``,
  ``None``, ``1e-4``); a bare word such as ``true`` stays the string ``"true"``.
- ``pydantic``: click options validated by a pydantic schema (lax mode turns
  ``true``/``yes``/``on``/``1``... into booleans for a bool field).
- ``yaml``: jsonargparse loads each value as YAML (PyYAML SafeLoader).
- ``yaml12``: anything else, a YAML 1.2 core scalar (true/false/null, ints, floats).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ..paths import within_checked
from .nodes import Node, SourceNote, position
from .script_path import find_file, searched

STYLES = ("hf", "omegaconf", "omegaconf-none", "python", "pydantic", "yaml", "yaml12")

_CORE_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_CORE_NULL = {"null", "Null", "NULL", "~"}
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_HF_TRUE = {"yes", "true", "t", "y"}
_HF_FALSE = {"no", "false", "f", "n"}
_PYDANTIC_TRUE = _HF_TRUE | {"on"}
_PYDANTIC_FALSE = _HF_FALSE | {"off"}
_NEGATIVE = re.compile(r"-[0-9.]")
#: bare words python-fire keeps as strings that a user means as booleans (fire/parser.py
#: ``_Replacement``: only the names True, False and None stay Python literals)
_FIRE_WORDS = _PYDANTIC_TRUE | _PYDANTIC_FALSE


class _OmegaConfLoader(yaml.SafeLoader):
    """omegaconf ``get_yaml_loader``: SafeLoader with ``1e-4`` as a float and no timestamps."""


_OmegaConfLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)
_OmegaConfLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _OmegaConfLoader.yaml_implicit_resolvers.items()
}


def _core_number(text: str) -> Any:
    if _INT.fullmatch(text):
        return int(text, 0) if text[:2] in ("0o", "0x") else int(text)
    if _FLOAT.fullmatch(text):
        low = text.lower()
        if low.endswith("inf"):
            return float("-inf") if low.startswith("-") else float("inf")
        return float("nan") if low.endswith("nan") else float(text)
    return None


def typed(text: str, style: str) -> Any:
    """The value the framework's parser makes of the command-line string ``text``."""
    if style in ("omegaconf", "omegaconf-none", "yaml"):
        if style == "omegaconf-none" and text == "None":
            return None
        try:
            value = yaml.load(text, Loader=_OmegaConfLoader)  # a SafeLoader subclass
        except (yaml.YAMLError, RecursionError, ValueError):  # deep brackets; an int over Python's digit limit
            return text
        return value if isinstance(value, (str, int, float, bool)) or value is None else text
    if style == "python":
        if text in ("True", "False", "None") or _FLOAT.fullmatch(text):
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return text
        return text
    if style in ("hf", "pydantic"):
        lower = text.lower()
        if lower in (_HF_TRUE if style == "hf" else _PYDANTIC_TRUE):
            return True
        if lower in (_HF_FALSE if style == "hf" else _PYDANTIC_FALSE):
            return False
        number = _core_number(text)
        return text if number is None else number
    if text in _CORE_BOOL:
        return _CORE_BOOL[text]
    if text in _CORE_NULL:
        return None
    number = _core_number(text)
    return text if number is None else number


@dataclass(slots=True)
class Field:
    """One word after expansion: its characters and where each was written."""

    text: str
    at: list[int]
    #: the word as written (quotes included), for ``Node.raw``
    raw: str
    #: offset of the word's first character (for an empty word)
    start: int
    quoted: bool = False
    #: what could not be expanded: ``$X`` unset in the script, ``$(...)``
    unresolved: list[str] = field(default_factory=list)
    #: where in ``text`` each of them stands: ``(start, end, what)`` (a variable holding several
    #: words keeps them, so splitting it marks only the words they fall in)
    holes: list[tuple[int, int, str]] = field(default_factory=list)

    def offset(self, index: int = 0) -> int:
        """The source offset of character ``index`` (the word's start when there is none)."""
        return self.at[index] if index < len(self.at) else (self.at[-1] + 1 if self.at else self.start)

    def tail(self, index: int) -> Field:
        """The field from character ``index`` (the value of ``--key=value``)."""
        return Field(
            self.text[index:],
            self.at[index:],
            self.text[index:],
            self.offset(index),
            self.quoted,
            self.unresolved,
            [(max(s - index, 0), e - index, what) for s, e, what in self.holes if e > index],
        )

    def looks_like_option(self) -> bool:
        return self.text.startswith("-") and len(self.text) > 1 and not _NEGATIVE.match(self.text)

    def readable_option(self) -> bool:
        """An option whose name is written out: resolved, or ``--name=$VALUE`` where only the value
        is unknown (``--num_processes=$(( 8 * $SLURM_JOB_NUM_NODES ))``: bash passes one word, and the
        launcher reads it as ``--num_processes`` whatever the value)."""
        if not self.looks_like_option():
            return False
        return not self.unresolved or "=" in self.text.split("$", 1)[0]


def program_name(text: str) -> str:
    """``PurePosixPath(text).name``: the program a command's first word names
    (``/usr/bin/python3`` → ``python3``), without building a path for a bare name."""
    if "/" not in text:
        return "" if text == "." else text
    return PurePosixPath(text).name


class Builder:
    """Makes positioned nodes for one script (``path`` as shown, ``text`` the script)."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.notes: list[SourceNote] = []
        #: the files the script writes before the command being read (``cat <<EOF > cfg.yaml``),
        #: as written, normalized: a later command that names one names a file the run will have
        self.written: set[str] = set()

    def wrote(self, name: str) -> None:
        self.written.add(os.path.normpath(name))

    def writes(self, name: str) -> bool:
        """The script itself wrote the file ``name`` names before this command."""
        return os.path.normpath(name) in self.written

    def where(self, offset: int) -> tuple[int, int]:
        return position(self.text, offset)

    def note(self, kind: str, message: str, offset: int, key: str | None = None) -> None:
        line, column = self.where(offset)
        self.notes.append(SourceNote(kind, message, line, column, key))

    def value(self, flag: Field | None, key: str, value: Field | None, style: str) -> Node | None:
        """The node for ``--key value`` (``value`` None: a bare flag, True); None when the value
        cannot be known (an unset variable, a command substitution): a note says so."""
        key_at = flag.offset() if flag is not None else (value.offset() if value is not None else 0)
        key_line, key_column = self.where(key_at)
        if value is None:
            return Node(True, key_line, key_column, key, key_line, key_column, raw=None)
        if value.unresolved:
            self.note(
                "unresolved",
                f"`{key}` is `{value.raw}`, which depends on {', '.join(value.unresolved)}: "
                "precheck cannot tell its value and leaves it out",
                key_at,
                key,
            )
            return None
        line, column = self.where(value.offset())
        through = assigned_through(self.text, value.offset(), line, key_line)
        if style == "python" and value.text.lower() in _FIRE_WORDS and value.text not in ("True", "False"):
            self.note(
                "quoted-boolean",
                f"`{key} {value.text}`: python-fire passes the bare word {value.text!r} on as the string "
                f"{value.text!r}, not a boolean (only `True`/`False` are), and a non-empty string is true to "
                f"`if {key.lstrip('-')}:`, so {value.text!r} can switch the setting on; write `True` or `False`",
                key_at,
                key,
            )
        return Node(
            typed(value.text, style),
            line,
            column,
            key,
            key_line,
            key_column,
            raw=value.raw,
            quoted=value.quoted,
            through=through,
        )


#: a shell assignment up to its value: ``torch_dtype=``, ``export MIXED_PRECISION="``
_ASSIGNED = re.compile(r"(?:^|[\s;])(?:export\s+|local\s+|readonly\s+|declare\s+)?[A-Za-z_][A-Za-z0-9_]*=[\"']?$")


def assigned_through(text: str, offset: int, line: int, key_line: int) -> tuple[tuple[str | None, int], ...]:
    """The line of the script that assigns the shell variable a flag's value came from
    (``torch_dtype=bfloat16`` above ``--torch_dtype ${torch_dtype}``), as a place the value flows
    through (:attr:`Node.through`); nothing when the value is written at the flag itself or its
    text does not follow a ``NAME=`` on its own line (a value pieced from other text)."""
    if line == key_line or not 0 <= offset <= len(text):
        return ()
    start = text.rfind("\n", 0, offset) + 1
    return ((None, line),) if _ASSIGNED.search(text[start:offset]) else ()


@dataclass
class Parsed:
    """Flags and positionals of a command line, in order."""

    options: list[tuple[Field, str, list[Field]]] = field(default_factory=list)
    positionals: list[Field] = field(default_factory=list)


def split_options(args: list[Field], *, greedy: bool = True) -> Parsed:
    """``--key value``, ``--key=value``, ``--flag`` and positionals.

    ``greedy``: a flag takes every following word that is not an option (``nargs="+"``
    lists); otherwise at most one.
    """
    parsed = Parsed()
    i = 0
    while i < len(args):
        arg = args[i]
        text = arg.text
        if text == "--":
            parsed.positionals.extend(args[i + 1 :])
            break
        if arg.readable_option():
            body = text.lstrip("-")
            dashes = len(text) - len(body)
            name, eq, _ = body.partition("=")
            if eq:
                parsed.options.append((arg, name, [arg.tail(dashes + len(name) + 1)]))
                i += 1
                continue
            values: list[Field] = []
            i += 1
            while i < len(args) and not args[i].looks_like_option() and args[i].text != "--":
                values.append(args[i])
                i += 1
                if not greedy:
                    break
            parsed.options.append((arg, name, values))
            continue
        parsed.positionals.append(arg)
        i += 1
    return parsed


def flag_mapping(
    builder: Builder,
    options: list[tuple[Field, str, list[Field]]],
    style: str,
    *,
    normalise: bool = True,
    negatable: bool = False,
    into: dict[str, Node] | None = None,
) -> dict[str, Node]:
    """Options → mapping; the last of a repeated flag wins (argparse), with a note.

    ``normalise``: ``--per-device-train-batch-size`` is ``per_device_train_batch_size``
    (HfArgumentParser and click add the dashed spelling). ``negatable``: ``--no-X`` is
    ``X: false`` (click ``--X/--no-X`` bool options). Dotted names (``--train.max_norm``)
    nest.
    """
    out: dict[str, Node] = {} if into is None else into
    for flag, name, values in options:
        key = name.replace("-", "_") if normalise else name
        spelled = flag.text.partition("=")[0]
        if negatable and not values and key.startswith("no_"):
            node = builder.value(flag, spelled, None, style)
            if node is not None:
                node.value = False
            key = key[3:]
        elif len(values) > 1:
            items = [builder.value(flag, spelled, v, style) for v in values]
            kept = [item for item in items if item is not None]
            if len(kept) != len(items):
                continue
            first = kept[0]
            node = Node(kept, first.line, first.column, spelled, first.key_line, first.key_column)
            for item in kept:
                item.key = None
                item.key_line = item.key_column = None
        else:
            node = builder.value(flag, spelled, values[0] if values else None, style)
        if node is None:
            continue
        put(builder, out, key, node, flag.offset(), "the command line's last value wins")
    return out


def put(builder: Builder, root: dict[str, Node], dotted: str, node: Node, offset: int, why: str) -> None:
    """Set ``a.b.c`` in a nested mapping of nodes, noting a value given twice on the command line."""
    parts = [p for p in dotted.split(".") if p] or [dotted]
    current = root
    for part in parts[:-1]:
        child = current.get(part)
        if child is None or not isinstance(child.value, dict):
            child = Node({}, node.line, node.column, part, node.key_line, node.key_column)
            current[part] = child
        current = child.value
    last = parts[-1]
    previous = current.get(last)
    if previous is not None and previous.path is None:
        line = previous.key_line or previous.line
        builder.note(
            "duplicate-key",
            f"`{node.key}` is given again (first on line {line}): {why}",
            offset,
            node.key,
        )
    current[last] = node


def with_path(node: Node, path: str) -> Node:
    """Mark a node read from another file (and everything under it) with that file's path."""
    node.path = path
    for child in _children(node):
        with_path(child, path)
    return node


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node.value, dict):
        yield from (v for v in node.value.values() if isinstance(v, Node))
    elif isinstance(node.value, list):
        yield from (v for v in node.value if isinstance(v, Node))


def shown(path: Path) -> str:
    """A file as precheck shows it: relative to the current folder when inside it."""
    return _shown(path, os.getcwd())


@lru_cache(maxsize=1024)
def _shown(path: Path, cwd: str) -> str:
    """:func:`shown`, once per run for each path (resolving one takes a system call per part)."""
    try:
        return str(path.resolve().relative_to(Path(cwd).resolve()))
    except ValueError:
        return str(path)


def clear() -> None:
    """Forget the paths shown in earlier runs (a long-lived process)."""
    _shown.cache_clear()


def locate(value: str, bases: list[Path]) -> Path | None:
    """The file a command names (``bases``: where the script ``cd``-ed, if it did, then its own
    folder), found as the launch resolves it (:func:`~.script_path.find_file`)."""
    found = locate_why(value, bases)
    return found[0] if found is not None else None


def locate_why(value: str, bases: list[Path]) -> tuple[Path, str] | None:
    """:func:`locate`, and which folder the file was found relative to."""
    own = bases[-1] if bases else Path(".")
    found = find_file(value, own, bases[0] if len(bases) > 1 else None)
    # a file outside the repository checked is none (:func:`precheck.paths.within_checked`)
    return found if found is not None and within_checked(found[0]) else None


def searched_from(bases: list[Path]) -> str:
    """Where :func:`locate` looks, for a message."""
    own = bases[-1] if bases else Path(".")
    return searched(own, bases[0] if len(bases) > 1 else None)
