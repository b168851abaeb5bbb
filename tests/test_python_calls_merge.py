"""The Collector merges the branches of an undecided ``if`` (loop, ``try``, ``match``) from the
names they bound, not by comparing whole copies of the names: it must read every module as
the merge it replaced did (:class:`_Reference`, kept here), NaN and ``:=`` included."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import Any

import pytest

from precheck.hardware import from_specs
from precheck.sources.python_calls import Collector
from precheck.sources.python_values import Runtime, Unknown, truth

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"
_ABSENT = object()


class _Reference(Collector):
    """The merge before: every name of every copy compared with the names before the branches."""

    def branches(
        self, test: Any, bodies: list[list[ast.stmt]], env: dict[str, Any], inference: bool, node: ast.stmt
    ) -> None:
        known = truth(test) if test is not None else None
        if known is not None and len(bodies) == 2:
            self.block(bodies[0] if known else bodies[1], env, inference)
            return
        results = []
        outer = self._written  # (the Collector also knows it reads an undecided branch: `requires_grad_(False)`)
        self._written = set()
        for body in bodies:
            local = dict(env)
            self.block(body, local, inference)
            results.append(local)
        self._written = outer
        changed = {n for r in results for n, v in r.items() if v is not env.get(n, _ABSENT)}
        changed.update(n for n, v in env.items() if not v == v)  # noqa: SIM201
        for name in changed:
            values = [r.get(name, Unknown(f"`{name}` is not set on every path")) for r in results]
            first = values[0]
            same = all(type(v) is type(first) and v == first for v in values[1:])
            env[name] = (
                first
                if same
                else Unknown(
                    f"`{name}` depends on which way the {type(node).__name__.lower()} at line {node.lineno} goes"
                )
            )


def _read(kind: type[Collector], code: str) -> str:
    runtime = Runtime(from_specs(["A100"], {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(code)
    collector = kind(tree, code, runtime)
    collector.run()
    seen = (collector.calls, collector.environ, collector.backward, sorted(collector.models), collector.unknown)
    return repr((*seen, runtime.answers, runtime.evaluated))


ODD = [
    # NaN: unequal to itself, it merges to Unknown at every undecided branch
    "x = float('nan')\nif a:\n    y = 1\nTrainingArguments(fp16=x, bf16=y)",
    "if (x := float('nan')):\n    pass\nif a:\n    y = 1\nTrainingArguments(fp16=x)",
    "x = float('inf') - float('inf')\ndef f(p):\n    if p:\n        q = 1\n    TrainingArguments(fp16=x, bf16=q)",
    "x = [float('nan')]\nif a:\n    pass\nTrainingArguments(fp16=x)",
    # rebound to the same value, to an equal one, or only on some paths
    "x = True\nif a:\n    x = x\nelse:\n    x = True\nTrainingArguments(fp16=x)",
    "x = True\nif a:\n    x = False\nTrainingArguments(fp16=x)",
    "if a:\n    y = 1\nelif b:\n    y = 1\nelse:\n    y = 1\nTrainingArguments(fp16=y)",
    "if a:\n    y = 1\nelif b:\n    y = 2\nTrainingArguments(fp16=y)",
    # bound in a nested branch, by :=, in a loop, a handler, a match case, a with
    "if a:\n    if b:\n        z = 1\n    else:\n        z = 1\nelse:\n    z = 2\nTrainingArguments(fp16=z)",
    "if a:\n    if b:\n        z = 1\nTrainingArguments(fp16=z)",
    "if a:\n    w = (v := 3)\nTrainingArguments(fp16=v, bf16=w)",
    "v = 3\nif a:\n    print((v := 3))\nTrainingArguments(fp16=v)",
    "for i in r:\n    k = i\n    if i:\n        m = True\nTrainingArguments(fp16=k, bf16=m, tf32=i)",
    "try:\n    n = 1\nexcept E:\n    n = 2\nTrainingArguments(fp16=n)",
    "match s:\n    case 1:\n        o = True\n    case _:\n        o = True\nTrainingArguments(fp16=o)",
    "with c() as p:\n    if a:\n        p = 1\nTrainingArguments(fp16=p)",
    "a, (b, c) = 1, (2, 3)\nif d:\n    b, c = 2, 4\nTrainingArguments(fp16=a, bf16=b, tf32=c)",
    "import os\nif a:\n    os.environ['X'] = '1'\n    u = torch.cuda.is_bf16_supported()\nTrainingArguments(bf16=u)",
    "def f(x):\n    if x:\n        y = 1\n    while y:\n        y = 2\n    return TrainingArguments(fp16=y, bf16=x)",
]


@pytest.mark.parametrize("code", ODD, ids=range(len(ODD)))
def test_merge_reads_odd_code_as_before(code: str) -> None:
    assert _read(Collector, code) == _read(_Reference, code)


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_merge_reads_real_scripts_as_before() -> None:
    checked = 0
    for path in sorted(PROJECTS.rglob("*.py")):
        code = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        if "if " not in code:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        assert _read(Collector, code) == _read(_Reference, code), path
        checked += 1
    assert checked > 100


def test_a_collector_is_freed_without_the_cycle_collector() -> None:
    """The evaluator it keeps while reading refers back to it: dropped when the run ends, so
    a module's trees go as soon as the reader is done (no garbage-collector pass over them)."""
    import gc
    import weakref

    code = "x = 1\nif a:\n    y = (z := f(x))\nTrainingArguments(fp16=y)\ndef g(p):\n    return p + 1\n"
    enabled = gc.isenabled()
    gc.disable()
    try:
        collector = Collector(ast.parse(code), code, Runtime(None))
        collector.run()
        assert collector.calls
        alive = weakref.ref(collector)
        del collector
        assert alive() is None
    finally:
        if enabled:
            gc.enable()
