"""Which fields of a TRL ``ModelConfig(...)`` a script hands on to the model it trains.

``ModelConfig`` is a plain dataclass: its ``torch_dtype``/``dtype``, ``attn_implementation`` and
quantization fields reach the model only where the script passes them on (TRL's own scripts
build ``model_init_kwargs`` from ``model_args.attn_implementation``...; ``get_quantization_config``
reads ``load_in_4bit``/``load_in_8bit``/``bnb_4bit_quant_type``/``torch_dtype``,
``get_peft_config`` reads ``use_peft``: ``trl/trainer/utils.py`` ``get_quantization_config``,
``get_peft_config``@0.15.2). A trainer given ``model=model_config.model_name_or_path`` loads the
model with its own ``args.model_init_kwargs`` (``GRPOTrainer.__init__``: ``model_init_kwargs =
args.model_init_kwargs or {}``@0.15.2): the ``ModelConfig``'s attention and dtype are not the
run's (philschmid's mini-deepseek-r1 notebook and its copies).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

#: TRL helpers that take the whole ``ModelConfig`` and the fields each reads
HELPERS: dict[str, frozenset[str]] = {
    "get_peft_config": frozenset({"use_peft"}),
    "get_quantization_config": frozenset(
        {"load_in_4bit", "load_in_8bit", "bnb_4bit_quant_type", "torch_dtype", "dtype"}
    ),
    "get_kbit_device_map": frozenset(),
}


def _callee(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def fields_read(
    tree: ast.Module, at: Callable[[ast.Call], tuple[int, int]], call_at: tuple[int, int]
) -> frozenset[str] | None:
    """The ``ModelConfig`` fields the script reads from the object the call at ``call_at``
    builds (``name = ModelConfig(...)``, then ``name.attn_implementation`` or a helper of
    :data:`HELPERS`); None when they cannot be told (the call is not bound to one name, or the
    object goes somewhere else whole: all its fields may be read)."""
    name: str | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and at(node.value) == call_at
        ):
            name = node.targets[0].id
            break
    if name is None:
        return None
    read: set[str] = set()
    handled: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            read.add(node.attr)
            handled.add(id(node.value))
        elif isinstance(node, ast.Call):
            helper = HELPERS.get(_callee(node.func) or "")
            if helper is None:
                continue
            for arg in (*node.args, *(k.value for k in node.keywords)):
                if isinstance(arg, ast.Name) and arg.id == name:
                    read |= helper
                    handled.add(id(arg))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Load)
            and id(node) not in handled
        ):
            return None  # passed on whole (to a function precheck does not know)
    return frozenset(read)
