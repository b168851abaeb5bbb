"""What a small function of the module returns for the arguments a call gives it (``ast`` only).

Training scripts map an option to a dtype in a helper (peft ``examples/psoft_finetuning``)::

    def _dtype_from_bits(bits: str):
        if bits == "bf16":
            return torch.bfloat16
        if bits == "fp16":
            return torch.float16
        if bits == "fp32":
            return torch.float32
        raise ValueError(f"Unknown bits={bits}. Use one of: bf16, fp16, fp32.")

    torch_dtype = _dtype_from_bits(script_args.bits)

The body is read as it would run for the call's values: its parameters bound (passed, else
their defaults), plain assignments, ``if`` tests that are known, and the first ``return``
reached. It sees its own names only (a module's global is not looked up: a caller's local
of the same name must not stand in for it), ``torch.<dtype>`` and constants. Any other
statement (a loop, ``try``, ``with``, a nested function), an unknown test or an argument
list precheck cannot match leaves the result unknown; a ``raise`` reached is unknown too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .python_values import UNHANDLED, Dtype, Unknown, truth

#: the statements read at most, per call (a helper that maps a name is a few lines)
MAX_STATEMENTS = 200
#: the values a read function may return (a model, a config object... is not followed)
_PLAIN = (str, int, float, bool, type(None), Dtype)


class _GiveUp(Exception):
    """A statement or value the reading does not follow."""


def returned(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    call: ast.Call,
    argument: Callable[[ast.expr], Any],
    evaluator: Callable[[dict[str, Any]], Callable[[ast.expr | None], Any]],
) -> tuple[Any, int | None]:
    """The value ``function`` returns for ``call`` and the line of the ``return`` that gives it;
    (UNHANDLED, None) when it is not read so. ``argument`` evaluates the call's arguments where
    the call is; ``evaluator(env)`` evaluates expressions over the function's own names."""
    if isinstance(function, ast.AsyncFunctionDef) or function.decorator_list:
        return UNHANDLED, None
    env = _bound(function, call, argument)
    if env is None:
        return UNHANDLED, None
    evaluate = evaluator(env)
    budget = [MAX_STATEMENTS]
    try:
        found = _block(function.body, env, evaluate, budget)
    except _GiveUp:
        return UNHANDLED, None
    if found is None:
        return None, None  # it ends without a return: None
    value, line = found
    if isinstance(value, Unknown):
        return value, line
    if not isinstance(value, _PLAIN):
        return UNHANDLED, None
    return value, line


def _bound(function: ast.FunctionDef, call: ast.Call, argument: Callable[[ast.expr], Any]) -> dict[str, Any] | None:
    arguments = function.args
    if arguments.vararg is not None or arguments.kwarg is not None or arguments.posonlyargs:
        return None
    positional = arguments.args
    if len(call.args) > len(positional) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or not set(keywords) <= {p.arg for p, _ in pairs}:
        return None
    env: dict[str, Any] = {}
    for index, (param, default) in enumerate(pairs):
        given = keywords.get(param.arg)
        if given is None and index < len(call.args) and param in positional:
            given = call.args[index]
        if given is not None:
            env[param.arg] = argument(given)
        elif default is not None and isinstance(default, ast.Constant):
            env[param.arg] = default.value
        elif default is not None:
            return None  # a default that is not a constant: not evaluated here
        else:
            return None  # a required parameter the call leaves out: it would raise
    return env


def _block(
    body: list[ast.stmt], env: dict[str, Any], evaluate: Callable[[ast.expr | None], Any], budget: list[int]
) -> tuple[Any, int] | None:
    """The first ``return`` reached in ``body`` (value, line), or None when it falls through."""
    for statement in body:
        budget[0] -= 1
        if budget[0] < 0:
            raise _GiveUp
        kind = type(statement)
        if kind is ast.Return:
            return evaluate(statement.value), statement.lineno  # type: ignore[attr-defined]
        if kind is ast.Assign:
            targets = statement.targets  # type: ignore[attr-defined]
            if not all(type(t) is ast.Name for t in targets):
                raise _GiveUp
            value = evaluate(statement.value)  # type: ignore[attr-defined]
            for target in targets:
                env[target.id] = value
        elif kind is ast.AnnAssign:
            if type(statement.target) is not ast.Name:  # type: ignore[attr-defined]
                raise _GiveUp
            if statement.value is not None:  # type: ignore[attr-defined]
                env[statement.target.id] = evaluate(statement.value)  # type: ignore[attr-defined]
        elif kind is ast.If:
            known = truth(evaluate(statement.test))  # type: ignore[attr-defined]
            if known is None:
                raise _GiveUp
            found = _block(statement.body if known else statement.orelse, env, evaluate, budget)  # type: ignore[attr-defined]
            if found is not None:
                return found
        elif kind is ast.Raise:
            return Unknown(f"the call raises at line {statement.lineno}"), statement.lineno
        elif kind is ast.Expr:
            if not isinstance(statement.value, ast.Constant):  # type: ignore[attr-defined]
                raise _GiveUp  # a call for its effect (it may change what the function returns)
        elif kind not in (ast.Pass, ast.Assert):
            raise _GiveUp
    return None


__all__ = ["returned"]
