"""Notebooks are read by the C JSON decoder, with the places of a cell's characters found
only when asked for: the cells and every place must be those of the position-keeping reader
(:func:`precheck.sources.notebook._positional_cells`, the reader used before), on real
notebooks and on odd but valid ones; a file the decoder refuses gets the same error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precheck.errors import InputError
from precheck.sources.notebook import Cell, _positional_cells, code_cells

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"


def _snapshot(cells: list[Cell]) -> list[tuple[int, str, list[list[tuple[int, int]]]]]:
    return [(c.number, c.code, c.places) for c in cells]


def _same(text: str) -> None:
    try:
        expected = _snapshot(_positional_cells("nb.ipynb", text))
    except InputError as error:
        with pytest.raises(InputError) as info:
            code_cells("nb.ipynb", text)
        assert (str(info.value), info.value.line, info.value.column) == (str(error), error.line, error.column)
        return
    assert _snapshot(code_cells("nb.ipynb", text)) == expected


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
    assert [c._places for c in cells] == [None, None]
    line = text.splitlines().index('    "y = 2"') + 1
    assert cells[0].where(2, 0) == (line, 6)
    assert cells[1]._places is None
