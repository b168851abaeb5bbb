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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, Protocol

from .python_index import ModuleIndex
from .python_instance import instance_constants
from .python_prepared import dotted, prepared_names
from .python_prepared import dotted as _dotted
from .python_returns import returned
from .python_values import UNHANDLED, Dtype, Evaluator, Names, Runtime, Source, Unknown, truth
from .tree_facts import remembered

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
#: DeepSpeed's engine and config, given the config as a dict or a path (deepspeedai/DeepSpeed
#: ``deepspeed/__init__.py`` ``initialize(args=None, model=None, optimizer=None,
#: model_parameters=None, training_data=None, lr_scheduler=None, distributed_port, mpu,
#: dist_init_required=None, collate_fn=None, config=None, mesh_param=None, config_params=None)``;
#: ``runtime/config.py`` ``DeepSpeedConfig(config, mpu=None, mesh_device=None)``)
DEEPSPEED_CONFIGS = {
    "deepspeed.initialize",
    "deepspeed.DeepSpeedConfig",
    "deepspeed.runtime.config.DeepSpeedConfig",
    "deepspeed.runtime.engine.DeepSpeedConfig",
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
    "deepspeed": ("config",),
    # ``.to(dtype)``, ``.to(device, dtype)``, ``.to(tensor)``: read by value (:func:`cast_dtype`)
    "cast": ("to_0", "to_1", "to_2"),
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
    #: the dict literal the value was written as, when it still holds (for the place of each key)
    literal: ast.Dict | None = field(default=None, repr=False, compare=False)
    #: the other code lines the value flows through on its way to the call (the keyword that
    #: passes a name decided above, the branch of a choice taken): cited with it
    through: tuple[int, ...] = field(default=(), compare=False)
    #: where the value came from when not from this line (an option's default, a launch's flag)
    via: str | None = None
    #: the launch's flag it was read from, as spelled (``--precision``): the key of a finding
    #: about it (:attr:`precheck.provenance.Origin.option`)
    option: str | None = None


class Flow(Protocol):
    """The values of the options a script parses (:class:`.python_options.Flow`)."""

    vias: dict[int, str]
    flagged: dict[int, tuple[str, str]]
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] | None
    #: the flags a launch gives the script (None: run on its own)
    flags: Mapping[str, Any] | None

    def call(self, node: ast.Call, evaluate: Any) -> Any: ...
    def attribute(self, base: Any, name: str, expr: ast.Attribute, function: ast.AST | None) -> Any: ...
    def rebound(self, space: Any, name: str, value: Any) -> Any: ...
    def mixed_precision(self, built: Built) -> tuple[Any, str]: ...
    def cite(self, line: int) -> str: ...
    def merged(self, values: list[Any], why: str) -> Any: ...


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


#: where a name got the value an argument passes (``dtype = torch.bfloat16`` before
#: ``torch_dtype=dtype``): kept in the names under this prefix (no identifier starts so), as
#: (the name's place, the value's place, the value as written); None once rebound otherwise
_DECIDED_AT = "\0at "
#: a call that swaps FlashAttention into a model's attention, by its name: a monkey patch such
#: as FastChat's ``replace_llama_attn_with_flash_attn()`` (``fastchat/train/llama_flash_attn_monkey_patch.py``
#: imports ``flash_attn.flash_attn_interface``) called for its effect alone; not a test
#: (``is_flash_attn_2_available()``) nor an undo (``disable_...``, ``unpatch_...``)
FLASH_PATCH = re.compile(r"(?i)^(?!is_|has_|check|disable|unpatch|restore|remove).*flash_?(?:attn|attention)")


#: the calls that bind a callable's first arguments, the call of their result being the callable's
#: (``functools.partial``: ``partial(func, *args, **keywords)(*more, **kw)`` calls
#: ``func(*args, *more, **keywords, **kw)``, CPython ``Lib/functools.py`` ``partial.__call__``)
_PARTIALS = frozenset(("functools.partial",))


def _partial_call(node: ast.Call, partial: ast.Call) -> ast.Call:
    """The call ``node`` (of ``partial(func, ...)``) as the call of ``func`` it makes, at ``node``'s place."""
    call = ast.Call(
        func=partial.args[0],
        args=[*partial.args[1:], *node.args],
        keywords=[*partial.keywords, *node.keywords],
    )
    return ast.copy_location(call, node)


