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
#: fields that hold no call, no statement and nothing that could: names, contexts, operators
_LEAF_FIELDS = {"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "level", "kind", "type_comment"}
#: per node type, the fields that may hold a call or a statement
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: ()}


def _children(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that may hold a call or a statement, in the order of
    ``ast.iter_child_nodes`` (which also yields contexts, operators and import aliases)."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        leaves = _LEAF_FIELDS | ({"names"} if kind in (ast.Import, ast.ImportFrom) else set())
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in leaves)
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
        #: the children of the nodes below statements
        self._kids: dict[int, list[ast.AST]] = {}
        self._walk(tree)

    def _walk(self, tree: ast.AST) -> None:
        # depth-first, keeping the path from the root: a call marks the nodes above it as
        # holding one, up to its statement or a lambda. ast.walk's breadth-first order is
        # each depth's nodes in depth-first order: found by a stable sort on the depth.
        found: list[tuple[int, int, ast.AST]] = []  # (depth, visit number, node)
        holds, roots, kids_of = self._holds_call, self._roots, self._kids
        path: list[ast.AST] = []
        stack: list[tuple[ast.AST, int]] = [(tree, 0)]
        while stack:
            node, depth = stack.pop()
            del path[depth:]
            path.append(node)
            if isinstance(node, ast.expr):
                if depth and not isinstance(path[depth - 1], ast.expr):
                    roots.add(id(node))
                if isinstance(node, ast.Call):
                    found.append((depth, len(found), node))
                    level = depth
                    while level >= 0:
                        above = path[level]
                        if isinstance(above, (ast.stmt, ast.Lambda)) or id(above) in holds:
                            break
                        holds.add(id(above))
                        level -= 1
            elif isinstance(node, _BINDS):
                found.append((depth, len(found), node))
            kids = _children(node)
            if kids:
                if not isinstance(node, ast.stmt):
                    kids_of[id(node)] = kids
                stack.extend((kid, depth + 1) for kid in reversed(kids))
        found.sort(key=lambda entry: (entry[0], entry[1]))
        for _, _, node in found:
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
            kids = self._kids.get(id(node), ())
            stack.extend((kid, False) for kid in reversed(kids) if id(kid) in holds)


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
