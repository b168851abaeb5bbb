"""TOML with positions.

The standard library's ``tomllib`` parses; a line scanner then finds where each key of
a table starts (``[table]`` headers, ``key = value`` lines, dotted and quoted keys), which
is all the positions findings need. Values inside inline tables and arrays take the
position of the key that holds them.

``tomllib`` is pure Python: a 16 MiB ``a = [1,1,1,...]`` (8 million values) would take it
half a minute and the nodes gigabytes. So a text long enough to hold more than
:data:`~.nodes.MAX_VALUES` values has its tokens counted first (strings, brackets, and
the parts of keys, numbers and dates between ``.``, ``,``, ``=`` and spaces; comments
skipped), an upper bound on its values, and is refused at the token past the budget.
"""

from __future__ import annotations

import itertools
import re
import sys
from typing import Any

from ..errors import FileTooLarge, InputError
from .nodes import MAX_VALUES, Document, Node, position, too_many_values

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"""^(\s*)((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")
_AT = re.compile(r"at line (\d+), column (\d+)")
#: separators and comments, then one token (or the end of the text); every character is
#: one of them, so a match never fails and never backtracks
_TOKEN = re.compile(
    r"""(?:[\s,=\]}.]|\#[^\n]*)*"""
    r"""(?P<token>"{3}[\s\S]*?"{3}|'{3}[\s\S]*?'{3}|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[\[{"']|[^\s,=\[\]{}"'\#.]+|\Z)"""
)


def _split_key(dotted: str) -> tuple[str, ...]:
    return tuple(_key_part(p) for p in _PART.findall(dotted))


def _key_part(part: str) -> str:
    """A key part as tomllib reads it: a basic string's escapes decoded (``"a\\n"``)."""
    if part.startswith('"') and "\\" in part:
        try:
            return str(tomllib.loads(f"k = {part}")["k"])
        except ValueError:
            pass
    return part.strip("\"'")


#: as for YAML and JSON: deeper values are refused (every later walk over them recurses)
MAX_DEPTH = 200