def _deferred(node: ast.Call, qualname_of: Callable[[ast.expr], str | None]) -> tuple[ast.Call, ast.expr, str]:
    """A deferred construction (``Config(Trainer, plugins=...)``, as the frameworks declare them:
    ``Framework.python_deferred_calls``) as the call it defers, ``Trainer(plugins=...)`` (the same
    node positions, the class as the callee); the node itself when the class is not a name."""
    target = node.args[0]
    qualname = qualname_of(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
    if not qualname:
        return node, node.func, qualname_of(node.func) or ""
    deferred = ast.Call(func=target, args=node.args[1:], keywords=node.keywords)
    ast.copy_location(deferred, node)
    deferred.end_lineno, deferred.end_col_offset = node.end_lineno, node.end_col_offset
    return deferred, target, qualname


def flash_patch(expr: ast.expr) -> bool:
    """Whether a statement's expression is a call of a FlashAttention monkey patch."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return "lash" in name and FLASH_PATCH.match(name) is not None


#: a model config's attributes that choose its attention (transformers ``PretrainedConfig``:
#: ``_attn_implementation`` is the property over ``_attn_implementation_internal``)
#: (a plain ``config.attn_implementation = ...`` is an attribute no loader reads: left out)
_ATTENTION_ATTRIBUTES = frozenset({"_attn_implementation", "_attn_implementation_internal"})
#: the expressions that decide a value where they stand (a literal, ``torch.bfloat16``, a choice)
_DECISIONS = frozenset({ast.Constant, ast.Attribute, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Compare})
#: the dict literal a name was bound to (``ds_config = {...}``), while it holds: the place of each key
_LITERAL = "\0dict "
#: the launch's flag (as spelled, ``--precision``) a name's value was read from, while it holds:
#: a CLI builder's parameter the launch gives (``CLI(setup)``), a name bound from an expression
#: that reads one (``dtype = {...}[precision]``) or an option the flag gives (``args.precision``)
_FLAG_OF = "\0flag "
#: the other lines the value a name holds flows through after :data:`_DECIDED_AT`'s place
#: (:meth:`Collector._lines_through`), while it holds
_THROUGH = "\0through "
#: the keys set on a dict a name holds (``model_kwargs["attn_implementation"] = "flash_attention_2"``),
#: while they hold: key → (the key's place, the value's place, the value as written)
_KEYS_AT = "\0keys "
#: the values whose assignment is the place a setting is decided
_DECIDED = frozenset({str, bool, int, float, type(None), Dtype})

#: the calls whose value is kept as a :class:`Built` (an argument of a later call reads it)
_BUILT = frozenset(
    ("bnb", "lora-config", "model", "unsloth", "model-config", "hf-trainer", "precision-plugin", "accelerator")
)

#: the values that are always equal to themselves (unlike a float NaN)
_EQUAL_TO_ITSELF = frozenset({str, int, bool, type(None), Unknown, Dtype, Built})


@lru_cache(maxsize=1)
def _declared() -> tuple[Mapping[str, str], tuple[str, ...], Mapping[str, str | None]]:
    """What the frameworks declare about training scripts: the packages whose ``Trainer``/
    ``Fabric`` take ``precision=`` (each → its framework's dialect), the model base classes, and
    the precision plugins."""
    from . import registered  # the registry's table (the registry imports the sources)

    return registered.trainer_packages, registered.model_bases, registered.precision_plugins


@lru_cache(maxsize=1)
def _plugin_parameters() -> Mapping[str, tuple[str, ...]]:
    """A precision plugin's positional parameters when its first is not ``precision``
    (``Framework.python_plugin_parameters``)."""
    from . import registered  # the registry's table (the registry imports the sources)

    return registered.plugin_parameters


#: a precision plugin's positional parameters, unless its framework declares others
_PLUGIN_POSITIONAL = ("precision",)


@lru_cache(maxsize=1)
def _deferred_calls() -> frozenset[str]:
    """The calls that build another later, its callee first (``Framework.python_deferred_calls``)."""
    from . import registered  # the registry's table (the registry imports the sources)

    return frozenset(registered.deferred_calls)


@lru_cache(maxsize=4096)
def recipe_default(qualname: str) -> str | None:
    """The precision a recipe factory's trainer takes when the call passes none
    (``Framework.python_recipe_defaults``); None for any other call."""
    from . import registered  # the registry's table (the registry imports the sources)

    return next((default for pattern, default in registered.recipe_defaults if pattern.match(qualname)), None)


def _recipe(call: Call) -> bool:
    """A recipe factory's call: the run with its trainer (``llm.llama3_8b.finetune_recipe(...)``)."""
    return call.kind == "trainer-precision" and recipe_default(call.qualname) is not None


def plugin_precision(call: Call) -> str | None:
    """The precision a ``precision-plugin`` call sets by its name (``bf16_mixed()``), or None
    (it takes ``precision=``)."""
    return _declared()[2].get(call.qualname.split(".")[-1])


def trainer_dialect(call: Call) -> str | None:
    """The dialect of the framework whose ``Trainer`` a call constructs (None: not one)."""
    dialect: str | None = _declared()[0].get(call.qualname.split(".")[0])
    return dialect


@lru_cache(maxsize=4096)  # a pure function of the name, asked for every call of every script
def kind_of(qualname: str) -> str | None:
    """What a call configures, from its dotted callee name; None when it is not one precheck reads."""
    if qualname.startswith("<local>."):
        return None
    parts = qualname.split(".")
    last, owner = parts[-1], (parts[-2] if len(parts) > 1 else "")
    if last in HF_ARGUMENTS or (last.endswith("TrainingArguments") and last != "TrainingArguments"):
        # a library's subclass (sentence-transformers' SentenceTransformerTrainingArguments,
        # ``training_args.py``: ``class SentenceTransformerTrainingArguments(TransformersTrainingArguments)``)
        return "hf-trainer"
    if last in TRL_CONFIGS:
        # TRL's class when imported from trl or of unknown origin; a class of that name another
        # package defines is that package's (trlx's PPOConfig, open-instruct's RewardConfig), and
        # TRL's defaults are not its (a subclass of TRL's imported from elsewhere is left unread)
        return "trl" if len(parts) == 1 or parts[0] == "trl" else None
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
    if qualname in DEEPSPEED_CONFIGS:
        return "deepspeed"
    if last == "Accelerator" and parts[0] == "accelerate":
        return "accelerator"
    if last in ("Trainer", "Fabric") and parts[0] in _declared()[0]:
        return "trainer-precision"
    if parts[0] in _declared()[0] and recipe_default(qualname) is not None:
        return "trainer-precision"  # a recipe: the run with its trainer
    if last in _declared()[2] and parts[0] in _declared()[0]:
        return "precision-plugin"
    if last.endswith("Trainer"):
        return "trainer"
    return None


@dataclass(slots=True, eq=False, repr=False)
class _Static:
    """What :class:`Collector` reads from a module before its statements, the same whatever
    the launch's flags: kept with the tree (:func:`.tree_facts.remembered`), never changed."""

    #: one walk: what the rest looks up in the tree
    index: ModuleIndex
    names: Names
    #: names whose parameters the script trains (``AdamW(model.parameters())``, ``accelerator.prepare(self.model)``)
    models: frozenset[str]
    #: classes the file defines that subclass ``nn.Module``
    modules: set[str]
    #: classes that subclass a training config class → its kind
    configs: dict[str, str]
    #: module-level functions by name
    entries: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    #: module-level function name → the lines that name it (:func:`_word_lines`)
    words: dict[str, list[int]]

    @classmethod
    def of(cls, tree: ast.Module, code: str) -> _Static:
        source = Source(code)
        index = ModuleIndex(tree, code)
        names = Names.of(tree, index.bindings)
        names.memo = {}  # the names are fixed from here on (a memo for the classes read here)
        models = {*_parameter_owners(index.parameter_calls), *prepared_names(tree, code)}
        entries = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return cls(
            index,
            names,
            frozenset(models),
            {c.name for c in index.classes if _is_module(c, names)},
            _config_subclasses(index.classes, names),
            entries,
            _code_lines(source, _word_lines(source, entries)),
        )


class Collector:
    """Reads a module's statements in order and collects the :class:`Call` records."""

    def __init__(self, tree: ast.Module, code: str, runtime: Runtime, flow: Flow | None = None):
        self.tree = tree
        #: the options the script parses, followed as values (None: not followed)
        self.flow = flow
        #: why each branch being read was taken, where its test reads an option (innermost last)
        self._taken: list[str] = []
        #: how many calls deep :meth:`_returned` reads functions now
        self._depth = 0
        #: the function whose body is read now (None: the module's own statements)
        self._function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        # what the module alone decides, worked out once per tree (a script read once per launch)
        static = remembered(tree, ("collector", code), partial(_Static.of, tree, code))
        self.source = Source(code)  # (its lines, kept with the tree, would double a kept script's size)
        self.index = static.index
        # (the dotted names worked out are the collector's own: kept with the tree, they would
        # hold every attribute node's name for as long as it lives)
        self.names = Names(static.names.imports, static.names.star, static.names.defined, {})
        self.runtime = runtime
        self.runtime.unsloth = self.names.imported_from("unsloth")
        if flow is not None:
            flow.functions = self.index.functions
        self.calls: list[Call] = []
        self._seen: dict[int, Call] = {}
        #: ``os.environ[NAME] = value`` assignments, last one wins
        self.environ: dict[str, Arg] = {}
        #: the script calls ``.backward()``: a training loop
        self.backward = False
        #: the module constructs an ``Accelerator`` and calls ``.prepare(...)``
        self.accelerated = "Accelerator" in code
        self.prepared = False
        #: the module builds a trainer's default config for callers that pass none (``if args is
        #: None: args = TrainingArguments(...)`` in a method): a library's trainer, not a run
        self.library = False
        #: every line that calls ``.backward()``
        self.backward_lines: list[int] = []
        #: the first line that calls ``.backward()`` (casts after it are for saving, not training)
        self.backward_at: int | None = None
        #: names (``model``, ``self.model``) whose parameters the script trains
        self.models: set[str] = set(static.models)
        #: modules the script freezes on every path it takes (``vae.requires_grad_(False)``): not
        #: trained, so a cast of one (``vae.to(dtype=weight_dtype)``) is not of the trained weights
        self.frozen: set[str] = set()
        #: classes the file defines that subclass ``nn.Module``
        self.modules = static.modules
        #: classes the file defines that subclass a training config class (``class
        #: MyArguments(TrainingArguments)``): calls of them are that config, with its inherited fields
        self.configs = static.configs
        #: values (keys as written) that could not be read, for notes: (key, where, why)
        self.unknown: list[tuple[str, tuple[int, int], str]] = []
        #: the names bound since the innermost undecided branch began (None: outside any)
        self._written: set[str] | None = None
        #: a value unequal to itself (NaN) was bound: a merge must look at every name
        self._unequal = False
        #: the evaluator of the names last read (dropped when the run ends: it refers back to the collector)
        self._evaluator: Evaluator | None = None
        #: module-level functions, while the module's own statements are read (their calls are recorded)
        self._entries: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = static.entries
        #: function name → its one call from the module's statements and what it passes (None: not known)
        self._sites: dict[str, tuple[ast.Call, dict[str | int, tuple[Any, Any]] | None]] = {}
        #: reading the module's own statements (not a function's body)
        self._module = False
        #: FlashAttention monkey patches the module calls on every path (:func:`flash_patch`)
        self.patches: list[ast.Call] = []
        #: ``torch.backends.cuda.matmul.allow_tf32 = ...`` / ``torch.set_float32_matmul_precision(...)``,
        #: the last one read (Unknown when set in a branch precheck cannot decide)
        self.tf32: Arg | None = None
        #: object → the attention implementation the script sets on it as an attribute
        self.attention: dict[str, Arg] = {}
        #: module-level function name → the lines that name it (:func:`_word_lines`)
        self._words: dict[str, list[int]] = static.words

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
        self._module = True
        self.block(self.tree.body, env, inference=False)
        self._module = False
        constants = instance_constants(self.index.classes, self.source.code)
        for node in _callers_first(self.index.functions, self._entries, self._words):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local = dict(env)
                arguments = node.args
                params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                params.extend(p for p in (arguments.vararg, arguments.kwarg) if p is not None)
                given = self._called_once(node, env)
                if (
                    given is None
                    and self.flow is not None
                    and self.flow.flags is not None  # (on its own: any flag may set them, left unknown)
                    and _handed_to_cli(self.tree, node.name)
                ):
                    given = self._command_values(node, env)
                for param in params:
                    if given is not None and param.arg in given:
                        local[param.arg] = given[param.arg]
                        if _DECIDED_AT + param.arg in given:
                            local[_DECIDED_AT + param.arg] = given[_DECIDED_AT + param.arg]
                        if _FLAG_OF + param.arg in given:
                            local[_FLAG_OF + param.arg] = given[_FLAG_OF + param.arg]
                    else:
                        local[param.arg] = Unknown(f"`{param.arg}` is a parameter of `{node.name}`")
                if id(node) in constants:  # a method: `self.use_amp` set once to a constant in __init__
                    local[arguments.args[0].arg] = constants[id(node)]
                inference = any(self._no_grad(d) for d in node.decorator_list)
                self._function = node
                self.block(node.body, local, inference)
                self._function = None

    def _called_once(self, node: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Any]) -> dict[str, Any] | None:
        """The parameters of a module-level function the module's own code calls once, and
        nothing else calls (``if __name__ == "__main__": setup()``): the values that call passes
        and the defaults of the others. None when it is called otherwise (or not at all)."""
        site = self._sites.get(node.name)
        if site is None or self._entries.get(node.name) is not node:
            return None
        call, passed = site
        if passed is None or len(self._words.get(node.name, ())) != 1:
            return None  # another call (in a function, a lambda), or the name handed on (`CLI(setup)`)
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        if len(call.args) > len(positional):
            return None
        values: dict[str, Any] = {}
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        pairs = [
            *zip(positional, defaults, strict=True),
            *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
        ]
        evaluate = self.evaluator(env)
        for index, (param, default) in enumerate(pairs):
            if param.arg in passed:
                value, place = passed[param.arg]
            elif index < len(call.args):
                value, place = passed[index]
            elif default is not None:
                value, place = evaluate(default), self._place_of(param, default, env)
            else:
                continue
            values[param.arg] = value
            if place is not None and type(value) in _DECIDED:
                values[_DECIDED_AT + param.arg] = place
        return values

    def _command_values(self, node: ast.FunctionDef | ast.AsyncFunctionDef, env: dict[str, Any]) -> dict[str, Any]:
        """The parameters of a function a CLI builder runs (``jsonargparse.CLI(setup)``,
        ``fire.Fire(main)``) under a launch: each is the flag of its name the launch gives, else
        its default."""
        flags = self.flow.flags if self.flow is not None else None
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        pairs = [
            *zip(positional, defaults, strict=True),
            *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
        ]
        evaluate = self.evaluator(env)
        values: dict[str, Any] = {}
        for param, default in pairs:
            given = flags.get(param.arg) if flags is not None else None
            if given is not None:
                values[param.arg] = given.value
                values[_FLAG_OF + param.arg] = (given.spelled(param.arg), given.where)
            elif default is not None:
                values[param.arg] = evaluate(default)
                place = self._place_of(param, default, env)
                if place is not None and type(values[param.arg]) in _DECIDED:
                    values[_DECIDED_AT + param.arg] = place
        return values

    def block(self, body: list[ast.stmt], env: dict[str, Any], inference: bool) -> None:
        for statement in body:
            self.statement(statement, env, inference)

    def statement(self, node: ast.stmt, env: dict[str, Any], inference: bool) -> None:
        kind = type(node)
        if kind is ast.Expr or kind is ast.Return:  # the commonest: one expression (or none)
            if node.value is not None:  # type: ignore[attr-defined]
                self.scan(node.value, env, inference)  # type: ignore[attr-defined]
                if kind is ast.Expr and self._module and self._written is None and flash_patch(node.value):  # type: ignore[attr-defined]
                    self.patches.append(node.value)  # type: ignore[attr-defined]
                if kind is ast.Expr:
                    self._changed_in_place(node.value, env)  # type: ignore[attr-defined]
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
            if _method_fallback(self._function, node.test):  # type: ignore[attr-defined]
                # `if args is None: args = KTOConfig(...)` / `elif ...: args = SFTConfig(**args.to_dict())`
                # in a class's method: the library's default for a caller that passes none, or its
                # conversion of the caller's (trl/trainer/sft_trainer.py:925-934), not a run
                before = len(self.calls)
                self.branches(test, [node.body, node.orelse], env, True, node)  # type: ignore[attr-defined]
                self.library = self.library or any(c.kind in ("hf-trainer", "trl") for c in self.calls[before:])
                return
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
            why = self._branch_why(node, known, env)
            if why is not None:
                self._taken.append(why)
            self.block(bodies[0] if known else bodies[1], env, inference)
            if why is not None:
                self._taken.pop()
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
            why = f"`{name}` depends on which way the {type(node).__name__.lower()} at line {node.lineno} goes"
            merged = self.flow.merged(values, why) if not same and self.flow is not None else None
            env[name] = first if same else merged if merged is not None else Unknown(why)

    def bind(self, target: ast.expr, value: Any, source: ast.expr | None, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            if self._written is not None:
                self._written.add(target.id)
            where = _DECIDED_AT + target.id
            decided = self._decided(target, source, env) if source is not None and type(value) in _DECIDED else None
            through = self._lines_through(target, source, env) if decided is not None and source is not None else ()
            if through or _THROUGH + target.id in env:
                env[_THROUGH + target.id] = through
                if self._written is not None:
                    self._written.add(_THROUGH + target.id)
            if decided is not None:
                env[where] = decided
            elif where in env:
                env[where] = None
            else:
                where = ""
            if where and self._written is not None:
                self._written.add(where)
            flagged = _FLAG_OF + target.id
            flag = self._flag_in(source, env) if source is not None else None
            if flag is not None:
                env[flagged] = flag
            elif flagged in env:
                env[flagged] = None
            else:
                flagged = ""
            if flagged and self._written is not None:
                self._written.add(flagged)
            literal = _LITERAL + target.id
            if type(source) is ast.Dict and isinstance(value, dict):
                env[literal] = source
            elif literal in env:
                env[literal] = None
            else:
                literal = ""
            if literal and self._written is not None:
                self._written.add(literal)
            if _KEYS_AT + target.id in env:  # a new value: the keys set on the old one are not its
                self._rebind_keys(target.id, None, env)
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
            if target.attr == "allow_tf32" and source is not None:
                self._tf32(target, value, source)
            if target.attr in ("plugins", "precision") and source is not None:
                self._recipe_edit(target, value, source, env)
            owner_name = target.value.id if type(target.value) is ast.Name else None
            if owner_name is not None and self.flow is not None and owner_name in env:
                rebound = self.flow.rebound(env[owner_name], target.attr, value)
                if rebound is not None:  # `args.x = ...` on an options namespace, read in order
                    env[owner_name] = rebound
                    if self._written is not None:
                        self._written.add(owner_name)
            dotted = _dotted(target)
            if dotted and source is not None and self._builds_model(source):
                self.models.add(dotted)
            if dotted and source is not None and target.attr in _ATTENTION_ATTRIBUTES:
                # `config._attn_implementation = "flash_attention_2"` (a config the model is loaded
                # with, or the loaded model's own: transformers looks it up at every forward)
                owner = dotted.rsplit(".", 1)[0]
                self.attention[owner] = Arg(
                    value, target.attr, self.at(target), self.at(source), self.source.segment(source)
                )
        elif isinstance(target, ast.Subscript) and self.names.qualname(target.value) != "os.environ":
            self._store(target, value, env, source)
        elif isinstance(target, ast.Subscript) and self.names.qualname(target.value) == "os.environ":
            key = self.evaluator(env)(target.slice)
            if isinstance(key, str) and source is not None:
                self.environ[key] = Arg(value, key, self.at(target), self.at(source), self.source.segment(source))
                if key == "CUDA_VISIBLE_DEVICES" and isinstance(value, str):
                    self._visible(value)

    def _recipe_edit(self, target: ast.Attribute, value: Any, source: ast.expr, env: dict[str, Any]) -> None:
        """A change to a recipe's trainer precision, read into the recipe's call: ``recipe.trainer.plugins
        = fp16_mixed()`` replaces the plugin the factory built (the framework's documented way to
        change a recipe's precision, cited where it declares its recipes; ``run.Config``/``run.Partial``
        attributes are the arguments of the call they build, ``nemo_run/config.py``), ``recipe.trainer.plugins.precision
        = "16-mixed"`` the plugin's precision. In a branch precheck cannot decide the change is unknown."""
        parts = (_dotted(target) or "").split(".")
        if (
            len(parts) not in (3, 4)
            or parts[1:3] != ["trainer", "plugins"]
            or (len(parts) == 4) != (target.attr == "precision")
        ):
            return
        recipe = env.get(parts[0])
        if not (isinstance(recipe, Built) and _recipe(recipe.call)):
            return
        if self._written is not None:
            value = Unknown("set in a branch precheck cannot decide")
        arg = Arg(value, target.attr, self.at(target), self.at(source), self.source.segment(source))
        args = recipe.call.args
        if target.attr == "plugins":
            args.pop("precision", None)  # a new plugin: the precision set on the old one is not its
            args["plugins"] = arg
        else:
            args["precision"] = arg

    def _tf32(self, target: ast.Attribute, value: Any, source: ast.expr) -> None:
        """``torch.backends.cuda.matmul.allow_tf32 = value``: TF32 matmuls (torch's default False
        since 1.12), on every path read, or unknown in a branch precheck cannot decide."""
        if self.names.qualname(target) != "torch.backends.cuda.matmul.allow_tf32":
            return
        if self._written is not None:
            value = Unknown("set in a branch precheck cannot decide")
        self.tf32 = Arg(
            value, target.attr, self.at(target), self.at(source), self.source.segment(source), via=self._via(source)
        )

    def _matmul_precision(self, node: ast.Call, env: dict[str, Any]) -> None:
        """``torch.set_float32_matmul_precision("high" | "medium")``: TF32 (or bf16) matmuls;
        ``"highest"``: full float32 (torch ``set_float32_matmul_precision``)."""
        given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "precision"), None)
        if given is None:
            return
        chosen = self.evaluator(env)(given)
        value: Any = (
            chosen in ("high", "medium") if isinstance(chosen, str) else Unknown(f"`{self.source.segment(given)}`")
        )
        if self._written is not None:
            value = Unknown("set in a branch precheck cannot decide")
        self.tf32 = Arg(value, None, None, self.at(given), self.source.segment(given), via=self._via(given))

    def _decided(self, target: ast.Name, source: ast.expr, env: dict[str, Any]) -> Any:
        """Where the value bound to ``target`` is decided: here when ``source`` is a literal or
        a choice between literals (``dtype = 'bfloat16' if is_bf16_supported() else 'float16'``);
        where the one name it looks up was decided when it only translates that name
        (``ptdtype = {'bfloat16': torch.bfloat16, ...}[dtype]``, ``x = dtype``); else nowhere."""
        kind = type(source)
        if kind is ast.Name or kind is ast.Subscript:
            found = [env.get(_DECIDED_AT + n.id) for n in ast.walk(source) if type(n) is ast.Name]
            places = [f for f in found if type(f) is tuple]
            return places[0] if len(places) == 1 else None
        if kind in _DECISIONS:
            return (self.at(target), self.at(source), self.source.segment(source), self._via(source))
        if kind is ast.Call and self.flow is not None and id(source) in self.flow.vias:
            # `dtype = dtype_of(args.bits)`: a function of the module returned it
            return (self.at(target), self.at(source), self.source.segment(source), self._via(source))
        return None

    def _lines_through(self, target: ast.Name, source: ast.expr, env: dict[str, Any]) -> tuple[int, ...]:
        """The other lines a value :meth:`_decided` places flows through to ``target``: the
        name it translates and this line (``ptdtype = {...}[dtype]``), the test and branch
        taken of a choice over lines."""
        kind = type(source)
        if kind is ast.Name or kind is ast.Subscript:
            names = [n.id for n in ast.walk(source) if type(n) is ast.Name]
            found = [n for n in names if type(env.get(_DECIDED_AT + n)) is tuple]
            return _through(env, found[0], target.lineno) if len(found) == 1 else ()
        return self._choice_lines(source, env) if kind is ast.IfExp else ()

    def _choice_lines(self, expr: ast.expr, env: dict[str, Any]) -> tuple[int, ...]:
        """The lines of a choice (``a if test else b``, over lines) that decide its value: the
        test's and the branch's taken, through nested choices; none where the test is not known."""
        lines: list[int] = []
        while type(expr) is ast.IfExp:
            test = truth(self.evaluator(env)(expr.test))
            if test is None:
                return ()
            lines.append(expr.test.lineno)
            expr = expr.body if test else expr.orelse
            lines.append(expr.lineno)
        return tuple(dict.fromkeys(lines))

    # -- calls -----------------------------------------------------------------------------

    def _store(self, target: ast.Subscript, value: Any, env: dict[str, Any], source: ast.expr | None = None) -> None:
        """``config["fp16"]["enabled"] = True`` on a dict the script built: the dict with it (a
        copy along the way: other branches keep theirs); a key not known spoils the dict."""
        keys: list[ast.expr] = []
        node: ast.expr = target
        while isinstance(node, ast.Subscript):
            keys.append(node.slice)
            node = node.value
        if type(node) is not ast.Name or not isinstance(env.get(node.id), dict):
            return
        name, old = node.id, env[node.id]
        places = self._key_places(node, env) if len(keys) == 1 and source is not None else {}
        evaluate = self.evaluator(env)
        path = [evaluate(k) for k in reversed(keys)]
        new = _stored(old, path, value) if all(isinstance(k, str) for k in path) else None
        self._rebind(name, new if new is not None else Unknown(f"`{name}` is changed at a key not known"), env)
        if new is not None and len(path) == 1 and source is not None:
            # where the key is set: an argument spread from the dict (`**model_kwargs`) cites it
            places[path[0]] = (self.at(target), self.at(source), self.source.segment(source))
            self._rebind_keys(name, places, env)
        for other, held in list(env.items()):
            if held is old and other != name:  # another name for the same dict
                self._rebind(other, Unknown(f"`{other}` is changed through `{name}`"), env)

    def _rebind(self, name: str, value: Any, env: dict[str, Any]) -> None:
        env[name] = value
        env[_LITERAL + name] = None  # (its literal no longer says what it holds)
        if self._written is not None:
            self._written.update((name, _LITERAL + name))
        if not isinstance(value, dict) and _KEYS_AT + name in env:
            self._rebind_keys(name, None, env)

    def _rebind_keys(self, name: str, keys: dict[str, Any] | None, env: dict[str, Any]) -> None:
        env[_KEYS_AT + name] = keys
        if self._written is not None:
            self._written.add(_KEYS_AT + name)

    def _changed_in_place(self, expr: ast.expr, env: dict[str, Any]) -> None:
        """``config.update(...)``, ``config["x"].setdefault(...)``: a dict changed by a method."""
        if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute):
            return
        if expr.func.attr not in ("update", "setdefault", "pop", "popitem", "clear"):
            return
        node = expr.func.value
        while isinstance(node, ast.Subscript):
            node = node.value
        if type(node) is ast.Name and isinstance(env.get(node.id), dict):
            self._rebind(node.id, Unknown(f"`{node.id}` is changed by `.{expr.func.attr}(...)`"), env)

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
                env, self.names, self.runtime, self._object, self.source, self._bound, self._attribute_of
            )
        return evaluator

    def _object(self, node: ast.Call) -> Any:
        call = self._seen.get(id(node))
        if call is not None and (call.kind in _BUILT or _recipe(call)):
            return Built(call)  # (a recipe: its trainer's precision may be changed through it)
        if self.flow is not None and self._evaluator is not None:
            value = self.flow.call(node, self._evaluator)
            if value is not None:
                return value
            value = self._returned(node)
            if value is not UNHANDLED:
                return value
            value = self._string_method(node)
            if value is not UNHANDLED:
                return value
        return Unknown(f"the result of `{self.source.segment(node.func)}(...)` is known only when the script runs")

    def _returned(self, node: ast.Call) -> Any:
        """What a function of the module returns for this call (:mod:`.python_returns`), read a
        few calls deep; UNHANDLED where it is not read so."""
        func = node.func
        function = self._entries.get(func.id) if type(func) is ast.Name else None  # type: ignore[attr-defined]
        outer = self._evaluator
        if function is None or outer is None or self._depth >= 3 or self.flow is None:
            return UNHANDLED
        self._depth += 1
        try:
            value, line = returned(function, node, outer, self._local_evaluator)
        finally:
            self._depth -= 1
            self._evaluator = outer
        if value is not UNHANDLED and line is not None:
            reads = [v for a in [*node.args, *(k.value for k in node.keywords)] for v in self._vias_in(a, outer.env)]
            said = f"returned by `{function.name}` at {self.flow.cite(line)}"
            self.flow.vias[id(node)] = "; ".join([said, *reads])
        return value

    def _string_method(self, node: ast.Call) -> Any:
        """``bits.lower()`` / ``.upper()`` / ``.strip()`` on a known string (an option's value
        normalised before it is compared); UNHANDLED otherwise."""
        func = node.func
        if type(func) is not ast.Attribute or func.attr not in _STRING_METHODS or node.args or node.keywords:  # type: ignore[attr-defined]
            return UNHANDLED
        evaluator = self._evaluator
        base = evaluator(func.value) if evaluator is not None else None  # type: ignore[attr-defined]
        return getattr(base, func.attr)() if isinstance(base, str) else UNHANDLED  # type: ignore[attr-defined]

    def _local_evaluator(self, env: dict[str, Any]) -> Evaluator:
        """An evaluator over a function's own names, while :meth:`_returned` reads its body."""
        evaluator = self._evaluator = Evaluator(
            env, self.names, self.runtime, self._object, self.source, None, self._attribute_of
        )
        return evaluator

    def _attribute_of(self, base: Any, name: str, expr: ast.Attribute) -> Any:
        """``args.x`` on an options namespace, ``accelerator.mixed_precision``; UNHANDLED: not known here."""
        if self.flow is None:
            return UNHANDLED
        if isinstance(base, Built) and base.call.kind == "accelerator" and name == "mixed_precision":
            value, why = self.flow.mixed_precision(base)
            if why:
                self.flow.vias[id(expr)] = why
            return value
        return self.flow.attribute(base, name, expr, self._function)

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
            if method == "prepare" and self.accelerated:
                self.prepared = True  # accelerator.prepare(model, ...): the script trains through accelerate
            if method == "requires_grad_" and self._written is None and _freezes(node):
                owner = _dotted(func.value)  # type: ignore[attr-defined]
                if owner:
                    self.frozen.add(owner)
            if method == "backward":
                self.backward = True
                self.backward_lines.append(node.lineno)
                if self.backward_at is None or node.lineno < self.backward_at:
                    self.backward_at = node.lineno
            if type(func) is ast.Name and func.id in self._entries:
                self._site(func.id, node, env)
            if method == "set_float32_matmul_precision" and qualname_of(func) == "torch.set_float32_matmul_precision":
                self._matmul_precision(node, env)
            original = node
            if type(func) is ast.Call and func.args and qualname_of(func.func) in _PARTIALS:
                node = _partial_call(node, func)  # `partial(f, a=1)(b=2)`: the call `f(a=1, b=2)`
                func = node.func
            qualname = qualname_of(func) or ""
            if node.args and qualname in _deferred_calls():
                node, func, qualname = _deferred(node, qualname_of)
            kind = kind_of(qualname)
            if kind is None and self.configs and type(func) is ast.Name:
                kind = self.configs.get(func.id)
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
            self._seen[id(original)] = call
            self.calls.append(call)

    def _site(self, name: str, node: ast.Call, env: dict[str, Any]) -> None:
        """A call of a module-level function from the module's own statements: what it passes
        (by keyword, and by place under its index); a second call, or ``*args``, spoils it."""
        if name in self._sites:
            self._sites[name] = (node, None)
            return
        evaluate = self.evaluator(env)
        passed: dict[str | int, tuple[Any, Any]] | None = {}
        for index, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                passed = None
                break
            passed[index] = (evaluate(argument), self._place_of(argument, argument, env))  # type: ignore[index]
        for keyword in node.keywords:
            if passed is None or keyword.arg is None:
                passed = None
                break
            passed[keyword.arg] = (evaluate(keyword.value), self._place_of(keyword, keyword.value, env))
        self._sites[name] = (node, passed)

    def _place_of(self, key: ast.expr | ast.keyword | ast.arg, value: ast.expr, env: dict[str, Any]) -> Any:
        """Where an argument's value is decided: where the name it passes was, else here."""
        if type(value) is ast.Name:
            decided = env.get(_DECIDED_AT + value.id)
            return decided if type(decided) is tuple else None
        return (self.at(key), self.at(value), self.source.segment(value), self._via(value))  # type: ignore[arg-type]

    def _arguments(self, call: Call, node: ast.Call, env: dict[str, Any]) -> None:
        evaluate = self.evaluator(env)
        params = AUTOCASTS.get(call.qualname) or SCALERS.get(call.qualname) or POSITIONAL.get(call.kind)
        if call.kind == "model":
            params = POSITIONAL["from_pretrained"]
        elif call.kind == "precision-plugin":  # HalfPrecision("bf16-true"), BitsandbytesPrecision("nf4", dtype)
            params = _plugin_parameters().get(call.qualname.rsplit(".", 1)[-1], _PLUGIN_POSITIONAL)
        for index, positional in enumerate(node.args):
            if isinstance(positional, ast.Starred) or params is None or index >= len(params):
                continue
            value = evaluate(positional)
            decided = env.get(_DECIDED_AT + positional.id) if type(positional) is ast.Name else None
            if type(decided) is tuple and type(value) in _DECIDED:
                through = _through(env, positional.id, positional.lineno)  # type: ignore[attr-defined]
                call.args[params[index]] = self._flagged(
                    Arg(
                        value,
                        None,
                        None,
                        decided[1],
                        decided[2],
                        via=decided[3],
                        through=through,
                    ),
                    positional,
                    env,
                )
                continue
            call.args[params[index]] = self._flagged(
                Arg(
                    value,
                    None,
                    None,
                    self.at(positional),
                    self.source.segment(positional),
                    via=self._via(positional),
                ),
                positional,
                env,
            )
            if type(positional) is ast.IfExp:
                call.args[params[index]].through = self._choice_lines(positional, env)
        for keyword in node.keywords:
            value = evaluate(keyword.value)
            raw = self.source.segment(keyword.value)
            if keyword.arg is not None and isinstance(value, dict):
                literal = keyword.value if type(keyword.value) is ast.Dict else None
                if type(keyword.value) is ast.Name:
                    literal = env.get(_LITERAL + keyword.value.id)
                call.args[keyword.arg] = Arg(value, keyword.arg, self.at(keyword), self.at(keyword.value), raw, literal)
                continue
            if keyword.arg is not None:
                decided = env.get(_DECIDED_AT + keyword.value.id) if type(keyword.value) is ast.Name else None
                if type(decided) is tuple and type(value) in _DECIDED:
                    # `dtype = torch.bfloat16` ... `torch_dtype=dtype`: the line that decides it,
                    # and the keyword's own line, that passes it
                    through = _through(env, keyword.value.id, keyword.lineno)  # type: ignore[attr-defined]
                    call.args[keyword.arg] = self._flagged(
                        Arg(
                            value,
                            keyword.arg,
                            decided[0],
                            decided[1],
                            decided[2],
                            via=decided[3],
                            through=through,
                        ),
                        keyword.value,
                        env,
                    )
                    continue
                call.args[keyword.arg] = self._flagged(
                    Arg(
                        value,
                        keyword.arg,
                        self.at(keyword),
                        self.at(keyword.value),
                        raw,
                        via=self._via(keyword.value),
                    ),
                    keyword.value,
                    env,
                )
                if type(keyword.value) is ast.IfExp:  # a choice over lines: its test and the branch taken
                    call.args[keyword.arg].through = self._choice_lines(keyword.value, env)
            elif isinstance(value, dict):  # **kwargs built from a dict precheck can read
                places = self._key_places(keyword.value, env)
                for key, item in value.items():
                    place = places.get(key)
                    if place is not None and type(item) in _DECIDED:  # where the key was set, through the `**`
                        call.args[key] = Arg(item, key, place[0], place[1], place[2], through=(keyword.value.lineno,))
                        continue
                    call.args[key] = Arg(item, key, self.at(keyword), self.at(keyword.value), f"**{raw}")
            else:
                self.unknown.append(("**" + raw, self.at(keyword), "keyword arguments not known before the run"))

    def _key_places(self, expr: ast.expr, env: dict[str, Any]) -> dict[str, tuple[Any, Any, str]]:
        """Where each key of the dict ``expr`` names was set: in its literal, or by an item
        assignment after it (``model_kwargs["attn_implementation"] = "flash_attention_2"``)."""
        places: dict[str, tuple[Any, Any, str]] = {}
        literal = expr if type(expr) is ast.Dict else None
        if type(expr) is ast.Name:
            literal = env.get(_LITERAL + expr.id)
            set_later = env.get(_KEYS_AT + expr.id)
        else:
            set_later = None
        if isinstance(literal, ast.Dict):
            for key, item in zip(literal.keys, literal.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    places[key.value] = (self.at(key), self.at(item), self.source.segment(item))
        if isinstance(set_later, dict):
            places.update(set_later)
        return places

    def in_training_step(self, line: int) -> bool:
        """Whether ``line`` is at module level or in a function (the innermost holding it) that
        calls ``.backward()``: not in a validation or sampling function the loop calls."""
        holders = [f for f in self.index.functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
        if not holders:
            return True
        inner = max(holders, key=lambda f: f.lineno)
        end = inner.end_lineno or inner.lineno
        return any(inner.lineno <= at <= end for at in self.backward_lines)

    def _via(self, expr: ast.expr) -> str | None:
        """Where an argument's value came from, when options gave it: the options it reads
        (``args.mixed_precision``, ``x if args.bf16 else y``) and the branches taken on them."""
        flow = self.flow
        if flow is None or not (flow.vias or self._taken):
            return None
        parts = [*self._vias_in(expr), *self._taken]
        return "; ".join(dict.fromkeys(parts)) if parts else None

    def _flagged(self, arg: Arg, expr: ast.expr, env: dict[str, Any]) -> Arg:
        """``arg`` marked with the launch's flag ``expr`` reads its value from (its
        :attr:`Arg.option`, and where the launch gives it in its ``via``), if any."""
        flag = self._flag_in(expr, env)
        if flag is not None:
            arg.option = flag[0]
            given = f"the launch's {flag[0]} at {flag[1]}"
            arg.via = arg.via if arg.via is not None and flag[1] in arg.via else _joined(given, arg.via)
        return arg

    def _flag_in(self, expr: ast.expr, env: dict[str, Any]) -> tuple[str, str] | None:
        """The launch's flag (as spelled) whose value ``expr`` reads (not inside a call it
        makes), and where the launch gives it: a name the flag gave (:data:`_FLAG_OF`), an
        option's attribute the flag gave (``args.mixed_precision``); the first one read, None
        when it reads none."""
        flow = self.flow
        if flow is None or flow.flags is None:
            return None
        flagged = flow.flagged
        queue: list[ast.AST] = [expr]
        for node in queue:
            kind = type(node)
            if kind is ast.Name:
                found = env.get(_FLAG_OF + node.id)  # type: ignore[attr-defined]
                if type(found) is tuple:
                    return found
            elif kind is ast.Attribute and id(node) in flagged:
                return flagged[id(node)]
            if kind in _READS:
                queue.extend(ast.iter_child_nodes(node))
        return None

    def _vias_in(self, expr: ast.expr, env: dict[str, Any] | None = None) -> list[str]:
        """The provenance of the option reads in ``expr`` (not inside a call it makes); with
        ``env``, of the names it reads that an option gave (a parameter passed ``args.bf16``)."""
        flow = self.flow
        if flow is None or not (flow.vias or env):
            return []
        vias = flow.vias
        found: list[str] = []
        queue: list[ast.AST] = [expr]
        for node in queue:
            kind = type(node)
            via = vias.get(id(node)) if kind is ast.Attribute or kind is ast.Call else None
            if via is not None:
                found.append(via)
            elif kind is ast.Name and env is not None:
                decided = env.get(_DECIDED_AT + node.id)  # type: ignore[attr-defined]
                if type(decided) is tuple and decided[3]:
                    found.append(f"`{node.id}` set at {flow.cite(decided[1][0])}: {decided[3]}")  # type: ignore[attr-defined]
            elif kind in _READS:
                queue.extend(ast.iter_child_nodes(node))
        return found

    def _branch_why(self, node: ast.stmt, known: bool, env: dict[str, Any]) -> str | None:
        """``if args.mixed_precision == "fp16":`` read as ``known``: why that branch, for the
        values it decides (None: its test reads no option)."""
        test = getattr(node, "test", None)
        if self.flow is None or not isinstance(node, ast.If) or test is None:
            return None
        reads = self._vias_in(test, env)
        if not reads:
            return None
        return (
            f"`if {_cut(self.source.segment(test))}` at {self.flow.cite(node.lineno)} is {known} ({'; '.join(reads)})"
        )

    def _cast_kind(self, node: ast.Call, model_target: bool) -> str | None:
        """``model.half()``, ``model.to(torch.bfloat16)``: a cast of the trained model's weights."""
        func = node.func
        assert isinstance(func, ast.Attribute)
        if func.attr not in CASTS and func.attr != "to":
            return None
        receiver = func.value
        owner = _dotted(receiver)
        if owner and owner in self.frozen:
            return None  # a frozen module (a VAE, a text encoder used for inference) cast for speed
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


def _word_lines(source: Source, names: dict[str, Any]) -> dict[str, list[int]]:
    """For each name, the lines where it is written as a word (its calls, anything that hands
    it on, a comment that names it) but its ``def``: one line means one place uses it. Each
    name found with ``str.find`` (a pattern of every name costs more on a long module)."""
    code = source.code
    out: dict[str, list[int]] = {}
    for name in names:
        lines: list[int] = []
        start = code.find(name)
        while start >= 0:
            end = start + len(name)
            before = code[start - 1] if start else " "
            after = code[end] if end < len(code) else " "
            if not (before.isalnum() or before in "_." or after.isalnum() or after == "_"):
                line_start = code.rfind("\n", 0, start) + 1
                if not code[line_start:start].rstrip().endswith("def"):
                    number = code.count("\n", 0, start) + 1
                    if not lines or lines[-1] != number:
                        lines.append(number)
            start = code.find(name, end)
        if lines:
            out[name] = lines
    return out


def _code_lines(source: Source, words: dict[str, list[int]]) -> dict[str, list[int]]:
    """``words`` without the lines where a name written on several lines is only in a comment or
    a text (``# on the main process``, a model card in a triple-quoted string): the line's text
    with its strings and comment taken out must still name it, or a string on it be the name
    alone. (One use too many only keeps a function from being read as called once.)"""
    lines = source.text_lines
    inside: set[int] | None = None
    out: dict[str, list[int]] = {}
    for name, found in words.items():
        if len(found) < 2:
            out[name] = found
            continue
        if inside is None:
            inside = _text_lines(source.code)
        pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
        named = re.compile(rf"""["']{re.escape(name)}["']""")  # a string that is the name (`getattr(m, "main")`)
        out[name] = [
            n
            for n in found
            if n not in inside and (pattern.search(_code_of(lines[n - 1])) or named.search(lines[n - 1]))
        ]
    return out


#: what the scan of :func:`_text_lines` steps over: a comment, a one-line string, a triple quote
_TOKENS = re.compile(r"""#[^\n]*|[rRbBuUfF]{0,2}(?:"{3}|'{3}|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')""")


def _text_lines(code: str) -> set[int]:
    """The lines wholly inside a triple-quoted string (after its first line, before its last)."""
    out: set[int] = set()
    position = 0
    while True:
        match = _TOKENS.search(code, position)
        if match is None:
            return out
        token = match.group().lstrip("rRbBuUfF")
        if token in ('"' * 3, "'" * 3):
            end = code.find(token, match.end())
            if end < 0:
                return out
            first = code.count("\n", 0, match.start()) + 1
            last = first + code.count("\n", match.start(), end)
            out.update(range(first + 1, last))
            position = end + 3
        else:
            position = match.end()


def _code_of(line: str) -> str:
    """A line's text without its string literals and its comment."""
    bare = _STRINGS.sub('""', line)
    cut = bare.find("#")
    return bare if cut < 0 else bare[:cut]


#: one-line string literals (a prefix and escapes included)
_STRINGS = re.compile(r"""[rRbBuUfF]{0,2}(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")


def _callers_first(
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef],
    entries: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    words: dict[str, list[int]],
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """``functions`` in their order, but a module-level function used in one place after the
    function that place is in (so its call's values are known when its body is read)."""
    spans = sorted(
        ((f.lineno, f.end_lineno or f.lineno, i) for i, f in enumerate(functions)), key=lambda s: s[1] - s[0]
    )
    after: dict[int, int] = {}  # function index → the index of the function that calls it
    index_of = {id(f): i for i, f in enumerate(functions)}
    for name, node in entries.items():
        lines = words.get(name)
        if not lines or len(lines) != 1 or id(node) not in index_of:
            continue
        caller = next((i for start, end, i in spans if start <= lines[0] <= end), None)
        if caller is not None and caller != index_of[id(node)]:
            after[index_of[id(node)]] = caller
    if not after:
        return functions
    order: list[int] = []
    placed: set[int] = set()

    def place(index: int, depth: int = 0) -> None:
        if index in placed:
            return
        placed.add(index)
        caller = after.get(index)
        if caller is not None and depth < 32:
            place(caller, depth + 1)
        order.append(index)

    for index in range(len(functions)):
        place(index)
    return [functions[i] for i in order]


def _through(env: dict[str, Any], name: str, line: int) -> tuple[int, ...]:
    """The lines the value of ``name`` flows through, then ``line`` (where it is passed on)."""
    before: tuple[int, ...] = env.get(_THROUGH + name) or ()
    return tuple(dict.fromkeys((*before, line)))


def _stored(old: dict[str, Any], path: list[str], value: Any) -> dict[str, Any] | None:
    """``old`` with ``value`` at ``path`` (copies along it); None when a key on the way is not a dict."""
    out = dict(old)
    if len(path) == 1:
        out[path[0]] = value
        return out
    inner = out.get(path[0])
    if not isinstance(inner, dict):
        return None
    changed = _stored(inner, path[1:], value)
    if changed is None:
        return None
    out[path[0]] = changed
    return out


def cast_dtype(call: Call) -> Arg | None:
    """The dtype a ``cast`` call gives the weights (None: a move to a device only)."""
    method = call.name.rsplit(".", 1)[-1]
    if method in CASTS:
        return Arg(Dtype(CASTS[method]), None, None, call.at, call.name + "()")
    for arg in call.args.values():
        if isinstance(arg.value, Dtype):
            return arg
    return None


#: expressions whose parts an option's value passes through (``a if args.x else b``, ``not args.x``)
_READS = frozenset(
    {ast.Attribute, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.Subscript, ast.Name, ast.Load, ast.Constant}
)


def _joined(first: str, then: str | None) -> str:
    """``first; then`` (``first`` alone when ``then`` is None)."""
    return first if then is None else f"{first}; {then}"


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: string methods read on a known string (no argument)
_STRING_METHODS = frozenset({"lower", "upper", "strip", "casefold"})


def _freezes(node: ast.Call) -> bool:
    """``x.requires_grad_(False)`` / ``requires_grad_(requires_grad=False)``."""
    given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "requires_grad"), None)
    return isinstance(given, ast.Constant) and given.value is False


def _holds_call(expr: ast.expr) -> bool:
    """False where ``expr`` surely holds no call (a constant, a name, or an attribute chain
    on one): :meth:`ModuleIndex.calls_in` would find none; True otherwise (it may)."""
    kind = type(expr)
    while kind is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
        kind = type(expr)
    return kind is not ast.Name and kind is not ast.Constant


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


def _config_subclasses(classes: list[ast.ClassDef], names: Names) -> dict[str, str]:
    """Local class name → the kind of the training config it subclasses, through local
    subclasses too (``class A(TrainingArguments)``, ``class B(A)``)."""
    found: dict[str, str] = {}
    for _ in range(3):  # a chain of local subclasses, a few deep
        for node in classes:
            if node.name in found:
                continue
            for base in node.bases:
                kind = found.get(base.id) if isinstance(base, ast.Name) else None
                if kind is None:
                    qualname = names.qualname(base) or ""
                    kind = kind_of(qualname) if not qualname.startswith("<local>.") else None
                if kind in ("hf-trainer", "trl"):
                    found[node.name] = kind
                    break
    return found


def _is_module(node: ast.ClassDef, names: Names) -> bool:
    for base in node.bases:
        qualname = names.qualname(base) or ""
        if qualname.endswith(("nn.Module", "PreTrainedModel", *_declared()[1])) or qualname == "Module":
            return True
    return False


def _method_fallback(function: ast.FunctionDef | ast.AsyncFunctionDef | None, test: ast.expr) -> bool:
    """``if args is None:`` in a method (first parameter ``self``) on one of its own parameters:
    the body builds the default a caller that passes none gets (a library's trainer building
    its own ``XConfig``), not the run a script configures."""
    if function is None or not function.args.args or function.args.args[0].arg != "self":
        return False
    if not (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return False
    arguments = function.args
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args[1:], *arguments.kwonlyargs)}
    return test.left.id in names


#: callables that build a command line from a function's parameters and run it
_CLI_BUILDERS = frozenset({"CLI", "jsonargparse.CLI", "Fire", "fire.Fire"})


def _handed_to_cli(tree: ast.Module, name: str) -> bool:
    """Whether the module hands the function ``name`` to a CLI builder at its top level or under
    ``if __name__ == "__main__":`` (``CLI(setup)``, ``fire.Fire(main)``), as its only argument."""
    for statement in tree.body:
        nodes: list[ast.stmt] = [statement]
        if isinstance(statement, ast.If):
            nodes = list(statement.body)
        for node in nodes:
            value = node.value if isinstance(node, ast.Expr) else None
            if (
                isinstance(value, ast.Call)
                and dotted(value.func) in _CLI_BUILDERS
                and len(value.args) == 1
                and isinstance(value.args[0], ast.Name)
                and value.args[0].id == name
            ):
                return True
    return False
