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

import re
from dataclasses import dataclass

from ..errors import InputError
from .json_source import parse_json
from .nodes import Node

#: cell magics whose body is still Python
_PYTHON_CELL_MAGICS = {"capture", "time", "timeit", "prun", "debug"}
#: a line that IPython, not Python, reads: ``%magic``, ``!command``, ``x = !command``, ``x = %magic``
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|[\w.,\s]+=\s*[%!]\w)")
_ESCAPES = {'"', "\\", "/", "b", "f", "n", "r", "t"}


@dataclass(slots=True)
class Cell:
    """One code cell: its Python text and where each of its characters is in the file."""

    #: 1-based position of the cell among all the notebook's cells
    number: int
    code: str
    #: per code line (0-based), the (file line, file column) of each character and of the line's end
    places: list[list[tuple[int, int]]]

    def where(self, line: int, column: int) -> tuple[int, int]:
        """File position of the 1-based ``line`` and 0-based character ``column`` of the cell's code."""
        if not self.places:
            return 1, 1
        row = self.places[min(max(line - 1, 0), len(self.places) - 1)]
        return row[min(max(column, 0), len(row) - 1)]


def code_cells(path: str, text: str) -> list[Cell]:
    """The notebook's code cells, in order (raises :class:`InputError` on a file that is not a notebook)."""
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
        strings = [p for p in pieces if isinstance(p, Node) and isinstance(p.value, str)]
        code, places = _assemble(strings)
        out.append(Cell(number, *_python_only(code, places)))
    return out


def all_cells(path: str, text: str) -> list[Cell]:
    """The notebook's code cells as written, IPython lines included (for their shell commands)."""
    document = parse_json(path, text)
    cells = document.root.get("cells")
    if cells is None or not isinstance(cells.value, list):
        return []
    out = []
    for number, cell in enumerate(cells.value, start=1):
        kind, source = cell.get("cell_type"), cell.get("source")
        if kind is None or kind.value != "code" or source is None:
            continue
        pieces = source.value if isinstance(source.value, list) else [source]
        code, places = _assemble([p for p in pieces if isinstance(p, Node) and isinstance(p.value, str)])
        out.append(Cell(number, code, places))
    return out


def _assemble(strings: list[Node]) -> tuple[str, list[list[tuple[int, int]]]]:
    """Join a cell's source strings, keeping each decoded character's place in the JSON text."""
    chars: list[str] = []
    places: list[list[tuple[int, int]]] = [[]]
    for node in strings:
        decoded = str(node.value)
        offsets = _raw_offsets(node.raw or "", len(decoded))
        for index, char in enumerate(decoded):
            places[-1].append((node.line, node.column + offsets[index]))
            chars.append(char)
            if char == "\n":
                places.append([])
    for row in places:  # a position for "the end of the line" (a caret after the last character)
        row.append((row[-1][0], row[-1][1] + 1) if row else (strings[-1].line if strings else 1, 1))
    return "".join(chars), places


def _raw_offsets(raw: str, length: int) -> list[int]:
    """For each decoded character of the JSON string token ``raw`` (quotes included), its
    offset in ``raw``; one more entry for the closing quote."""
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


def _python_only(code: str, places: list[list[tuple[int, int]]]) -> tuple[str, list[list[tuple[int, int]]]]:
    """Blank out what IPython reads rather than Python (see the module docstring)."""
    lines = code.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(maxsplit=1)[0] if len(first) > 2 else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return "", []
        lines[0] = ""
    kept = ["" if _IPYTHON_LINE.match(line) else line for line in lines]
    return "\n".join(kept), places
