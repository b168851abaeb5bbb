"""Find the calls that configure a training run in a Python module, with their arguments.

Walks the module's statements in order, binding the names assigned along the way so that
an argument written as a name (``fp16=use_fp16``) or a simple expression
(``bf16=not use_fp16``) is read as the value it has at the call (:mod:`.python_values`).
An ``if`` whose test is known runs one branch; otherwise both are read and a name they set
differently becomes unknown after it. Function bodies are read with the module's names
(as bound at its end), their parameters unknown. Nothing is executed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .python_index import ModuleIndex
from .python_values import Dtype, Evaluator, Names, Runtime, Source, Unknown, truth

#: TrainingArguments and its subclasses that add no precision switches
HF_ARGUMENTS = {"TrainingArguments", "Seq2SeqTrainingArguments", "UnslothTrainingArguments"}
#: TRL's trainer configs (huggingface/trl ``trl/trainer/*_config.py``; all subclass TrainingArguments)
TRL_CONFIGS = {
    "SFTConfig",
    "DPOConfig",
    "GRPOConfig",
    "ORPOConfig",
    "KTOConfig",
    "RewardConfig",
    "PPOConfig",
    "CPOConfig",
    "BCOConfig",
    "PRMConfig",
    "OnlineDPOConfig",
    "RLOOConfig",
    "NashMDConfig",
    "XPOConfig",
    "GKDConfig",
    "GSPOConfig",
    "IterativeSFTConfig",
}
AUTOCASTS = {
    "torch.autocast": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch.amp.autocast": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch.amp.autocast_mode.autocast": ("device_type", "dtype", "enabled", "cache_enabled"),
    "torch.cuda.amp.autocast": ("enabled", "dtype", "cache_enabled"),
    "torch.cuda.amp.autocast_mode.autocast": ("enabled", "dtype", "cache_enabled"),
    "torch.cpu.amp.autocast": ("enabled", "dtype", "cache_enabled"),
}
SCALERS = {
    "torch.amp.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    "torch.amp.grad_scaler.GradScaler": (
        "device",
        "init_scale",
        "growth_factor",
        "backoff_factor",
        "growth_interval",
        "enabled",
    ),
    "torch.cuda.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    "torch.cuda.amp.grad_scaler.GradScaler": (
        "init_scale",
        "growth_factor",
        "backoff_factor",
        "growth_interval",
        "enabled",
    ),
    "torch.cpu.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": (
        "device",
        "init_scale",
        "backoff_factor",
        "growth_factor",
        "growth_interval",
        "enabled",
    ),
}
DISTRIBUTED = {
    "torch.distributed.init_process_group",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
}
NO_GRAD = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode"}
#: ``model.half()``-style casts of a module's parameters
CASTS = {"half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64"}
#: positional parameters of the calls read (the rest are passed by keyword in practice)
POSITIONAL = {
    "from_pretrained": ("pretrained_model_name_or_path",),
    "unsloth": ("model_name", "max_seq_length", "dtype", "load_in_4bit"),
    "bnb": ("load_in_8bit", "load_in_4bit"),
    "hf-trainer": ("output_dir",),
    "trl": ("output_dir",),
    "peft": ("model", "peft_config"),
    "default-dtype": ("dtype",),
}
_MODEL_CLASS = re.compile(r"^(?:Auto\w*Model\w*|\w*(?:Model|LMHeadModel)|\w+For[A-Z]\w*)$")
_NOT_MODEL = re.compile(r"Tokenizer|Config|Processor|Extractor|^Peft")


#: definitions: read on their own (:meth:`Collector.run`), not where they stand
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
#: statements that hold no expression (nothing to scan)
_NO_EXPRESSION = frozenset({ast.Import, ast.ImportFrom, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal})


@dataclass(slots=True)
class Arg:
    """An argument of a call: its value and where it is (code line, 0-based character column)."""

    value: Any
    #: the keyword as written; None for a positional argument or a default precheck fills in
    key: str | None
    key_at: tuple[int, int] | None
    at: tuple[int, int]
    raw: str


@dataclass(slots=True)
class Call:
    """A call that configures the run: ``kind`` says which (see :func:`kind_of`)."""

    kind: str
    #: the callee as written (``TrainingArguments``, ``torch.cuda.amp.GradScaler``)
    name: str
    qualname: str
    at: tuple[int, int]
    args: dict[str, Arg] = field(default_factory=dict)
    #: inside ``with torch.no_grad()`` / ``torch.inference_mode()``, or a function decorated so
    inference: bool = False


@dataclass(frozen=True, slots=True)
class Built:
    """The value of a call precheck recognises (``bnb = BitsAndBytesConfig(...)``)."""

    call: Call


#: the calls whose value is kept as a :class:`Built` (an argument of a later call reads it)
_BUILT = frozenset(("bnb", "lora-config", "model", "unsloth", "model-config", "hf-trainer", "precision-plugin"))

#: the values that are always equal to themselves (unlike a float NaN)
_EQUAL_TO_ITSELF = frozenset({str, int, bool, type(None), Unknown, Dtype, Built})


@lru_cache(maxsize=1)
def _declared() -> tuple[frozenset[str], tuple[str, ...], Mapping[str, str | None]]:
    """What the frameworks declare about training scripts: the packages whose ``Trainer``/
    ``Fabric`` take ``precision=``, the model base classes, and the precision plugins."""
    from . import registered  # the registry's table (the registry imports the sources)

    return registered.trainer_packages, registered.model_bases, registered.precision_plugins


def plugin_precision(call: Call) -> str | None:
    """The precision a ``precision-plugin`` call sets by its name (``bf16_mixed()``), or None
    (it takes ``precision=``)."""
    return _declared()[2].get(call.qualname.split(".")[-1])


@lru_cache(maxsize=4096)  # a pure function of the name, asked for every call of every script
def kind_of(qualname: str) -> str | None:
    """What a call configures, from its dotted callee name; None when it is not one precheck reads."""
    if qualname.startswith("<local>."):
        return None
    parts = qualname.split(".")
    last, owner = parts[-1], (parts[-2] if len(parts) > 1 else "")
    if last in HF_ARGUMENTS:
        return "hf-trainer"
    if last in TRL_CONFIGS:
        return "trl"
    if qualname in ("trl.ModelConfig", "trl.trainer.model_config.ModelConfig"):
        return "model-config"
    if last == "from_pretrained" and owner:
        if owner.startswith("Fast") and owner.endswith("Model"):
            return "unsloth"
        if _MODEL_CLASS.match(owner) and not _NOT_MODEL.search(owner):
            return "model"
        return None
    if last == "BitsAndBytesConfig":
        return "bnb"
    if last == "LoraConfig":
        return "lora-config"
    if last == "get_peft_model":
        return "peft"
    if qualname in AUTOCASTS:
        return "autocast"
    if qualname in SCALERS or (last == "ShardedGradScaler" and parts[0] == "torch"):
        return "scaler"
    if qualname == "torch.set_default_dtype":
        return "default-dtype"
    if qualname in DISTRIBUTED:
        return "distributed"
    if last == "Accelerator" and parts[0] == "accelerate":
        return "accelerator"
    if last in ("Trainer", "Fabric") and parts[0] in _declared()[0]:
        return "trainer-precision"
    if last in _declared()[2] and parts[0] in _declared()[0]:
        return "precision-plugin"
    if last.endswith("Trainer"):
        return "trainer"
    return None


class Collector:
    """Reads a module's statements in order and collects the :class:`Call` records."""

    def __init__(self, tree: ast.Module, code: str, runtime: Runtime):
        self.tree = tree
        self.source = Source(code)
        self.index = ModuleIndex(tree, code)  # one walk: what the rest looks up in the tree
        self.names = Names.of(tree, self.index.bindings)
        self.names.memo = {}  # the names are fixed from here on; the tree lives as long
        self.runtime = runtime
        self.runtime.unsloth = self.names.imported_from("unsloth")
        self.calls: list[Call] = []
        self._seen: dict[int, Call] = {}
        #: ``os.environ[NAME] = value`` assignments, last one wins
        self.environ: dict[str, Arg] = {}
        #: the script calls ``.backward()``: a training loop
        self.backward = False
        #: names (``model``, ``self.model``) whose parameters the script trains
        self.models: set[str] = set(_parameter_owners(self.index.parameter_calls))
        #: classes the file defines that subclass ``nn.Module``
        self.modules = {c.name for c in self.index.classes if _is_module(c, self.names)}
        #: values (keys as written) that could not be read, for notes: (key, where, why)
        self.unknown: list[tuple[str, tuple[int, int], str]] = []
        #: the names bound since the innermost undecided branch began (None: outside any)
        self._written: set[str] | None = None
        #: a value unequal to itself (NaN) was bound: a merge must look at every name
        self._unequal = False
        #: the evaluator of the names last read (dropped when the run ends: it refers back to the collector)
        self._evaluator: Evaluator | None = None

    # -- positions -------------------------------------------------------------------------

    def at(self, node: ast.expr | ast.keyword | ast.stmt) -> tuple[int, int]:
        """(line, 0-based character column) of a node; ast columns count UTF-8 bytes."""
        return self._place(node.lineno, node.col_offset)

    def _place(self, line: int, offset: int) -> tuple[int, int]:
        return line, self.source.column(line, offset)

    # -- statements ------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        finally:
            self._evaluator = None  # no cycle left: the trees are freed as soon as the caller is done

    def _run(self) -> None:
        env: dict[str, Any] = {"__name__": "__main__"}
        self.block(self.tree.body, env, inference=False)
        for node in self.index.functions:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local = dict(env)
                arguments = node.args
                params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                params.extend(p for p in (arguments.vararg, arguments.kwarg) if p is not None)
                for param in params:
                    local[param.arg] = Unknown(f"`{param.arg}` is a parameter of `{node.name}`")
                inference = any(self._no_grad(d) for d in node.decorator_list)
                self.block(node.body, local, inference)

    def block(self, body: list[ast.stmt], env: dict[str, Any], inference: bool) -> None:
        for statement in body:
            self.statement(statement, env, inference)

    def statement(self, node: ast.stmt, env: dict[str, Any], inference: bool) -> None:
        kind = type(node)
        if kind is ast.Expr or kind is ast.Return:  # the commonest: one expression (or none)
            if node.value is not None:  # type: ignore[attr-defined]
                self.scan(node.value, env, inference)  # type: ignore[attr-defined]
            return
        if kind is ast.Assign or kind is ast.AnnAssign:
            source = node.value  # type: ignore[attr-defined]
            if source is None:
                return
            targets = node.targets if kind is ast.Assign else [node.target]  # type: ignore[attr-defined]
            if _holds_call(source):  # (else no call to scan, nor a model target to look for)
                model = False
                for target in targets:
                    if self._model_target(target):
                        model = True
                        break
                self.scan(source, env, inference, model)
            value = source.value if type(source) is ast.Constant else self.evaluator(env)(source)
            for target in targets:
                self.bind(target, value, source, env)
            return
        if kind in _NO_EXPRESSION or kind in _DEFINITIONS:
            return  # (definitions: read on their own, see run)
        if kind is ast.If:
            self.scan(node.test, env, inference)  # type: ignore[attr-defined]
            test = self.evaluator(env)(node.test)  # type: ignore[attr-defined]
            self.branches(test, [node.body, node.orelse], env, inference, node)  # type: ignore[attr-defined]
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # read on their own (run)
        if isinstance(node, ast.AugAssign):
            self.scan(node.value, env, inference)
            self.bind(node.target, Unknown("changed in place (`op=`)"), node.value, env)
        elif isinstance(node, ast.If):
            self.scan(node.test, env, inference)
            self.branches(self.evaluator(env)(node.test), [node.body, node.orelse], env, inference, node)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self.scan(node.iter if not isinstance(node, ast.While) else node.test, env, inference)
            if not isinstance(node, ast.While):
                self.bind(node.target, Unknown("a loop variable"), None, env)
            self.branches(None, [node.body, []], env, inference, node)
            self.block(node.orelse, env, inference)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            quiet = inference
            for item in node.items:
                self.scan(item.context_expr, env, inference)
                quiet = quiet or self._no_grad(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, Unknown("a context manager's value"), None, env)
            self.block(node.body, env, quiet)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.block(node.body, env, inference)  # type: ignore[attr-defined]
            handlers = [h.body for h in node.handlers]  # type: ignore[attr-defined]
            self.branches(None, [[], *handlers], env, inference, node)
            self.block(node.orelse, env, inference)  # type: ignore[attr-defined]
            self.block(node.finalbody, env, inference)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Match):
            self.scan(node.subject, env, inference)
            self.branches(None, [c.body for c in node.cases], env, inference, node)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.scan(child, env, inference)

    def branches(
        self, test: Any, bodies: list[list[ast.stmt]], env: dict[str, Any], inference: bool, node: ast.stmt
    ) -> None:
        """Run the branch a known test picks; else each on a copy, then merge what they bound.

        Merged: the names a branch bound (the others are as before, and a name bound to the
        value it had merges to it), and any name whose value is unequal to itself (NaN: it
        merges to Unknown, as ``nan == nan`` is false); names are bound only by :meth:`bind`,
        a ``:=`` (:meth:`_bound`) and this merge."""
        known = truth(test) if test is not None else None
        if known is not None and len(bodies) == 2:
            self.block(bodies[0] if known else bodies[1], env, inference)
            return
        outer = self._written
        changed = self._written = set()
        results = []
        for body in bodies:
            local = dict(env)
            self.block(body, local, inference)
            results.append(local)
        self._written = outer
        if self._unequal:
            changed.update(n for n, v in env.items() if not v == v)  # noqa: SIM201 (as the merge compares)
        if outer is not None:
            outer.update(changed)
        for name in changed:
            values = [r.get(name, Unknown(f"`{name}` is not set on every path")) for r in results]
            first = values[0]
            same = all(type(v) is type(first) and v == first for v in values[1:])
            env[name] = (
                first
                if same
                else Unknown(
                    f"`{name}` depends on which way the {type(node).__name__.lower()} at line {node.lineno} goes"
                )
            )

    def bind(self, target: ast.expr, value: Any, source: ast.expr | None, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            if self._written is not None:
                self._written.add(target.id)
            if type(value) not in _EQUAL_TO_ITSELF and not value == value:  # noqa: SIM201 (NaN)
                self._unequal = True
            if source is not None and self._builds_model(source):
                self.models.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value if isinstance(value, (tuple, list)) and len(value) == len(target.elts) else None
            for index, element in enumerate(target.elts):
                self.bind(element, items[index] if items else Unknown("unpacked from a call"), None, env)
            first = target.elts[0] if target.elts else None
            if isinstance(first, ast.Name) and source is not None and self._builds_model(source):
                self.models.add(first.id)  # model, tokenizer = FastLanguageModel.from_pretrained(...)
        elif isinstance(target, ast.Attribute):
            dotted = _dotted(target)
            if dotted and source is not None and self._builds_model(source):
                self.models.add(dotted)
        elif isinstance(target, ast.Subscript) and self.names.qualname(target.value) == "os.environ":
            key = self.evaluator(env)(target.slice)
            if isinstance(key, str) and source is not None:
                self.environ[key] = Arg(value, key, self.at(target), self.at(source), self.source.segment(source))
                if key == "CUDA_VISIBLE_DEVICES" and isinstance(value, str):
                    self._visible(value)

    # -- calls -----------------------------------------------------------------------------

    def _bound(self, name: str, value: Any) -> None:
        """``name`` bound to ``value`` by the evaluator (``(name := value)``)."""
        if self._written is not None:
            self._written.add(name)
        if not value == value:  # noqa: SIM201 (NaN)
            self._unequal = True

    def evaluator(self, env: dict[str, Any]) -> Evaluator:
        """An evaluator over ``env`` (the last one made, when it is over the same names)."""
        evaluator = self._evaluator
        if evaluator is None or evaluator.env is not env:
            evaluator = self._evaluator = Evaluator(
                env, self.names, self.runtime, self._object, self.source, self._bound
            )
        return evaluator

    def _object(self, node: ast.Call) -> Any:
        call = self._seen.get(id(node))
        if call is not None and call.kind in _BUILT:
            return Built(call)
        return Unknown(f"the result of `{self.source.segment(node.func)}(...)` is known only when the script runs")

    def scan(self, expr: ast.expr, env: dict[str, Any], inference: bool, model_target: bool = False) -> None:
        """Record the calls inside ``expr``, innermost first (so an argument built by a call is known)."""
        if not _holds_call(expr):
            return
        seen, qualname_of, attribute = self._seen, self.names.qualname, ast.Attribute
        for node in self.index.calls_in(expr):
            if id(node) in seen:
                continue
            func = node.func
            method = func.attr if isinstance(func, attribute) else None
            if method == "backward":
                self.backward = True
            qualname = qualname_of(func) or ""
            kind = kind_of(qualname)
            if kind is None:
                if method is not None and (method in CASTS or method == "to"):
                    kind = self._cast_kind(node, model_target)
                if kind is None:  # (a model the file defines too: the name it is bound to is tracked in bind())
                    continue
            at = self.at(node)
            if kind == "cast" and isinstance(func, ast.Attribute) and func.end_lineno and func.end_col_offset:
                at = self._place(func.end_lineno, func.end_col_offset - len(func.attr.encode("utf-8")))
            call = Call(kind, self.source.segment(func), qualname, at, inference=inference)
            self._arguments(call, node, env)
            self._seen[id(node)] = call
            self.calls.append(call)

    def _arguments(self, call: Call, node: ast.Call, env: dict[str, Any]) -> None:
        evaluate = self.evaluator(env)
        params = AUTOCASTS.get(call.qualname) or SCALERS.get(call.qualname) or POSITIONAL.get(call.kind)
        if call.kind == "model":
            params = POSITIONAL["from_pretrained"]
        for index, positional in enumerate(node.args):
            if isinstance(positional, ast.Starred) or params is None or index >= len(params):
                continue
            value = evaluate(positional)
            call.args[params[index]] = Arg(value, None, None, self.at(positional), self.source.segment(positional))
        for keyword in node.keywords:
            value = evaluate(keyword.value)
            raw = self.source.segment(keyword.value)
            if keyword.arg is not None:
                call.args[keyword.arg] = Arg(value, keyword.arg, self.at(keyword), self.at(keyword.value), raw)
            elif isinstance(value, dict):  # **kwargs built from a dict precheck can read
                for key, item in value.items():
                    call.args[key] = Arg(item, key, self.at(keyword), self.at(keyword.value), f"**{raw}")
            else:
                self.unknown.append(("**" + raw, self.at(keyword), "keyword arguments not known before the run"))

    def _cast_kind(self, node: ast.Call, model_target: bool) -> str | None:
        """``model.half()``, ``model.to(torch.bfloat16)``: a cast of the trained model's weights."""
        func = node.func
        assert isinstance(func, ast.Attribute)
        if func.attr not in CASTS and func.attr != "to":
            return None
        receiver = func.value
        owner = _dotted(receiver)
        if (owner and owner in self.models) or model_target or self._builds_model(receiver):
            return "cast"
        return None

    def _builds_model(self, expr: ast.expr) -> bool:
        """A call chain that starts at a model loader or a module the file defines."""
        while True:
            if isinstance(expr, ast.Call):
                qualname = self.names.qualname(expr.func) or ""
                kind = kind_of(qualname)
                if kind in ("model", "unsloth", "peft"):
                    return True
                if isinstance(expr.func, ast.Name) and expr.func.id in self.modules:
                    return True
                expr = expr.func
            elif isinstance(expr, ast.Attribute):
                expr = expr.value
            else:
                return False

    def _model_target(self, target: ast.expr) -> bool:
        if type(target) is ast.Name:  # the commonest: its dotted name is itself
            return target.id in self.models
        dotted = _dotted(target)
        return bool(dotted) and dotted in self.models

    def _no_grad(self, expr: ast.expr) -> bool:
        func = expr.func if isinstance(expr, ast.Call) else expr
        return (self.names.qualname(func) or "") in NO_GRAD

    def _visible(self, value: str) -> None:
        hardware = self.runtime.hardware
        if hardware is not None and hardware.known:
            from ..hardware import with_visibility

            self.runtime.hardware = with_visibility(hardware, {"CUDA_VISIBLE_DEVICES": value})


def cast_dtype(call: Call) -> Arg | None:
    """The dtype a ``cast`` call gives the weights (None: a move to a device only)."""
    method = call.name.rsplit(".", 1)[-1]
    if method in CASTS:
        return Arg(Dtype(CASTS[method]), None, None, call.at, call.name + "()")
    for arg in call.args.values():
        if isinstance(arg.value, Dtype):
            return arg
    return None


def _holds_call(expr: ast.expr) -> bool:
    """False where ``expr`` surely holds no call (a constant, a name, or an attribute chain
    on one): :meth:`ModuleIndex.calls_in` would find none; True otherwise (it may)."""
    kind = type(expr)
    while kind is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
        kind = type(expr)
    return kind is not ast.Name and kind is not ast.Constant


def _dotted(expr: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return ".".join([expr.id, *reversed(parts)])


def _parameter_owners(calls: list[ast.Call]) -> list[str]:
    """``model`` in ``AdamW(model.parameters())``: the objects whose parameters are trained."""
    owners = []
    for node in calls:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("parameters", "named_parameters")
        ):
            dotted = _dotted(node.func.value)
            if dotted:
                owners.append(dotted)
    return owners


def _is_module(node: ast.ClassDef, names: Names) -> bool:
    for base in node.bases:
        qualname = names.qualname(base) or ""
        if qualname.endswith(("nn.Module", "PreTrainedModel", *_declared()[1])) or qualname == "Module":
            return True
    return False
