"""JSON with positions: a small recursive-descent reader that keeps line and column.

The standard library's parser drops positions, and findings must point at the key in
the user's file, so this one records them. Strings are decoded by the standard
library's own scanner; numbers follow RFC 8259, and ``NaN``, ``Infinity`` and
``-Infinity`` are read as Python's ``json`` module reads them (the frameworks load their
JSON with it). An integer over Python's digit limit (3.11+) is an error at its position,
as ``json.loads`` refuses it too.

A file is first decoded by the standard library's C decoder (fast, and small in memory)
and its values counted: a file of more than :data:`~.nodes.MAX_VALUES` (a 16 MiB flat
array holds 8 million) is refused at the value where the budget runs out, found by a
regular expression over its tokens, before any node is built. A file the decoder reads
gets its nodes from what it decoded, each placed at the token that starts it (one regular
expression over the text, in C); only a file the C decoder refuses (whose error this
reader words and places), or one nested deeper than it allows, is read here.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
import sys
from json.decoder import scanstring  # type: ignore[attr-defined]

from ..errors import DataFile, FileTooLarge, InputError
from ..escape import shorten
from .nodes import MAX_VALUES, Document, Node, SourceNote, line_starts, position, too_many_values

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
MAX_DEPTH = 200
#: one token that starts a node: a string (a key or a value), ``[``, ``{``, or a number or
#: a literal; in valid JSON the n-th match starts the n-th node (keys counted)
_NODE_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]|[^\s,:\[\]{}"]+')
#: JSON's literals, and the three Python's ``json.load`` also reads (and ``json.dump``
#: writes for non-finite floats), as DeepSpeed and the HF argument parsers load JSON with it
_LITERALS = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": math.nan,
    "Infinity": math.inf,
    "-Infinity": -math.inf,
}


def parse_json(path: str, text: str) -> Document:
    _check_values(path, text)
    document = _decoded(path, text)
    if document is not None:
        return document
    reader = _Reader(path, text)
    reader.skip()
    if reader.pos >= len(text):
        return Document(path, "json", Node(None, 1, 1), text, reader.notes)
    root = reader.value(0)
    end = reader.pos
    reader.skip()
    if reader.pos < len(text):
        if _records(text, root, end, reader.pos):
            line, column = reader.where(reader.pos)
            raise DataFile(
                path,
                f"invalid JSON: extra data after the JSON value; line {line} starts another record, "
                "as in JSON Lines (a data file, not a config)",
                line,
                column,
            )
        reader.fail("extra data after the JSON value")
    return Document(path, "json", root, text, reader.notes)


#: a template's placeholder where a value goes (``"train_micro_batch_size_per_gpu": BATCH_SIZE``)
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*[A-Z0-9](?=\s*[,}\]])")


def _records(text: str, root: Node, end: int, after: int) -> bool:
    """JSON Lines: the first value is an object or array, the next starts one on a later line."""
    return (
        isinstance(root.value, (dict, list, _Members))
        and "\n" in text[end:after]
        and text.startswith(("{", "["), after)
    )


class _Members(list):  # type: ignore[type-arg]
    """An object's (key, value) pairs in order, a repeated key kept (``object_pairs_hook``)."""

    __slots__ = ()


class _TooDeep(Exception):
    pass


