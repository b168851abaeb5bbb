"""Instance attributes a class sets once, to a constant, in ``__init__``.

A training class often keeps its precision switches on ``self``::

    class WorldModel(nn.Module):
        def __init__(self, ...):
            self.use_amp = True
            self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

        def update(self, obs):
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=self.use_amp):
                ...

Another method's ``self`` is a parameter, so ``self.use_amp`` is unknown there; but when the
class's own code assigns ``self.use_amp`` exactly once, in ``__init__``'s own statements (not in a
branch, a loop or a ``with``: every instance runs it), to a literal (``True``, ``"bf16"``, ``16``,
``None``), and no other statement of the module writes an attribute of that name (``x.use_amp =
...``, ``self.use_amp += ...``, ``setattr(``), every method of every instance reads that value.
:func:`instance_constants` gives, per method (``id`` of its node), those attributes as a dict,
which the evaluator reads as ``self.NAME`` (a dict's key read as an attribute).
Not read: a subclass's own assignment (its class is another class, with its own ``__init__``),
code in another module that sets the attribute (precheck reads a script as its own code).
"""

from __future__ import annotations

import ast
import re
from typing import Any

#: the literal types a constant attribute may hold
_LITERALS = (bool, int, float, str, type(None))


def instance_constants(classes: list[ast.ClassDef], text: str) -> dict[int, dict[str, Any]]:
    """``id`` of each method (other than ``__init__``, static and class methods) of ``classes``
    → the constant attributes of its class (empty classes left out)."""
    if "self." not in text:
        return {}
    out: dict[int, dict[str, Any]] = {}
    for cls in classes:
        methods = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        init = next((m for m in methods if m.name == "__init__"), None)
        if init is None or not init.args.args:
            continue
        constants = _constants(init, text)
        if not constants:
            continue
        for method in methods:
            if method is not init and method.args.args and not _static(method):
                out[id(method)] = constants
    return out


def _constants(init: ast.FunctionDef | ast.AsyncFunctionDef, text: str) -> dict[str, Any]:
    """The attributes ``__init__``'s own statements set on its first parameter to a literal, each
    the only write of an attribute of that name in the module's text."""
    me = init.args.args[0].arg
    found: dict[str, Any] = {}
    for statement in init.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        value = statement.value
        if not isinstance(value, ast.Constant) or not isinstance(value.value, _LITERALS):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                found[target.attr] = value.value
    return {name: value for name, value in found.items() if _written_once(name, text)}


def _written_once(name: str, text: str) -> bool:
    """Whether the module's text writes an attribute ``name`` in one place only (``.name =``,
    ``.name +=`` and the like, not ``==``), and never through ``setattr``."""
    writes = re.findall(rf"\.{re.escape(name)}\s*(?::[^=\n]+)?(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)", text)
    return len(writes) == 1 and "setattr(" not in text


def _static(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``@staticmethod`` or ``@classmethod``: its first parameter is not an instance."""
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in method.decorator_list)
