"""What a small helper function of a script returns for known arguments, read with ``ast``.

Training scripts map an option to a dtype in a helper of their own:

    def _dtype_from_bits(bits: str) -> torch.dtype:        # peft examples/psoft_finetuning
        bits = bits.lower()
        if bits == "bf16":
            return torch.bfloat16
        if bits == "fp16":
            return torch.float16
        ...
        raise ValueError(f"Unknown bits={bits}. Use one of: bf16, fp16, fp32.")

A module-level function whose body only assigns names, tests (``if``), returns and raises is
evaluated for a call's arguments with the script's own evaluator (:mod:`.python_values`):
``_dtype_from_bits("bf16")`` is ``torch.bfloat16``, and the ``return`` that gave it is where the
value is decided. Nothing runs: a test that is not known, a ``raise`` reached, a loop, a
``global`` or any other statement leaves the result :class:`~.python_values.Unknown`, and so
does an argument that is not known. Helpers call helpers at most :data:`MAX_DEPTH` deep.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .python_values import Evaluator, Unknown, truth

#: how deep helpers may call helpers (a recursive one is unknown past it)
MAX_DEPTH = 4
#: the most statements a helper read so may hold (a longer function is no small mapping)
MAX_STATEMENTS = 60
#: the statements a helper read so may hold
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.If, ast.Return, ast.Raise, ast.Pass, ast.Expr)

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class Returned:
    """A helper's value for one call, and the line of the ``return`` that gave it."""

    value: Any
    line: int


def simple(function: Function) -> bool:
    """Whether ``function`` is a helper :func:`returned` reads (see the module's docstring)."""
    if isinstance(function, ast.AsyncFunctionDef) or function.decorator_list:
        return False  # (a coroutine's call is not its value; a decorator may change it)
    count = 0
    stack: list[ast.stmt] = list(function.body)
    while stack:
        statement = stack.pop()
        count += 1
        if count > MAX_STATEMENTS or not isinstance(statement, _SIMPLE):
            return False
        if isinstance(statement, ast.Expr) and not isinstance(statement.value, ast.Constant):
            return False  # a call for its effect (a docstring is a constant)
        if isinstance(statement, ast.If):
            stack.extend(statement.body)
            stack.extend(statement.orelse)
    return True


def returned(
    function: Function,
    call: ast.Call,
    caller: Evaluator,
    globals_: dict[str, Any],
    evaluator: Callable[[dict[str, Any]], Evaluator],
) -> Returned | Unknown:
    """What ``function`` returns for ``call``, its arguments evaluated by ``caller``; its own
    names looked up in a copy of ``globals_`` (the module's), read by ``evaluator(env)``."""
    local = dict(globals_)
    bound = _arguments(function, call, caller, local)
    if isinstance(bound, Unknown):
        return bound
    found = _block(function.body, local, evaluator(local))
    if found is None:
        return Returned(None, function.end_lineno or function.lineno)  # (falls off its end: None)
    return found


def _arguments(function: Function, call: ast.Call, caller: Evaluator, local: dict[str, Any]) -> Unknown | None:
    """The call's values bound to the function's parameters in ``local`` (defaults for the rest)."""
    arguments = function.args
    if arguments.vararg is not None or arguments.kwarg is not None:
        return Unknown(f"`{function.name}` takes `*args`/`**kwargs`")
    positional = [*arguments.posonlyargs, *arguments.args]
    if len(call.args) > len(positional) or any(isinstance(a, ast.Starred) for a in call.args):
        return Unknown(f"`{function.name}(...)` is called with arguments precheck cannot place")
    values: dict[str, Any] = {}
    for param, argument in zip(positional, call.args, strict=False):
        values[param.arg] = caller(argument)
    names = {p.arg for p in (*positional, *arguments.kwonlyargs)}
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in names:
            return Unknown(f"`{function.name}(...)` is given keyword arguments precheck cannot place")
        values[keyword.arg] = caller(keyword.value)
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]
    for param, default in pairs:
        if param.arg in values:
            continue
        if default is None:
            return Unknown(f"`{param.arg}` of `{function.name}` is not given")
        values[param.arg] = caller(default)
    local.update(values)
    return None


def _block(body: list[ast.stmt], local: dict[str, Any], evaluate: Evaluator) -> Returned | Unknown | None:
    """The value a block returns, Unknown, or None when it falls through."""
    for statement in body:
        if isinstance(statement, ast.Return):
            value = evaluate(statement.value) if statement.value is not None else None
            return value if isinstance(value, Unknown) else Returned(value, statement.lineno)
        if isinstance(statement, ast.Raise):
            return Unknown(f"the helper raises at line {statement.lineno} for these arguments")
        if isinstance(statement, ast.If):
            test = truth(evaluate(statement.test))
            if test is None:
                return Unknown(f"the helper's test at line {statement.lineno} is not known")
            found = _block(statement.body if test else statement.orelse, local, evaluate)
            if found is not None:
                return found
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if statement.value is None:
                continue
            value = evaluate(statement.value)
            for target in targets:
                if not isinstance(target, ast.Name):
                    return Unknown(f"the helper assigns to `{ast.unparse(target)}`")
                local[target.id] = value
    return None


__all__ = ["MAX_DEPTH", "Returned", "returned", "simple"]
