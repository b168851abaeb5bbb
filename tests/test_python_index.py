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


TRAINING_TEXTS = [
    "SFTConfig",
    "xSFTConfig(",
    "_DPOConfig",
    "a.DPOConfig(",
    "SFTConfigs",
    "éGRPOConfig",
    "RewardConfigé",
    "OnlineDPOConfig",
    "IterativeSFTConfig()",
    "ConfigSFTConfig",
    "AutoConfig LoraConfig",
    "precision = '16'",
    'Trainer(precision="bf16-mixed")',
    "precision=32",
    "loss.backward ()",
    "backward(loss)",
    "Seq2SeqTrainingArguments",
    "torch.cuda.amp.GradScaler()",
    "",
]


def test_training_words_find_what_the_regex_finds() -> None:
    """The fast test (substrings first, each part of the regex only where its word occurs)
    answers as the regex it stands for, on edge cases and on every real script and notebook."""
    from precheck.sources.python_source import _TRAINING_WORDS, _training_words

    texts = list(TRAINING_TEXTS)
    if PROJECTS.is_dir():
        files = sorted([*PROJECTS.rglob("*.py"), *PROJECTS.rglob("*.ipynb")])
        texts += [f.read_text(encoding="utf-8", errors="replace") for f in files]
    found = [_training_words(text) for text in texts]
    assert found == [_TRAINING_WORDS.search(text) is not None for text in texts]
    assert any(found) and not all(found)


def test_walk_is_ast_walk_without_contexts_and_operators() -> None:
    from precheck.sources.python_index import _HIDDEN, walk

    trees = [ast.parse(ODD)]
    if PROJECTS.is_dir():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for file in sorted(PROJECTS.rglob("*.py"))[::5]:
                try:
                    trees.append(ast.parse(file.read_text(encoding="utf-8", errors="replace")))
                except SyntaxError:
                    continue
    for tree in trees:
        expected = [node for node in ast.walk(tree) if type(node) not in _HIDDEN]
        got = walk(tree)
        assert len(got) == len(expected)
        assert all(a is b for a, b in zip(got, expected, strict=True))
    assert ast.Load in _HIDDEN and ast.Add in _HIDDEN and ast.Name not in _HIDDEN


def test_walk_checks_each_item_of_lists_that_hold_other_than_nodes() -> None:
    """``{**a}`` keys and keyword-only defaults hold None, ``global`` and class patterns'
    keywords hold names, a ``case None`` holds a constant: :func:`walk` keeps only nodes."""
    from precheck.sources.python_index import _HIDDEN, walk

    code = (
        "def f(a, *, b, c=1, d):\n    global g, h\n    nonlocal i\n    return {**a, 'k': b, **c}\n"
        "match x:\n    case C(p, q=1, r=None):\n        pass\n    case None | True | {'a': 1, **rest}:\n        pass\n"
    )
    tree = ast.parse(code)
    expected = [node for node in ast.walk(tree) if type(node) not in _HIDDEN]
    got = walk(tree)
    assert len(got) == len(expected) > 30
    assert all(a is b for a, b in zip(got, expected, strict=True))


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_remembered_qualnames_are_those_worked_out() -> None:
    from precheck.sources.python_values import Names

    checked = 0
    for file in sorted(PROJECTS.rglob("*.py"))[::4]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        plain, remembering = Names.of(tree), Names.of(tree)
        remembering.memo = {}
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Attribute, ast.Name, ast.Call, ast.Subscript))]
        for _ in range(2):  # worked out, then remembered
            for node in nodes:
                assert remembering.qualname(node) == plain.qualname(node)  # type: ignore[arg-type]
                checked += 1
    assert checked > 10_000
