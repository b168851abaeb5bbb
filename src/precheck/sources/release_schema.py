"""The option schema of a framework's released code, read with ``ast`` (never imported or run).

Frameworks whose training code is installed, not in the user's repository (a console command
such as ``PROGRAM finetune ...``, or a YAML that a package's ``TrainConfig`` dataclass reads),
declare their options in code precheck can read statically. This module reads a release's
source tree (an unpacked wheel) and returns, as plain JSON-able data:

- **entry points**: a jsonargparse ``CLI({"name": function, ...})`` (or ``CLI(function)``) in
  a ``__main__`` module, each command's function followed through ``from X import f as g``
  to its definition; or a config dataclass (``@dataclass class TrainConfig``) that a YAML is
  parsed into;
- **options**: each parameter or field, its annotation as written, its default (a literal;
  otherwise the default's source text, or ``required``) and its ``choices`` (the values of a
  ``Literal[...]`` annotation, also inside ``X | None`` / ``Optional[...]``; none when the
  union admits other types);
- **flows** of the options asked for (the precision switches): which calls receive the value,
  directly or through a name assigned from it (``dtype = {...}[precision]`` then
  ``Plugin(mode, dtype)``), the call that fills an unset value (``x = x or default()``), and
  the ``raise`` statements a test of the value guards (``if "mixed" in precision: raise
  ValueError(...)``).

It is the maintainer's extraction (``scripts/extract_schema.py`` downloads the wheel and writes
the result under ``precheck/data/schemas/``); the check path reads only the written data.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .python_literals import MISSING as _MISSING
from .python_literals import _callee, _dotted, _field_default, _literal, _type_name_text

#: calls that only log, copy or inspect a value: not where it flows
_NOT_FLOWS = frozenset(
    {
        *("print", "pprint", "isinstance", "len", "str", "int", "float", "bool", "repr", "locals", "type"),
        *("getattr", "hasattr", "setattr", "deepcopy", "copy", "info", "debug", "warning", "warn", "error"),
        *("update", "get", "append", "format", "startswith", "endswith", "join", "dict", "list", "tuple", "set"),
        *("asdict", "replace", "lower", "upper", "split", "strip", "items", "keys", "values", "pop"),
    }
)


def _json(value: Any) -> Any:
    """``value`` as JSON holds it (tuples as lists), or :data:`_MISSING` when it cannot."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        items = [_json(v) for v in value]
        return _MISSING if any(i is _MISSING for i in items) else items
    if isinstance(value, dict):
        pairs = {str(k): _json(v) for k, v in value.items()}
        return _MISSING if any(v is _MISSING for v in pairs.values()) else pairs
    return _MISSING


def _union_members(annotation: ast.expr) -> list[ast.expr]:
    """``A | B | None`` and ``Optional[A]``/``Union[A, B]`` as their members."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return [*_union_members(annotation.left), *_union_members(annotation.right)]
    if isinstance(annotation, ast.Subscript) and _callee(annotation.value) in ("Optional", "Union"):
        inner = annotation.slice
        members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        out = [m for member in members for m in _union_members(member)]
        return [*out, ast.Constant(None)] if _callee(annotation.value) == "Optional" else out
    return [annotation]


def choices_of(annotation: ast.expr | None, aliases: dict[str, ast.expr] | None = None) -> list[Any] | None:
    """The values a ``Literal[...]`` annotation admits (with ``None`` where the union has it);
    None when the annotation admits other values too (``bool | Literal["auto"] | Path``).

    ``aliases``: module-level ``Name = Literal[...]`` assignments, followed once."""
    if annotation is None:
        return None
    values: list[Any] = []
    literal = False
    for member in _union_members(annotation):
        if isinstance(member, ast.Name) and aliases and member.id in aliases:
            member = aliases[member.id]
        if isinstance(member, ast.Constant) and member.value is None:
            values.append(None)
        elif isinstance(member, ast.Subscript) and _callee(member.value) == "Literal":
            inner = member.slice
            for element in inner.elts if isinstance(inner, ast.Tuple) else [inner]:
                value = _literal(element)
                if value is _MISSING:
                    return None
                values.append(value)
            literal = True
        else:
            return None
    return values if literal else None


def _option(
    name: str, annotation: ast.expr | None, default: ast.expr | None, line: int, aliases: dict[str, ast.expr]
) -> dict[str, Any]:
    written = _dotted(annotation) if annotation is not None else ""
    out: dict[str, Any] = {"type": written or None, "line": line}
    kind = _type_name_text(written) if written else "other"
    if kind != "other":
        out["converts_to"] = kind
    if default is None:
        out["required"] = True
    else:
        value = _field_default(default)
        value = _json(value) if value is not _MISSING else _MISSING
        if value is _MISSING:
            out["default_source"] = _dotted(default)
        else:
            out["default"] = value
    choices = choices_of(annotation, aliases)
    if choices is not None:
        out["choices"] = choices
    return out


def literal_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``Name = Literal[...]`` (and ``Name: TypeAlias = ...``) assignments."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        if isinstance(value, ast.Subscript) and _callee(value.value) == "Literal":
            out[target] = value
    return out


def function_options(function: ast.FunctionDef, aliases: dict[str, ast.expr] | None = None) -> dict[str, Any]:
    """A function's parameters as jsonargparse reads them: name → type, default, choices."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs: list[tuple[ast.arg, ast.expr | None]] = [*zip(positional, defaults, strict=True)]
    pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
    return {
        argument.arg: _option(argument.arg, argument.annotation, default, argument.lineno, aliases or {})
        for argument, default in pairs
        if argument.arg not in ("self", "cls")
    }