def _decoded(path: str, text: str) -> Document | None:
    """``text`` read by the C decoder, each value's position found by the token that starts
    it: in valid JSON the n-th :data:`_NODE_TOKEN` starts the n-th node (keys counted),
    in the order the decoder's objects and arrays list them. The same nodes and notes as
    :class:`_Reader`; None for what the decoder refuses or what is nested deeper than
    :data:`MAX_DEPTH` (the reader says where it is wrong)."""
    try:
        data = json.loads(text, object_pairs_hook=_Members)
    except (ValueError, RecursionError):
        return None
    tokens = _NODE_TOKEN.finditer(text)
    notes: list[SourceNote] = []
    line, line_start, counted = 1, 0, 0

    def place(start: int) -> tuple[int, int]:
        nonlocal line, line_start, counted
        breaks = text.count("\n", counted, start)
        if breaks:
            line += breaks
            line_start = text.rfind("\n", counted, start) + 1
        counted = start
        return line, start - line_start + 1

    def node(value: object, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise _TooDeep
        token = next(tokens)
        at_line, at_column = place(token.start())
        kind = type(value)
        if kind is _Members:
            members: dict[str, Node] = {}
            for key, item in value:  # type: ignore[attr-defined]
                key_line, key_column = place(next(tokens).start())
                child = node(item, depth + 1)
                child.key, child.key_line, child.key_column = key, key_line, key_column
                first = members.get(key)
                if first is not None:
                    notes.append(
                        SourceNote(
                            "duplicate-key",
                            f"duplicate key `{shorten(key)}` (first at line {first.key_line}); the later value wins",
                            key_line,
                            key_column,
                            key,
                        )
                    )
                members[key] = child
            return Node(members, at_line, at_column)
        if kind is list:
            return Node([node(item, depth + 1) for item in value], at_line, at_column)  # type: ignore[attr-defined]
        raw = token.group()
        if kind is str:
            return Node(value, at_line, at_column, raw=raw, quoted=True)
        return Node(_LITERALS.get(raw, value), at_line, at_column, raw=raw)

    try:
        root = node(data, 0)
    except _TooDeep:
        return None
    return Document(path, "json", root, text, notes)


def _check_values(path: str, text: str) -> None:
    """Refuse ``text`` when it holds more than MAX_VALUES nodes, before building any."""
    try:
        loaded = json.loads(text)
    except RecursionError:  # nested past the C decoder's bound: the reader refuses it
        _refuse_past_budget(path, text, len(text))
    except ValueError as exc:  # the reader words the error; count only what comes before it
        _refuse_past_budget(path, text, getattr(exc, "pos", len(text)))
    else:
        if _count(loaded) > MAX_VALUES:
            _refuse_past_budget(path, text, len(text))


def _count(value: object) -> int:
    """Nodes in a decoded value (keys counted), stopping once past MAX_VALUES."""
    total = 1
    stack: list[dict[str, object] | list[object]] = [value] if isinstance(value, (dict, list)) else []
    while stack and total <= MAX_VALUES:
        item = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        total += 2 * len(item) if isinstance(item, dict) else len(item)
        if total <= MAX_VALUES:
            stack.extend(c for c in children if isinstance(c, (dict, list)))
    return total


def _refuse_past_budget(path: str, text: str, end: int) -> None:
    """An error at the node past MAX_VALUES when ``text[:end]`` has one."""
    past = next(itertools.islice(_NODE_TOKEN.finditer(text, 0, end), MAX_VALUES, None), None)
    if past is not None:
        line, column = position(text, past.start())
        raise FileTooLarge(path, too_many_values(), line, column)


class _Reader:
    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.pos = 0
        self.notes: list[SourceNote] = []
        self.line_starts = line_starts(text)

    def where(self, pos: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.line_starts, pos) - 1
        return index + 1, pos - self.line_starts[index] + 1

    def fail(self, message: str, pos: int | None = None) -> None:
        line, column = self.where(self.pos if pos is None else pos)
        raise InputError(self.path, f"invalid JSON: {message}", line, column)

    def skip(self) -> None:
        match = _WS.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()
        if self.text.startswith(("//", "/*"), self.pos):
            self.fail("comments are not allowed in JSON")

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH} levels")
        text, start = self.text, self.pos
        line, column = self.where(start)
        char = text[start : start + 1]
        if char == "{":
            return Node(self.object(depth), line, column)
        if char == "[":
            return Node(self.array(depth), line, column)
        if char == '"':
            return Node(self.string(), line, column, raw=text[start : self.pos], quoted=True)
        for word, literal in _LITERALS.items():
            if text.startswith(word, start):
                self.pos = start + len(word)
                return Node(literal, line, column, raw=word)
        match = _NUMBER.match(text, start)
        if match is None or match.end() == start:
            if (placeholder := _PLACEHOLDER.match(text, start)) is not None:
                raise DataFile(
                    self.path,
                    f"invalid JSON: `{placeholder.group(0)}` where a value goes: a template whose placeholders "
                    "a script fills in (not a config as it stands)",
                    line,
                    column,
                )
            self.fail("expected a value" if char else "unexpected end of file")
        assert match is not None
        self.pos = match.end()
        raw = match.group(0)
        try:
            number: int | float = float(raw) if match.group(1) or match.group(2) else int(raw)
        except ValueError:  # over Python's int digit limit (3.11+): json.loads refuses it too
            limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
            digits = len(raw.lstrip("-"))
            self.fail(f"an integer of {digits} digits: Python refuses to convert more than {limit}", start)
            raise  # unreachable
        return Node(number, line, column, raw=raw)

    def string(self) -> str:
        try:
            value, end = scanstring(self.text, self.pos + 1, True)
        except json.JSONDecodeError as exc:
            self.fail(exc.msg, exc.pos)
            raise  # unreachable
        self.pos = end
        return str(value)

    def object(self, depth: int) -> dict[str, Node]:
        result: dict[str, Node] = {}
        self.pos += 1
        self.skip()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return result
        while True:
            if not self.text.startswith('"', self.pos):
                self.fail("expected a double-quoted key")
            key_line, key_column = self.where(self.pos)
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                self.fail("expected ':' after the key")
            self.pos += 1
            self.skip()
            child = self.value(depth + 1)
            child.key, child.key_line, child.key_column = key, key_line, key_column
            if key in result:
                first = result[key]
                self.notes.append(
                    SourceNote(
                        "duplicate-key",
                        f"duplicate key `{shorten(key)}` (first at line {first.key_line}); the later value wins",
                        key_line,
                        key_column,
                        key,
                    )
                )
            result[key] = child
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip()
                if self.text.startswith("}", self.pos):
                    self.fail("trailing comma before '}'")
                continue
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return result
            self.fail("expected ',' or '}'")

    def array(self, depth: int) -> list[Node]:
        items: list[Node] = []
        self.pos += 1
        self.skip()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return items
        while True:
            items.append(self.value(depth + 1))
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip()
                if self.text.startswith("]", self.pos):
                    self.fail("trailing comma before ']'")
                continue
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return items
            self.fail("expected ',' or ']'")
