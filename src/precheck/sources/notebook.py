"""Jupyter notebooks (``.ipynb``): the code cells, and where each character sits in the file.

An ``.ipynb`` file is JSON (nbformat 4): ``cells`` is a list of objects whose
``cell_type`` is ``code``, ``markdown`` or ``raw`` and whose ``source`` is a string or a
list of strings (one per line, as Jupyter writes it). Only code cells run.

Positions: a finding in a notebook points at the line and column *of the .ipynb file*
where the character sits inside its JSON string (the file editors, ``git diff`` and
GitHub's annotations show), and the run's label names the cell (``cell 4, line 2``,
cells counted from 1 over every cell, as nbformat stores them and VS Code numbers them).

IPython syntax is not Python: a line magic or shell escape (``%pip install``,
``!nvidia-smi``, ``x = !ls``) is blanked out, and a cell whose first line is a cell magic
that runs another language (``%%bash``, ``%%writefile``...) is skipped; ``%%capture`` and
``%%time`` cells are Python below their first line.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.scanner import make_scanner
from typing import Any

from ..errors import InputError
from .json_source import MAX_DEPTH, parse_json
from .nodes import Node, line_starts

#: cell magics whose body is still Python
_PYTHON_CELL_MAGICS = {"capture", "time", "timeit", "prun", "debug"}
#: a line that IPython, not Python, reads: ``%magic``, ``!command``, ``x = !command``, ``x = %magic``
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|[\w.,\s]+=\s*[%!]\w)")
_ESCAPES = {'"', "\\", "/", "b", "f", "n", "r", "t"}
_WS = re.compile(r"[ \t\n\r]*")
#: an escape of a JSON string other than ``\\u``: two characters for one
_ESCAPE = re.compile(r'\\["\\/bfnrt]')
#: skips one JSON value in C, returning where it ends (the document is known to be valid)
_skip_value = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

#: a source string of a cell: (line, column) of its opening quote, the token as written, its text
_Piece = tuple[tuple[int, int], str, str]
Places = list[list[tuple[int, int]]]


@dataclass(slots=True)
class Cell:
    """One code cell: its Python text and where each of its characters is in the file.

    Where its characters sit is worked out only when a position is asked for (a finding,
    a syntax error): most cells never need one."""

    #: 1-based position of the cell among all the notebook's cells
    number: int
    code: str
    #: finds the cell's source strings in the file, on first use (None: a cell of another language)
    locate: Callable[[], list[_Piece]] | None = field(default=None, repr=False, compare=False)
    _located: _Located | None = field(default=None, repr=False, compare=False)

    def _where(self) -> _Located | None:
        if self._located is None and self.locate is not None:
            self._located = _Located(self.locate())
        return self._located

    @property
    def places(self) -> Places:
        """Per code line (0-based), the (file line, file column) of each character and of the line's end."""
        located = self._where()
        return [] if located is None else [located.row(r) for r in range(len(located.rows))]

    def where(self, line: int, column: int) -> tuple[int, int]:
        """File position of the 1-based ``line`` and 0-based character ``column`` of the cell's code."""
        located = self._where()
        if located is None:
            return 1, 1
        return located.at(min(max(line - 1, 0), len(located.rows) - 1), column)


