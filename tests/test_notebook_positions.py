"""Notebooks are read by the C JSON decoder, with the places of a cell's characters found
only when asked for: the cells and every place must be those the position-keeping reader
gave before (:func:`_reference`: the earlier implementation, kept here), on real notebooks
and on odd but valid ones; a file the decoder refuses gets the same error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precheck.errors import InputError
from precheck.sources.json_source import MAX_DEPTH, parse_json
from precheck.sources.nodes import Node
from precheck.sources.notebook import _python_only, _raw_offsets, _too_deep, all_cells, code_cells

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"


Places = list[list[tuple[int, int]]]


def _reference(path: str, text: str) -> list[tuple[int, str, Places]]:
    """The code cells as the reader before the C decoder gave them: every value read with its position."""
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
        chars: list[str] = []
        places: Places = [[]]
        for node in strings:
            decoded = str(node.value)
            offsets = _raw_offsets(node.raw or "", len(decoded))
            for index, char in enumerate(decoded):
                places[-1].append((node.line, node.column + offsets[index]))
                chars.append(char)
                if char == "\n":
                    places.append([])
        for row in places:
            row.append((row[-1][0], row[-1][1] + 1) if row else (strings[-1].line if strings else 1, 1))
        code, kept = _python_only("".join(chars))
        out.append((number, code, places if kept else []))
    return out


def _same(text: str) -> None:
    try:
        expected = _reference("nb.ipynb", text)
    except InputError as error:
        with pytest.raises(InputError) as info:
            code_cells("nb.ipynb", text)
        assert (str(info.value), info.value.line, info.value.column) == (str(error), error.line, error.column)
        return
    cells = code_cells("nb.ipynb", text)
    assert [(c.number, c.code, c.places) for c in cells] == expected
    for cell, (_, _, places) in zip(cells, expected, strict=True):  # where(), clamped as before
        for line in range(len(places) + 2):
            row = places[min(max(line - 1, 0), len(places) - 1)] if places else []
            for column in (-1, 0, 1, 5, len(row) - 1, len(row), len(row) + 3):
                want = row[min(max(column, 0), len(row) - 1)] if row else (1, 1)
                assert cell.where(line, column) == want


def _cell(source: object, kind: str = "code") -> dict[str, object]:
    return {"cell_type": kind, "metadata": {}, "source": source, "outputs": [{"data": {"text/plain": ["x\n"]}}]}


ODD = [
    # escapes of every kind, a surrogate pair, a lone surrogate, non-ASCII as written
    json.dumps({"cells": [_cell(['a = "\\t\\u00e9\\ud83d\\ude00"\n', "b = '\u00e9\U0001f600'\n", "c = 1"])]}),
    json.dumps({"cells": [_cell(['x = "\\ud800"\n'])]}, ensure_ascii=True),
    # compact, and spread over lines with odd whitespace
    json.dumps({"cells": [_cell(["import torch\n", "x=1"]), _cell("y = 2\nz = 3")]}, separators=(",", ":")),
    '{ "nbformat" : 4 ,\r\n "cells" :\t[ {"source"\n:\n[ "a = 1\\n" ,\n "b" ] , "cell_type" : "code" } ] }',
    # keys repeated: the decoder keeps the last, so does the positional reader
    '{"cells": [{"cell_type": "code", "source": ["first = 1"], "source": ["second = 2\\n", "x"]}], "cells": '
    '[{"source": "third = 3", "cell_type": "markdown", "cell_type": "code"}]}',
    # what is not a code cell, or not a string, is skipped
    json.dumps({"cells": [3, None, [], _cell("m", "markdown"), _cell(None), _cell([1, "a = 1\n", None, "b = 2"])]}),
    json.dumps({"cells": [{"cell_type": "code"}, _cell("%%bash\necho hi\n"), _cell("%%time\nx = 1\n!ls\n")]}),
    json.dumps({"cells": [_cell(["\n", "\n", "x = [\n", "  1]\n"]), _cell([]), _cell("")]}),
    # nesting at the reader's limit, and past it (refused at its position)
    '{"cells": [], "metadata": ' + "[" * 199 + "]" * 199 + "}",
    '{"cells": [], "metadata": ' + "[" * 200 + "1" + "]" * 200 + "}",
    '{"cells": [], "metadata": ' + "[" * 5000 + "]" * 5000 + "}",
    # not notebooks, or not JSON
    "",
    "   ",
    "[1, 2]",
    '{"cells": 3}',
    '{"cells": [1,]}',
    '{"cells": []} x',
    '{"cells": [], // comment\n}',
    '{"cells": [], "n": 1' + "0" * 5000 + "}",
    '{"cells": [{"source": "x = 1", "cell_type": "code"}, NaN, -Infinity]}',
    '\ufeff{"cells": []}',
    '{"cells": ["\x01"]}',
]


@pytest.mark.parametrize("text", ODD, ids=range(len(ODD)))
def test_odd_notebooks_read_as_by_the_positional_reader(text: str) -> None:
    _same(text)


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_real_notebooks_read_as_by_the_positional_reader() -> None:
    notebooks = sorted(PROJECTS.rglob("*.ipynb"))
    assert notebooks
    for notebook in notebooks:
        _same(notebook.read_text(encoding="utf-8-sig"))


def test_places_are_found_only_when_asked(tmp_path: Path) -> None:
    text = json.dumps({"cells": [_cell(["x = 1\n", "y = 2"]), _cell("z = 3")]}, indent=1)
    cells = code_cells("nb.ipynb", text)
    assert [c._located for c in cells] == [None, None]
    line = text.splitlines().index('    "y = 2"') + 1
    assert cells[0].where(2, 0) == (line, 6)
    assert cells[1]._located is None


CELLS = [
    "x = 1\n",
    "def f(a):\n    return a\n",
    "'''doc'''\nfrom __future__ import annotations\nimport torch\n",
    "  x = 1\n",
    "if x:\n",
    "x = (1,\n",
    "y = '''\n",
    "\ufeffx = 1",
    "\fx = 1\n",
    "x = 1 \\\n",
    "x = 1\\\n",
    "print 'py2'\n",
    "a = f'{x!r:>{w}}'\n",
    "class A:\n\tdef g(self):\n\t\treturn [i for i in range(3)]\n",
    "x = 1\r\ny = 2\r",
    "x = '\x00'",
    "",
    "# only a comment",
]


@pytest.mark.parametrize("offset", [0, 1, 7, 300, 50_000])
@pytest.mark.parametrize("code", CELLS, ids=range(len(CELLS)))
def test_cells_parsed_at_an_offset_as_increment_lineno_would_number_them(code: str, offset: int) -> None:
    import ast

    from precheck.sources.python_source import _parse, _parse_from

    try:
        expected = _parse(code, "nb")
    except (SyntaxError, ValueError) as error:
        with pytest.raises(type(error)) as info:
            _parse_from(code, "nb", offset)
        assert (info.value.args, getattr(info.value, "lineno", None)) == (error.args, getattr(error, "lineno", None))
        return
    ast.increment_lineno(expected, offset)
    got = _parse_from(code, "nb", offset)
    assert ast.dump(got, include_attributes=True) == ast.dump(expected, include_attributes=True)


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_real_cells_parsed_at_an_offset_as_increment_lineno_would_number_them() -> None:
    import ast

    from precheck.sources.python_source import _parse, _parse_from

    checked = 0
    for notebook in sorted(PROJECTS.rglob("*.ipynb")):
        offset = 0
        for cell in code_cells(str(notebook), notebook.read_text(encoding="utf-8-sig")):
            try:
                expected = _parse(cell.code, "nb")
            except (SyntaxError, ValueError):
                continue
            ast.increment_lineno(expected, offset)
            assert ast.dump(_parse_from(cell.code, "nb", offset), include_attributes=True) == ast.dump(
                expected, include_attributes=True
            )
            offset += cell.code.count("\n") + 1
            checked += 1
    assert checked > 100


def _too_deep_reference(data: object) -> bool:
    """The depth test before containers of plain values were passed over at once."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for child in children:
            if depth + 1 > MAX_DEPTH:
                return True
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value, "s": ["a", 1, None]}
    return value


