"""The options a training script parses, followed as values into its code (``ast`` only).

The Hugging Face / diffusers example pattern, and most scripts like it::

    def parse_args(input_args=None):
        parser = argparse.ArgumentParser()
        parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
        ...
        return parser.parse_args()

    def main(args):
        accelerator = Accelerator(mixed_precision=args.mixed_precision)
        if args.allow_tf32: ...

    if __name__ == "__main__":
        args = parse_args()
        main(args)

``parser.parse_args()`` (or a function of the module that returns it), ``parse_known_args()``
and ``HfArgumentParser((A, B, C)).parse_args_into_dataclasses()`` give a :class:`Namespace`
(one per dataclass): each attribute is the option's value, the launch's flag when a launch
line starts the script (:mod:`.script_launch` hands its flags down), else the option's
default (``default=``, ``store_true``'s False, a dataclass ``field(default=...)``). The
namespace is then an ordinary value of :mod:`.python_calls`: passed into functions (a
function called once gets what its call passes), compared in ``if`` tests, handed to calls.
Each value keeps where it is defined (the line of ``"--x"`` and of its ``default=``), cited
in the plan by the value it becomes.

What is not known stays :class:`~.python_values.Unknown`: an option with no literal default,
a parse given an explicit argument list, an attribute the module assigns elsewhere (``args.x =
...`` in another function, ``setattr``), a module with several parsers, fields of a class
precheck did not read (a ``TrainingArguments`` base). ``len(sys.argv)`` is 1 when no launch
gives flags (the ``if len(sys.argv) == 2 and sys.argv[1].endswith(".json")`` test of the HF
scripts then reads the dataclasses from the command line).

``accelerator.mixed_precision`` is the precision the ``Accelerator`` resolved (accelerate
1.15.0 ``accelerator.py:748`` returns ``self.state.mixed_precision``; ``state.py:926-929``:
``parse_choice_from_env("ACCELERATE_MIXED_PRECISION", "no") if mixed_precision is None else
mixed_precision.lower()``): the argument when it is a known string, else "no" for a script
run on its own (``accelerate launch`` sets ``ACCELERATE_MIXED_PRECISION`` from its config or
flag, so under a launch it is not known here); with a DeepSpeed plugin the DeepSpeed config
decides (``state.py:1063``), not known.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .parsed import parse as parse_once
from .python_literals import MISSING
from .python_values import UNHANDLED, Unknown
from .tree_facts import remembered

if TYPE_CHECKING:
    from .python_calls import Built
    from .script_schema import Option, Schema

#: transformers' ``TrainingArguments`` fields whose default every release shares, and its line
#: (``training_args.py``@5.24.0; ``gradient_checkpointing`` changed from False to None, not taken)
TRAINING_DEFAULTS: dict[str, tuple[Any, int]] = {"bf16": (False, 874), "fp16": (False, 880), "tf32": (None, 898)}
#: an option no path of a branch changed
_UNCHANGED: Any = object()
#: the methods that parse the command line into a namespace
_PARSES = frozenset({"parse_args", "parse_known_args", "parse_args_into_dataclasses"})


@dataclass(frozen=True, slots=True)
class Given:
    """A flag a launch line gives the script: its value as the script's parser converts it,
    and where it is written (``run.sh:12``)."""

    value: Any
    where: str
    #: the flag as the launch spells it (``--precision``; None: ``--`` and the option's name)
    flag: str | None = None

    def spelled(self, name: str) -> str:
        """The flag as written (``--precision``), for a finding's key."""
        return self.flag or f"--{name}"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Namespace:
    """The options a parse returns (an ``argparse.Namespace``, a parsed dataclass)."""

    #: what gave it (``parse_args()``, ``ModelArguments``)
    what: str
    #: its options (name → the schema's option)
    options: Mapping[str, Option]
    #: values set after the parse (``args.x = ...`` read in order): name → value, why
    changed: Mapping[str, tuple[Any, str | None]] = field(default_factory=dict)
    #: it extends transformers' ``TrainingArguments`` (or a TRL config): their fields are its own
    framework: bool = False

    def __repr__(self) -> str:
        return f"<options of {self.what}>"


