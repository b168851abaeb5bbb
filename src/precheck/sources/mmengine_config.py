"""An mmengine Python config (``model = dict(type=..., ...)``, ``optim_wrapper = dict(...)``),
evaluated statically into a positioned mapping, as ``mmengine.Config.fromfile`` would build it.

mmengine (``mmengine/config/config.py``) executes the file and keeps its module-level names:
a config is a plain Python module whose top-level assignments are the settings, each a
literal or a ``dict(...)`` whose ``type=`` names the class or function the runner builds.
This reader never runs it. Of each top-level assignment ``name = expr`` it keeps:

- literals (numbers, strings, ``True``/``None``, lists, tuples, ``{...}``), ``dict(k=v, ...)``
  (keyword by keyword, each value with its own position);
- a name assigned earlier at the top level: its value, positioned where that name is assigned
  (``lr = 2e-4`` ... ``lr=lr``: the fix is made where the value is written);
- any other name or attribute as its dotted spelling (``type=AmpOptimWrapper``,
  ``torch_dtype=torch.float16``, ``type=AutoModelForCausalLM.from_pretrained``);
- anything else (an arithmetic expression, a conditional, a call other than ``dict``) as
  ``None``, noted as not followed where a key holds it.

A module counts as such a config when its top level assigns ``model = dict(...)`` and one of
the runner's sections (``optim_wrapper``, ``train_cfg``, ``train_dataloader``), and defines no
function or class: a training script is read by :mod:`.python_source` instead.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .nodes import Document, Node
from .parsed import parse as parse_once

#: the runner's sections, one of which a training config assigns beside ``model``
SECTIONS = ("optim_wrapper", "train_cfg", "train_dataloader")
#: the most top-level assignments read (a generated file past it is not a hand-kept config)
MAX_ASSIGNMENTS = 2_000


#: a cheap look at the text before parsing: a top-level ``model = dict(``
_MODEL = re.compile(r"^model\s*=\s*dict\(", re.MULTILINE)


def config_document(path: str, text: str) -> Document | None:
    """The settings of ``text`` when it is an mmengine training config, else None."""
    if _MODEL.search(text) is None or not any(s in text for s in SECTIONS):
        return None
    code = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        tree = parse_once(code, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the script reader has reported it
    if not is_config(tree):
        return None
    try:
        return read_config(path, text, tree)
    except RecursionError:  # dict(a=dict(a=...)) nested past the stack: no config a person keeps
        return None


def is_config(tree: ast.Module) -> bool:
    """The module looks like an mmengine training config (see the module's docstring)."""
    names: set[str] = set()
    model = False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            names.add(name)
            if name == "model" and _is_dict_call(node.value):
                model = True
    return model and any(s in names for s in SECTIONS)


def _is_dict_call(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict"


def read_config(path: str, text: str, tree: ast.Module) -> Document:
    """The config's settings as a document (format ``python``)."""
    reader = _Reader()
    root: dict[str, Node] = {}
    for node in tree.body[:MAX_ASSIGNMENTS]:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                reader.imports(node)
            continue
        target = node.targets[0]
        value = reader.node(node.value, target.id, target.lineno, target.col_offset + 1)
        reader.names[target.id] = value
        root[target.id] = value
    document = Document(path, "python", Node(root, 1, 1), text)
    return document


class _Reader:
    def __init__(self) -> None:
        #: top-level names assigned so far → their nodes
        self.names: dict[str, Node] = {}
        #: imported names → the dotted path they stand for
        self.imported: dict[str, str] = {}

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                self.imported[alias.asname or alias.name] = f"{node.module or ''}.{alias.name}".lstrip(".")
        else:
            for alias in node.names:
                self.imported[alias.asname or alias.name.split(".")[0]] = alias.name

    def node(self, expr: ast.expr, key: str | None, key_line: int | None, key_column: int | None) -> Node:
        if isinstance(expr, ast.Name) and expr.id in self.names:
            return self.names[expr.id]  # `lr=lr`: the value, where it is written (the top-level name)
        line, column = expr.lineno, expr.col_offset + 1
        value, raw = self.value(expr)
        return Node(value, line, column, key, key_line, key_column, raw=raw)

    def value(self, expr: ast.expr) -> tuple[Any, str | None]:
        """(the value, the scalar as written) of ``expr``."""
        if isinstance(expr, ast.Constant):
            return expr.value, str(expr.value)
        if _is_dict_call(expr):
            assert isinstance(expr, ast.Call)
            mapping: dict[str, Node] = {}
            for keyword in expr.keywords:
                if keyword.arg is None:  # dict(**base, ...): the base's keys first
                    base = self.value(keyword.value)[0]
                    if isinstance(base, dict):
                        mapping.update(base)
                    continue
                mapping[keyword.arg] = self.node(keyword.value, keyword.arg, keyword.lineno, keyword.col_offset + 1)
            return mapping, None
        if isinstance(expr, ast.Dict):
            out: dict[str, Node] = {}
            for k, v in zip(expr.keys, expr.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out[k.value] = self.node(v, k.value, k.lineno, k.col_offset + 1)
            return out, None
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [self.node(e, None, None, None) for e in expr.elts], None
        if isinstance(expr, ast.Name):
            if expr.id in self.names:
                found = self.names[expr.id]
                return found.value, found.raw
            return expr.id, expr.id
        if isinstance(expr, ast.Attribute):
            text = _dotted(expr)
            return (text, text) if text is not None else (None, None)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
            value = expr.operand.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value, f"-{value}"
        return None, None


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base is not None else None
    return None


__all__ = ["config_document", "is_config", "read_config"]
