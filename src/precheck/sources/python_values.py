"""What a Python expression in a training script evaluates to, read with ``ast`` only.

Nothing is ever executed. Literals, names assigned earlier, ``not``/``and``/``or``,
comparisons, ``x if c else y``, arithmetic on constants and ``torch.float16``-style dtypes
are evaluated; a call precheck does not know gives :class:`Unknown` (with the reason),
never a guess.

Calls that ask the runtime about the GPU are answered for the target hardware (the
first visible device: what ``torch.cuda.current_device()`` is before a script picks one):

- ``torch.cuda.is_bf16_supported(including_emulation=True)`` (torch 2.13
  ``torch/cuda/__init__.py``): True when the current device's major compute capability is
  8 or more; below that, with ``including_emulation`` (the default) it allocates a bf16
  tensor, which succeeds on any CUDA GPU from torch 2.3 (pytorch#115924): precheck answers
  True there (the newest behaviour) and notes it. Importing unsloth replaces the function
  with one whose ``including_emulation`` defaults to False (unsloth ``__init__.py``:
  "Torch 2.4 has including_emulation"). ROCm (``torch.version.hip``) answers True.
- unsloth ``is_bfloat16_supported()`` returns ``SUPPORTS_BFLOAT16``, set at import from
  ``torch.cuda.get_device_capability()``: ``major_version >= 8`` ("Fixes a weird Torch 2.3
  bug which says T4s have bfloat16", ``unsloth/models/_utils.py``).
- ``torch.cuda.is_available()``, ``torch.cuda.device_count()``,
  ``torch.cuda.get_device_capability()`` and ``torch.cuda.get_device_properties(i).major``.

Without known hardware those calls are :class:`Unknown`.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hardware import Device, Hardware


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value precheck cannot know without running the script, and why."""

    reason: str


class _Unhandled:
    """What a hook answers for a value it does not know of (None is a value)."""

    def __repr__(self) -> str:
        return "UNHANDLED"


UNHANDLED: Any = _Unhandled()


@dataclass(frozen=True, slots=True)
class Dtype:
    """A ``torch.dtype`` written as ``torch.bfloat16`` (``name``: ``bfloat16``)."""

    name: str


#: ``torch.<attribute>`` → dtype name
TORCH_DTYPES = {
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
}


