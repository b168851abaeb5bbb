"""The one-pass index of a module finds what the walks it replaced found, in the same order."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from precheck.sources.python_index import PARAMETER_METHODS, ModuleIndex, _post_order

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT.parent / "shared" / "projects"

ODD = """
import torch, torch.cuda.amp as amp
from x import *
def outer(a=f(1)):
    from y import z as w
    class Inner(nn.Module):
        async def g(self):
            return [h(i) for i in k(j) if m(i)] + {p(): q() for _ in r()}
    return lambda: model.parameters(), (lambda x=s(): t())
x = {a(): b(), c(): d()} if e(f(g())) else h(lambda: i()) or j(*k(), **l())
with autocast(u()) as v, w(v()):
    y = not z(1) + 2 * z2(3) - z3(-z4())
match m(n()):
    case [1, 2] if o(p()):
        pass
    case {"a": 1, **rest} | C(x=True, y=None) | {"b": K.c}:
        g(rest)
    case True | None as w if h(w):
        pass
for i in q(r()):
    s[t()] = u(v(w()))
f"{a(b())!r:{c()}}"
@dec(d())
class C(e()):
    attr = f(g())
try:
    pass
except h(w.parameters()) as err:
    i(err)
@decorate(
    a.parameters()
)
@other
def h(x=b.named_parameters(), *, y: k(c.parameters()) = 1):
    pass
opt = AdamW(
    self.model
    .parameters(), lr=(lambda: d.parameters())()
)
class D(base(e.parameters())):
    pass
"""


def _check(tree: ast.AST, code: str | None = None) -> int:
    index = ModuleIndex(tree, code)
    walk = list(ast.walk(tree))
    binds = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    assert index.bindings == [n for n in walk if isinstance(n, binds)]
    assert index.functions == [n for n in walk if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert index.classes == [n for n in walk if isinstance(n, ast.ClassDef)]
    wanted = [
        id(n)
        for n in walk
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in PARAMETER_METHODS
    ]
    assert sorted(id(n) for n in index.parameter_calls) == sorted(wanted)
    checked = 0
    for node in walk:  # every expression, the roots read in one pass and the others by a walk
        if isinstance(node, ast.expr):
            assert list(index.calls_in(node)) == [n for n in _post_order(node) if isinstance(n, ast.Call)]
            checked += 1
    return checked


def test_index_matches_the_walks_on_odd_code() -> None:
    assert _check(ast.parse(ODD)) > 100
    assert _check(ast.parse(ODD), ODD) > 100


def test_deep_expressions_are_walked_without_recursion() -> None:
    def call(i: int) -> ast.Call:
        return ast.Call(ast.Name("f", ast.Load()), [ast.Constant(i)], [])

    value: ast.expr = call(0)
    for i in range(1, 50_000):  # deeper than Python's parser goes: built by hand
        value = ast.BinOp(value, ast.Add(), call(i))
    tree = ast.Module([ast.Assign([ast.Name("x", ast.Store())], value)], [])
    index = ModuleIndex(tree)
    assert [c.args[0].value for c in index.calls_in(value)] == list(range(50_000))  # type: ignore[attr-defined]


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_index_matches_the_walks_on_real_scripts() -> None:
    files = sorted(PROJECTS.rglob("*.py"))[::3]  # a third of them: the whole set takes long
    assert files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
        texts = [text.replace("\r\n", "\n").replace("\r", "\n") for text in texts]
    assert sum(_check(ast.parse(text), text) for text in texts) > 1000


def test_every_training_word_holds_a_gate_word() -> None:
    """The substring test before the regex must let through every text the regex matches:
    each top-level alternative of the regex names one of the gate's words."""
    from precheck.sources.python_source import _TRAINING_GATE, _TRAINING_WORDS

    alternatives, depth, current = [], 0, ""
    for char in _TRAINING_WORDS.pattern:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            alternatives.append(current)
            current = ""
        else:
            current += char
    alternatives.append(current)
    assert len(alternatives) >= 4
    for alternative in alternatives:
        assert any(word in alternative for word in _TRAINING_GATE), alternative