class Flow:
    """Turns a module's parse calls into :class:`Namespace` values, for the collector."""

    def __init__(self, tree: ast.Module, code: str, path: str, flags: Mapping[str, Given] | None):
        self.tree = tree
        self.code = code
        self._counts: dict[str, int] = {}
        #: function name → whether it calls a parse (:meth:`_parses`)
        self._parsing: dict[str, bool] = {}
        self.path = path
        #: the launch's flags (None: no launch; the options' defaults apply)
        self.flags = flags
        self._schema: Schema | bool | None = False  # False: not read yet
        self._functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        #: attribute → the lines of the module that assign it (:meth:`_elsewhere`)
        self._assigned: dict[str, list[int]] | None = None
        #: every function of the module, when the reader has found them (else walked for)
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] | None = None
        #: every function's (first line, last line, node), by first line
        self._spans: list[tuple[int, int, ast.AST]] | None = None
        #: the provenance of the attribute reads, per expression (for the arguments they give)
        self.vias: dict[int, str] = {}
        #: the launch's flag (as spelled, ``--mixed_precision``) an attribute read takes its value
        #: from, per expression: the key of a finding about a value it decides
        self.flagged: dict[int, tuple[str, str]] = {}
        #: functions imported from the repository's modules (:meth:`_imported`), by name
        self._imports: dict[str, tuple[Flow, ast.FunctionDef | ast.AsyncFunctionDef] | None] = {}

    # -- the schema ---------------------------------------------------------------------------

    def schema(self) -> Schema | None:
        if self._schema is False:
            self._schema = None
            script = Path(self.path)
            if script.suffix == ".py" and script.is_file():
                from .script_schema import read_schema

                schema = read_schema(script)
                self._schema = schema if schema.options else None
        return self._schema  # type: ignore[return-value]

    # -- calls ---------------------------------------------------------------------------------

    def _parses(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether a function of the module calls a parse (its text names one)."""
        known = self._parsing.get(function.name)
        if known is None:
            known = self._parsing[function.name] = remembered(function, "parses", partial(_parses, function, self.code))
        return known

    def _count(self, callee: str) -> int:
        """How many times the module's code writes a call of ``callee`` (``ArgumentParser(``, as a
        word; a comment naming one counts too: more than one is not followed, never a guess)."""
        counts = self._counts
        if callee not in counts:
            counts[callee] = remembered(self.tree, ("count", callee), partial(_count, callee, self.code))
        return counts[callee]

    def call(self, node: ast.Call, evaluate: Any) -> Any:
        """The value of a parse call (or of a module function that returns one); None when
        ``node`` is no such call."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _PARSES:
            return self._parse(func.attr, node, evaluate)
        if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1 and not node.keywords:
            if _is_argv(node.args[0]) and self.flags is None and self.schema() is not None:
                # `python train.py`, as the options' defaults are read: sys.argv holds the script alone
                return 1
            return None
        if isinstance(func, ast.Name) and func.id in self._functions:
            return self._returned(self._functions[func.id], node, evaluate)
        if isinstance(func, ast.Name) and self._import_source(func.id) is not None and self.schema() is not None:
            imported = self._imported(func.id)
            if imported is not None:
                flow, function = imported
                return flow._returned(function, node, evaluate)
        return None

    def _imported(self, name: str) -> tuple[Flow, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """``from utils.args_loader import parse_args`` (peft's dreambooth examples): the function
        ``name`` of a module of the repository the script imports it from, with that module's own
        flow (its parser, its options cited in it); None when ``name`` is not so imported."""
        if name in self._imports:
            return self._imports[name]
        self._imports[name] = None
        target = self._import_source(name)
        if target is None:
            return None
        try:
            code = Path(target).read_text(encoding="utf-8")
            tree = parse_once(code, target)  # (the tree script_schema read it into, when it did)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            return None
        flow = Flow(tree, code, target, self.flags)
        function = flow._functions.get(name)
        if function is not None:
            self._imports[name] = (flow, function)
        return self._imports[name]

    def _import_source(self, name: str) -> str | None:
        """The file of the repository the module imports the name from (:func:`_import_source`):
        the same whatever the flags, looked for once per tree and name."""
        found = partial(_import_source, self.tree, self.path, name)
        return remembered(self.tree, ("imported", self.path, name), found)

    def _parse(self, method: str, node: ast.Call, evaluate: Any) -> Any:
        schema = self.schema()
        if schema is None or not _defaults_only(node, evaluate):
            return None
        if method == "parse_args_into_dataclasses":
            if not schema.dataclasses or self._count("HfArgumentParser") != 1:
                return None
            if Path(self.path).with_suffix(".args").exists():
                return None  # transformers hf_argparser.py:314@5.24.0 reads it (look_for_args_file=True)
            spaces: list[Any] = []
            for name, (fields, complete) in schema.dataclasses.items():
                options = {f: schema.options[f] for f in fields if f in schema.options}
                framework = name in schema.framework_classes
                spaces.append(
                    Namespace(name, options, framework=framework)
                    if complete
                    else _Partial(name, options, framework=framework)
                )
            if any(k.arg == "return_remaining_strings" for k in node.keywords):
                spaces.append(Unknown("the strings the parser did not read"))
            return tuple(spaces)
        if "argparse" not in schema.parsers or self._count("ArgumentParser") != 1:
            return None  # several parsers (or none here): which one gives the options is not read
        held = {f for names, _ in schema.dataclasses.values() for f in names}
        # the options the script itself adds (another module's parser may be another command line)
        own = schema.script
        options = {n: o for n, o in schema.options.items() if n not in held and o.path is own}
        space = Namespace(f"{ast.unparse(node.func)}()", options)
        if method == "parse_known_args":
            return (space, Unknown("the flags the parser did not read"))
        return space

    def _returned(self, function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.Call, evaluate: Any) -> Any:
        """``args = parse_args()``: a function of the module whose every ``return`` gives a parse's
        namespace (directly, or a name only ever bound to one), called with no argument list."""
        if not self._parses(function) or not _defaults_only(node, evaluate):
            return None
        shape = remembered(function, "returns", partial(_returns, function))
        if shape is None:
            return None  # a nested function: its returns are not the function's
        bound, returns, changed = shape
        spaces: list[Namespace] = []
        for value in returns:
            sources = bound.get(value.id, []) if isinstance(value, ast.Name) else [value] if value is not None else []
            if not sources or not all(_parse_call(s) for s in sources):
                return None
            for source in sources:
                assert isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute)
                space = self._parse(source.func.attr, source, partial(_parameter, _passed(function, node, evaluate)))
                if not isinstance(space, Namespace):
                    return None
                spaces.append(space)
        if not spaces:
            return None
        changes = {n: (Unknown(f"`{function.name}` sets `.{n}` at line {at}"), None) for n, at in changed.items()}
        return Namespace(f"{function.name}()", spaces[0].options, changes, spaces[0].framework)

    # -- attributes ------------------------------------------------------------------------------

    def attribute(self, base: Any, name: str, expr: ast.Attribute, function: ast.AST | None) -> Any:
        """``args.mixed_precision`` on a namespace; UNHANDLED when ``base`` is none."""
        if isinstance(base, Namespace):
            return self._option(base, name, expr, function)
        return UNHANDLED

    def merged(self, values: list[Any], why: str) -> Namespace | None:
        """The namespaces of the paths of a branch, one namespace: an option set differently on
        them is unknown (None: they are not the same parse's namespaces)."""
        first = values[0]
        if not isinstance(first, Namespace) or not all(
            isinstance(v, Namespace) and v.options is first.options for v in values
        ):
            return None
        names = {n for v in values for n in v.changed}
        changed: dict[str, tuple[Any, str | None]] = {}
        for name in names:
            seen = [v.changed.get(name, _UNCHANGED) for v in values]
            if all(s is _UNCHANGED for s in seen):
                continue
            one = seen[0]
            if all(s is not _UNCHANGED and type(s[0]) is type(one[0]) and s[0] == one[0] for s in seen):  # type: ignore[index]
                changed[name] = one  # type: ignore[assignment]
            else:
                changed[name] = (Unknown(f"`.{name}`: {why}"), None)
        return type(first)(first.what, first.options, changed, first.framework)

    def cite(self, line: int) -> str:
        """``path:line`` of a line of the script."""
        return f"{self.path}:{line}"

    def _framework_field(self, name: str, expr: ast.Attribute) -> Any:
        """A field of transformers' ``TrainingArguments`` the parsed class inherits: the launch's
        flag, else its default where every release has the same one (:data:`TRAINING_DEFAULTS`)."""
        flag = self.flags.get(name) if self.flags is not None else None
        if flag is not None:
            self.vias[id(expr)] = f"the launch's --{name} at {flag.where}; a TrainingArguments field"
            self.flagged[id(expr)] = (flag.spelled(name), flag.where)
            return flag.value
        known = TRAINING_DEFAULTS.get(name)
        if known is None:
            return Unknown(f"`{name}` is a TrainingArguments field whose default precheck does not take")
        value, line = known
        given = "no launch read gives" if self.flags is None else "the launch does not give"
        self.vias[id(expr)] = (
            f"TrainingArguments default (transformers training_args.py:{line}@5.24.0), {given} --{name}"
        )
        return value

    def mixed_precision(self, built: Built) -> tuple[Any, str]:
        """``accelerator.mixed_precision`` (:func:`resolved_mixed_precision`)."""
        return resolved_mixed_precision(built, self.flags is not None)

    def _option(self, space: Namespace, name: str, expr: ast.Attribute, function: ast.AST | None) -> Any:
        if name in space.changed:
            value, via = space.changed[name]
            if via is not None:
                self.vias[id(expr)] = via
            return value
        option = space.options.get(name)
        if option is None and space.framework:
            return self._framework_field(name, expr)
        if option is None:
            if isinstance(space, _Partial):
                return Unknown(f"`{name}` is a field of `{space.what}` precheck did not read")
            return Unknown(f"`{space.what}` defines no option `{name}` precheck read")
        elsewhere = self._elsewhere(name, function)
        if elsewhere is not None:
            return Unknown(f"the script sets `.{name}` at line {elsewhere}")
        flag = self.flags.get(name) if self.flags is not None else None
        where = defined_at(option)
        if flag is not None:
            self.vias[id(expr)] = f"the launch's --{name} at {flag.where}; {where}"
            self.flagged[id(expr)] = (flag.spelled(name), flag.where)
            return flag.value
        if option.default is MISSING or option.required:
            why = "is required" if option.required else "has no default precheck can read"
            return Unknown(f"`--{name}` {why} ({where})")
        given = "no launch read gives" if self.flags is None else "the launch does not give"
        self.vias[id(expr)] = f"option default, {given} --{name}; {where}"
        return option.default

    def _elsewhere(self, name: str, function: ast.AST | None) -> int | None:
        """A line of another function (or of the module's own statements, read from a
        function) that assigns ``x.name`` (``setattr(x, "name", ...)`` too): the value read may
        not be the option's. One in the function read now is read in order (:meth:`rebound`).
        Any ``x`` but ``self``: which object it is, is not followed."""
        if self._assigned is None:
            self._assigned = _assigning(self.code)
        for line in self._assigned.get(name, ()):
            if self._owner(line) is not function:
                return line
        return None

    def _owner(self, line: int) -> ast.AST | None:
        """The innermost function that holds ``line`` (None: the module's own statements)."""
        if self._spans is None:
            functions = self.functions
            if functions is None:
                functions = [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            self._spans = sorted(((n.lineno, n.end_lineno or n.lineno, n) for n in functions), key=lambda s: s[0])
        owner: ast.AST | None = None
        for start, end, node in self._spans:
            if start > line:
                break
            if line <= end:
                owner = node  # (a later start that still holds it is nested inside)
        return owner

    def rebound(self, space: Any, name: str, value: Any) -> Namespace | None:
        """The namespace after ``space.name = value`` read in order (None: ``space`` is none)."""
        if not isinstance(space, Namespace):
            return None
        return type(space)(space.what, space.options, {**space.changed, name: (value, None)}, space.framework)


@dataclass(frozen=True, slots=True, eq=False)
class _Partial(Namespace):
    """A parsed dataclass with a base precheck did not read: a field not listed is unknown."""


def resolved_mixed_precision(built: Built, under_launch: bool) -> tuple[Any, str]:
    """``accelerator.mixed_precision`` of ``Accelerator(...)`` (see the module's docs) and why."""
    call = built.call
    if "deepspeed_plugin" in call.args or "deepspeed_plugins" in call.args:
        return Unknown("with a DeepSpeed plugin the DeepSpeed config decides the precision"), ""
    arg = call.args.get("mixed_precision")
    value = arg.value if arg is not None else None
    if isinstance(value, str):
        return value.lower(), f"`{call.name}(mixed_precision={value!r})`"
    if value is not None:
        return Unknown(f"`{call.name}(mixed_precision=...)` is not known"), ""
    if under_launch:
        return Unknown("accelerate launch sets ACCELERATE_MIXED_PRECISION from its config or flag"), ""
    return "no", (
        f'`{call.name}(mixed_precision=None)` run on its own: accelerate\'s default "no" (ACCELERATE_MIXED_PRECISION '
        "unset; accelerate state.py:926@1.15.0)"
    )


def defined_at(option: Option) -> str:
    """```--x` defined at train.py:356, its default at train.py:358``: the lines that define an option."""
    path = _shown(option.path, os.getcwd())
    line = option.name_line or option.line
    text = f"`--{option.name}` defined at {path}:{line}"
    if option.default_line is not None and option.default_line != line:
        text += f", its default at {path}:{option.default_line}"
    return text


@lru_cache(maxsize=256)
def _shown(path: Path, cwd: str) -> str:
    """``launch_args.shown(path)`` (resolving a path is slow: once per file and folder)."""
    from .launch_args import shown

    return shown(path)


def from_flag(via: str | None, name: str) -> bool:
    """Whether a value's provenance (``via``) is the launch's flag ``--name`` itself."""
    return via is not None and via.startswith(f"the launch's --{name} at ")


#: ``.name = ``, ``.name += `` (not ``==``), and ``setattr(x, "name", ``
_ASSIGNS = re.compile(r"""\.(\w+)\s*(?:[-+*/|&%@^]|//|\*\*|>>|<<)?=(?!=)|setattr\([^,()]+,\s*["'](\w+)["']""")


def _assigning(code: str) -> dict[str, list[int]]:
    """Attribute name → the lines of ``code`` that assign it (on anything but ``self``)."""
    out: dict[str, list[int]] = {}
    line, at = 1, 0
    for match in _ASSIGNS.finditer(code):
        start = match.start()
        name = match.group(1) or match.group(2)
        if (
            match.group(1)
            and code[max(start - 4, 0) : start] == "self"
            and not code[start - 5 : start - 4].isidentifier()
        ):
            continue
        line += code.count("\n", at, start)  # (the matches come in order: counted once)
        at = start
        out.setdefault(name, []).append(line)
    return out


def _parses(function: ast.FunctionDef | ast.AsyncFunctionDef, code: str) -> bool:
    """Whether the text of ``function`` (in ``code``) names a parse call (``.parse_args(``...)."""
    lines = code.split("\n")[function.lineno - 1 : function.end_lineno or function.lineno]
    text = "\n".join(lines)
    return any(f".{name}(" in text for name in _PARSES)


def _count(callee: str, code: str) -> int:
    """How many times ``code`` writes a call of ``callee`` (:meth:`Flow._count`)."""
    return len(re.findall(rf"(?<![\w.]){callee}\s*\(|\.{callee}\s*\(", code))


#: what a function binds and returns (:func:`_returns`): name → the values bound to it, the
#: returned values, attribute → the first line that sets it
_Returns = tuple[dict[str, list[ast.expr]], list[ast.expr | None], dict[str, int]]


def _returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Returns | None:
    """The names ``function`` binds, the values it returns and the attributes it sets (None: it
    holds a nested function or lambda)."""
    bound: dict[str, list[ast.expr]] = {}
    returns: list[ast.expr | None] = []
    changed: dict[str, int] = {}
    for sub in ast.walk(function):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and sub is not function:
            return None
        if isinstance(sub, ast.Return):
            returns.append(sub.value)
        elif isinstance(sub, ast.Assign):
            for target in sub.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(sub.value)
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    changed.setdefault(target.attr, target.lineno)
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)) and isinstance(sub.target, ast.Attribute):
            changed.setdefault(sub.target.attr, sub.target.lineno)
    return bound, returns, changed


