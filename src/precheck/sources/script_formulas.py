"""A value a launched script computes from its own options, worked out once a launch gives them.

The script's code turns options into settings with expressions, not only by passing them on:

    load_in_4bit=training_args.load_in_kbits == 4          # Chinese-LLaMA-Alpaca-2
    compute_dtype = (torch.float16 if args.fp16 else (torch.bfloat16 if args.bf16 else torch.float32))  # qlora
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]
    compute_dtype = getattr(torch, args.bnb_4bit_compute_dtype)

A :class:`Formula` keeps such an expression when everything it reads is an option of the
script (``args.x``; a parameter that holds one), a literal, or a torch dtype, through
comparisons, ``not``/``and``/``or``, ``x if c else y``, a dict literal's lookup,
``getattr(torch, ...)`` and ``str.lower()``. :func:`settle` evaluates it with the launch's
values (its flags, else the options' defaults) by the same evaluator as a script read on its
own (:mod:`.python_values`), and says which flag set an option it read and which lines of
the expression decided the value (the test and the branch taken of each choice). Anything
else it reads (a call, a runtime value) leaves the expression unknown, as before.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .python_values import Dtype, Evaluator, Names, Runtime, Source, Unknown, truth

#: the node types a formula may hold besides option reads (operators and contexts included)
_ALLOWED = (
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.IfExp,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.Subscript,
    ast.expr_context,
    ast.boolop,
    ast.cmpop,
    ast.unaryop,
)
#: calls a formula may make: ``getattr(torch, name)``, and these methods of a string
_METHODS = frozenset({"lower", "upper", "strip"})


@dataclass(frozen=True, slots=True, eq=False)
class Formula:
    """An expression of the script's options (see the module's docstring)."""

    expr: ast.expr
    #: the options it reads, each with the names it is read through: (object, option) for
    #: ``args.bits`` ("args", "bits"); (None, option) for a parameter holding the option
    reads: tuple[tuple[str | None, str], ...]
    #: what the module's names refer to (``torch``)
    names: Names

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(option for _, option in self.reads))


def formula(expr: ast.expr, option_of: Callable[[ast.expr], str | None], tree: ast.Module) -> Formula | None:
    """``expr`` as a :class:`Formula`, or None when it reads anything but options, literals
    and torch dtypes (or no option at all)."""
    names = _names(tree)
    reads: list[tuple[str | None, str]] = []
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Attribute, ast.Name)):
            option = option_of(node)  # type: ignore[arg-type]
            if option is not None:
                owner = node.value.id if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) else None
                reads.append((owner, option))
                continue
            if isinstance(node, ast.Attribute) and _dtype(node, names):
                continue
            if isinstance(node, ast.Name) and names.qualname(node) == "torch":
                continue  # (getattr's first argument)
            return None
        if isinstance(node, ast.Call):
            func = node.func
            if names.qualname(func) == "getattr" and len(node.args) == 2 and not node.keywords:
                stack.extend(node.args)
                continue
            if isinstance(func, ast.Attribute) and func.attr in _METHODS and not node.args and not node.keywords:
                stack.append(func.value)
                continue
            return None
        if not isinstance(node, _ALLOWED):
            return None
        stack.extend(ast.iter_child_nodes(node))
    if not reads:
        return None
    return Formula(expr, tuple(reads), names)


def _dtype(node: ast.Attribute, names: Names) -> bool:
    qualname = names.qualname(node) or ""
    return qualname.startswith("torch.") and "." not in qualname[len("torch.") :]


_NAMES: weakref.WeakKeyDictionary[ast.Module, Names] = weakref.WeakKeyDictionary()


def _names(tree: ast.Module) -> Names:
    names = _NAMES.get(tree)
    if names is None:
        names = _NAMES[tree] = Names.of(tree)
    return names


class _Unparsed(Source):
    """The text of a node, unparsed (the module's own text is not kept with its tree)."""

    def __init__(self) -> None:
        super().__init__("")

    def segment(self, node: ast.AST) -> str:
        try:
            return ast.unparse(node)
        except (ValueError, RecursionError):
            return "..."


@dataclass(frozen=True, slots=True)
class Settled:
    """A formula's value for one launch, and the lines of the expression that decided it."""

    value: Any
    lines: tuple[int, ...]


def settle(found: Formula, values: dict[str, Any]) -> Settled | Unknown:
    """The formula's value with each option's value (``values``: option → value); Unknown
    where one is not known or the expression cannot be computed."""
    env: dict[str, Any] = {}
    for owner, option in found.reads:
        if option not in values:
            return Unknown(f"`{option}` is not known before the run")
        if owner is None:
            env[option] = values[option]
        else:
            namespace = env.setdefault(owner, {})
            if not isinstance(namespace, dict):
                return Unknown(f"`{owner}` is read both as an option and as an object")
            namespace[option] = values[option]
    evaluate = Evaluator(env, found.names, Runtime(None), _not_known, _Unparsed())
    value = evaluate(found.expr)
    if isinstance(value, Unknown):
        return value
    if not (value is None or isinstance(value, (bool, int, float, str, Dtype))):
        return Unknown(f"`{ast.unparse(found.expr)}` is not a value a setting holds")
    return Settled(value.name if isinstance(value, Dtype) else value, _choices(found.expr, evaluate))


def _not_known(call: ast.Call) -> Unknown:
    return Unknown(f"`{ast.unparse(call.func)}(...)` is known only when the script runs")


def _choices(expr: ast.expr, evaluate: Evaluator) -> tuple[int, ...]:
    """The lines of the choices (``a if test else b``) that decided the value: each test's,
    and the branch's taken, through nested choices."""
    lines: list[int] = []
    while type(expr) is ast.IfExp:
        test = truth(evaluate(expr.test))
        if test is None:
            break
        lines.append(expr.test.lineno)
        expr = expr.body if test else expr.orelse
        lines.append(expr.lineno)
    return tuple(dict.fromkeys(lines))


__all__ = ["Formula", "Settled", "formula", "settle"]