#: the most parts of one dotted key, each a level of nesting: tomllib's work and memory
#: grow with their square (20,000 parts in 40 KB take 1.6 GB), so they are counted first
MAX_KEY_PARTS = MAX_DEPTH
_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n,{\[]*"|'[^'\n,{\[]*')"""
#: a key (at a line's start, after ``{``, ``,`` or a header's ``[``) of more parts than that
_LONG_KEY = re.compile(rf"(?:^|[{{,\[])[ \t]*(?:{_KEY_PART}[ \t]*\.[ \t]*){{{MAX_KEY_PARTS}}}", re.MULTILINE)


def loads(path: str, text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` within bounds: too many values (:data:`~.nodes.MAX_VALUES`),
    a dotted key of more than :data:`MAX_KEY_PARTS` parts, nesting past :data:`MAX_DEPTH`
    and an integer past Python's digit limit are each an :class:`InputError` at their place,
    as is invalid TOML; nothing else escapes (``pyproject.toml`` is read with it too)."""
    if len(text) > MAX_VALUES:  # every value takes a character
        _check_tokens(path, text)
    if text.count(".") >= MAX_KEY_PARTS:  # a cheap count first: most files have few dots
        long_key = _LONG_KEY.search(text)
        if long_key is not None:
            line, column = position(text, long_key.start())
            message = f"nesting deeper than {MAX_DEPTH} levels (a dotted key of more than {MAX_KEY_PARTS} parts)"
            raise FileTooLarge(path, message, line, column + (text[long_key.start()] in "{,["))
    try:
        data: dict[str, Any] = tomllib.loads(text)
        return data
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        line, column = _deep_at(text)
        raise InputError(path, f"nesting deeper than {MAX_DEPTH} levels", line, column) from None
    except ValueError as exc:
        if isinstance(exc, tomllib.TOMLDecodeError):
            raise _decode_error(path, exc, text) from None
        raise _number_error(path, text, exc) from None


def parse_toml(path: str, text: str) -> Document:
    data = loads(path, text)
    positions = _positions(text)
    root = _build(path, data, (), positions, (1, 1), 0)
    return Document(path, "toml", root, text)


def _check_tokens(path: str, text: str) -> None:
    """Refuse ``text`` at its token past MAX_VALUES, before ``tomllib`` reads it."""
    tokens = (m for m in _TOKEN.finditer(text) if m.group("token"))
    past = next(itertools.islice(tokens, MAX_VALUES, None), None)
    if past is not None:
        line, column = position(text, past.start("token"))
        raise FileTooLarge(path, too_many_values(), line, column)


def _decode_error(path: str, exc: ValueError, text: str) -> InputError:
    message = str(exc)
    found = _AT.search(message)
    message = _AT.sub("", message).replace("()", "").strip() or "invalid TOML"
    line = int(found.group(1)) if found else None
    column = int(found.group(2)) if found else None
    if found is None and "end of document" in str(exc):  # tomllib names no line: the last one
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        message = f"{message.replace('(at end of document)', '').strip()} at the end of the file"
    return InputError(path, f"invalid TOML: {message}", line, column)


def _number_error(path: str, text: str, exc: ValueError) -> InputError:
    """tomllib lets ``int()``'s ValueError out: an integer over Python's digit limit (3.11+)."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    for match in re.finditer(r"[0-9][0-9_]*", text):
        digits = len(match.group(0).replace("_", ""))
        if limit and digits > limit:
            line, column = position(text, match.start())
            message = f"an integer of {digits} digits: Python refuses to convert more than {limit}"
            return InputError(path, message, line, column)
    return InputError(path, f"invalid TOML: {exc}")


def _deep_at(text: str) -> tuple[int, int]:
    """Where brackets first nest deeper than MAX_DEPTH (strings are not told apart: the
    position is a pointer for the message only)."""
    depth = 0
    for index, char in enumerate(text):
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return position(text, index)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return 1, 1


#: TOML's strings (multi-line ones with their escapes: ``\"""`` does not close one, and a
#: run of up to five quotes closes at its end) and comments, each matched whole
STRINGS = re.compile(
    r'"""(?:\\[\s\S]|[^\\])*?"""(?!")|' r"'''[\s\S]*?'''(?!')|" r'"(?:\\.|[^"\\\n])*"|' r"'[^'\n]*'|#[^\n]*"
)
_MULTI = ('"""', "'''")


def string_end(text: str, pos: int) -> int:
    """Where the string starting at ``pos`` ends (the end of the text when it does not)."""
    match = STRINGS.match(text, pos)
    return match.end() if match is not None else len(text)


def _continued(text: str) -> set[int]:
    """The lines (1-based) that start inside a multi-line string: no key starts there."""
    if not any(quote in text for quote in _MULTI):
        return set()
    lines: set[int] = set()
    for match in STRINGS.finditer(text):
        if match.group().startswith(_MULTI):
            first = text.count("\n", 0, match.start()) + 1
            lines.update(range(first + 1, first + 1 + match.group().count("\n")))
    return lines


def _positions(text: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """Where each key starts: ``[table]`` headers and ``key = value`` lines."""
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    table: tuple[str, ...] = ()
    inside = _continued(text)
    for number, line_text in enumerate(text.splitlines(), start=1):
        if number in inside:  # inside a multi-line string: no keys here
            continue
        header = _HEADER.match(line_text)
        if header:
            table = _split_key(header.group(2))
            positions.setdefault(table, (number, line_text.index(header.group(1)) + 1))
            continue
        key = _KEY.match(line_text)
        if key:
            positions.setdefault(table + _split_key(key.group(2)), (number, len(key.group(1)) + 1))
    return positions


def _build(
    file: str,
    value: Any,
    path: tuple[str, ...],
    positions: dict[tuple[str, ...], tuple[int, int]],
    where: tuple[int, int],
    depth: int,
) -> Node:
    line, column = where
    if depth >= MAX_DEPTH:
        raise InputError(file, f"nesting deeper than {MAX_DEPTH} levels", line, column)
    if isinstance(value, dict):
        children = {}
        for key, item in value.items():
            child_path = (*path, key)
            child_where = positions.get(child_path, where)
            child = _build(file, item, child_path, positions, child_where, depth + 1)
            child.key, child.key_line, child.key_column = key, child_where[0], child_where[1]
            children[key] = child
        return Node(children, line, column)
    if isinstance(value, list):
        return Node([_build(file, item, path, positions, where, depth + 1) for item in value], line, column)
    raw = str(value).lower() if isinstance(value, bool) else str(value)
    return Node(value, line, column, raw=raw, quoted=isinstance(value, str))
