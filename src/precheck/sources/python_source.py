"""Python training scripts and Jupyter notebooks, read with ``ast`` and never executed.

A script configures a run through calls, and each becomes a document a dialect reads:

- ``TrainingArguments(...)`` / ``Seq2SeqTrainingArguments`` / Unsloth's
  ``UnslothTrainingArguments`` (dialect ``hf-trainer``) or a TRL config — ``SFTConfig``,
  ``DPOConfig``, ``GRPOConfig``... (dialect ``trl``): one run per such call, whose keys
  are the call's keyword arguments, plus the model the script loads:
  ``AutoModelForCausalLM.from_pretrained(name, torch_dtype=... | dtype=...,
  quantization_config=BitsAndBytesConfig(...))``, TRL's ``ModelConfig(...)``, or Unsloth's
  ``FastLanguageModel.from_pretrained(model_name=..., dtype=None, load_in_4bit=True)``,
  and ``get_peft_model`` / ``peft_config=`` for adapters.
- a hand-written loop (dialect ``pytorch``): ``torch.autocast`` / ``torch.cuda.amp.autocast``,
  ``GradScaler``, ``model.half()`` / ``.bfloat16()`` / ``.to(dtype)``, read into the keys
  ``autocast``, ``autocast_dtype``, ``grad_scaler``, ``torch_dtype``... when the script
  calls ``.backward()`` or creates a GradScaler.

Unsloth, read in unslothai/unsloth: ``FastLanguageModel.from_pretrained`` defaults to
``dtype=None`` and ``load_in_4bit=True`` (``unsloth/models/loader.py:80-81@2025.3.19``);
``FastLlamaModel.from_pretrained`` turns ``dtype=None`` into ``torch.float16 if not
SUPPORTS_BFLOAT16 else torch.bfloat16``, a requested bfloat16 on a card without it into float16
("Device does not support bfloat16. Will change to float16."), and loads 4-bit weights with
``BitsAndBytesConfig(bnb_4bit_compute_dtype=dtype)`` (``unsloth/models/llama.py:1700-1703,
1767@2025.3.19``). ``SUPPORTS_BFLOAT16`` is ``major_version >= 8`` of the current device
(``unsloth/models/_utils.py:334-339@2025.3.19``; ``is_bfloat16_supported()`` returns it, :789). The dtype is
resolved here against the target hardware, as the script would on it.

Each value keeps where it is written: a node's key position is the keyword (``fp16=``),
its position the value; a default precheck fills in (Unsloth's ``dtype=None`` when the
call leaves it out) points at the call. A value that depends on what precheck cannot know
(an unknown GPU, an environment variable, a function's result) is left out, with a note:
never guessed. ``os.environ["CUDA_VISIBLE_DEVICES"] = "1"`` becomes the run's
environment. Notebooks: see :mod:`.notebook` for positions.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import FileTooLarge, InputError
from .flag_memo import read_once
from .nodes import ATTENTION_PATCH, Document, Node, SourceNote
from .notebook import Cell, code_cells
from .parsed import parse as parse_once
from .python_calls import Arg, Built, Call, Collector, cast_dtype, plugin_precision, recipe_default, trainer_dialect
from .python_model_config import fields_read
from .python_options import Flow, Given
from .python_values import Dtype, Runtime, Unknown
from .suppressions import scan as scan_suppressions
from .tree_facts import calls

if TYPE_CHECKING:
    from ..hardware import Hardware

#: a cheap test before parsing: a file holds a run only if it names a training config
#: class, a GradScaler, calls ``.backward(`` or names a precision (or a ``...Precision`` plugin)
#: and constructs a framework object that takes one (``Fabric(``, ``Trainer(``, ``Accelerator(``);
#: the rest is never parsed
_TRAINING_WORDS = re.compile(
    r"TrainingArguments|\b(?:SFT|DPO|GRPO|ORPO|KTO|Reward|PPO|CPO|BCO|PRM|OnlineDPO|RLOO|NashMD|XPO|GKD|GSPO|"
    r"IterativeSFT)Config\b|GradScaler|\.backward\s*\(|precision\s*=\s*[\"'](?:bf16|16)"
    r"|(?s:^(?=.*[pP]recision)(?=.*\b(?:Fabric|Trainer|Accelerator)\s*\())"
    r"|(?s:^(?=.*deepspeed)(?=.*(?:initialize|DeepSpeedConfig)))"
    r"|(?s:^(?=.*Accelerator)(?=.*\.prepare\())"
)
#: the parts of _TRAINING_WORDS, each tried only where its literal word occurs (a substring
#: search is many times faster than the regex, and most files hold none of them)
_BACKWARD = re.compile(r"\.backward\s*\(")
_PRECISION = re.compile(r"precision\s*=\s*[\"'](?:bf16|16)")
_CONFIG_END = re.compile(r"Config\b")
#: a framework object whose precision may be passed as a value (``L.Fabric(precision=precision)``)
_FRAMEWORK_OBJECT = re.compile(r"\b(?:Fabric|Trainer|Accelerator)\s*\(")
_CONFIG_NAMES = (
    "SFT", "DPO", "GRPO", "ORPO", "KTO", "Reward", "PPO", "CPO", "BCO", "PRM", "OnlineDPO", "RLOO", "NashMD", "XPO",
    "GKD", "GSPO", "IterativeSFT",
)  # fmt: skip


def _training_words(text: str) -> bool:
    """``_TRAINING_WORDS.search(text) is not None``, found faster."""
    if "TrainingArguments" in text or "GradScaler" in text:
        return True
    if "backward" in text and _BACKWARD.search(text):
        return True
    if "precision" in text and (_PRECISION.search(text) or _FRAMEWORK_OBJECT.search(text)):
        return True
    if "Precision" in text and _FRAMEWORK_OBJECT.search(text):
        return True  # a precision plugin handed to one (``plugins=HalfPrecision("bf16-true")``)
    if "deepspeed" in text and ("initialize" in text or "DeepSpeedConfig" in text):
        return True
    if "Accelerator" in text and ".prepare(" in text:
        return True
    if "_mixed" in text and any(f"{name}(" in text for name in _named_plugins()):
        return True  # a trainer's precision plugin that sets the precision by its name (``bf16_mixed()``)
    if "_recipe" in text and _RECIPE_CALL.search(text) and _declares_recipes():
        return True  # a recipe factory that builds the run with its trainer (``finetune_recipe(...)``)
    return "Config" in text and any(_config_name(text, m.start()) for m in _CONFIG_END.finditer(text))


#: a call of a recipe factory, by the spelling the frameworks' declared patterns end with (or the
#: factory handed to a call that calls it: ``partial(llm.llama3_8b.pretrain_recipe)()``)
_RECIPE_CALL = re.compile(r"\w_recipe\s*[(),]")


def _declares_recipes() -> bool:
    from . import registered  # the registry's table

    return bool(registered.recipe_defaults)


def _named_plugins() -> tuple[str, ...]:
    """The declared precision plugins that set a precision by their name alone."""
    from . import registered  # the registry's table

    return tuple(name for name, precision in registered.precision_plugins.items() if precision is not None)


def _config_name(text: str, end: int) -> bool:
    """A name of _CONFIG_NAMES ends at ``end``, a word boundary before it (as ``\\b``)."""
    for name in _CONFIG_NAMES:
        start = end - len(name)
        if start >= 0 and text.startswith(name, start):
            before = text[start - 1] if start else ""
            if not (before.isalnum() or before == "_"):
                return True
    return False


#: keys of the model a run loads, read beside the training arguments
_MODEL_KEYS = ("attn_implementation", "load_in_4bit", "load_in_8bit", "bnb_4bit_compute_dtype", "bnb_4bit_quant_type")
#: TRL ``ModelConfig`` fields that are run keys as they are
_MODEL_CONFIG_KEYS = (
    "model_name_or_path",
    "torch_dtype",
    "dtype",
    "attn_implementation",
    "load_in_4bit",
    "load_in_8bit",
    "bnb_4bit_quant_type",
    "use_peft",
)

Where = Callable[[tuple[int, int]], tuple[int, int]]


#: a script (or a notebook's code cells together) longer than this is no training script
#: (generated code, embedded data): refused like an over-large file. Real training scripts
#: are tens of KB; reading 16 MiB of code (ast trees, evaluation) takes over a GB and 40 s.
MAX_CODE = 2 * 1024 * 1024


def _too_much_code(path: str, size: int) -> FileTooLarge:
    return FileTooLarge(
        path,
        f"{size / (1024 * 1024):.2f} MiB of Python code, over the {MAX_CODE // (1024 * 1024)} MiB a training "
        "script may hold; not read",
    )


def parse_code(
    path: str, text: str, kind: str, hardware: Hardware | None, flags: Mapping[str, Given] | None = None
) -> list[Document]:
    """The runs a ``.py`` file (``kind`` "python") or ``.ipynb`` notebook ("notebook") configures;
    ``flags``: the options a launch line gives the script (:mod:`.python_options`)."""
    if kind == "notebook":
        if not _training_words(text):
            return []
        return _notebook(path, text, hardware)
    if not _training_words(text):
        return []
    code = text.replace("\r\n", "\n").replace("\r", "\n")  # line numbers as ast counts them
    if len(code) > MAX_CODE:
        raise _too_much_code(path, len(code))
    try:
        tree = parse_once(code, path)  # a launched script is also read by script_schema: parsed once
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        line, column = _error_place(error)
        raise InputError(path, f"Python syntax error: {_error_message(error)}", line, column) from None
    flow = Flow(tree, code, path, flags)
    documents = _Runs(path, text, code, tree, _identity, hardware, flow).documents()
    if not documents and flags is None and flow.vias:
        # its options' defaults train nothing (`if args.do_train:` with store_true's False): not
        # the run anyone checks; read as before, each branch on an option both ways
        documents = _Runs(path, text, code, tree, _identity, hardware).documents()
    return documents


#: the keys of the model a launched Trainer script loads that :func:`model_keys` gives
_LOADED_KEYS = ("torch_dtype", "load_in_4bit", "load_in_8bit", "bnb_4bit_compute_dtype", "bnb_4bit_quant_type")


def model_keys(path: str, text: str, flags: Mapping[str, Given]) -> dict[str, Node]:
    """The model a script a launch line starts loads (its first ``from_pretrained`` for training),
    read with the launch's ``flags`` as its options' values: dtype and quantization, each where
    the script decides it. Empty for a file that holds no training words or does not parse.
    Read once per set of the flags the reading asks for (:func:`.flag_memo.read_once`): what it
    reads must come from the path, the text and the flags alone, all read while it runs."""
    if not _training_words(text):
        return {}
    code = text.replace("\r\n", "\n").replace("\r", "\n")
    if len(code) > MAX_CODE:
        return {}
    try:
        tree = parse_once(code, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}

    def read(given: Mapping[str, Given]) -> dict[str, Node]:
        model = _Runs(path, text, code, tree, _identity, None, Flow(tree, code, path, given))._model()
        return {key: node for key, node in model.keys.items() if key in _LOADED_KEYS}

    # launches of one script often differ only in flags its model loading does not read; the
    # key names every other input (the tree is the code's; no hardware: the model as written)
    return read_once(tree, ("model-keys", path, text), flags, read)


def _notebook(path: str, text: str, hardware: Hardware | None) -> list[Document]:
    cells = [c for c in code_cells(path, text) if c.code.strip()]
    size = sum(len(c.code) for c in cells)
    if size > MAX_CODE:
        raise _too_much_code(path, size)
    bodies: list[ast.stmt] = []
    starts: list[int] = []  # first code line of each cell, in the joined code
    used: list[Cell] = []
    offset = 0
    for cell in cells:
        try:
            tree = _parse_from(cell.code, f"{path} cell {cell.number}", offset)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            if not _training_words(cell.code):
                continue  # a cell precheck does not need (IPython-only syntax...)
            line, column = _error_place(error)
            file_line, file_column = cell.where(line or 1, (column or 1) - 1)
            raise InputError(
                path, f"Python syntax error in cell {cell.number}: {_error_message(error)}", file_line, file_column
            ) from None
        bodies.extend(tree.body)
        starts.append(offset + 1)
        used.append(cell)
        offset += cell.code.count("\n") + 1
    if not bodies:
        return []
    joined = "\n".join(c.code for c in used)

    def where(place: tuple[int, int]) -> tuple[int, int]:
        index = max(bisect.bisect_right(starts, place[0]) - 1, 0)
        return used[index].where(place[0] - starts[index] + 1, place[1])

    def cell_of(line: int) -> tuple[Cell, int]:
        index = max(bisect.bisect_right(starts, line) - 1, 0)
        return used[index], line - starts[index] + 1

    runs = _Runs(path, text, joined, ast.Module(body=bodies, type_ignores=[]), where, hardware)
    runs.cell_of = cell_of
    return runs.documents()


def _identity(place: tuple[int, int]) -> tuple[int, int]:
    return place[0], place[1] + 1


def _error_place(error: Exception) -> tuple[int | None, int | None]:
    if isinstance(error, SyntaxError):
        return error.lineno, error.offset
    return None, None


def _error_message(error: Exception) -> str:
    if isinstance(error, SyntaxError):
        return error.msg
    if isinstance(error, (RecursionError, MemoryError)):
        return "nested too deeply for Python's parser"
    return str(error)


@dataclass(slots=True, eq=False, repr=False)
class _Model:
    """The model part of a run: keys, and notes on what could not be read."""

    keys: dict[str, Node]
    loader: Call | None


#: :meth:`_Runs._first`'s key for the call that says the run trains adapters
_ADAPTERS = ("<adapters>",)


def _says_adapters(call: Call) -> bool:
    """``get_peft_model(...)``, or a trainer given a ``peft_config``."""
    if call.kind == "peft":
        return True
    peft = call.args.get("peft_config") if call.kind == "trainer" else None
    return peft is not None and peft.value is not None


class _Runs:
    """Turns the collected calls of one module into run documents."""

    def __init__(
        self,
        path: str,
        text: str,
        code: str,
        tree: ast.Module,
        where: Where,
        hardware: Hardware | None,
        flow: Flow | None = None,
    ):
        self.path = path
        self.text = text
        self.code = code
        self.where = where
        self.cell_of: Callable[[int], tuple[Cell, int]] | None = None
        self.runtime = Runtime(hardware)
        self.tree = tree
        # (a function of the path and the answers: a bound method here would be a reference cycle
        # that keeps every script's trees until the cyclic collector runs)
        self.runtime.files = partial(_config_file, path, self.runtime.answers)
        self.collector = Collector(tree, code, self.runtime, flow)
        self.collector.run()
        self.notes: list[SourceNote] = []
        #: per file, not per run (a file of 25,000 TrainingArguments(...) calls is 25,000 runs):
        #: the first call of each kind, and the suppression comments
        self._first: dict[tuple[str, ...], Call | None] = {}
        self._suppressions: list[SourceNote] | None = None

    # -- documents -------------------------------------------------------------------------

    def documents(self) -> list[Document]:
        if self.collector.library:
            return []  # a library's trainer (its loop and casts are its callers' runs, configured there)
        calls = self.collector.calls
        configs = [c for c in calls if c.kind in ("hf-trainer", "trl") and not c.inference]
        if configs:
            return [self._trainer_run(config) for config in configs]
        trainers = [c for c in calls if _framework_trainer(c) and not c.inference]
        if trainers:
            return [self._framework_trainer_run(trainer) for trainer in trainers]
        engines = [c for c in calls if c.kind == "deepspeed" and not c.inference]
        engine = self._deepspeed_run(engines[0]) if engines else None
        if engine is not None:
            return [engine]
        loop = self._loop_run()
        return [loop] if loop is not None else []

    def _document(self, root: dict[str, Node], dialect: str, label: str) -> Document:
        notes = [*self.notes, *self._answers()]
        for written, place, why in self.collector.unknown:
            line, column = self.where(place)
            notes.append(SourceNote("unresolved-value", f"`{written}` is left out: {why}", line, column))
        if self._suppressions is None:
            self._suppressions = scan_suppressions(self.code, "python", self.where)
        notes.extend(self._suppressions)
        env = {key: self._node(arg, key) for key, arg in self.collector.environ.items() if _plain(arg.value)}
        return Document(self.path, "python", Node(root, 1, 1), self.text, notes, dialect, env, label)

    def _trainer_run(self, config: Call) -> Document:
        self.notes = []
        root: dict[str, Node] = {}
        for key, arg in config.args.items():
            self._put(root, key, arg)
        model = self._model()
        for key, node in model.keys.items():
            root.setdefault(key, node)
        if model.loader is not None and model.loader.kind == "model" and config.kind == "trl":
            # the script loads the model itself and hands the object over: TRL's own load dtype
            # default (create_model_from_path) does not apply, from_pretrained's does
            self._put(root, "from_pretrained", self._filled(model.loader, model.loader.name, named=True))
        self._adapters(root)
        dialect = config.kind
        if dialect == "trl" and self.runtime.unsloth and "fp16" not in root and "bf16" not in root:
            dialect = self._unsloth_precision(config, root)
        elif dialect == "trl" and "bf16" not in root and "bf16" in config.args:
            # `bf16=args.bf16`: set, to a value precheck cannot know; TRL's `bf16 = not fp16`
            # default fills only a bf16 the call leaves out, so it must not be read as one
            dialect = "hf-trainer"
        return self._document(root, dialect, self._label(config))

    def _framework_trainer_run(self, trainer: Call) -> Document:
        """A framework's ``Trainer(precision=..., devices=..., strategy=...)``: the arguments of
        its ``__init__`` as the ``trainer:`` block of the framework's own config, read with its
        semantics (the precision names each release takes, its plugins and strategies)."""
        self.notes = []
        arguments: dict[str, Node] = {}
        for key in _TRAINER_KEYS:
            arg = trainer.args.get(key)
            if arg is None:
                continue
            if key == "precision" or _plain(arg.value):
                self._put(arguments, key, arg)  # (an unknown precision is a note)
        line, column = self.where(trainer.at)
        root = {"trainer": Node(arguments, line, column, "trainer", line, column)}
        name = self._model().keys.get("model_name_or_path")
        if name is not None:  # the checkpoint the script's module loads, as the framework's config names it
            init = Node({"model_name_or_path": name}, name.line, name.column)
            root["model"] = Node({"init_args": init}, name.line, name.column)
        return self._document(root, trainer_dialect(trainer) or "pytorch", self._label(trainer))

    def _deepspeed_run(self, call: Call) -> Document | None:
        """``deepspeed.initialize(config=...)`` / ``DeepSpeedConfig(...)``: the engine's config, a
        dict the script writes (each key where it is written) or the file a path names (looked
        for next to the script, then in the current folder), read with DeepSpeed's own semantics
        (fp16 with dynamic loss scaling and fp32 master weights; no Trainer fills in ``"auto"``)."""
        self.notes = []
        arg = call.args.get("config") or call.args.get("config_params")
        if arg is None:
            return None  # (`initialize(args=args)`: the --deepspeed_config the launch passes)
        value = arg.value
        root: dict[str, Node]
        if isinstance(value, dict):
            noted = len(self.notes)
            root = self._dict_nodes(value, arg.literal, arg, arg.key or "config")
            unknown = {n.key.split(".")[1] for n in self.notes[noted:] if n.key and n.key.count(".") >= 1}
            if unknown & _DEEPSPEED_PRECISION:
                return None  # its precision is chosen at run time: the engine's plan is not known
        elif isinstance(value, str) and value.lower().endswith((".json", ".yaml", ".yml")):
            from pathlib import Path

            from .launch_args import locate, shown, with_path
            from .reading import load

            target = locate(value, [Path(self.path).parent])
            if target is None:
                line, column = self.where(arg.at)
                self.notes.append(
                    SourceNote(
                        "missing-reference",
                        f"`{arg.key or 'config'}` names `{value}`, which is not a file next to the script or in "
                        "the current folder: precheck could not check it",
                        line,
                        column,
                        arg.key or "config",
                    )
                )
                return None
            name = shown(target)
            document = load(target, name)
            root = {key: with_path(node, name) for key, node in document.mapping().items()}
        else:
            self._unknown(arg.key or "config", arg, "the DeepSpeed config is not known before the run")
            return None
        return self._document(root, "deepspeed", self._label(call))

    def _dict_nodes(self, value: dict[str, Any], literal: ast.Dict | None, arg: Arg, path: str) -> dict[str, Node]:
        """A dict the script wrote as nodes, each key at its place in the literal (else at the argument)."""
        places: dict[str, tuple[ast.expr, ast.expr]] = {}
        if literal is not None:
            for written, item in zip(literal.keys, literal.values, strict=True):
                if isinstance(written, ast.Constant) and isinstance(written.value, str):
                    places[written.value] = (written, item)
        out: dict[str, Node] = {}
        for key, item in value.items():
            place = places.get(key)
            key_at = self.collector.at(place[0]) if place else arg.key_at or arg.at
            at = self.collector.at(place[1]) if place else arg.at
            raw = self.collector.source.segment(place[1]) if place else arg.raw
            inner = place[1] if place is not None and type(place[1]) is ast.Dict else None
            if isinstance(item, dict):
                line, column = self.where(at)
                key_line, key_column = self.where(key_at)
                nodes = self._dict_nodes(item, inner, Arg(item, key, key_at, at, raw), f"{path}.{key}")
                out[key] = Node(nodes, line, column, key, key_line, key_column)
            elif _plain(item):
                out[key] = self._node(Arg(item, key, key_at, at, raw), key)
            else:
                self._unknown(f"{path}.{key}", Arg(item, f"{path}.{key}", key_at, at, raw), _why(item))
        return out

    def _unsloth_precision(self, config: Call, root: dict[str, Node]) -> str:
        """Importing unsloth replaces TRL's configs and trainers (``UnslothSFTConfig``...):
        with neither ``fp16`` nor ``bf16`` set, TRL's ``bf16 = not fp16`` default is gone and the
        trainer picks the mixed precision from the model's dtype (unsloth ``models/rl.py``:
        ``elif (not use_bf16 and not use_fp16) ...: args.fp16 = float16; args.bf16 = not float16``).
        Known only when the model's dtype is; the run is read without TRL's default either way."""
        dtype = root.get("torch_dtype")
        if dtype is not None and dtype.value in ("float16", "bfloat16"):
            half = dtype.value == "float16"
            self._put(root, "fp16", self._filled(config, half))
            self._put(root, "bf16", self._filled(config, not half))
            self.runtime.answers.append(
                f"with unsloth imported, `{config.name}(...)` sets neither fp16 nor bf16, so the trainer trains in "
                f"{'fp16' if half else 'bf16'} mixed precision, the dtype the model is loaded in"
            )
        return "hf-trainer"

    def _loop_run(self) -> Document | None:
        calls = [c for c in self.collector.calls if not c.inference]
        autocasts = [c for c in calls if c.kind == "autocast" and self._on_gpu(c)]
        scalers = [c for c in calls if c.kind == "scaler" and _device(c) != "cpu"]
        casts = [(c, d) for c in calls if c.kind == "cast" for d in [cast_dtype(c)] if d is not None]
        step = self.collector.backward_at
        if step is not None and any(c.at[0] < step for c, _ in casts):
            casts = [(c, d) for c, d in casts if c.at[0] < step]  # (a cast after the loop readies a save)
        defaults = [c for c in calls if c.kind == "default-dtype"]
        loaders = [c for c in calls if c.kind in ("model", "unsloth")]
        mixed = [c for c in calls if c.kind in ("accelerator", "trainer-precision") and _precision_arg(c) is not None]
        if _RECIPE_TRAINER_CHANGED.search(self.code):
            # a recipe whose trainer the script changes afterwards in a way not followed
            # (`recipe.trainer = ...`): its factory's precision is not the run's (a changed plugin
            # or plugin precision is read into the recipe's call, Collector._recipe_edit)
            mixed = [c for c in mixed if recipe_default(c.qualname) is None or {"precision", "plugins"} & c.args.keys()]
        if mixed and self.collector.prepared and self.collector.backward_lines:
            # an autocast in a function that runs no backward (a validation pipeline) is not the
            # training step's: the Accelerator's mixed precision wraps the prepared model's forward
            autocasts = [c for c in autocasts if self.collector.in_training_step(c.at[0])]
        precision = autocasts or casts or defaults or any("torch_dtype" in c.args or "dtype" in c.args for c in loaders)
        # a framework object that sets the mixed precision is the run's, loop visible or not
        # (``Accelerator(mixed_precision="bf16")`` raises on a card without bf16 at construction)
        framework_precision = bool(mixed)
        # a model Accelerator prepares, in weights the script chose (``from_pretrained(torch_dtype=
        # torch.bfloat16)``, ``model.to(torch.bfloat16)``): accelerate trains those weights as they are
        prepared = self.collector.prepared and (
            casts or any("torch_dtype" in c.args or "dtype" in c.args for c in loaders)
        )
        if not scalers and not framework_precision and not prepared and not (self.collector.backward and precision):
            return None
        self.notes = []
        model = self._model()
        root = dict(model.keys)
        if mixed and not autocasts:
            self._mixed_precision(mixed[0], root)
        weights = casts[-1][1] if casts else None
        if weights is not None:
            self._put(root, "torch_dtype", weights)
        elif "torch_dtype" not in root and defaults and "dtype" in defaults[-1].args:
            self._put(root, "torch_dtype", defaults[-1].args["dtype"])
        if autocasts:
            first = autocasts[0]
            enabled = first.args.get("enabled") or self._filled(first, True, named=True)
            self._put(root, "autocast", _on_device(enabled, first))
            dtype = first.args.get("dtype")
            if dtype is None:  # torch.get_autocast_dtype("cuda"): float16
                dtype = self._filled(first, Dtype("float16"), named=True)
            elif dtype.value is None:
                dtype = Arg(Dtype("float16"), dtype.key, dtype.key_at, dtype.at, dtype.raw, through=dtype.through)
            self._put(root, "autocast_dtype", _on_device(dtype, first))
        if scalers:
            scaler = scalers[0]
            self._put(root, "grad_scaler", scaler.args.get("enabled") or self._filled(scaler, True, named=True))
            if scaler.qualname.endswith("ShardedGradScaler"):
                self._put(root, "sharded_grad_scaler", self._filled(scaler, True, named=True))
        if self.collector.tf32 is not None:
            self._put(root, "tf32", self.collector.tf32)
        distributed = next((c for c in calls if c.kind == "distributed"), None)
        if distributed is not None:
            self._put(root, "distributed", self._filled(distributed, True, named=True))
        self._adapters(root)
        engine = self._deepspeed_engine()
        if engine is not None:
            self.notes.append(engine)
        first = (autocasts or scalers or [c for c, _ in casts] or defaults or mixed or loaders)[0]
        return self._document(root, "pytorch", self._label(first, "training loop"))

    def _deepspeed_engine(self) -> SourceNote | None:
        """A ``deepspeed.initialize(...)`` call: the model trains in DeepSpeed's engine, whose
        config decides loss scaling and master weights (``fp16``: ``FP16_Optimizer`` / ZeRO with
        fp32 master weights and dynamic loss scaling; ``bf16``: ``BF16_Optimizer`` / ZeRO with fp32
        master weights), not the loop's own GradScaler. The note says so to the loop's resolver."""
        if "initialize" not in self.code:
            return None
        for node in calls(self.tree):
            func = node.func
            if not isinstance(func, ast.Attribute):
                continue
            if func.attr == "initialize" and isinstance(func.value, ast.Name) and func.value.id in ("deepspeed", "ds"):
                line, column = self.where(self.collector.at(node))
                return SourceNote(
                    DEEPSPEED_ENGINE,
                    "the model trains in the engine `deepspeed.initialize` returns: its DeepSpeed config decides "
                    "loss scaling and master weights",
                    line,
                    column,
                    "deepspeed.initialize",
                )
        return None

    def _mixed_precision(self, call: Call, root: dict[str, Node]) -> None:
        """``Accelerator(mixed_precision=...)`` (accelerate ``Accelerator.__init__``: "fp16" creates a
        ``GradScaler`` and wraps the forward in ``torch.autocast(float16)``, "bf16" in
        ``autocast(bfloat16)``) or a framework's ``Trainer``/``Fabric(precision=...)`` ("16-mixed",
        "bf16-mixed": autocast; "16-true", "bf16-true": the weights in that dtype), as the loop's
        keys. They point at the argument; no fix names it with a dtype it does not take."""
        arg = _precision_arg(call)
        assert arg is not None  # only such calls are passed
        if arg.value is None and call.kind == "accelerator":
            arg = self._accelerate_default(call, arg)
        if not _plain(arg.value):
            self._put(root, "autocast", arg)  # a note: the value is not known
            return
        text = str(arg.value).lower()
        autocast, weights, scaler = _MIXED.get(text, (None, None, False))
        if autocast is None and weights is None:
            return

        # the finding's key: the launch's flag the value came from, else the keyword as written
        option = arg.option or arg.key

        def at(value: Any) -> Arg:
            return Arg(value, None, arg.key_at, arg.at, arg.raw, via=arg.via, through=arg.through, option=option)

        if autocast is not None:
            self._put(root, "autocast", at(autocast != "no"))
            if autocast != "no":
                self._put(root, "autocast_dtype", at(Dtype(autocast)))
        if weights is not None:
            self._put(root, "torch_dtype", at(Dtype(weights)))
        if scaler and "grad_scaler" not in root:
            self._put(root, "grad_scaler", at(True))
        fp8 = _fp8_arg(call)
        if fp8 is not None:
            self._put(root, "fp8", fp8)

    def _accelerate_default(self, call: Call, arg: Arg) -> Arg:
        """``Accelerator(mixed_precision=None)``: accelerate's own choice (accelerate 1.15.0
        ``state.py:926``: ``parse_choice_from_env("ACCELERATE_MIXED_PRECISION", "no")``), "no"
        for the script run on its own (the environment the script sets counted); unknown
        under a launch (``accelerate launch`` sets the variable from its config or flag)."""
        flow = self.collector.flow
        if flow is None or flow.flags is not None:
            return Arg(
                Unknown("accelerate launch decides it (ACCELERATE_MIXED_PRECISION)"),
                arg.key,
                arg.key_at,
                arg.at,
                arg.raw,
            )
        environ = self.collector.environ.get("ACCELERATE_MIXED_PRECISION")
        if environ is not None:
            value = environ.value.lower() if isinstance(environ.value, str) else environ.value
            return Arg(
                value,
                arg.key,
                arg.key_at,
                arg.at,
                arg.raw,
                via=f"ACCELERATE_MIXED_PRECISION set at line {environ.at[0]}",
            )
        why = 'accelerate\'s default "no" for the script run on its own (accelerate state.py:926@1.15.0)'
        return Arg("no", arg.key, arg.key_at, arg.at, arg.raw, via=f"{arg.via}; {why}" if arg.via else why)

    # -- the model ---------------------------------------------------------------------------

    def _first_call(self, *kinds: str) -> Call | None:
        """The first call (not for inference) of one of ``kinds``, looked for once per file."""
        if kinds not in self._first:
            self._first[kinds] = next((c for c in self.collector.calls if c.kind in kinds and not c.inference), None)
        return self._first[kinds]

    def _model(self) -> _Model:
        loader = self._first_call("model", "unsloth", "model-config")
        keys: dict[str, Node] = {}
        if loader is None:
            trainer = self._first_call("trainer")
            name = trainer.args.get("model") if trainer is not None else None
            if name is not None and isinstance(name.value, str):
                self._put(keys, "model_name_or_path", name)
            patch = self._attention_patch()
            if patch is not None:
                self._put(keys, "attn_implementation", patch)
            return _Model(keys, None)
        if loader.kind == "model-config":
            # a field reaches the model only where the script hands it on (model_name_or_path
            # names the model whatever reads it)
            read = fields_read(self.tree, self.collector.at, loader.at)
            for key in _MODEL_CONFIG_KEYS:
                if key in loader.args and (read is None or key in read or key == "model_name_or_path"):
                    self._put(keys, "torch_dtype" if key == "dtype" else key, loader.args[key])
            return _Model(keys, loader)
        args = loader.args
        name = args.get("model_name") if loader.kind == "unsloth" else args.get("pretrained_model_name_or_path")
        if name is not None:
            self._put(keys, "model_name_or_path", name)
        if loader.kind == "unsloth":
            self._unsloth(loader, keys)
            return _Model(keys, loader)
        dtype = args.get("torch_dtype") or args.get("dtype")
        if dtype is not None and dtype.value is not None:
            self._put(keys, "torch_dtype", dtype)
        for key in _MODEL_KEYS:
            if key in args:
                self._put(keys, key, args[key])
        if "attn_implementation" not in keys:
            chosen = self._attention_attribute(loader) or self._attention_patch()
            if chosen is not None:
                self._put(keys, "attn_implementation", chosen)
        legacy = args.get("use_flash_attention_2")  # transformers' old spelling of flash_attention_2
        if "attn_implementation" not in args and legacy is not None and legacy.value is True:
            self._put(
                keys,
                "attn_implementation",
                Arg("flash_attention_2", None, legacy.key_at, legacy.at, legacy.raw, through=legacy.through),
            )
        quantization = args.get("quantization_config")
        if quantization is not None and quantization.value is not None:  # (None: not quantized)
            settings = _settings(quantization.value)
            if settings is None:
                self._unknown("quantization_config", quantization, "the quantization config is not known")
            for key in _MODEL_KEYS:
                if settings is not None and key in settings:
                    self._put(keys, key, settings[key])
        return _Model(keys, loader)

    def _attention_patch(self) -> Arg | None:
        """A FlashAttention monkey patch the module calls on every path
        (``replace_llama_attn_with_flash_attn()``): the model's attention is flash-attn's (2.x,
        the newest: FlashAttention-2 needs sm_80+; 1.x ran on sm_75 too, and neither below)."""
        if not self.collector.patches:
            return None
        call = self.collector.patches[0]
        at = self.collector.at(call)
        text = self.collector.source.segment(call)
        name = text.split("(")[0]
        line, column = self.where(at)
        # which attention class the model uses is the model's code, not read: an assumption
        self.notes.append(
            SourceNote(
                ATTENTION_PATCH,
                f"`{name}()` swaps FlashAttention into the attention it patches, taken as the model's: precheck "
                "does not follow the model's code to see that it uses that attention (another patch or a "
                "model of another family would not)",
                line,
                column,
                name,
            )
        )
        return Arg("flash_attention_2", name, at, at, text)

    def _attention_attribute(self, loader: Call) -> Arg | None:
        """The attention set as an attribute on the config the model is loaded with
        (``config._attn_implementation = ...`` then ``from_pretrained(..., config=config)``)."""
        attention = self.collector.attention
        if not attention:
            return None
        config = loader.args.get("config")
        if config is not None and config.raw in attention:
            return attention[config.raw]
        # (set on the loaded model's config it switches only in transformers >= 4.48, whose attention
        # modules look the implementation up at every forward: not read)
        return None

    def _unsloth(self, loader: Call, keys: dict[str, Node]) -> None:
        """``FastLanguageModel.from_pretrained``: dtype None → bf16 where supported, else fp16; 4-bit by default."""
        args = loader.args
        self._put(keys, "use_unsloth", self._filled(loader, True, named=True))  # its loader forces fp32 (PC209)
        full = args.get("full_finetuning")
        if full is not None and full.value is True:
            self._put(keys, "use_peft", Arg(False, full.key, full.key_at, full.at, full.raw, through=full.through))
        for key in ("load_in_4bit", "load_in_8bit"):
            if key in args:
                self._put(keys, key, args[key])
        if "load_in_4bit" not in args and not (full is not None and full.value is True):
            self._put(keys, "load_in_4bit", self._filled(loader, True))  # loader.py: load_in_4bit = True
        given = args.get("dtype")
        wanted = given.value if given is not None else None
        if given is not None and isinstance(wanted, Unknown):
            self._unknown("dtype", given, wanted.reason)
            return
        if wanted is not None and not isinstance(wanted, Dtype):
            return
        if wanted is None or wanted.name == "bfloat16":
            asked = "None" if wanted is None else "torch.bfloat16"
            supported = self.runtime.unsloth_bf16(f"{loader.name}(dtype={asked})", note=False)
            if isinstance(supported, Unknown):
                self._unknown("dtype", given or self._filled(loader, None), supported.reason)
                return
            wanted = Dtype("bfloat16" if supported else "float16")
            device = self.runtime.device("")
            self.runtime.answers.append(
                f"Unsloth `{loader.name}(dtype={asked})` loads {wanted.name} on "
                f"{getattr(device, 'name', 'the GPU')} (bf16 only where compute capability >= 8.0)"
            )
        place = given or self._filled(loader, None)
        dtype = Arg(wanted, place.key, place.key_at, place.at, place.raw, through=place.through)
        self._put(keys, "torch_dtype", dtype)
        four_bit = keys.get("load_in_4bit")
        if four_bit is not None and four_bit.value is True:
            self._put(keys, "bnb_4bit_compute_dtype", dtype)  # BitsAndBytesConfig(bnb_4bit_compute_dtype = dtype)

    def _adapters(self, root: dict[str, Node]) -> None:
        """``get_peft_model(...)``, Unsloth's ``get_peft_model``, or ``peft_config=`` on a trainer: LoRA."""
        if "use_peft" in root:
            return
        if _ADAPTERS not in self._first:  # the first call that says: looked for once per file
            self._first[_ADAPTERS] = next((c for c in self.collector.calls if _says_adapters(c)), None)
        call = self._first[_ADAPTERS]
        if call is not None:
            if call.kind == "peft":
                self._put(root, "use_peft", self._filled(call, True, named=True))
                checkpointing = call.args.get("use_gradient_checkpointing")  # Unsloth: True or "unsloth"
                if checkpointing is None and _unsloth_owner(call.qualname):
                    # FastLanguageModel.get_peft_model(..., use_gradient_checkpointing = "unsloth")
                    # (unsloth models/llama.py:4579@2026.10.9; FastVisionModel's vision.py:4924)
                    checkpointing = self._filled(call, "unsloth")
                if checkpointing is not None and checkpointing.value in (True, "unsloth"):
                    c = checkpointing
                    self._put(
                        root, "gradient_checkpointing", Arg(True, c.key, c.key_at, c.at, c.raw, through=c.through)
                    )
                return
            peft = call.args.get("peft_config") if call.kind == "trainer" else None
            if peft is not None and peft.value is not None:
                self._put(root, "use_peft", Arg(True, peft.key, peft.key_at, peft.at, peft.raw, through=peft.through))
                return

    # -- nodes -------------------------------------------------------------------------------

    def _put(self, root: dict[str, Node], key: str, arg: Arg) -> None:
        """``root[key]`` from ``arg`` when its value is known; a note when it is not."""
        if not _plain(arg.value):
            why = arg.value.reason if isinstance(arg.value, Unknown) else "not a value a config can hold"
            self._unknown(key, arg, why)
            return
        root[key] = self._node(arg, key)

    def _node(self, arg: Arg, key: str) -> Node:
        line, column = self.where(arg.at)
        key_line, key_column = self.where(arg.key_at) if arg.key_at is not None else (line, column)
        value = _value(arg.value, line, column)
        node = Node(value, line, column, arg.key, key_line, key_column, raw=arg.raw, via=arg.via, option=arg.option)
        if arg.through:  # the other lines it flows through, as the file counts them (a notebook's)
            node.through = tuple(dict.fromkeys((None, self.where((at, 0))[0]) for at in arg.through))
        return node

    def _filled(self, call: Call, value: Any, named: bool = False) -> Arg:
        """A value the library fills in when the call leaves it out: it points at the call
        (``named``: its key is the callee as written, ``torch.cuda.amp.GradScaler``; a
        default of a loader's keyword has none, so no fix ever names a keyword not written)."""
        return Arg(value, call.name if named else None, call.at if named else None, call.at, f"{call.name}(...)")

    def _unknown(self, key: str, arg: Arg, why: str) -> None:
        line, column = self.where(arg.key_at or arg.at)
        written = arg.key or key
        self.notes.append(
            SourceNote("unresolved-value", f"`{written}={arg.raw}` is left out: {why}", line, column, written)
        )

    def _answers(self) -> list[SourceNote]:
        return [SourceNote("runtime-value", answer, 1, 1) for answer in dict.fromkeys(self.runtime.answers)]

    def _label(self, call: Call, what: str | None = None) -> str:
        name = what or f"`{call.name}(...)`"
        if self.cell_of is not None:
            cell, line = self.cell_of(call.at[0])
            return f"{name} in cell {cell.number}, line {line}"
        return f"{name} at line {call.at[0]}"

    def _on_gpu(self, call: Call) -> bool:
        device = _device(call)
        if device is None or isinstance(device, Unknown):
            return True  # torch.autocast(device_type=device.type): the GPU run is the one precheck checks
        return isinstance(device, str) and device.split(":")[0] == "cuda"


