"""``Source.segment`` reads a node's four positions at once (falling back, per position, to
None for a node without them): the same text as read one by one, on every node of real
scripts (ASCII and not) and of nodes without positions."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from precheck.sources.python_values import Source

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"


def _reference(source: Source, node: ast.AST) -> str:
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    first, last = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if start is None or end is None or first is None or last is None or end > len(source.text_lines):
        return ast.unparse(node)
    if source.ascii:
        if start == end:
            return source.text_lines[start - 1][first:last]
        lines = source.text_lines
        return "\n".join([lines[start - 1][first:], *lines[start : end - 1], lines[end - 1][:last]])
    encoded = source.lines
    if start == end:
        return encoded[start - 1][first:last].decode("utf-8", errors="replace")
    text = b"\n".join([encoded[start - 1][first:], *encoded[start : end - 1], encoded[end - 1][:last]])
    return text.decode("utf-8", errors="replace")


ODD = 'x = "é" + f(a,\n  b=[1, 2])  # ü\nfor i in range(3):\n    y = {k: v for k, v in z}\n'


def _check(code: str) -> int:
    source = Source(code)
    tree = ast.parse(code)
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.expr_context | ast.operator | ast.cmpop | ast.boolop | ast.unaryop):
            continue
        assert source.segment(node) == _reference(source, node), ast.dump(node)[:200]
        count += 1
    return count


def test_odd_code_and_nodes_without_positions() -> None:
    assert _check(ODD) > 20
    source = Source(ODD)
    for node in (
        ast.Name(id="a"),
        ast.comprehension(target=ast.Name(id="k"), iter=ast.Name(id="z"), ifs=[], is_async=0),
    ):
        assert source.segment(node) == _reference(source, node) == ast.unparse(node)
    partial = ast.Name(id="q", lineno=1, col_offset=0)  # no end positions
    assert source.segment(partial) == _reference(source, partial) == "q"


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_real_scripts() -> None:
    count = 0
    for path in sorted(PROJECTS.rglob("*.py"))[::4]:
        code = path.read_text(encoding="utf-8", errors="replace")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                count += _check(code)
        except (SyntaxError, ValueError):
            continue
    assert count > 10_000
