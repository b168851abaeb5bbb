"""What a launched script does with its own options, read with ``ast``.

A script's flag means what the script's code makes of it. peft's ``examples/sft/utils.py``:

    if args.use_flash_attn:
        if torch.xpu.is_available(): model_kwargs["attn_implementation"] = "eager"
        else: model_kwargs["attn_implementation"] = "flash_attention_2"
    bnb_config = BitsAndBytesConfig(load_in_4bit=args.use_4bit_quantization, ...)
    if args.use_peft_lora and not args.use_unsloth: peft_config = LoraConfig(...)

so ``--use_flash_attn True`` is ``attn_implementation: flash_attention_2``,
``--use_4bit_quantization True`` is ``load_in_4bit: true`` and ``--use_peft_lora True`` a
LoRA run. Each :class:`Effect` says which run key an option sets, to what, and under which
conditions on other options. Only conditions on the script's own options are followed;
a branch on a runtime value (``torch.cuda.get_device_capability()``, an environment
variable) makes the effect unknown, except the checks for other accelerators (``xpu``,
``npu``, ``mps``), which are false on the NVIDIA GPU precheck checks for.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .python_calls import FLASH_PATCH, flash_patch
from .python_index import walk
from .script_formulas import formula
from .script_schema import statements

#: run keys an option can reach, and the callees whose keyword sets them (None: any call)
_KEYWORDS: dict[str, tuple[str, ...] | None] = {
    "torch_dtype": ("from_pretrained", "from_config", "FastLanguageModel", "dict"),
    "dtype": ("from_pretrained", "from_config", "dict"),
    "attn_implementation": None,
    "use_flash_attention_2": None,
    "load_in_4bit": ("BitsAndBytesConfig", "from_pretrained"),
    "load_in_8bit": ("BitsAndBytesConfig", "from_pretrained"),
    "bnb_4bit_compute_dtype": ("BitsAndBytesConfig",),
    "fp16": None,
    "bf16": None,
    "tf32": None,
    "mixed_precision": ("Accelerator",),
}
#: keys a script sets in a ``dict`` it passes on (``model_kwargs["attn_implementation"] = ...``)
_DICT_KEYS = ("torch_dtype", "dtype", "attn_implementation", "load_in_4bit", "load_in_8bit")
#: calls that make a run a LoRA / adapter run
_PEFT_CALLS = frozenset({"LoraConfig", "get_peft_model", "AdaLoraConfig", "prepare_model_for_kbit_training"})
#: words of a test for another accelerator: false on an NVIDIA GPU
_OTHER_DEVICES = ("xpu", "npu", "mps", "hpu", "mlu")


class Same:
    """The option's own value (``load_in_4bit=args.use_4bit_quantization``)."""

    def __repr__(self) -> str:
        return "SAME"


SAME = Same()