class _Located:
    """Where the characters of a cell's source strings are in the file, worked out per line
    of code as they are asked for."""

    def __init__(self, pieces: list[_Piece]):
        self.pieces = pieces
        decoded = [text for _, _, text in pieces]
        self.starts = [0, *accumulate(map(len, decoded))][:-1] if pieces else []
        full = "".join(decoded)
        self.length = len(full)
        #: offset in the decoded code of each line's first character
        self.rows = line_starts(full)
        self.offsets: dict[int, list[int]] = {}

    def char(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        (line, column), raw, decoded = self.pieces[index]
        offsets = self.offsets.get(index)
        if offsets is None:
            offsets = self.offsets[index] = _raw_offsets(raw, len(decoded))
        return line, column + offsets[offset - self.starts[index]]

    def at(self, row: int, column: int) -> tuple[int, int]:
        """Place of the character at 0-based ``column`` of 0-based line ``row`` (the line's end past it)."""
        start = self.rows[row]
        end = self.rows[row + 1] if row + 1 < len(self.rows) else self.length
        column = min(max(column, 0), end - start)
        if column < end - start:
            return self.char(start + column)
        if end > start:  # a caret after the last character
            line, last = self.char(end - 1)
            return line, last + 1
        return (self.pieces[-1][0][0] if self.pieces else 1), 1

    def row(self, row: int) -> list[tuple[int, int]]:
        start = self.rows[row]
        end = self.rows[row + 1] if row + 1 < len(self.rows) else self.length
        return [self.at(row, column) for column in range(end - start + 1)]


def code_cells(path: str, text: str) -> list[Cell]:
    """The notebook's code cells, in order (raises :class:`InputError` on a file that is not a notebook).

    The file is read by the standard library's C decoder; the position-keeping reader of
    :mod:`.json_source` runs only on a file the decoder refuses (or one nested deeper than
    it allows), to say where the file is wrong exactly as it does for a JSON config."""
    data, sources = _decoded(text)
    if data is _REFUSED:
        return _positional_cells(path, text)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        start = _WS.match(text).end()  # type: ignore[union-attr]
        line, column = _where(line_starts(text), start)
        raise InputError(path, 'not a Jupyter notebook: no "cells" list', line, column)
    out = []
    for number, code, locate in _decoded_cells(cells, sources):
        python, kept = _python_only(code)
        out.append(Cell(number, python, locate if kept else None))
    return out


_REFUSED = object()
#: the last notebook decoded: its text, what the C decoder read (or _REFUSED: refused, or
#: nested deeper than the position-keeping reader allows), and where its cells' sources are
#: (both readers of a notebook, its code cells and its shell commands, ask for the same file)
_LAST: list[tuple[str, Any, _Sources]] = []


def _decoded(text: str) -> tuple[Any, _Sources]:
    if _LAST and _LAST[0][0] == text:
        return _LAST[0][1], _LAST[0][2]
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = _REFUSED
    if data is not _REFUSED and _too_deep(data):
        data = _REFUSED
    _LAST[:] = [(text, data, _Sources(text))]
    return data, _LAST[0][2]


def _too_deep(data: Any) -> bool:
    """A value nested deeper than the position-keeping reader allows (it refuses those)."""
    # a container with children one level too deep is the answer, whichever is found first;
    # one whose children are all plain values (a cell's lines, an output's text) is passed
    # over by one look at the set of their types
    stack = [(data, 0)]
    pop, push, plain = stack.pop, stack.append, frozenset((str, int, float, bool, type(None)))
    while stack:
        value, depth = pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        if not children:
            continue
        depth += 1
        if depth > MAX_DEPTH:
            return True
        if plain.issuperset(map(type, children)):
            continue
        for child in children:
            if isinstance(child, (dict, list)):
                push((child, depth))
    return False


def _where(starts: list[int], offset: int) -> tuple[int, int]:
    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


class _Sources:
    """Where the ``source`` strings of each cell are in a valid notebook's text, found on
    the first request: the cells list and each cell's keys are walked, every other value
    is skipped by the C scanner; a cell's strings are read (decoded, placed) only when
    that cell is asked for."""

    def __init__(self, text: str):
        self.text = text
        #: per cell walked so far: where its ``source`` value starts (None: it has none)
        self.found: list[int | None] = []
        self.walk: Iterator[int | None] | None = None
        self.pieces: dict[int, list[_Piece]] = {}

    def locator(self, index: int) -> Callable[[], list[_Piece]]:
        return lambda: self.cell(index)

    def cell(self, index: int) -> list[_Piece]:
        """The source strings of the ``index``-th cell (0-based), the cells before it walked once."""
        if self.walk is None:
            self.walk = self._find()
        while len(self.found) <= index:
            source = next(self.walk, _END)
            if source is _END:
                return []
            self.found.append(source)  # type: ignore[arg-type]
        pieces = self.pieces.get(index)
        if pieces is None:
            pieces = self.pieces[index] = self._strings(self.found[index])
        return pieces

    def _find(self) -> Iterator[int | None]:
        """Where each cell's ``source`` value starts (None: a cell without one)."""
        text = self.text
        cells = self._member(_WS.match(text).end(), "cells")[0]  # type: ignore[union-attr]
        if cells is None:
            return
        pos = _WS.match(text, cells + 1).end()  # type: ignore[union-attr]
        while not text.startswith("]", pos):
            if text.startswith("{", pos):
                source, pos = self._member(pos, "source")
            else:
                source, pos = None, _skip_value(text, pos)[1]
            yield source
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if text.startswith(",", pos):
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]

    def _strings(self, source: int | None) -> list[_Piece]:
        """The strings of the ``source`` value at ``source``: (line, column), the token, its text."""
        text = self.text
        pieces: list[_Piece] = []
        if source is None:
            return pieces
        strings = self._elements(source) if text.startswith("[", source) else [source]
        line, counted = 1, 0  # line numbers counted on from the last string's
        for start in strings:
            if text.startswith('"', start):
                decoded, end = scanstring(text, start + 1, True)
                line += text.count("\n", counted, start)
                counted = start
                column = start - text.rfind("\n", 0, start)
                pieces.append(((line, column), text[start:end], decoded))
        return pieces

    def _member(self, start: int, name: str) -> tuple[int | None, int]:
        """Where the value of the object at ``start`` under key ``name`` starts (the last
        one when the key repeats, as the decoder keeps it; None: no such key), and where
        the object ends."""
        text, found = self.text, None
        if not text.startswith("{", start):
            return None, start
        pos = _WS.match(text, start + 1).end()  # type: ignore[union-attr]
        while text.startswith('"', pos):
            key, pos = scanstring(text, pos + 1, True)
            pos = _WS.match(text, pos).end() + 1  # type: ignore[union-attr]  # past ':'
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if key == name:
                found = pos
            pos = _WS.match(text, _skip_value(text, pos)[1]).end()  # type: ignore[union-attr]
            if text.startswith(",", pos):
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        return found, pos + 1  # past '}'

    def _elements(self, start: int) -> Iterator[int]:
        """Where each element of the array at ``start`` starts."""
        text = self.text
        pos = _WS.match(text, start + 1).end()  # type: ignore[union-attr]
        while not text.startswith("]", pos):
            yield pos
            pos = _WS.match(text, _skip_value(text, pos)[1]).end()  # type: ignore[union-attr]
            if text.startswith(",", pos):
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]


