"""JSON configs are read by the C decoder, each node placed at the token that starts it:
the same nodes, positions and notes as the position-keeping reader, which still reads
(and words the error of) what the decoder refuses or what is nested too deeply."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from precheck.errors import InputError
from precheck.sources.json_source import MAX_DEPTH, _decoded, _Reader, parse_json
from precheck.sources.nodes import Node

FIELDS = ("line", "column", "key", "key_line", "key_column", "raw", "quoted", "path")

CASES = [
    '{"a": 1, "a": {"b": [1, 2.5e3, -0, -0.0, true, null, NaN, -Infinity, Infinity]}, "a": "x\\u00e9\\n"}',
    "[]",
    "{}",
    '\r\n{\r\n  "k" : [ {"z": {}} ,\r\n "\\ud83d\\ude00" ] }\r\n',
    '"a string"',
    " 12 ",
    '{"a": {"a": 1, "a": 2}, "b": 1, "b": 2, "b": 3}',
    '{"\u00e9": "\u00fc\\"x\\\\", "": 1, "t": "\\t\\/\\b\\f\\r"}',
    '{\n\t"fp16": {"enabled": "auto", "loss_scale": 0},\n\t"bf16": {"enabled": false}\n}\n',
    "[" * MAX_DEPTH + "]" * MAX_DEPTH,
]


def _read(text: str) -> tuple[Node, list[tuple[object, ...]]]:
    reader = _Reader("c.json", text)
    reader.skip()
    root = reader.value(0)
    return root, [(n.kind, n.message, n.line, n.column, n.key) for n in reader.notes]


def _same(fast: Node, slow: Node, where: str = "") -> None:
    assert type(fast) is type(slow), where
    for name in FIELDS:
        assert getattr(fast, name) == getattr(slow, name), (where, name)
    a, b = fast.value, slow.value
    if isinstance(a, float) and math.isnan(a):
        assert a is b, where  # the same NaN object the reader uses
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            _same(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{index}]")
    else:
        assert type(a) is type(b) and a == b, where


@pytest.mark.parametrize("text", CASES)
def test_decoded_nodes_are_the_readers(text: str) -> None:
    document = _decoded("c.json", text)
    assert document is not None
    root, notes = _read(text)
    _same(document.root, root)
    assert [(n.kind, n.message, n.line, n.column, n.key) for n in document.notes] == notes


def test_duplicate_keys_are_noted_where_they_repeat() -> None:
    document = parse_json("c.json", '{\n  "bf16": true,\n  "bf16": false\n}')
    assert document.root.get("bf16") is not None
    assert document.root.value["bf16"].value is False
    assert [(n.kind, n.line, n.column) for n in document.notes] == [("duplicate-key", 3, 3)]
    assert "first at line 2" in document.notes[0].message


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2), 1, MAX_DEPTH + 2),  # nested too deeply: the reader's error
        ('{"a": 1,}', 1, 9),  # refused by the decoder: the reader words and places it
        ('{\n  "a": tru\n}', 2, 8),
    ],
)
def test_what_the_decoder_does_not_read_is_the_readers_error(text: str, line: int, column: int) -> None:
    assert _decoded("c.json", text) is None
    with pytest.raises(InputError) as error:
        parse_json("c.json", text)
    assert (error.value.line, error.value.column) == (line, column)


def test_every_json_file_of_the_examples_reads_as_the_reader_reads_it() -> None:
    files = sorted(Path(__file__).resolve().parents[1].joinpath("examples").rglob("*.json"))
    assert files
    for file in files:
        text = file.read_text(encoding="utf-8-sig")
        document = _decoded(str(file), text)
        if document is None:
            continue
        root, notes = _read(text)
        _same(document.root, root, str(file))
        assert [(n.kind, n.message, n.line, n.column, n.key) for n in document.notes] == notes
