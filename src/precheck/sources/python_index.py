"""One pass over a Python module's tree, collecting what the readers look up in it.

The readers of :mod:`.python_calls` used to walk the whole tree once per question (the
imports and definitions, the classes, the ``.parameters()`` calls, the functions) and the
expression of every statement once more to find its calls: most of the time spent on a
real repository. :class:`ModuleIndex` visits every node once and keeps:

- the nodes that bind names (imports, function and class definitions), the functions,
  the classes and every call, each in the order :func:`ast.walk` yields them (breadth
  first), so that what is read from them comes out in the same order;
- which expressions hold a call, so that the calls of a statement's expression are found
  without visiting the parts that hold none (:meth:`ModuleIndex.calls_in`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_BINDS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: what a statement's expression does not look into (as :func:`_post_order` before)
_OPAQUE = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: per node type, the fields that may hold nodes (``ctx`` holds only Load/Store/Del)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` as a list, without the expression contexts."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f != "ctx")
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(item for item in value if isinstance(item, ast.AST))
    return out


class ModuleIndex:
    """What one walk over ``tree`` finds (see the module docstring)."""

    def __init__(self, tree: ast.AST):
        #: imports and definitions, in ``ast.walk`` order
        self.bindings: list[ast.stmt] = []
        #: functions (sync and async), classes and calls, each in ``ast.walk`` order
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.classes: list[ast.ClassDef] = []
        self.calls: list[ast.Call] = []
        #: ids of the nodes (below statements) whose expression holds a call outside a lambda
        self._holds_call: set[int] = set()
        #: ids of the nodes whose parent is a statement, or is not an expression: the roots
        #: a statement's expressions are read from
        self._roots: set[int] = set()
        self._walk(tree)

    def _walk(self, tree: ast.AST) -> None:
        # depth-first, so that each node can be told after its children whether it holds a
        # call; ast.walk's breadth-first order is each depth's nodes in depth-first order
        visited: list[tuple[int, int, ast.AST]] = []  # (depth, visit number, node)
        holds, roots = self._holds_call, self._roots
        stack: list[tuple[ast.AST, int, list[ast.AST] | None]] = [(tree, 0, None)]
        while stack:
            node, depth, kids = stack.pop()
            if kids is not None:  # after the children
                if not isinstance(node, ast.stmt) and (
                    isinstance(node, ast.Call)
                    or (not isinstance(node, ast.Lambda) and any(id(kid) in holds for kid in kids))
                ):
                    holds.add(id(node))
                if not isinstance(node, ast.expr):
                    roots.update(id(kid) for kid in kids if isinstance(kid, ast.expr))
                continue
            if isinstance(node, (*_BINDS, ast.Call)):
                visited.append((depth, len(visited), node))
            kids = _children(node)
            if kids:
                stack.append((node, depth, kids))
                stack.extend((kid, depth + 1, None) for kid in reversed(kids))
            elif isinstance(node, ast.Call):  # pragma: no cover - a call always has its callee
                holds.add(id(node))
        visited.sort(key=lambda entry: (entry[0], entry[1]))
        for _, _, node in visited:
            if isinstance(node, ast.Call):
                self.calls.append(node)
                continue
            assert isinstance(node, ast.stmt)
            self.bindings.append(node)
            if isinstance(node, _FUNCTIONS):
                self.functions.append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes.append(node)

    def calls_in(self, expr: ast.AST) -> Iterator[ast.Call]:
        """The calls inside ``expr``, innermost first (children before parents, as
        ``ast.iter_child_nodes`` orders them), not looking into lambdas."""
        if id(expr) not in self._roots:
            yield from (node for node in _post_order(expr) if isinstance(node, ast.Call))
            return
        holds = self._holds_call
        if id(expr) not in holds:
            return
        stack: list[tuple[ast.AST, bool]] = [(expr, False)]
        while stack:
            node, done = stack.pop()
            if done:
                if isinstance(node, ast.Call):
                    yield node
                continue
            stack.append((node, True))
            stack.extend((kid, False) for kid in reversed(_children(node)) if id(kid) in holds)


def _post_order(expr: ast.AST) -> list[ast.AST]:
    """The nodes of ``expr``, children before parents (iterative: expressions nest deeply)."""
    out: list[ast.AST] = []
    stack: list[tuple[ast.AST, bool]] = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        if isinstance(node, _OPAQUE):
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(ast.iter_child_nodes(node))))
    return out