#: ``Trainer.__init__`` arguments the framework's dialect reads (its 2.6.6 release,
#: ``pytorch/trainer/trainer.py``): the others are not precision settings
_TRAINER_KEYS = (
    "precision",
    "accelerator",
    "devices",
    "num_nodes",
    "strategy",
    "accumulate_grad_batches",
    "gradient_clip_val",
    "gradient_clip_algorithm",
)


def mixed_precision_keys(node: Node) -> dict[str, Node]:
    """The loop keys an accelerate mixed precision (``--mixed_precision fp16``, a script's option
    passed to ``Accelerator(mixed_precision=...)``) stands for, each at ``node``; none when it is
    not one accelerate takes. No fix names them (their key is left out)."""
    autocast, weights, scaler = _MIXED.get(str(node.value).lower(), (None, None, False))
    if node.value is None or isinstance(node.value, (dict, list)) or (autocast is None and weights is None):
        return {}

    def at(value: Any) -> Node:
        return replace(node, value=value, key=None, option=node.option or node.key)

    out: dict[str, Node] = {}
    if autocast is not None:
        out["autocast"] = at(autocast != "no")
        if autocast != "no":
            out["autocast_dtype"] = at(autocast)
    if weights is not None:
        out["torch_dtype"] = at(weights)
    if scaler:
        out["grad_scaler"] = at(True)
    return out


