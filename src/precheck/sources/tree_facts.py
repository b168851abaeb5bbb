"""What the readers work out from a parsed module alone, worked out once per tree.

A launched script is read once per launch line that starts it, each time with that launch's
flags (:mod:`.python_source`, :mod:`.script_launch`), and the modules it imports are read
with every script that imports them; the tree of one text is parsed once (:mod:`.parsed`).
What does not depend on the flags (the calls of the module, its index of definitions, the
lines that name its functions...) is kept here with the tree, computed on the first ask:
:func:`remembered`. A tree is never changed by a reader, so what is worked out from it holds
as long as it lives; the memo goes with the tree (a weak reference: nothing here keeps a
tree alive). A value kept must not refer to the tree itself (its nodes are fine), or the
tree would never be freed.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from .python_index import walk

T = TypeVar("T")

_UNSET: Any = object()
_MEMOS: weakref.WeakKeyDictionary[ast.AST, dict[Hashable, Any]] = weakref.WeakKeyDictionary()


def remembered(tree: ast.AST, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, worked out once per ``tree`` and ``key``: ``key`` names what is computed
    and every input but the tree (a function's name, the text the tree was parsed from)."""
    memo = _MEMOS.get(tree)
    if memo is None:
        memo = _MEMOS[tree] = {}
    value = memo.get(key, _UNSET)
    if value is _UNSET:
        value = memo[key] = compute()
    return value  # type: ignore[no-any-return]


#: the nodes :func:`looked_up` lists
_LOOKED_UP = (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign)


def looked_up(tree: ast.AST) -> list[ast.AST]:
    """The calls, function definitions and assignments under ``tree``, in :func:`ast.walk`'s
    order: what the readers look for in a whole module (one walk per tree)."""
    kinds = _LOOKED_UP
    return remembered(tree, "looked-up", lambda: [n for n in walk(tree) if isinstance(n, kinds)])


def calls(tree: ast.AST) -> list[ast.Call]:
    """Every call under ``tree``, in :func:`ast.walk`'s order."""
    return remembered(tree, "calls", lambda: [n for n in looked_up(tree) if type(n) is ast.Call])  # type: ignore[misc]


__all__ = ["calls", "looked_up", "remembered"]