class Computed:
    """A value the script computes at run time: set, but not known."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Computed()

#: a condition on an option: (name, expected) with expected True / False (truthiness) or
#: ("==", value) / ("!=", value)
Condition = tuple[str, Any]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Effect:
    """``key`` becomes ``value`` (or the option ``source``'s own value) when every condition holds."""

    key: str
    value: Any
    when: tuple[Condition, ...]
    source: str | None
    path: Path
    line: int
    column: int
    #: the FlashAttention monkey patch (its callee) that gives this effect: the model's
    #: attention is then assumed, not read (:data:`.nodes.ATTENTION_PATCH`)
    patch: str | None = None
    #: the other lines of ``path`` the value flows through (the assignment of a name it
    #: passes, the test and the branch of a choice), cited with it
    through: tuple[int, ...] = ()


class _Opaque(Exception):
    """A test precheck cannot decide statically."""


def effects(
    modules: dict[Path, ast.Module], options: set[str], commands: Mapping[str, str] | None = None
) -> list[Effect]:
    """Every effect the modules give the ``options``; ``commands``: the functions whose
    parameters are the options (a ``click`` command, ``fire.Fire``'s function) → their parser."""
    out: list[Effect] = []
    carried = _carried(modules, options, commands) if commands else {}
    for path, tree in modules.items():
        sources = _sources(tree)
        if sources:
            _Walker(path, options, out, sources, carried, tree).body(tree.body, ())
    return out


def _carried(
    modules: dict[Path, ast.Module], options: set[str], commands: Mapping[str, str]
) -> dict[str, frozenset[str]]:
    """Module-level function → its parameters that hold the option of the same name.

    A command's parameters are its options (click calls it with every option as a keyword;
    fire with its flags). Another function's parameter holds an option when every call of
    it in the modules passes that option on: ``train(bf16=bf16)``, ``train(bf16)`` in its
    place, or ``train(**kwargs)`` from a click command's ``**kwargs`` (dolly's ``main(**kwargs):
    train(**kwargs)``). A parameter the function assigns again holds its own value."""
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for tree in modules.values():
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, node)
    if not any(name in functions for name in commands):
        return {}

    def parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
        arguments = function.args
        return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]

    def own(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
        return (set(parameters(function)) & options) - set(_assignments(function))

    carried = {name: frozenset(own(functions[name])) for name in commands if name in functions}
    #: a click command's ``**kwargs``: every option not named among its parameters
    spread = {
        name: functions[name].args.kwarg.arg  # type: ignore[union-attr]
        for name, parser in commands.items()
        if parser == "click" and name in functions and functions[name].args.kwarg is not None
    }
    sites: dict[str, list[tuple[str | None, ast.Call]]] = {}
    for tree in modules.values():
        for node in tree.body:
            caller = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            for sub in walk(node):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in functions:
                    sites.setdefault(sub.func.id, []).append((caller, sub))

    def passed(call: ast.Call, caller: str | None, callee: list[str]) -> set[str]:
        held = carried.get(caller, frozenset()) if caller is not None else frozenset()
        out: set[str] = set()
        named: set[str] = set()
        everything = False
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                return out  # the places after it are not known
            if index < len(callee) and isinstance(argument, ast.Name) and argument.id == callee[index] in held:
                out.add(argument.id)
            if index < len(callee):
                named.add(callee[index])
        for keyword in call.keywords:
            if keyword.arg is None:
                value = keyword.value
                everything = everything or (
                    caller in spread and isinstance(value, ast.Name) and value.id == spread[caller]
                )
                continue
            named.add(keyword.arg)
            if isinstance(keyword.value, ast.Name) and keyword.value.id == keyword.arg and keyword.arg in held:
                out.add(keyword.arg)
        if everything:
            out |= options - named - set(parameters(functions[caller])) if caller is not None else set()
        return out

    for _ in range(len(functions)):
        changed = False
        for name, function in functions.items():
            if name in carried or name not in sites:
                continue
            wanted = own(function)
            callee = parameters(function)
            for caller, call in sites[name]:
                wanted &= passed(call, caller, callee)
                if not wanted:
                    break
            if wanted:
                carried[name] = frozenset(wanted)
                changed = True
        if not changed:
            break
    return {name: params for name, params in carried.items() if params}


def _sources(tree: ast.Module) -> set[int]:
    """The statements (by ``id``) whose reading can give an effect: a simple statement
    holding a PEFT call, a keyword of :data:`_KEYWORDS` or a dict key or subscript of
    :data:`_DICT_KEYS`, and the blocks around one. The walker skips the others (nothing
    in them gives an effect); found once per tree (a module several launched scripts
    import is walked once)."""
    known = _SOURCES.get(tree)
    if known is None:
        known = set()
        _block(tree.body, known)
        _SOURCES[tree] = known
    return known


def _block(statements: list[ast.stmt], found: set[int]) -> bool:
    hit = False
    for statement in statements:
        if _statement_sources(statement, found):
            hit = True
    return hit


def _statement_sources(node: ast.stmt, found: set[int]) -> bool:
    """Whether ``node`` holds the source of an effect, as :meth:`_Walker.statement` reads it
    (the blocks of a compound statement, the whole of a simple one); recorded in ``found``."""
    if isinstance(node, ast.ClassDef):
        return False
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        hit = _block(node.body, found)
    elif isinstance(node, ast.If):
        hit = _block(node.body, found) | _block(node.orelse, found)
    elif isinstance(node, _COMPOUND):
        hit = False
        for name in ("body", "orelse", "finalbody"):
            hit |= _block(getattr(node, name, []) or [], found)
        for handler in getattr(node, "handlers", []):
            hit |= _block(handler.body, found)
    else:
        hit = _holds_source(node)
    if hit:
        found.add(id(node))
    return hit


#: the statements the walker reads block by block
_COMPOUND = (ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Try)


def _holds_source(node: ast.AST) -> bool:
    """``any(_source_of_effect(sub) for sub in walk(node))``, stopping at the first source,
    without building the list (depth first: the order does not change ``any``)."""
    stack = [node]
    pop, push, extend, fields_of, tree_node = stack.pop, stack.append, stack.extend, _NODE_FIELDS, ast.AST
    looked_for, keywords, calls = _LOOKED_FOR, _KEYWORDS, _PEFT_CALLS
    call, attribute = ast.Call, ast.Attribute
    while stack:
        current = pop()
        kind = type(current)
        while kind is attribute:  # its one field that may hold a node
            current = current.value  # type: ignore[attr-defined]
            kind = type(current)
        if kind is call:  # the commonest looked for: _source_of_effect's test, its children pushed
            func = current.func  # type: ignore[attr-defined]
            callee = _callee(func)
            if callee in calls or (callee and "lash" in callee and FLASH_PATCH.match(callee)):
                return True
            for keyword in current.keywords:  # type: ignore[attr-defined]
                if keyword.arg in keywords:
                    return True
                push(keyword.value)
            extend(current.args)  # type: ignore[attr-defined]
            push(func)
            continue
        if kind in looked_for and _source_of_effect(current):
            return True
        names = fields_of.get(kind)
        if names is None:
            names = fields_of[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _NO_NODES)
        for name in names:
            value = getattr(current, name, None)
            if type(value) is list:
                extend(value)  # nodes; a `Dict`'s keys may hold None, `global`'s names are strings
            elif isinstance(value, tree_node):
                stack.append(value)
    return False


#: the nodes :func:`_source_of_effect` may say yes to
_LOOKED_FOR = frozenset({ast.Call, ast.Dict, ast.Subscript})
#: per node type: the fields that may hold nodes (for :func:`_holds_source`)
_NODE_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Name: ()}
#: fields that hold names, numbers, flags, contexts or operators: never a node looked for
_NO_NODES = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "level", "kind", "type_comment", "conversion"}
    | {"is_async", "simple", "lineno", "col_offset", "end_lineno", "end_col_offset"}
)