def _framework_trainer(call: Call) -> bool:
    """A framework's ``Trainer`` (not its ``Fabric``, whose loop is the script's own) given a precision."""
    return (
        call.kind == "trainer-precision" and call.qualname.rsplit(".", 1)[-1] == "Trainer" and "precision" in call.args
    )


#: the argument that sets a framework's mixed precision
_MIXED_KEY = {"accelerator": "mixed_precision", "trainer-precision": "precision"}
#: the note kind of a ``deepspeed.initialize`` call (read by the plain loop's resolver)
DEEPSPEED_ENGINE = "deepspeed-engine"


def _precision_arg(call: Call) -> Arg | None:
    """The precision a call sets: its ``precision=``/``mixed_precision=``, or a trainer's
    precision plugin (``plugins=Plugin(precision="bf16-mixed")``, or a helper that sets one by
    its name), as the frameworks declare them (``Framework.python_precision_plugins``)."""
    own = call.args.get(_MIXED_KEY[call.kind])
    if own is None and call.kind == "trainer-precision" and "plugins" not in call.args:
        default = recipe_default(call.qualname)
        if default is not None:  # a recipe factory's trainer, in the precision it builds it with
            return Arg(default, None, None, call.at, f"{call.name}()")
    # (``precision=None`` beside a precision plugin: the trainer takes the plugin's, as the
    # framework declaring the plugin documents: ``Framework.python_precision_plugins``)
    if (own is not None and own.value is not None) or call.kind != "trainer-precision" or "plugins" not in call.args:
        return own
    plugins = call.args["plugins"].value
    for value in plugins if isinstance(plugins, (list, tuple)) else (plugins,):
        if isinstance(value, Built) and value.call.kind == "precision-plugin":
            implied = plugin_precision(value.call)
            if implied is None:
                return value.call.args.get("precision") or _plugin_dtype(value.call)
            return Arg(implied, None, None, value.call.at, f"{value.call.name}()")
    return own


