"""TF32 matmuls switched in a script's own code, wherever the code that runs sets it.

``torch.backends.cuda.matmul.allow_tf32 = True`` (nanoGPT's ``train.py``, at module level, or
in a ``main()`` the script calls, in a loop, under ``with``) and
``torch.set_float32_matmul_precision("high" | "medium")`` let float32 matmuls run on TF32
tensor cores; ``"highest"`` and ``allow_tf32 = False`` keep them in float32 (torch
``torch/backends/cuda/__init__.py`` ``cuBLASModule.__setattr__`` and
``torch.set_float32_matmul_precision``@2.5: "high" and "medium" allow TF32). cuDNN's own
``torch.backends.cudnn.allow_tf32`` is convolutions, not matmuls (and True by default): it is
not the plan's ``tf32``.

Read only where the statement runs when the script runs: the module's own statements (its
``if __name__ == "__main__":`` block included), and the bodies of module-level functions the
module calls by name; not under another ``if`` (a branch on an option or the hardware is
the run's choice), not in an ``except`` handler, not in a class. Two places that disagree
give no value (:data:`CONFLICT`): which one runs last is the code's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from .nodes import Node, SourceNote

#: what each ``set_float32_matmul_precision`` argument means for TF32 matmuls
_PRECISIONS = {"highest": False, "high": True, "medium": True}
#: the value of :func:`tf32_setting` when two places set different values
CONFLICT = "conflict"


def tf32_setting(tree: ast.Module) -> tuple[bool, ast.AST] | str | None:
    """``(allowed, the node that sets it)``; :data:`CONFLICT`; None when the code sets nothing."""
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    found: list[tuple[bool, ast.AST]] = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name in called:
                _block(statement.body, found)
        else:
            _statement(statement, found)
    values = {value for value, _ in found}
    if not found:
        return None
    if len(values) > 1:
        return CONFLICT
    return found[-1]


def code_tf32(
    tree: ast.Module, code: str, where: Callable[[tuple[int, int]], tuple[int, int]]
) -> Node | SourceNote | None:
    """The run key ``tf32`` at the statement that sets it (``where``: an ast position, (line,
    column offset), to the file's); a note when two places disagree; None when the code
    never names the switch (checked on the text first: most scripts do not)."""
    if "tf32" not in code and "float32_matmul_precision" not in code:
        return None
    setting = tf32_setting(tree)
    if setting is None:
        return None
    if setting == CONFLICT:
        return SourceNote(
            "unresolved-value",
            "the script turns TF32 matmuls both on and off (`allow_tf32`, `set_float32_matmul_precision`): "
            "which runs last is the code's, and precheck leaves it out",
            1,
            1,
            "tf32",
        )
    assert isinstance(setting, tuple)
    value, node = setting
    line, column = where((getattr(node, "lineno", 1), getattr(node, "col_offset", 0)))
    written = ast.get_source_segment(code, node) or "allow_tf32"
    key = "allow_tf32" if isinstance(node, ast.Assign) else "set_float32_matmul_precision"
    return Node(value, line, column, key, line, column, raw=written.splitlines()[0][:80])


def _block(statements: list[ast.stmt], found: list[tuple[bool, ast.AST]]) -> None:
    for statement in statements:
        _statement(statement, found)


def _statement(node: ast.stmt, found: list[tuple[bool, ast.AST]]) -> None:
    if isinstance(node, ast.If):
        if _main_guard(node.test):
            _block(node.body, found)
        return
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
        _block(node.body, found)
        return
    if isinstance(node, ast.Try):
        _block(node.body, found)
        _block(node.finalbody, found)
        return
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if _dotted(target).endswith("backends.cuda.matmul.allow_tf32"):
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                found.append((value.value, node))
        return
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        if _dotted(call.func).endswith("set_float32_matmul_precision") and len(call.args) == 1:
            argument = call.args[0]
            if isinstance(argument, ast.Constant) and argument.value in _PRECISIONS:
                found.append((_PRECISIONS[str(argument.value)], node))


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


__all__ = ["CONFLICT", "code_tf32", "tf32_setting"]