def _source_of_effect(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        callee = _callee(node.func) or ""
        return (
            callee in _PEFT_CALLS
            or any(k.arg in _KEYWORDS for k in node.keywords)
            or ("lash" in callee and FLASH_PATCH.match(callee) is not None)
        )
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value in _DICT_KEYS for k in node.keys)
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in _DICT_KEYS
    return False


_SOURCES: weakref.WeakKeyDictionary[ast.Module, set[int]] = weakref.WeakKeyDictionary()


class _Walker:
    def __init__(
        self,
        path: Path,
        options: set[str],
        out: list[Effect],
        sources: set[int],
        carried: dict[str, frozenset[str]] | None = None,
        tree: ast.Module | None = None,
    ):
        self.path = path
        #: the module read (its imports say what ``torch.float16`` in a formula is)
        self.tree = tree
        #: module-level function → its parameters that hold options (:func:`_carried`)
        self.carried = carried or {}
        #: those of the function being read
        self.params: frozenset[str] = frozenset()
        #: the statement being read is a FlashAttention monkey patch call (its call)
        self.patches: list[ast.expr] = []
        #: the statements that can give an effect (:func:`_sources`): the others are skipped
        self.sources = sources
        self.options = options
        self.out = out
        #: simple assignments in the current function: name → value
        self.names: dict[str, ast.expr | None] = {}
        #: the line of each assignment of :attr:`names`
        self.lines: dict[str, int] = {}
        #: the lines of the value being read that it flows through (:meth:`_through`)
        self.through: tuple[int, ...] = ()

    def body(self, statements: list[ast.stmt], when: tuple[Condition, ...] | None) -> None:
        for statement in statements:
            self.statement(statement, when)

    def statement(self, node: ast.stmt, when: tuple[Condition, ...] | None) -> None:
        if id(node) not in self.sources:
            return  # nothing in it gives an effect
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            saved, saved_params, saved_lines = self.names, self.params, self.lines
            self.names, self.lines = _assignments(node), _assignment_lines(node)
            self.params = self.carried.get(node.name, frozenset()) if not saved_params else frozenset()
            self.body(node.body, ())
            self.names, self.params, self.lines = saved, saved_params, saved_lines
            return
        if isinstance(node, ast.ClassDef):
            return
        if isinstance(node, ast.If):
            self._if(node, when)
            return
        if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                self.body(getattr(node, block, []) or [], when)
            for handler in getattr(node, "handlers", []):
                self.body(handler.body, None)  # an exception path: not the run's
            return
        if when is None:
            return
        self.patches = [node.value] if isinstance(node, ast.Expr) and flash_patch(node.value) else []
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and target.slice.value in _DICT_KEYS
                ):
                    self._value(str(target.slice.value), node.value, when, node)
        for sub in walk(node):
            if isinstance(sub, ast.Call):
                self._call(sub, when)
            elif isinstance(sub, ast.Dict):
                for key, value in zip(sub.keys, sub.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value in _DICT_KEYS:
                        self._value(str(key.value), value, when, key)

    def _if(self, node: ast.If, when: tuple[Condition, ...] | None) -> None:
        if when is None:
            return
        text = ast.unparse(node.test).lower()
        if any(word in text for word in _OTHER_DEVICES) and not self._mentions(node.test):
            self.body(node.orelse, when)  # torch.xpu.is_available(): false on an NVIDIA GPU
            return
        stops = bool(node.body) and isinstance(node.body[-1], ast.Raise)
        try:
            conditions = self._test(node.test)
        except _Opaque:
            self.body(node.body, None)
            # ``if <anything>: raise ...``: a run that trains took the other branch
            self.body(node.orelse, when if stops else None)
            return
        if stops:
            self.body(node.orelse, when)
            return
        self.body(node.body, when + conditions)
        if len(conditions) == 1:
            self.body(node.orelse, (*when, _negate(conditions[0])))
        else:
            self.body(node.orelse, None)

    def _test(self, test: ast.expr) -> tuple[Condition, ...]:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return tuple(c for value in test.values for c in self._test(value))
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._test(test.operand)
            if len(inner) != 1:
                raise _Opaque
            return (_negate(inner[0]),)
        name = self._option(test)
        if name is not None:
            return ((name, True),)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            name = self._option(test.left)
            right = test.comparators[0]
            if name is not None and isinstance(right, ast.Constant):
                if isinstance(test.ops[0], (ast.Eq, ast.Is)):
                    return ((name, ("==", right.value)),)
                if isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
                    return ((name, ("!=", right.value)),)
            if name is not None and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                values = [e.value for e in right.elts if isinstance(e, ast.Constant)]
                if len(values) == len(right.elts) and isinstance(test.ops[0], (ast.In, ast.NotIn)):
                    return ((name, ("in" if isinstance(test.ops[0], ast.In) else "not in", tuple(values))),)
        raise _Opaque

    def _option(self, expr: ast.expr) -> str | None:
        """``args.x`` (any object) where ``x`` is an option of the script; ``x`` alone where it is
        a parameter that holds the option (:func:`_carried`) and the function never assigns it."""
        if isinstance(expr, ast.Attribute) and expr.attr in self.options and isinstance(expr.value, ast.Name):
            return expr.attr
        if type(expr) is ast.Name and expr.id in self.params and expr.id not in self.names:
            return expr.id
        return None

    def _mentions(self, expr: ast.expr) -> bool:
        return any(
            self._option(sub) is not None for sub in ast.walk(expr) if isinstance(sub, (ast.Attribute, ast.Name))
        )

    def _call(self, call: ast.Call, when: tuple[Condition, ...]) -> None:
        self.through = ()
        name = _callee(call.func)
        if call in self.patches:  # a FlashAttention monkey patch, called for its effect
            self._add("attn_implementation", "flash_attention_2", when, None, call, patch=name)
        if name in _PEFT_CALLS:
            self.out.append(Effect("use_peft", True, when, None, self.path, call.lineno, call.col_offset + 1))
        for keyword in call.keywords:
            if keyword.arg is None or keyword.arg not in _KEYWORDS:
                continue
            callees = _KEYWORDS[keyword.arg]
            if callees is not None and name not in callees:
                continue
            self._value(keyword.arg, keyword.value, when, keyword)

    def _value(self, key: str, value: ast.expr, when: tuple[Condition, ...], at: ast.AST) -> None:
        self.through = ()
        if key == "use_flash_attention_2":
            key = "attn_implementation"
            flag = self._simple(value)
            if flag is SAME:
                source = self._only_option(self._resolved(value))
                self._add(key, "flash_attention_2", (*when, (str(source), True)), None, at)
            elif flag is True:
                self._add(key, "flash_attention_2", when, None, at)
            return
        if key == "dtype":
            key = "torch_dtype"
        expr = self._resolved(value)
        self.through = self._through(value, expr)
        if isinstance(expr, ast.IfExp):
            try:
                conditions = self._test(expr.test)
            except _Opaque:
                self._add(key, self._formula(expr), when, None, at)
                return
            if len(conditions) != 1:
                self._add(key, self._formula(expr), when, None, at)
                return
            through = self.through
            for branch, condition in ((expr.body, conditions[0]), (expr.orelse, _negate(conditions[0]))):
                self.through = (*through, expr.test.lineno, branch.lineno)  # the test, and the branch taken
                constant = literal(branch)
                if constant is not NOTHING:
                    self._add(key, constant, (*when, condition), None, at)
                else:
                    source = self._only_option(branch)
                    if source is not None:
                        self._add(key, SAME, (*when, condition), source, at)
                    elif (computed := self._formula(branch)) is not UNKNOWN:  # a choice inside a choice
                        self._add(key, computed, (*when, condition), None, at)
            return
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not) and self._option(expr.operand):
            name = str(self._option(expr.operand))
            self._add(key, False, (*when, (name, True)), None, at)  # fp16=not args.no_fp16
            self._add(key, True, (*when, (name, False)), None, at)
            return
        constant = literal(expr)
        if constant is not NOTHING:
            if when:  # a constant the script always sets is read where the script itself is checked
                self._add(key, constant, when, None, at)
            return
        source = self._only_option(expr)
        if source is not None:
            self._add(key, SAME, when, source, at)
        elif not (isinstance(expr, ast.Constant) and expr.value is None):
            # computed from the options (`load_in_4bit=args.bits == 4`), else at run time
            self._add(key, self._formula(expr), when, None, at)

    def _formula(self, expr: ast.expr) -> Any:
        """``expr`` as a :class:`.script_formulas.Formula` of the options, else UNKNOWN."""
        if self.tree is None:
            return UNKNOWN
        found = formula(expr, self._option, self.tree)
        return UNKNOWN if found is None else found

    def _through(self, value: ast.expr, resolved: ast.expr) -> tuple[int, ...]:
        """The lines a value passed as a name (``torch_dtype=torch_dtype``) flows through: the
        assignment it resolved to (its target's line and its value's)."""
        if resolved is value or type(value) is not ast.Name:
            return ()
        assigned = self.lines.get(value.id)
        # (a choice's first line is its first branch's: the branch taken is added by the caller)
        first = () if type(resolved) is ast.IfExp else (resolved.lineno,)
        return tuple(dict.fromkeys((assigned, *first) if assigned else first))

    def _simple(self, value: ast.expr) -> Any:
        expr = self._resolved(value)
        constant = literal(expr)
        if constant is not NOTHING:
            return constant
        return SAME if self._only_option(expr) is not None else NOTHING

    def _resolved(self, value: ast.expr) -> ast.expr:
        if isinstance(value, ast.Name):
            bound = self.names.get(value.id)
            if bound is not None:
                return bound
        return value

    def _only_option(self, expr: ast.expr) -> str | None:
        """The one option an expression reads (``getattr(torch, args.x)``, ``args.x``)."""
        names = {self._option(sub) for sub in ast.walk(expr) if isinstance(sub, (ast.Attribute, ast.Name))} - {None}
        if len(names) != 1:
            return None
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Call):
                if _callee(sub.func) not in ("getattr", "str", "lower"):
                    return None  # a function of the option (its value is not the option's)
            elif not isinstance(sub, (ast.Attribute, ast.Name, ast.Constant, ast.Load)):
                return None  # `not args.x`, `args.x == "y"`, `args.x or y`: not the option's own value
        return next(iter(names))

    def _add(
        self,
        key: str,
        value: Any,
        when: tuple[Condition, ...],
        source: str | None,
        at: ast.AST,
        patch: str | None = None,
    ) -> None:
        line = getattr(at, "lineno", 1)
        column = getattr(at, "col_offset", 0) + 1
        through = tuple(n for n in dict.fromkeys(self.through) if n != line)
        self.out.append(Effect(key, value, when, source, self.path, line, column, patch, through))