#: a plugin's compute dtype → the precision mode that trains in it
_TRUE_PRECISION = {"float16": "16-true", "bfloat16": "bf16-true", "float32": "32-true"}


def _plugin_dtype(call: Call) -> Arg | None:
    """A precision plugin that takes a ``dtype`` and no ``precision`` (a quantization plugin, as
    its framework declares it: ``Framework.python_plugin_parameters``, whose citation says why):
    it creates the layers it does not quantize in that dtype, runs the forward in it and creates
    no GradScaler, so the run trains as ``"<dtype>-true"`` would. With no ``dtype`` the plugin
    picks one at run time (None here)."""
    dtype = call.args.get("dtype")
    if dtype is None or not isinstance(dtype.value, Dtype) or dtype.value.name not in _TRUE_PRECISION:
        return None
    return replace(dtype, value=_TRUE_PRECISION[dtype.value.name])


#: an assignment that changes a built run's trainer or its precision plugin (``recipe.trainer =``,
#: ``recipe.trainer.plugins =``, ``recipe.trainer.plugins.precision =``)
_RECIPE_TRAINER_CHANGED = re.compile(r"\.(?:trainer|plugins(?:\.\w+)?)\s*=(?!=)")


def _fp8_arg(call: Call) -> Arg | None:
    """Transformer Engine fp8 a trainer's precision plugin adds on top of its 16-bit precision:
    a declared helper whose name says fp8 (``bf16_with_fp8_mixed()``: a plugin with
    ``fp8="hybrid"``), or the plugin's own ``fp8=`` set to a recipe name (None: off)."""
    if call.kind != "trainer-precision" or "plugins" not in call.args:
        return None
    plugins = call.args["plugins"].value
    for value in plugins if isinstance(plugins, (list, tuple)) else (plugins,):
        if not (isinstance(value, Built) and value.call.kind == "precision-plugin"):
            continue
        if plugin_precision(value.call) is not None and "fp8" in value.call.name.rsplit(".", 1)[-1]:
            return Arg(f"transformer-engine ({value.call.name}())", None, None, value.call.at, f"{value.call.name}()")
        own = value.call.args.get("fp8")
        if own is not None and isinstance(own.value, str) and own.value:
            return Arg(f"transformer-engine (fp8={own.value!r})", own.key, own.key_at, own.at, own.raw)
    return None


