"""Shell arithmetic ``$(( ... ))`` on the integers a script sets, never by running anything.

bash "ARITHMETIC EVALUATION": names (with or without ``$``) are variables whose values are
evaluated as arithmetic themselves; ``/`` and ``%`` truncate toward zero as in C; a number
with a leading ``0`` is octal and ``0x`` hexadecimal. precheck evaluates ``+ - * / % **``,
unary signs and parentheses over decimal numbers and variables the script set to one;
anything else (an unset variable, ``$1``, a comparison, an assignment inside) gives None, and
the value stays unknown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

#: a longer expression is not something a launch script computes a device count with
MAX_LENGTH = 200
_NAME = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$?([A-Za-z_][A-Za-z0-9_]*)")
_LIMIT = 2**63


def evaluate(expression: str, lookup: Callable[[str], str | None], depth: int = 0) -> int | None:
    """The value of ``expression`` (the text between ``$((`` and ``))``), or None if unknown."""
    if len(expression) > MAX_LENGTH or depth > 8:
        return None
    unknown = False

    def substitute(found: re.Match[str]) -> str:
        nonlocal unknown
        name = found.group(1) or found.group(2)
        text = lookup(name)
        value = evaluate(text, lookup, depth + 1) if text is not None and text.strip() else None
        if value is None:
            unknown = True
            return "0"
        return f"({value})"

    text = _NAME.sub(substitute, expression)
    if unknown or "$" in text or re.search(r"\b0\d", text) or re.search(r"[<>=!&|^~?:,]", text):
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return _value(tree.body)


def _value(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _value(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if not isinstance(node, ast.BinOp):
        return None
    left, right = _value(node.left), _value(node.right)
    if left is None or right is None:
        return None
    result: int | None
    if isinstance(node.op, ast.Add):
        result = left + right
    elif isinstance(node.op, ast.Sub):
        result = left - right
    elif isinstance(node.op, ast.Mult):
        result = left * right
    elif isinstance(node.op, (ast.Div, ast.Mod)) and right:
        quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)  # C: toward zero
        result = left - quotient * right if isinstance(node.op, ast.Mod) else quotient
    elif isinstance(node.op, ast.Pow) and 0 <= right <= 64 and abs(left) < 2**16:
        result = left**right
    else:
        return None
    return result if -_LIMIT <= result < _LIMIT else None