class _Nothing:
    pass


NOTHING = _Nothing()


def literal(expr: ast.expr) -> Any:
    """A literal, or a torch dtype by name (``torch.bfloat16`` → "bfloat16")."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (bool, str, int, float)):
        return expr.value
    if (
        isinstance(expr, ast.Attribute)
        and isinstance(expr.value, ast.Name)
        and expr.value.id == "torch"
        and expr.attr in ("float16", "half", "bfloat16", "float32", "float")
    ):
        return {"half": "float16", "float": "float32"}.get(expr.attr, expr.attr)
    return NOTHING


def _negate(condition: Condition) -> Condition:
    name, expected = condition
    if isinstance(expected, bool):
        return name, not expected
    op, value = expected
    return name, ({"==": "!=", "!=": "==", "in": "not in", "not in": "in"}[op], value)


def _assignments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr | None]:
    """Names assigned once in a function (assigned twice: None, not followed), and names
    assigned once in each branch of one ``if`` and nowhere else, as the choice between the
    two values (:func:`_branch_choices`)."""
    out: dict[str, ast.expr | None] = {}
    for node in statements(function):  # an assignment is a statement: expressions are not walked
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            out[name] = None if name in out else node.value
    for name, (choice, _) in _branch_choices(function).items():
        out[name] = choice
    return out


def _assignment_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """The line of each name :func:`_assignments` follows (the first assignment of one; the
    ``if`` line of a name assigned in both its branches)."""
    out: dict[str, int] = {}
    for node in statements(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, node.lineno)
    for name, (_, line) in _branch_choices(function).items():
        out[name] = line
    return out


def _branch_choices(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[ast.IfExp, int]]:
    """Names the function assigns exactly twice, once directly in the body and once directly
    in the ``else`` of the same ``if`` (Chinese-LLaMA-Alpaca-2's ``if training_args.load_in_kbits
    in [4, 8]: load_in_4bit = training_args.load_in_kbits == 4 ... else: load_in_4bit = False``):
    each as ``body_value if test else else_value`` (placed at the values' lines, so the branch
    taken is cited), with the ``if``'s line."""
    counts: dict[str, int] = {}
    ifs: list[ast.If] = []
    for node in statements(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        counts[sub.id] = counts.get(sub.id, 0) + 1
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            counts[node.target.id] = counts.get(node.target.id, 0) + 2  # (never followed)
        elif isinstance(node, ast.If) and node.orelse:
            ifs.append(node)
    out: dict[str, tuple[ast.IfExp, int]] = {}
    for node in ifs:
        body, orelse = _direct_assignments(node.body), _direct_assignments(node.orelse)
        for name in body.keys() & orelse.keys():
            if counts.get(name) == 2:
                choice = ast.IfExp(test=node.test, body=body[name], orelse=orelse[name])
                out[name] = (ast.copy_location(choice, body[name]), node.lineno)
    return out


def _direct_assignments(block: list[ast.stmt]) -> dict[str, ast.expr]:
    """``name = value`` statements of a block itself (not of blocks nested in it)."""
    out: dict[str, ast.expr] = {}
    for node in block:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


def _callee(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def holds(condition: Condition, value: Any) -> bool | None:
    """Whether an option's value meets a condition; None when the value is not known."""
    _, expected = condition
    if isinstance(expected, bool):
        truth = _truth(value)
        return None if truth is None else truth is expected
    op, wanted = expected
    if isinstance(value, bool | int | float | str) or value is None:
        inside = value in wanted if op in ("in", "not in") else value == wanted
        return inside if op in ("==", "in") else not inside
    return None


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "yes", "1", "y", "t"):
            return True
        # a boolean's spelling is false; any other non-empty string is true (`if model_args.model_name_or_path:`)
        return lowered not in ("false", "no", "0", "n", "f", "")
    if isinstance(value, int | float):
        return bool(value)
    return None


__all__ = ["SAME", "UNKNOWN", "Effect", "effects", "holds"]