#: its values: (autocast dtype or "no", weights dtype, GradScaler)
_MIXED: dict[str, tuple[str | None, str | None, bool]] = {
    "no": ("no", None, False),
    "fp16": ("float16", None, True),
    "bf16": ("bfloat16", None, False),
    "16-mixed": ("float16", None, True),
    "16": ("float16", None, True),
    "bf16-mixed": ("bfloat16", None, False),
    "16-true": (None, "float16", False),
    "bf16-true": (None, "bfloat16", False),
    "32": ("no", None, False),
    "32-true": ("no", None, False),
}


def _on_device(enabled: Arg, autocast: Call) -> Arg:
    """An autocast's switch, citing where its device type is decided too when a name passes
    it (nanoGPT ``device_type = 'cuda' if 'cuda' in device else 'cpu'`` → ``torch.amp.autocast(
    device_type=device_type, ...)``): the device decides that it autocasts on the GPU."""
    device = autocast.args.get("device_type")
    if device is None or device.at[0] == autocast.at[0] or not isinstance(device.value, str):
        return enabled
    return replace(enabled, through=tuple(dict.fromkeys((*enabled.through, device.at[0], *device.through))))


def _device(call: Call) -> Any:
    if call.qualname.startswith("torch.cpu."):
        return "cpu"
    if call.qualname.startswith("torch.cuda."):
        return "cuda"
    arg = call.args.get("device_type") or call.args.get("device")
    return "cuda" if arg is None else arg.value


