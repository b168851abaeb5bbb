"""The Collector's fast paths read every module as the slow paths they replace: an assignment
whose value holds no call is not scanned (nor its targets looked up as models), a constant's
value is taken as it is, a cast is looked for only where the method is one (as
``_cast_kind`` first checks), and :func:`_holds_call` is False only where :meth:`ModuleIndex.calls_in` finds no call."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import Any

import pytest

from precheck.sources import python_calls
from precheck.sources.python_calls import Collector, _dotted, _holds_call
from precheck.sources.python_index import ModuleIndex
from test_python_calls_merge import ODD, _read

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"


class _Slow(Collector):
    """The paths before: every assignment scanned and evaluated, every scan walked (with
    :func:`_holds_call` always True, see :func:`_slow`)."""

    def statement(self, node: ast.stmt, env: dict[str, Any], inference: bool) -> None:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is None:
                return
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            model = any(self._model_target(t) for t in targets)
            self.scan(node.value, env, inference, model)
            value = self.evaluator(env)(node.value)
            for target in targets:
                self.bind(target, value, node.value, env)
            return
        super().statement(node, env, inference)

    def _model_target(self, target: ast.expr) -> bool:
        dotted = _dotted(target)
        return bool(dotted) and dotted in self.models


FAST = [
    "x = 1\nm = AutoModel.from_pretrained('a')\nm.half()\ny = m\ny.to(torch.bfloat16)\nz: int = 3\nm.a.b = m",
    "m = MyModel()\nclass MyModel(nn.Module):\n    pass\nm2 = MyModel()\nm2 = m2.half()\nTrainingArguments(fp16=x)",
    "self.model = get_peft_model(a, b)\nself.model = self.model.to(torch.float16)\nv = (lambda: f()).x",
]


def _slow(code: str, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(python_calls, "_holds_call", lambda expr: True)
        return _read(_Slow, code)


@pytest.mark.parametrize("code", ODD + FAST, ids=range(len(ODD) + len(FAST)))
def test_fast_paths_read_odd_code_as_before(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _read(Collector, code) == _slow(code, monkeypatch)


def _scripts() -> list[tuple[Path, str, ast.Module]]:
    out = []
    for path in sorted(PROJECTS.rglob("*.py")):
        code = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append((path, code, ast.parse(code)))
        except (SyntaxError, ValueError):
            continue
    return out


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_fast_paths_read_real_scripts_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = _scripts()
    for path, code, _ in scripts:
        assert _read(Collector, code) == _slow(code, monkeypatch), path
    assert len(scripts) > 100


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_holds_call_is_false_only_where_there_is_no_call() -> None:
    told = 0
    for _, code, tree in _scripts():
        index = ModuleIndex(tree, code)
        for node in ast.walk(tree):
            if isinstance(node, ast.expr) and not _holds_call(node):
                assert index.calls_in(node) == []
                told += 1
    assert told > 10000