#: the end of the cells
_END = object()


def _positional_cells(path: str, text: str) -> list[Cell]:
    """The code cells read with positions throughout (raises on a file that is not valid JSON)."""
    document = parse_json(path, text)
    cells = document.root.get("cells")
    if cells is None or not isinstance(cells.value, list):
        raise InputError(path, 'not a Jupyter notebook: no "cells" list', document.root.line, document.root.column)
    out = []
    for number, cell in enumerate(cells.value, start=1):
        kind = cell.get("cell_type")
        source = cell.get("source")
        if kind is None or kind.value != "code" or source is None:
            continue
        pieces = source.value if isinstance(source.value, list) else [source]
        strings = [
            ((p.line, p.column), p.raw or "", p.value)
            for p in pieces
            if isinstance(p, Node) and isinstance(p.value, str)
        ]
        code, kept = _python_only("".join(s for _, _, s in strings))
        out.append(Cell(number, code, _given(strings) if kept else None))
    return out


def all_cells(path: str, text: str) -> list[Cell]:
    """The notebook's code cells as written, IPython lines included (for their shell commands);
    none for a file the C decoder refuses (:func:`code_cells` reports it)."""
    data, sources = _decoded(text)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return []
    return [Cell(number, code, locate) for number, code, locate in _decoded_cells(cells, sources)]


def _decoded_cells(cells: list[Any], sources: _Sources) -> Iterator[tuple[int, str, Callable[[], list[_Piece]]]]:
    """(1-based number, source as written, its place finder) of each code cell the C decoder read."""
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or "source" not in cell:
            continue
        source = cell["source"]
        pieces = source if isinstance(source, list) else [source]
        try:
            code = "".join(pieces)  # the lines of a cell are strings
        except TypeError:  # some are not: those skipped
            code = "".join(p for p in pieces if isinstance(p, str))
        yield number, code, sources.locator(number - 1)


def _given(pieces: list[_Piece]) -> Callable[[], list[_Piece]]:
    return lambda: pieces


def _raw_offsets(raw: str, length: int) -> list[int]:
    """For each decoded character of the JSON string token ``raw`` (quotes included), its
    offset in ``raw``; one more entry for the closing quote."""
    if "\\u" not in raw:  # two characters per escape, one per other character: runs at a time
        offsets: list[int] = []
        position = 1
        for escape in _ESCAPE.finditer(raw, 1, len(raw) - 1):
            offsets.extend(range(position, escape.start() + 1))
            position = escape.end()
        offsets.extend(range(position, len(raw) - 1))
        if len(offsets) == length:
            offsets.append(len(raw) - 1)
            return offsets
    return _raw_offsets_each(raw, length)


def _raw_offsets_each(raw: str, length: int) -> list[int]:
    """:func:`_raw_offsets`, one character at a time (``\\u`` escapes and surrogate pairs)."""
    offsets: list[int] = []
    position = 1  # after the opening quote
    while len(offsets) < length and position < len(raw):
        offsets.append(position)
        if raw[position] != "\\":
            position += 1
            continue
        escape = raw[position + 1 : position + 2]
        if escape == "u":
            high = raw[position + 2 : position + 6]
            position += 6
            following = raw[position : position + 6]
            if 0xD800 <= int(high or "0", 16) <= 0xDBFF and following.startswith("\\u"):
                position += 6  # a surrogate pair is one Python character
        else:
            position += 2 if escape in _ESCAPES else 1
    while len(offsets) <= length:
        offsets.append(position)
    return offsets


def _python_only(code: str) -> tuple[str, bool]:
    """Blank out what IPython reads rather than Python (see the module docstring); False
    when the whole cell is another language's (a ``%%bash`` cell: no code, no places)."""
    lines = code.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(maxsplit=1)[0] if len(first) > 2 else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return "", False
        lines[0] = ""
    if "%" not in code and "!" not in code:  # every IPython line has one of them
        return "\n".join(lines), True
    kept = ["" if ("%" in line or "!" in line) and _IPYTHON_LINE.match(line) else line for line in lines]
    return "\n".join(kept), True