def _settings(value: Any) -> dict[str, Arg] | None:
    """The arguments of a config object (``BitsAndBytesConfig(...)``) or the entries of a dict."""
    if isinstance(value, Built):
        return value.call.args
    return None


#: the DeepSpeed config sections that decide the run's precision (``runtime/config.py``)
_DEEPSPEED_PRECISION = frozenset(
    {"fp16", "bf16", "bfloat16", "amp", "torch_autocast", "zero_optimization", "data_types", "communication_data_type"}
)


def _config_file(script_path: str, answers: list[str], value: str, what: str) -> Any:
    """The plain data of a config file the script loads by a literal path, found where a run
    started from the script's folder or one of the folders above it (a repository root:
    ``OmegaConf.load("src/configs/x.yaml")`` in ``src/experiments/train.py``) would find it;
    Unknown when no such file is there, when two different ones are, or it cannot be read.
    An OmegaConf interpolation (``${...}``) is left unknown."""
    from pathlib import Path

    from ..errors import InputError
    from ..paths import within_checked
    from .reading import load

    script = Path(script_path).resolve().parent
    given = Path(value)
    folders = [script, *script.parents[:3]] if not given.is_absolute() else [Path("/")]
    found = list(dict.fromkeys(f / given for f in folders if (f / given).is_file()))
    if len(found) == 1 and not within_checked(found[0]):  # its values could be printed: never read
        return Unknown(f"`{what}`: `{value}` is outside the repository checked, which precheck does not read")
    if len(found) != 1:
        why = "is not next to the script or in a folder above it" if not found else "names two files"
        return Unknown(f"`{what}`: `{value}` {why}")
    try:
        document = load(found[0], str(found[0]))
    except (InputError, OSError):
        return Unknown(f"`{what}`: `{value}` cannot be read")
    from .launch_args import shown

    answers.append(f"`{what}` reads {shown(found[0])}, the one `{value}` near the script")
    return _settled(document.root.plain(), what)


