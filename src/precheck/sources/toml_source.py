"""TOML with positions.

The standard library's ``tomllib`` parses; a line scanner then finds where each key of
a table starts (``[table]`` headers, ``key = value`` lines, dotted and quoted keys), which
is all the positions findings need. Values inside inline tables and arrays take the
position of the key that holds them.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from ..errors import InputError
from .nodes import Document, Node

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"""^(\s*)((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")
_AT = re.compile(r"at line (\d+), column (\d+)")


def _split_key(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip("\"'") for p in _PART.findall(dotted))


def parse_toml(path: str, text: str) -> Document:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _AT.search(message)
        message = _AT.sub("", message).replace("()", "").strip() or "invalid TOML"
        line = int(found.group(1)) if found else None
        column = int(found.group(2)) if found else None
        raise InputError(path, f"invalid TOML: {message}", line, column) from None
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    table: tuple[str, ...] = ()
    in_string: str | None = None
    for number, line_text in enumerate(text.splitlines(), start=1):
        if in_string is not None:  # inside a multi-line string: no keys here
            if line_text.count(in_string) % 2 == 1:
                in_string = None
            continue
        for quote in ('"""', "'''"):
            if line_text.count(quote) % 2 == 1:
                in_string = quote
        header = _HEADER.match(line_text)
        if header:
            table = _split_key(header.group(2))
            positions.setdefault(table, (number, line_text.index(header.group(1)) + 1))
            continue
        key = _KEY.match(line_text)
        if key:
            positions.setdefault(table + _split_key(key.group(2)), (number, len(key.group(1)) + 1))
    root = _build(data, (), positions, (1, 1))
    return Document(path, "toml", root, text)


def _build(
    value: Any,
    path: tuple[str, ...],
    positions: dict[tuple[str, ...], tuple[int, int]],
    where: tuple[int, int],
) -> Node:
    line, column = where
    if isinstance(value, dict):
        children = {}
        for key, item in value.items():
            child_path = (*path, key)
            child_where = positions.get(child_path, where)
            child = _build(item, child_path, positions, child_where)
            child.key, child.key_line, child.key_column = key, child_where[0], child_where[1]
            children[key] = child
        return Node(children, line, column)
    if isinstance(value, list):
        return Node([_build(item, path, positions, where) for item in value], line, column)
    raw = str(value).lower() if isinstance(value, bool) else str(value)
    return Node(value, line, column, raw=raw, quoted=isinstance(value, str))