def class_options(definition: ast.ClassDef, aliases: dict[str, ast.expr] | None = None) -> dict[str, Any]:
    """A dataclass's fields: name → type, default, choices (``ClassVar`` left out)."""
    out: dict[str, Any] = {}
    for statement in definition.body:
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        if "ClassVar" in _dotted(statement.annotation):
            continue
        value = statement.value
        if isinstance(value, ast.Name) and value.id == "MISSING":
            value = None  # omegaconf's MISSING: a mandatory key
        out[statement.target.id] = _option(
            statement.target.id, statement.annotation, value, statement.lineno, aliases or {}
        )
    return out


# -- flows -----------------------------------------------------------------------------------------


def _mentions(expr: ast.AST, names: set[str], attributes: set[str]) -> bool:
    """``expr`` reads one of ``names`` (a local), or an attribute named one of ``attributes``."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr in attributes and isinstance(node.ctx, ast.Load):
            return True
    return False


def _carries(expr: ast.AST, names: set[str], attributes: set[str]) -> bool:
    """``expr``'s value is (or holds) the option's value: it reads it outside any call's
    arguments (``{...}[precision]``, ``{"fsdp": fsdp_config}``, ``cfg.fsdp_config``,
    ``precision or default()``). A call's result is a new object: the call is where the value
    flows, not a name for it."""
    queue: list[ast.AST] = [expr]
    for node in queue:
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr in attributes and isinstance(node.ctx, ast.Load):
            return True
        if not isinstance(node, ast.Call):
            queue.extend(ast.iter_child_nodes(node))
    return False


def _receiver(call: ast.Call) -> ast.expr | None:
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def flows(body: Iterable[ast.stmt], option: str, attribute: bool = False) -> dict[str, Any]:
    """Where ``option``'s value goes in ``body`` (a function's statements, or a module's).

    ``attribute``: the option is read as ``cfg.<option>`` (a config dataclass's field); else
    it is a local (a function's parameter)."""
    statements = list(body)
    names = set() if attribute else {option}
    attributes = {option} if attribute else set()
    filled_by: list[str] = []
    # names assigned from the value, in source order (one pass: assignments precede their uses)
    for node in _walk(statements):
        if isinstance(node, ast.Assign) and _carries(node.value, names, attributes):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    if target.id == option and isinstance(node.value, ast.BoolOp):
                        filled_by += [_dotted(v) for v in node.value.values if isinstance(v, ast.Call)]
                    names.add(target.id)
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
            and _carries(node.value, names, attributes)
        ):
            names.add(node.target.id)
    calls: set[str] = set()
    refusals: list[dict[str, Any]] = []
    for node in _walk(statements):
        if isinstance(node, ast.Call):
            callee = _dotted(node.func)
            last = _callee(node.func)
            receiver = _receiver(node)
            if last is None or last in _NOT_FLOWS:
                continue
            if receiver is not None and _mentions(receiver, names, attributes):
                continue  # a method of the value itself
            for index, argument in enumerate(node.args):
                if _mentions(argument, names, attributes):
                    calls.add(f"{callee}(#{index})")
            for keyword in node.keywords:
                if keyword.arg is not None and _mentions(keyword.value, names, attributes):
                    calls.add(f"{callee}({keyword.arg}=)")
        elif isinstance(node, ast.If) and _mentions(node.test, names, attributes):
            for statement in node.body:
                if isinstance(statement, ast.Raise) and statement.exc is not None:
                    refusals.append(
                        {"if": _dotted(node.test), "raises": _raised(statement.exc), "line": statement.lineno}
                    )
    out: dict[str, Any] = {"calls": sorted(calls)}
    if filled_by:
        out["unset_filled_by"] = filled_by
    if refusals:
        out["refusals"] = refusals
    return out


def _raised(exc: ast.expr) -> str:
    """``ValueError: message`` of a ``raise ValueError("message")`` (the message's literal parts)."""
    if isinstance(exc, ast.Call):
        name = _dotted(exc.func)
        parts: list[str] = []
        for argument in exc.args[:1]:
            for node in ast.walk(argument):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    parts.append(node.value)
        return f"{name}: {''.join(parts)}" if parts else name
    return _dotted(exc)


def _walk(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node under ``statements``, in source order (nested functions included)."""
    nodes: list[ast.AST] = []
    for statement in statements:
        nodes.extend(ast.walk(statement))
    nodes.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return iter(nodes)


# -- a release's entry points ----------------------------------------------------------------------


def module_path(root: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` under the unpacked release ``root``."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imported(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """``from X import f as g`` → ``{"g": ("X", "f")}`` (absolute imports)."""
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module, alias.name)
    return out


def cli_commands(root: Path, main_module: str) -> dict[str, tuple[str, str]]:
    """The commands of the jsonargparse ``CLI(...)`` call in ``main_module``: command →
    (module, function). ``CLI({"a": f, ...})`` (or a module-level dict name) gives one command
    per key; ``CLI(f)`` one command, named ``""``."""
    path = module_path(root, main_module)
    if path is None:
        raise FileNotFoundError(main_module)
    tree = _tree(path)
    imported = _imported(tree)
    dicts = {  # module-level, or local to the function that calls CLI (``parser_data = {...}`` in ``main``)
        t.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    commands: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _callee(node.func) == "CLI" and node.args):
            continue
        given = node.args[0]
        if isinstance(given, ast.Name) and given.id in dicts:
            given = dicts[given.id]
        if isinstance(given, ast.Dict):
            for key, value in zip(given.keys, given.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Name):
                    commands[key.value] = imported.get(value.id, (main_module, value.id))
        elif isinstance(given, ast.Name):
            commands[""] = imported.get(given.id, (main_module, given.id))
    return commands


def _aliases(root: Path, tree: ast.Module) -> dict[str, ast.expr]:
    """The ``Literal[...]`` aliases a module defines or imports from the release (``from
    pkg.types import LoggerChoice``)."""
    out = literal_aliases(tree)
    for name, (module, original) in _imported(tree).items():
        if name in out:
            continue
        path = module_path(root, module)
        if path is not None:
            found = literal_aliases(_tree(path)).get(original)
            if found is not None:
                out[name] = found
    return out


def _definition(tree: ast.Module, name: str) -> ast.FunctionDef | ast.ClassDef | None:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return node
    return None


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def extract_cli(
    root: Path, main_module: str, prefixes: Iterable[str], precision_options: Iterable[str]
) -> dict[str, Any]:
    """Each command of the CLI in ``main_module`` whose name starts with one of ``prefixes``
    (``finetune`` takes ``finetune_lora``...): its function, options and the flows of
    ``precision_options`` (those it has)."""
    found = cli_commands(root, main_module)
    wanted = list(precision_options)
    starts = tuple(prefixes)
    out: dict[str, Any] = {}
    for command in found:
        if not command.startswith(starts):
            continue
        module, name = found[command]
        path = module_path(root, module)
        if path is None:
            continue
        tree = _tree(path)
        function = _definition(tree, name)
        if not isinstance(function, ast.FunctionDef):
            continue
        options = function_options(function, _aliases(root, tree))
        out[command] = {
            "function": f"{module}:{name}",
            "file": _relative(path, root),
            "options": options,
            "flows": {o: flows(function.body, o) for o in wanted if o in options},
        }
    return out


def extract_config_class(
    root: Path, module: str, name: str, flow_modules: Iterable[str], precision_options: Iterable[str]
) -> dict[str, Any]:
    """A config dataclass ``module:name`` that a YAML is parsed into: its fields, and where the
    ``precision_options`` fields go in ``flow_modules`` (read as ``cfg.<field>``)."""
    path = module_path(root, module)
    if path is None:
        raise FileNotFoundError(module)
    tree = _tree(path)
    definition = _definition(tree, name)
    if not isinstance(definition, ast.ClassDef):
        raise LookupError(f"{module}:{name}")
    options = class_options(definition, _aliases(root, tree))
    flows_out: dict[str, Any] = {}
    for option in precision_options:
        if option not in options:
            continue
        merged: dict[str, Any] = {"calls": []}
        for flow_module in flow_modules:
            flow_path = module_path(root, flow_module)
            if flow_path is None:
                continue
            found = flows(_tree(flow_path).body, option, attribute=True)
            where = _relative(flow_path, root)
            merged["calls"] += [f"{where}: {call}" for call in found["calls"]]
            merged.setdefault("refusals", []).extend({**r, "file": where} for r in found.get("refusals", []))
        if not merged.get("refusals"):
            merged.pop("refusals", None)
        flows_out[option] = merged
    return {"class": f"{module}:{name}", "file": _relative(path, root), "options": options, "flows": flows_out}


def enum_values(root: Path, module: str, name: str) -> list[Any]:
    """The values of an enum class ``module:name`` (``FP32 = 'fp32'`` members)."""
    path = module_path(root, module)
    definition = _definition(_tree(path), name) if path is not None else None
    if not isinstance(definition, ast.ClassDef):
        raise LookupError(f"{module}:{name}")
    return [
        node.value.value
        for node in definition.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    ]


def compared_values(root: Path, module: str, function: str, argument: str) -> list[Any]:
    """The constants ``function``'s ``argument`` is compared with (``if x == 'PURE':``), in
    source order: the values the function tells apart."""
    path = module_path(root, module)
    definition = _definition(_tree(path), function) if path is not None else None
    if not isinstance(definition, ast.FunctionDef):
        raise LookupError(f"{module}:{function}")
    out: list[Any] = []
    for node in _walk(definition.body):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == argument:
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and right.value not in out:
                    out.append(right.value)
    return out


def extract(root: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """What ``spec`` asks of the unpacked release ``root`` (the ``spec`` block of a schema data
    file): ``cli`` (``{"module", "command_prefixes", "precision_options"}``), ``config_class``
    (``{"module", "class", "flow_modules", "precision_options"}``), ``enums`` (label →
    ``"module:Class"``) and ``compared`` (label → ``"module:function:argument"``)."""
    out: dict[str, Any] = {}
    cli = spec.get("cli")
    if cli is not None:
        out["entry_points"] = extract_cli(root, cli["module"], cli["command_prefixes"], cli["precision_options"])
    config = spec.get("config_class")
    if config is not None:
        out["config_class"] = extract_config_class(
            root, config["module"], config["class"], config["flow_modules"], config["precision_options"]
        )
    values: dict[str, Any] = {}
    for label, target in spec.get("enums", {}).items():
        module, _, name = target.partition(":")
        values[label] = {"from": target, "values": enum_values(root, module, name)}
    for label, target in spec.get("compared", {}).items():
        module, function, argument = target.split(":")
        values[label] = {"from": target, "values": compared_values(root, module, function, argument)}
    if values:
        out["values"] = values
    return out


__all__ = [
    "choices_of",
    "class_options",
    "cli_commands",
    "compared_values",
    "enum_values",
    "extract",
    "extract_cli",
    "extract_config_class",
    "flows",
    "function_options",
    "literal_aliases",
    "module_path",
]
