"""The objects a script hands to ``accelerator.prepare(...)``, read with ``ast``.

accelerate's ``Accelerator.prepare`` takes the script's model, optimizer, data loaders and
scheduler and returns them wrapped; it does not cast a model's weights (``prepare_model``
moves it to the device and wraps it: DDP, or FSDP, whose upcast of low-precision parameters
is accelerate >= 0.30.0 only, ``accelerator.py:1486@0.30.0``). So a name passed to it was
built as the script's model where the script cast it (``self.model = model.to(torch.bfloat16)``
then ``accelerator.prepare(self.model)``): the cast is of the trained weights.
"""

from __future__ import annotations

import ast

from .tree_facts import calls


def prepared_names(tree: ast.Module, code: str) -> set[str]:
    """The dotted names (``model``, ``self.model``) passed to a ``.prepare(...)`` call of a module that
    constructs an ``Accelerator``; empty where the text holds neither (no walk then)."""
    if ".prepare(" not in code or "Accelerator" not in code:
        return set()
    names: set[str] = set()
    for node in calls(tree):
        if not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr != "prepare":
            continue
        for argument in node.args:
            name = dotted(argument)
            if name is not None:
                names.add(name)
    return names


def dotted(expr: ast.expr) -> str | None:
    """``a.b.c`` as written, for a chain of attributes on a name (None for anything else)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return ".".join([expr.id, *reversed(parts)])