def _import_source(tree: ast.Module, path: str, name: str) -> str | None:
    """The ``.py`` file of the repository the module ``tree`` (at ``path``) imports ``name`` from
    (``from utils.args_loader import parse_args``); None when ``name`` is not so imported."""
    for statement in tree.body:
        if not isinstance(statement, ast.ImportFrom) or not any(
            a.name == name and (a.asname or a.name) == name for a in statement.names
        ):
            continue
        from .script_path import module_file

        target = module_file(Path(path), statement.module, statement.level, None)
        return None if target is None or target.suffix != ".py" else str(target)
    return None


def _is_argv(expr: ast.expr) -> bool:
    return (
        isinstance(expr, ast.Attribute)
        and expr.attr == "argv"
        and isinstance(expr.value, ast.Name)
        and (expr.value.id == "sys")
    )


def _parse_call(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _PARSES


def _passed(function: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, evaluate: Any) -> dict[str, Any]:
    """The values ``call`` gives the parameters of ``function`` (passed, else their constant defaults)."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    pairs = [
        *zip(positional, [*defaults, *arguments.defaults], strict=True),
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
    ]
    out: dict[str, Any] = {}
    for index, (param, default) in enumerate(pairs):
        given = next((k.value for k in call.keywords if k.arg == param.arg), None)
        if given is None and index < len(positional) and index < len(call.args):
            given = call.args[index]
        if given is not None and not isinstance(given, ast.Starred):
            out[param.arg] = evaluate(given)
        elif isinstance(default, ast.Constant):
            out[param.arg] = default.value
    return out


def _parameter(values: dict[str, Any], expr: ast.expr) -> Any:
    """An evaluator that knows constants and the function's parameters (a body not run)."""
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Name) and expr.id in values:
        return values[expr.id]
    return Unknown("a name inside the function")


def _defaults_only(node: ast.Call, evaluate: Any) -> bool:
    """A call given no argument list (``parse_args()``, ``parse_args(None)``, ``parse_args(args=None)``):
    it reads the command line."""
    given = [*node.args, *(k.value for k in node.keywords if k.arg in (None, "args", "input_args"))]
    return all(not isinstance(a, ast.Starred) and evaluate(a) is None for a in given)


__all__ = ["Flow", "Given", "Namespace", "defined_at", "from_flag", "resolved_mixed_precision"]
