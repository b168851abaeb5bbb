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
#: fields that hold plain values (a string, a number, a list of names), never nodes
_SCALAR_FIELDS = {"conversion", "is_async", "simple", "tag", "lineno", "names", "rest", "asname"}
#: nodes that hold nothing: the walk does not visit them (an expression that is one has no call)
_LEAVES = {ast.Constant, ast.Name}
#: per node type, the fields that may hold a call or a statement
_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: (), ast.MatchSingleton: ()}


def _fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that may hold a call or a statement (each holds a node, a
    list of nodes, or None), in order; names, contexts, operators and import aliases are left out."""
    fields = _FIELDS.get(kind)
    if fields is None:
        leaves = _LEAF_FIELDS | ({"names"} if kind in (ast.Import, ast.ImportFrom) else set())
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in leaves and f not in _SCALAR_FIELDS)
    return fields


def _children(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that may hold a call or a statement, in the order of
    ``ast.iter_child_nodes`` (which also yields contexts, operators and import aliases)."""
    out: list[ast.AST] = []
    for name in _fields(type(node)):
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
        expr, call, stmt, binds, stops = ast.expr, ast.Call, ast.stmt, _BINDS, (ast.stmt, ast.Lambda)
        fields_of, leaves = _FIELDS, _LEAVES
        path: list[ast.AST] = []
        stack: list[tuple[ast.AST, int]] = [(tree, 0)]
        pop, push = stack.pop, stack.append
        while stack:
            node, depth = pop()
            del path[depth:]
            path.append(node)
            if isinstance(node, expr):
                if depth and not isinstance(path[depth - 1], expr):
                    roots.add(id(node))
                if isinstance(node, call):
                    found.append((depth, len(found), node))
                    level = depth
                    while level >= 0:
                        above = path[level]
                        if isinstance(above, stops) or id(above) in holds:
                            break
                        holds.add(id(above))
                        level -= 1
            elif isinstance(node, binds):
                found.append((depth, len(found), node))
            fields = fields_of.get(type(node))
            if fields is None:
                fields = _fields(type(node))
            if not fields:
                continue
            kids: list[ast.AST] = []
            for name in fields:
                value = getattr(node, name, None)
                if isinstance(value, list):
                    kids.extend(item for item in value if isinstance(item, ast.AST) and type(item) not in leaves)
                elif value is not None and type(value) not in leaves:
                    kids.append(value)
            if kids:
                if not isinstance(node, stmt):
                    kids_of[id(node)] = kids
                for kid in reversed(kids):
                    push((kid, depth + 1))
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