@pytest.mark.parametrize("depth", [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2])
@pytest.mark.parametrize("leaf", [[], {}, "x", ["x", 2.5], {"a": True}, [[]], [{}], [1, [2]]])
def test_too_deep_as_before_at_the_limit(depth: int, leaf: object) -> None:
    value = _nested(depth, leaf)
    assert _too_deep(value) == _too_deep_reference(value)
    assert _too_deep({"cells": [value, "x"], "n": 1}) == _too_deep_reference({"cells": [value, "x"], "n": 1})


def test_too_deep_answers_both_ways() -> None:
    assert _too_deep(_nested(MAX_DEPTH + 1, "x"))
    assert not _too_deep(_nested(MAX_DEPTH - 1, "x"))


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_real_notebooks_depth_and_cells_as_before() -> None:
    notebooks = sorted(PROJECTS.rglob("*.ipynb"))
    assert notebooks
    for notebook in notebooks:
        text = notebook.read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except ValueError:
            continue
        assert _too_deep(data) == _too_deep_reference(data), notebook
        cells = data.get("cells") if isinstance(data, dict) else None
        if not isinstance(cells, list):
            continue
        expected = [
            "".join(p for p in (c["source"] if isinstance(c["source"], list) else [c["source"]]) if isinstance(p, str))
            for c in cells
            if isinstance(c, dict) and c.get("cell_type") == "code" and "source" in c
        ]
        assert [cell.code for cell in all_cells(str(notebook), text)] == expected, notebook


def test_a_cell_with_lines_that_are_not_strings_keeps_its_strings() -> None:
    text = json.dumps({"cells": [{"cell_type": "code", "source": ["a = 1\n", 3, None, "b = 2\n"]}]})
    assert [cell.code for cell in all_cells("x.ipynb", text)] == ["a = 1\nb = 2\n"]