@dataclass(slots=True, eq=False, repr=False)
class Names:
    """What the names of a module refer to: imports, and what the file defines itself."""

    #: local name → dotted name it was imported as (``np`` → ``numpy``, ``autocast`` → ``torch.cuda.amp.autocast``)
    imports: dict[str, str] = field(default_factory=dict)
    #: modules imported with ``*``
    star: list[str] = field(default_factory=list)
    #: functions and classes the file defines (they shadow library names)
    defined: set[str] = field(default_factory=set)
    #: the dotted names already worked out, per attribute node (a reader that keeps its
    #: tree sets it: the nodes are the keys, so none is taken for another)
    memo: dict[ast.expr, str | None] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, tree: ast.Module, nodes: Iterable[ast.AST] | None = None) -> Names:
        """``nodes``: the tree's nodes that bind names, when already found (in ``ast.walk`` order)."""
        names = cls()
        for node in ast.walk(tree) if nodes is None else nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        names.imports[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        names.imports[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == "*":
                        names.star.append(node.module)
                    else:
                        names.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.defined.add(node.name)
        return names

    def qualname(self, expr: ast.expr) -> str | None:
        """``torch.cuda.amp.GradScaler`` for ``amp.GradScaler`` after ``from torch.cuda import amp``."""
        if type(expr) is ast.Name:  # the commonest: a bare name
            name = expr.id
            if name in self.imports:
                return self.imports[name]
            return f"<local>.{name}" if name in self.defined else name
        memo = self.memo
        if memo is not None:
            known = memo.get(expr, _UNSEEN)
            if known is not _UNSEEN:
                return known  # type: ignore[return-value]
        parts: list[str] = []
        node = expr
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            dotted = None
        else:
            if node.id in self.imports:
                base = self.imports[node.id]
            elif node.id in self.defined:
                base = f"<local>.{node.id}"
            else:
                base = node.id
            dotted = ".".join([base, *reversed(parts)])
        if memo is not None:
            memo[expr] = dotted
        return dotted

    def imported_from(self, package: str) -> bool:
        return any(q == package or q.startswith(package + ".") for q in self.imports.values()) or any(
            m == package or m.startswith(package + ".") for m in self.star
        )


_UNSEEN = object()
_CONSTANT, _NAME, _CALL = ast.Constant, ast.Name, ast.Call


def truth(value: Any) -> bool | None:
    """The truth value of a known value; None for :class:`Unknown`."""
    if isinstance(value, Unknown):
        return None
    if isinstance(value, (list, tuple)) and any(isinstance(v, Unknown) for v in value):
        return bool(value)
    try:
        return bool(value)
    except Exception:  # an object without a truth value: unknowable
        return None


@dataclass(slots=True, eq=False, repr=False)
class Runtime:
    """Answers the script's questions about the GPU for the target hardware."""

    hardware: Hardware | None
    #: the script imports unsloth, which patches ``torch.cuda.is_bf16_supported``
    unsloth: bool = False
    #: what each answer rested on, for notes: (expression, explanation)
    answers: list[str] = field(default_factory=list)
    #: the size of the values arithmetic has produced in this file (see MAX_EVALUATED)
    evaluated: int = 0
    #: reads a config file the script loads by a literal path (``OmegaConf.load("cfg.yaml")``):
    #: its plain data, or Unknown (set by the reader of a script on disk; None: not read)
    files: Callable[[str, str], Any] | None = None

    def device(self, what: str) -> Device | Unknown | None:
        """The current CUDA device; None when the run sees no GPU."""
        if self.hardware is None or not self.hardware.known:
            return Unknown(f"`{what}` depends on the GPU the script runs on, and none is known (name it with --gpu)")
        return self.hardware.devices[0] if self.hardware.devices else None

    def unsloth_bf16(self, what: str, note: bool = True) -> bool | Unknown:
        """Unsloth's ``SUPPORTS_BFLOAT16`` (``note``: record the answer for the run's notes)."""
        device = self.device(what)
        if isinstance(device, Unknown):
            return device
        if device is None:
            return Unknown(f"`{what}`: the run sees no GPU, which Unsloth does not support")
        answer = device.model.vendor == "amd" or device.bf16
        if note:
            self.answers.append(f"`{what}` is {answer} on {device.name} (Unsloth: compute capability >= 8.0)")
        return answer

    def torch_bf16(self, what: str, including_emulation: bool) -> bool | Unknown:
        device = self.device(what)
        if isinstance(device, Unknown):
            return device
        if device is None:
            return False
        if device.model.vendor == "amd" or device.bf16:
            self.answers.append(f"`{what}` is True on {device.name} (native bf16)")
            return True
        if not including_emulation:
            self.answers.append(f"`{what}` is False on {device.name} (no native bf16, emulation not counted)")
            return False
        self.answers.append(
            f"`{what}` is True on {device.name} from torch 2.3, which counts emulated bf16 (torch <= 2.2: False)"
        )
        return True


class Source:
    """A module's text, split once: the text of a node and character columns.

    (``ast.get_source_segment`` splits the whole text on every call, which made a
    200 kB module take seconds.) ast columns count UTF-8 bytes."""

    def __init__(self, code: str):
        self.code = code
        #: ASCII code: a byte offset is a character offset, the lines are kept as they are
        self.ascii = code.isascii()
        self.text_lines = code.split("\n")
        self.lines = [] if self.ascii else [line.encode("utf-8") for line in self.text_lines]

    def segment(self, node: ast.AST) -> str:
        try:  # an expression or statement has all four
            start, end, first, last = node.lineno, node.end_lineno, node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
            first, last = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if start is None or end is None or first is None or last is None or end > len(self.text_lines):
            return ast.unparse(node)
        if self.ascii:
            lines: list[str] = self.text_lines
            if start == end:
                one: str = lines[start - 1][first:last]
                return one
            return "\n".join([lines[start - 1][first:], *lines[start : end - 1], lines[end - 1][:last]])
        encoded: list[bytes] = self.lines
        text: bytes
        if start == end:
            text = encoded[start - 1][first:last]
        else:
            text = b"\n".join([encoded[start - 1][first:], *encoded[start : end - 1], encoded[end - 1][:last]])
        return text.decode("utf-8", errors="replace")

    def column(self, line: int, offset: int) -> int:
        """The 0-based character column of byte ``offset`` on 1-based ``line``."""
        if self.ascii:
            text = self.text_lines[line - 1] if 0 < line <= len(self.text_lines) else ""
            return len(text[:offset])
        data = self.lines[line - 1] if 0 < line <= len(self.lines) else b""
        return len(data[:offset].decode("utf-8", errors="ignore"))


Objects = Callable[[ast.Call], Any]

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CONVERSIONS: dict[str, Callable[[Any], Any]] = {"bool": bool, "int": int, "float": float, "str": str}
#: the methods of a string :meth:`Evaluator._string_method` answers
_STRING_METHODS: dict[str, Callable[[str], str]] = {"lower": str.lower, "upper": str.upper, "strip": str.strip}
#: the tests of a string :meth:`Evaluator._string_method` answers, given one string (or a tuple
#: of strings): ``quantize.startswith("bnb.")`` (lit-gpt finetune/lora.py)
_STRING_TESTS: dict[str, Callable[[str, Any], bool]] = {"startswith": str.startswith, "endswith": str.endswith}
#: the calls that read a config file the script names (:meth:`Evaluator._loaded`)
_FILE_LOADS = frozenset(
    {"omegaconf.OmegaConf.load", "omegaconf.OmegaConf.create", "yaml.safe_load", "yaml.load", "yaml.full_load"}
    | {"json.load"}
)
#: the calls :meth:`Evaluator._call` answers for the target hardware
_RUNTIME_CALLS = frozenset(
    {
        "unsloth.is_bfloat16_supported",
        "unsloth.models._utils.is_bfloat16_supported",
        "is_bfloat16_supported",
        "torch.cuda.is_bf16_supported",
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.cuda.get_device_capability",
        "torch.cuda.get_device_properties",
    }
)

#: the largest string (characters) or integer (bits / 4, about its hex digits) one
#: operation may produce: settings are short, and a script must not be able to make
#: precheck build gigabytes (``'a' * 10**9``) or spin on huge powers
MAX_VALUE_SIZE = 100_000
#: the most characters (and integer bits / 4) all operations of one file may produce
MAX_EVALUATED = 16 * 1024 * 1024
_WIDTH = re.compile(r"%[^a-zA-Z%]*?(\d+)")


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int):
        return value.bit_length() // 4 + 1
    return 1


def _result_size(op: ast.operator, left: Any, right: Any) -> int:
    """An upper bound on the size (see :func:`_size`) of ``left op right``, without computing it."""
    if isinstance(op, ast.Mult) and isinstance(left, str) != isinstance(right, str):
        text, count = (left, right) if isinstance(left, str) else (right, left)
        return len(text) * max(int(count), 0) if isinstance(count, int) else 1
    if isinstance(op, ast.Mod) and isinstance(left, str):
        widths = sum(int(w) if len(w) < 12 else 10**12 for w in _WIDTH.findall(left))  # %09999d, %.9999f
        return len(left) + widths + _size(right)
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0:
        return (left.bit_length() * right) // 4 + 1
    return _size(left) + _size(right)


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Evaluator:
    """Evaluates expressions against the names bound so far (``env``)."""

    def __init__(
        self,
        env: dict[str, Any],
        names: Names,
        runtime: Runtime,
        objects: Objects,
        source: Source,
        bound: Callable[[str, Any], None] | None = None,
        attributes: Callable[[Any, str, ast.Attribute], Any] | None = None,
    ):
        self.env = env
        self.names = names
        self.runtime = runtime
        #: the value of a call precheck recognises (a BitsAndBytesConfig...), else Unknown
        self.objects = objects
        self.source = source
        #: told of each name a ``:=`` binds in ``env``
        self.bound = bound
        #: the attribute of a value the caller knows (an options namespace's ``args.x``), else None
        self.attributes = attributes

    def text(self, expr: ast.AST) -> str:
        return self.source.segment(expr)

    def __call__(self, expr: ast.expr | None) -> Any:
        if expr is None:
            return None
        try:
            return self._eval(expr)
        except (ArithmeticError, TypeError, ValueError, RecursionError):
            return Unknown(f"`{self.text(expr)}` cannot be computed without running the script")

    def _eval(self, expr: ast.expr) -> Any:
        kind = type(expr)  # the commonest by their exact type first (a subclass falls to the tests below)
        if kind is _CONSTANT:
            return expr.value  # type: ignore[attr-defined]
        if kind is _NAME:
            env, name = self.env, expr.id  # type: ignore[attr-defined]
            if name in env:
                return env[name]
            return self._imported_dtype(expr)  # type: ignore[arg-type]
        if kind is _CALL:
            return self._call(expr)  # type: ignore[arg-type]
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, ast.Name):
            if expr.id in self.env:
                return self.env[expr.id]
            return self._imported_dtype(expr)
        if isinstance(expr, ast.Call):  # (the node types exclude each other: the commonest first)
            return self._call(expr)
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr)
        if isinstance(expr, ast.UnaryOp):
            operand = self._eval(expr.operand)
            if isinstance(operand, Unknown):
                return operand
            if isinstance(expr.op, ast.Not):
                known = truth(operand)
                return Unknown(f"`{self.text(expr)}`") if known is None else not known
            if isinstance(expr.op, ast.USub) and isinstance(operand, (int, float)):
                return -operand
            return Unknown(f"`{self.text(expr)}`")
        if isinstance(expr, ast.BoolOp):
            return self._boolean(expr)
        if isinstance(expr, ast.Compare):
            return self._compare(expr)
        if isinstance(expr, ast.IfExp):
            return self._choice(expr)
        if isinstance(expr, ast.BinOp):
            left, right = self._eval(expr.left), self._eval(expr.right)
            for side in (left, right):
                if isinstance(side, Unknown):
                    return side
            return self._arithmetic(expr, left, right)
        if isinstance(expr, (ast.Tuple, ast.List)):
            items = [self._eval(e) for e in expr.elts]
            return tuple(items) if isinstance(expr, ast.Tuple) else items
        if isinstance(expr, ast.Dict):
            return self._dict(expr)
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr)
        if isinstance(expr, ast.JoinedStr):
            return self._fstring(expr)
        if isinstance(expr, ast.NamedExpr):
            value = self._eval(expr.value)
            self.env[expr.target.id] = value
            if self.bound is not None:
                self.bound(expr.target.id, value)
            return value
        return Unknown(f"`{self.text(expr)}` cannot be computed without running the script")

    def _arithmetic(self, expr: ast.BinOp, left: Any, right: Any) -> Any:
        """``left op right`` on numbers and strings, within the evaluation budget: a result
        too large to be a setting (``'a' * 5 * 10**9``, ``(10**64)**64``, ``'%0999999999d' % 1``)
        is :class:`Unknown`, never computed."""
        if not all(isinstance(v, (int, float, str)) for v in (left, right)):
            return Unknown(f"`{self.text(expr)}`")
        if isinstance(expr.op, ast.Pow):
            if not isinstance(right, (int, float)) or abs(right) > 64:
                return Unknown(f"`{self.text(expr)}`")
            apply: Callable[[Any, Any], Any] | None = operator.pow
        else:
            apply = _BINARY.get(type(expr.op))
        if apply is None:
            return Unknown(f"`{self.text(expr)}`")
        size = _result_size(expr.op, left, right)
        self.runtime.evaluated += size
        if size > MAX_VALUE_SIZE or self.runtime.evaluated > MAX_EVALUATED:
            return Unknown(f"`{_cut(self.text(expr))}` is too large to compute (precheck's evaluation budget)")
        return apply(left, right)

    def _attribute(self, expr: ast.Attribute) -> Any:
        qualname = self.names.qualname(expr)
        if qualname is not None and qualname.startswith("torch."):
            dtype = TORCH_DTYPES.get(qualname[len("torch.") :])
            if dtype is not None:
                return Dtype(dtype)
        base = self._eval(expr.value)
        if isinstance(base, dict) and expr.attr in base:
            return base[expr.attr]
        if isinstance(base, Unknown):
            return base
        if self.attributes is not None:
            known = self.attributes(base, expr.attr, expr)
            if known is not UNHANDLED:
                return known
        return Unknown(f"`{self.text(expr)}` cannot be computed without running the script")

    def _boolean(self, expr: ast.BoolOp) -> Any:
        result: Any = None
        for item in expr.values:
            result = self._eval(item)
            known = truth(result)
            if known is None:
                return result if isinstance(result, Unknown) else Unknown(f"`{self.text(expr)}`")
            if isinstance(expr.op, ast.And) and not known:
                return result
            if isinstance(expr.op, ast.Or) and known:
                return result
        return result

    def _compare(self, expr: ast.Compare) -> Any:
        left = self._eval(expr.left)
        for op, right_expr in zip(expr.ops, expr.comparators, strict=True):
            right = self._eval(right_expr)
            for side in (left, right):
                if isinstance(side, Unknown):
                    return side
            apply = _COMPARE.get(type(op))
            if apply is None:
                return Unknown(f"`{self.text(expr)}`")
            if not apply(left, right):
                return False
            left = right
        return True

    def _choice(self, expr: ast.IfExp) -> Any:
        test = truth(self._eval(expr.test))
        if test is None:
            body, orelse = self._eval(expr.body), self._eval(expr.orelse)
            if not isinstance(body, Unknown) and type(body) is type(orelse) and body == orelse:
                return body
            return Unknown(f"`{self.text(expr)}` depends on `{self.text(expr.test)}`, which is not known")
        return self._eval(expr.body if test else expr.orelse)

    def _dict(self, expr: ast.Dict) -> Any:
        out: dict[str, Any] = {}
        for key, value in zip(expr.keys, expr.values, strict=True):
            if key is None:  # {**other}
                merged = self._eval(value)
                if not isinstance(merged, dict):
                    return Unknown(f"`{self.text(expr)}`")
                out.update(merged)
                continue
            name = self._eval(key)
            if not isinstance(name, str):
                return Unknown(f"`{self.text(expr)}`")
            out[name] = self._eval(value)
        return out

    def _subscript(self, expr: ast.Subscript) -> Any:
        base = self._eval(expr.value)
        if isinstance(base, str) and type(expr.slice) is ast.Slice:  # `quantize[4:]`: a part of a known string
            part = expr.slice
            bounds = [self._eval(b) if b is not None else None for b in (part.lower, part.upper, part.step)]
            if all(b is None or type(b) is int for b in bounds) and bounds[2] != 0:
                return base[slice(*bounds)]
            return Unknown(f"`{self.text(expr)}`")
        index = self._eval(expr.slice)
        for side in (base, index):
            if isinstance(side, Unknown):
                return side
        if isinstance(base, (tuple, list)) and isinstance(index, int) and -len(base) <= index < len(base):
            return base[index]
        if isinstance(base, dict) and isinstance(index, str) and index in base:
            return base[index]
        return Unknown(f"`{self.text(expr)}`")

    def _fstring(self, expr: ast.JoinedStr) -> Any:
        """An f-string of known plain values, within the evaluation budget (an f-string that
        doubles a string each line is arithmetic too; ``str()`` of a tuple that holds itself
        twice over is exponential, so containers are not formatted)."""
        parts = []
        for part in expr.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1:
                value = self._eval(part.value)
                if isinstance(value, Unknown):
                    return value
                if not isinstance(value, (str, int, float, bool)) or (isinstance(value, int) and abs(value) > 10**64):
                    return Unknown(f"`{_cut(self.text(expr))}`")
                parts.append(str(value))
            else:
                return Unknown(f"`{_cut(self.text(expr))}`")
        size = sum(len(p) for p in parts)
        self.runtime.evaluated += size
        if size > MAX_VALUE_SIZE or self.runtime.evaluated > MAX_EVALUATED:
            return Unknown(f"`{_cut(self.text(expr))}` is too large to compute (precheck's evaluation budget)")
        return "".join(parts)

    def _call(self, expr: ast.Call) -> Any:
        qualname = self.names.qualname(expr.func) or ""
        if qualname in _FILE_LOADS:
            return self._loaded(expr, qualname)
        if qualname == "getattr" or (
            type(expr.func) is ast.Attribute and (expr.func.attr in _STRING_METHODS or expr.func.attr in _STRING_TESTS)
        ):
            known = self._named_dtype(expr) if qualname == "getattr" else self._string_method(expr)
            if known is not None:
                return known
        if qualname not in _RUNTIME_CALLS and qualname not in _CONVERSIONS and qualname != "dict":
            return self.objects(expr)  # the commonest: a call precheck does not evaluate
        what = self.text(expr)
        if qualname in ("unsloth.is_bfloat16_supported", "unsloth.models._utils.is_bfloat16_supported") or (
            qualname == "is_bfloat16_supported" and self.names.imported_from("unsloth")
        ):
            return self.runtime.unsloth_bf16(what)
        if qualname == "torch.cuda.is_bf16_supported":
            emulation = not self.runtime.unsloth
            for keyword in expr.keywords:
                if keyword.arg == "including_emulation":
                    chosen = truth(self._eval(keyword.value))
                    if chosen is None:
                        return Unknown(f"`{what}`")
                    emulation = chosen
            if expr.args:
                chosen = truth(self._eval(expr.args[0]))
                if chosen is None:
                    return Unknown(f"`{what}`")
                emulation = chosen
            return self.runtime.torch_bf16(what, emulation)
        if qualname in ("torch.cuda.is_available", "torch.cuda.device_count"):
            return self._visible(qualname.endswith("is_available"), what)
        if qualname in ("torch.cuda.get_device_capability", "torch.cuda.get_device_properties"):
            return self._capability(expr, qualname.endswith("properties"), what)
        if qualname in _CONVERSIONS and len(expr.args) == 1 and not expr.keywords:
            value = self._eval(expr.args[0])
            return value if isinstance(value, Unknown) else _CONVERSIONS[qualname](value)
        if qualname == "dict" and not expr.args:
            return {k.arg: self._eval(k.value) for k in expr.keywords if k.arg is not None}
        return self.objects(expr)

    def _imported_dtype(self, expr: ast.Name) -> Any:
        """A name imported from torch that is a dtype (``from torch import bfloat16``), else Unknown."""
        qualname = self.names.qualname(expr)
        if qualname is not None and qualname.startswith("torch."):
            dtype = TORCH_DTYPES.get(qualname[len("torch.") :])
            if dtype is not None:
                return Dtype(dtype)
        return Unknown(f"`{expr.id}` is not given a value precheck can read")

    def _named_dtype(self, expr: ast.Call) -> Any:
        """``getattr(torch, name)`` for a known name: ``torch.bfloat16`` for "bfloat16"
        (an attribute torch has not, "auto", is Unknown: the script would raise or pass it on);
        None for another ``getattr``."""
        if len(expr.args) != 2 or expr.keywords or self.names.qualname(expr.args[0]) != "torch":
            return None
        name = self._eval(expr.args[1])
        if isinstance(name, Unknown):
            return name
        if isinstance(name, str) and name in TORCH_DTYPES:
            return Dtype(TORCH_DTYPES[name])
        return Unknown(f"`{self.text(expr)}`: torch has no dtype `{name}`")

    def _string_method(self, expr: ast.Call) -> Any:
        """``name.lower()``, ``.upper()``, ``.strip()`` of a known string, and its
        ``.startswith(prefix)``/``.endswith(suffix)`` given a known string or tuple of strings;
        None otherwise."""
        assert isinstance(expr.func, ast.Attribute)
        test = _STRING_TESTS.get(expr.func.attr)
        if expr.keywords or len(expr.args) != (1 if test is not None else 0):
            return None
        text = self._eval(expr.func.value)
        if isinstance(text, Unknown):
            return text
        if not isinstance(text, str):
            return None
        if test is None:
            return _STRING_METHODS[expr.func.attr](text)
        given = self._eval(expr.args[0])
        if isinstance(given, Unknown):
            return given
        if isinstance(given, str) or (isinstance(given, tuple) and all(isinstance(g, str) for g in given)):
            return test(text, given)
        return None

    def _loaded(self, expr: ast.Call, qualname: str) -> Any:
        """``OmegaConf.load("cfg.yaml")``, ``yaml.safe_load(open("cfg.yaml"))``, ``json.load(open(...))``:
        the file's data, read by :attr:`Runtime.files`; ``OmegaConf.create(data)``: the data."""
        argument = expr.args[0] if len(expr.args) == 1 and not expr.keywords else None
        if qualname.endswith("OmegaConf.create"):
            value = self._eval(argument) if argument is not None else None
            return value if isinstance(value, dict) else self.objects(expr)
        if argument is not None and not qualname.endswith("OmegaConf.load"):  # yaml/json: a file opened here
            opened = argument if isinstance(argument, ast.Call) else None
            name = self.names.qualname(opened.func) if opened is not None else None
            argument = opened.args[0] if opened is not None and name in ("open", "io.open") and opened.args else None
        path = self._eval(argument) if argument is not None else None
        if not isinstance(path, str) or self.runtime.files is None:
            return self.objects(expr)
        return self.runtime.files(path, self.text(expr))

    def _visible(self, available: bool, what: str) -> Any:
        hardware = self.runtime.hardware
        if hardware is None or not hardware.known:
            return Unknown(f"`{what}` depends on the machine the script runs on, and no GPU is known")
        count = len(hardware.devices)
        return count > 0 if available else count

    def _capability(self, expr: ast.Call, properties: bool, what: str) -> Any:
        device = self.runtime.device(what)
        if isinstance(device, Unknown):
            return device
        if expr.args:
            index = self._eval(expr.args[0])
            hardware = self.runtime.hardware
            if not isinstance(index, int) or hardware is None or not 0 <= index < len(hardware.devices):
                return Unknown(f"`{what}`")
            device = hardware.devices[index]
        if device is None or device.model.cc is None:
            return Unknown(f"`{what}`: the device's compute capability is not known")
        major, minor = device.model.cc
        return {"major": major, "minor": minor, "name": device.name} if properties else (major, minor)
