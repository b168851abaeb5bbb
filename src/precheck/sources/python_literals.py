"""Small readers of Python expressions as written (``ast``, never run): a callee's last
name, an expression's text, a literal, a dataclass field's default, an annotation's type
name. Shared by :mod:`.script_schema` (a repository's script) and :mod:`.release_schema`
(a framework's released code)."""

from __future__ import annotations

import ast
from typing import Any


class Missing:
    """No default: the option is required, or its default is computed at run time."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = Missing()


def _callee(expr: ast.expr) -> str | None:
    """The last name of a callee (``transformers.HfArgumentParser`` → ``HfArgumentParser``)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Subscript):  # Generic[T]
        return _callee(expr.value)
    return None


def _unparsed(expr: ast.expr) -> str:
    """``ast.unparse(expr)``, written directly for a name and a name's attribute (``bool``,
    ``argparse.BooleanOptionalAction``: most annotations and argparse types)."""
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name:
        return f"{expr.value.id}.{expr.attr}"
    return ast.unparse(expr)


def _dotted(expr: ast.expr) -> str:
    try:
        return _unparsed(expr)
    except (ValueError, RecursionError):
        return ""


def _tuple_names(nodes: list[ast.AST]) -> dict[str, ast.expr]:
    """``parser_classes = (A, B)`` assignments, for ``HfArgumentParser(parser_classes)``."""
    out: dict[str, ast.expr] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value
    return out


def _field_default(value: ast.expr | None) -> Any:
    if value is None:
        return MISSING
    if isinstance(value, ast.Call) and _callee(value.func) == "field":
        for keyword in value.keywords:
            if keyword.arg == "default":
                return _literal(keyword.value)
        return MISSING  # default_factory, or required
    return _literal(value)


def _literal(expr: ast.expr) -> Any:
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return MISSING


def _true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True


def _type_name(expr: ast.expr) -> str:
    """``str``, ``int``, ``float``, ``bool`` (also inside ``Optional[...]``), else "other"."""
    return _type_name_text(_dotted(expr))


def _type_name_text(written: str) -> str:
    """:func:`_type_name` of the expression written ``written``."""
    text = written.replace(" ", "").strip("'\"")
    for prefix in ("typing.Optional[", "Optional["):
        if text.startswith(prefix) and text.endswith("]"):
            text = text[len(prefix) : -1]
    text = text.removesuffix("|None").removeprefix("None|")
    for prefix in ("typing.Literal[", "Literal["):
        if text.startswith(prefix) and text.endswith("]"):  # Literal["bnb.nf4", "bnb.fp4"]: strings alone
            try:
                items = ast.literal_eval(f"({text[len(prefix) : -1]},)")
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return "other"
            return "str" if all(isinstance(item, str) for item in items) else "other"
    return text if text in ("str", "int", "float", "bool") else "other"


def _is_bool_text(written: str) -> bool:
    """The annotation written ``written`` is ``bool``, ``Optional[bool]``, ``bool | None``, ``"bool"``."""
    text = written.replace(" ", "")
    return text.strip("'\"") in ("bool", "Optional[bool]", "bool|None", "None|bool", "typing.Optional[bool]")