def _settled(value: Any, what: str) -> Any:
    """A loaded config's data with each OmegaConf interpolation (``${...}``) unknown."""
    if isinstance(value, dict):
        return {k: _settled(v, what) for k, v in value.items()}
    if isinstance(value, list):
        return [_settled(v, what) for v in value]
    if isinstance(value, str) and "${" in value:
        return Unknown(f"`{value}` in `{what}` is interpolated when the config is resolved")
    return value


def _why(value: Any) -> str:
    return value.reason if isinstance(value, Unknown) else "not a value a config can hold"


#: the most items (at every depth, a shared one each time it is reached) a value kept as a
#: setting may hold: ``t = (t, t)`` forty times is a trillion items as a config holds them
MAX_PLAIN_ITEMS = 10_000


def _plain(value: Any, budget: list[int] | None = None) -> bool:
    """A value a config file could hold (no unknown part, no object), of at most
    :data:`MAX_PLAIN_ITEMS` items."""
    budget = [MAX_PLAIN_ITEMS] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0 or isinstance(value, (Unknown, Built)):
        return False
    if isinstance(value, (list, tuple)):
        return all(_plain(v, budget) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, budget) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, str, Dtype))


def _value(value: Any, line: int, column: int) -> Any:
    """Plain data as a config file would hold it: dtypes by name, collections as nodes."""
    if isinstance(value, Dtype):
        return value.name
    if isinstance(value, (list, tuple)):
        return [Node(_value(v, line, column), line, column) for v in value]
    if isinstance(value, dict):
        return {k: Node(_value(v, line, column), line, column, k, line, column) for k, v in value.items()}
    return value


def _parse_from(code: str, filename: str, offset: int) -> ast.Module:
    """``_parse(code)`` with its lines counted from ``offset + 1``, as ``ast.increment_lineno``
    would count them, without a walk over the tree: blank lines before the code. A cell
    that does not parse so is parsed as it is, for its own error and line numbers; so is a
    small cell far down a long notebook (the blank lines would cost more than the walk)."""
    if offset <= 2_000 + 8 * len(code):
        try:
            return _parse("\n" * offset + code, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    tree = _parse(code, filename)
    ast.increment_lineno(tree, offset)
    return tree


def _parse(code: str, filename: str) -> ast.Module:
    """``ast.parse`` without the SyntaxWarnings (``invalid escape sequence``...) the compiler
    prints for odd source: they are the script's business, not the check's output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(code, filename=filename)


def _unsloth_owner(qualname: str) -> bool:
    """``FastLanguageModel.get_peft_model``, ``FastModel.…``, ``FastVisionModel.…``: Unsloth's own."""
    parts = qualname.split(".")
    owner = parts[-2] if len(parts) > 1 else ""
    return owner.startswith("Fast") and owner.endswith("Model")
