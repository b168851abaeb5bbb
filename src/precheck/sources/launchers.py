"""Launch commands → the dialect that reads them and the document it reads.

Each :class:`Entry` knows one command line: which dialect reads its flags, how its parser
types them (:mod:`.launch_args`), which config file it merges, and which environment it sets
for the training processes. The generic launchers are here (:data:`GENERIC`); each
framework's own commands and entry modules are declared with its
:class:`~precheck.frameworks.base.Framework` (``launchers``, ``modules``) and parsed in its
package's ``launch`` module. Verified against the launchers' own CLIs:

- ``accelerate launch [flags] script.py|-m module [script flags]`` (accelerate 1.15.0
  ``commands/launch.py`` ``launch_command_parser`` / ``_validate_launch_command``: the CLI
  beats ``--config_file``, whose values fill what the CLI left unset; ``utils/launch.py``
  ``prepare_simple_launcher_cmd_env`` / ``prepare_multi_gpu_env`` / ``prepare_deepspeed_cmd_env``
  export ``ACCELERATE_MIXED_PRECISION`` (always: ``"no"`` when neither sets it),
  ``ACCELERATE_USE_DEEPSPEED``/``ACCELERATE_USE_FSDP``, ``ACCELERATE_DEEPSPEED_ZERO_STAGE`` and
  the offload devices when set, ``CUDA_VISIBLE_DEVICES`` from ``gpu_ids`` unless ``all``). The
  script's flags become its own document (HF-style, dialect by detection); the DeepSpeed file
  accelerate names (``deepspeed_config_file``) is the run's ``deepspeed`` file, as transformers
  ``TrainingArguments.__post_init__`` builds ``DeepSpeedPlugin()`` from
  ``ACCELERATE_USE_DEEPSPEED`` and the plugin reads ``ACCELERATE_DEEPSPEED_CONFIG_FILE``. A
  script precheck cannot read (a plain ``Accelerator()`` loop) is checked as the accelerate
  config the launch builds: the ``--config_file`` merged with the launch flags.
- ``torchrun`` / ``python -m torch.distributed.run|launch`` (torch ``distributed/run.py``
  ``get_args_parser``; ``launch.py`` adds ``--use-env``): options up to the script.
- ``deepspeed [--num_gpus N] [--include localhost:0,1] script.py ...`` (deepspeedai/DeepSpeed
  ``launcher/runner.py``: ``--include`` slots or ``range(--num_gpus)`` become the world info,
  and ``launcher/launch.py`` sets ``CUDA_VISIBLE_DEVICES`` to them; with neither, a set
  ``CUDA_VISIBLE_DEVICES`` becomes ``--include localhost:<it>``).
- ``python script.py --flag value`` (HF ``HfArgumentParser`` scripts): no dialect; detection
  by keys decides (none: not a training run).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ..counts import MAX_DEVICES, decimal
from .launch_args import (
    Builder,
    Field,
    Parsed,
    assigned_through,
    flag_mapping,
    locate,
    program_name,
    put,
    searched_from,
    shown,
    split_options,
    with_path,
)
from .nodes import Node
from .script_path import resolve_script


@dataclass(eq=False, repr=False)
class Found:
    """One run a launch command starts."""

    dialect: str | None
    root: dict[str, Node]
    env: dict[str, Node] = field(default_factory=dict)
    #: the keys the launched script defines and whether it refuses others (see
    #: :mod:`.script_launch`); None: not a script precheck looked for
    script_keys: frozenset[str] | None = None
    script_closed: bool = False
    #: the repository's own script the launch starts, as written, and where it is
    script: str | None = None
    script_path: Path | None = None
    #: the script was read, and it builds its run itself: it parses into no transformers/TRL
    #: config class and constructs no ``*Trainer``/``TrainingArguments`` (its own loop)
    script_own_loop: bool = False
    #: the folder the shell script ``cd``-s to before the launch (None: it does not)
    cd: Path | None = None


@dataclass(eq=False, repr=False)
class Launch:
    """What a launcher sees: the words after its name, and the run's environment so far."""

    builder: Builder
    #: the command words that named the launcher (``accelerate``, ``launch``)
    head: list[Field]
    args: list[Field]
    env: dict[str, Node]
    #: folders relative config files are looked for in, before the current folder
    bases: list[Path]
    #: re-enter the command dispatcher (``torchrun --no-python PROGRAM ...``)
    dispatch: Callable[[list[Field], dict[str, Node]], Found | None]

    def load(self, value: Field, key: str) -> dict[str, Node] | None:
        """The mapping of a config file the command names (nodes marked with its path), or
        None with a ``missing-reference`` note when it is not there."""
        target = locate(value.text, self.bases)
        if target is None and self.builder.writes(value.text):
            return None  # the script writes it before this command (``cat <<EOF > cfg.yaml``)
        if target is None:
            self.builder.note(
                "missing-reference",
                f"`{key}` names `{value.text}`, which is not a file (looked in {searched_from(self.bases)}): "
                "precheck could not check it, and the launch will fail if it is missing there too",
                value.offset(),
                key,
            )
            return None
        from .reading import load  # the package imports this module lazily

        name = shown(target)
        document = load(target, name)
        for note in document.notes:
            self.builder.notes.append(replace(note, path=note.path or name))
        root = document.mapping()
        for node in root.values():
            with_path(node, name)
        return dict(root)


Handler = Callable[[Launch], Found | None]

# -- shared pieces -------------------------------------------------------------------------------

CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


def launcher_options(args: list[Field], flags: set[str], *, short: dict[str, str] | None = None) -> tuple[Parsed, int]:
    """A launcher's own options, up to its first positional (the script): ``(parsed, index)``.

    ``flags``: the options that take no value (names with ``_``; ``-`` spellings match too).
    ``short``: single-dash aliases → long name.
    """
    parsed = Parsed()
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.readable_option():
            break
        if arg.text == "--":
            i += 1
            break
        body = arg.text.lstrip("-")
        name, eq, _ = body.partition("=")
        if arg.text.startswith("--"):
            name = name.replace("-", "_")
        else:
            name = (short or {}).get(arg.text.partition("=")[0], name)
        if eq:
            parsed.options.append((arg, name, [arg.tail(len(arg.text) - len(body) + len(body.partition("=")[0]) + 1)]))
            i += 1
        elif name in flags:
            parsed.options.append((arg, name, []))
            i += 1
        else:
            parsed.options.append((arg, name, args[i + 1 : i + 2]))
            i += 2
    return parsed, i


def last_option(parsed: Parsed, name: str) -> tuple[Field, Field | None] | None:
    """The last occurrence of an option: (flag, value)."""
    for flag, key, values in reversed(parsed.options):
        if key == name:
            return flag, values[0] if values else None
    return None


def _env_node(builder: Builder, name: str, value: str, flag: Field, value_field: Field | None) -> Node:
    """An environment variable a launcher sets for its children, placed at the flag that sets it."""
    key_line, key_column = builder.where(flag.offset())
    line, column = builder.where(value_field.offset()) if value_field is not None else (key_line, key_column)
    spelled = flag.text.partition("=")[0]
    through = assigned_through(builder.text, value_field.offset(), line, key_line) if value_field is not None else ()
    raw = value_field.raw if value_field else None
    return Node(value, line, column, spelled, key_line, key_column, raw=raw, through=through)


def merged_config(launch: Launch, config: Field | None, key: str) -> dict[str, Node]:
    if config is None:
        return {}
    return launch.load(config, key) or {}


def dotlist_overrides(
    launch: Launch, root: dict[str, Node], words: list[Field], style: str, *, components: bool = False
) -> None:
    """``key=value`` (``a.b=value`` nests) over a merged config, as OmegaConf's dotlist does.

    ``components`` (recipes built from ``_component_`` blocks): ``model=pkg.models.x`` over
    a block with a ``_component_`` sets that block's ``_component_``."""
    builder = launch.builder
    for word in words:
        name, eq, _ = word.text.partition("=")
        if name.startswith("~") and not word.unresolved:  # the recipe CLIs' extension: remove the key
            _remove(root, name[1:])
            continue
        if not eq or not name or (word.unresolved and "=" not in word.text.split("$")[0]):
            if word.unresolved:
                builder.note("unresolved", f"`{word.raw}` depends on {', '.join(word.unresolved)}", word.offset())
            continue
        node = builder.value(word, name, word.tail(len(name) + 1), style)
        if node is None:
            continue
        existing = root.get(name)
        if components and existing is not None and isinstance(existing.value, dict) and "_component_" in existing.value:
            name += "._component_"
        put(builder, root, name, node, word.offset(), "OmegaConf keeps the last value")


def _remove(root: dict[str, Node], dotted: str) -> None:
    parts = dotted.split(".")
    current = root
    for part in parts[:-1]:
        child = current.get(part)
        if child is None or not isinstance(child.value, dict):
            return
        current = child.value
    current.pop(parts[-1], None)


# -- HF-style scripts -----------------------------------------------------------------------------


def read_launched(launch: Launch, name: Field, module: bool, found: Found) -> Found:
    """:func:`precheck.sources.script_launch.read_launched`, imported only when a launch
    names a script: a run of plain config files never loads the script readers."""
    from .script_launch import read_launched as read

    return read(launch, name, module, found)


def script(launch: Launch, name: Field, module: bool, args: list[Field]) -> Found | None:
    """A Python training script (or module) and its own flags: a framework's entry module
    (:data:`~precheck.frameworks.base.Framework.modules`) reads them as that framework's
    parser does; any other script is HF-style, its dialect found by detection."""
    dotted = name.text.replace("\\", "/")
    dotted = dotted if module else re.sub(r"\.py$", "", dotted).replace("/", ".")
    for entry in modules():
        if entry.pattern.search(dotted):
            found = entry.handler(launch, args)
            if found is not None and entry.source_defaults:
                from .entry_defaults import source_defaults  # read only where such a module runs

                source_defaults(found.root, name.text, module, launch.bases)
            return found
    if args and not args[0].looks_like_option() and args[0].text.lower().endswith(CONFIG_SUFFIXES):
        # ``python train.py cfg.yaml``: HfArgumentParser.parse_yaml_file, or a read_args that merges key=value overrides
        root = launch.load(args[0], "config") or {}
        rest = args[1:]
        overrides = [a for a in rest if not a.looks_like_option()]
        dotlist_overrides(launch, root, overrides, "omegaconf")
        flag_mapping(launch.builder, split_options([a for a in rest if a.looks_like_option()]).options, "hf", into=root)
        found = Found(None, root, script=name.text, script_path=resolve_script(name.text, module, launch.bases))
        return read_launched(launch, name, module, found)
    parsed = split_options(args)
    found = Found(None, flag_mapping(launch.builder, parsed.options, "hf"))
    found.script, found.script_path = name.text, resolve_script(name.text, module, launch.bases)
    return read_launched(launch, name, module, found)


def python(launch: Launch) -> Found | None:
    """``python [options] script.py|-m module [args]``."""
    args = launch.args
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-m",) and i + 1 < len(args):
            module = args[i + 1]
            return _module(launch, module, args[i + 2 :])
        if text.startswith("-m") and len(text) > 2:
            return _module(launch, args[i].tail(2), args[i + 1 :])
        if text == "-c":
            return None
        if text in ("-W", "-X"):
            i += 2
            continue
        if text.startswith("-") and text != "-":
            i += 1
            continue
        return script(launch, args[i], False, args[i + 1 :])
    return None


def _module(launch: Launch, module: Field, args: list[Field]) -> Found | None:
    if module.text in ("torch.distributed.run", "torch.distributed.launch"):
        return torchrun(replace(launch, args=args), legacy=module.text.endswith("launch"))
    if module.text in ("accelerate.commands.launch",):
        return accelerate(replace(launch, args=args))
    if module.text in ("deepspeed", "deepspeed.launcher.runner"):
        return deepspeed(replace(launch, args=args))
    return script(launch, module, True, args)


# -- torchrun / deepspeed -------------------------------------------------------------------------

TORCHRUN_FLAGS = {"standalone", "module", "no_python", "run_path", "virtual_local_rank", "use_env"}


def torchrun(launch: Launch, legacy: bool = False) -> Found | None:
    parsed, index = launcher_options(
        launch.args, TORCHRUN_FLAGS, short={"-m": "module", "-r": "redirects", "-t": "tee"}
    )
    found = _child(launch, parsed, launch.args[index:])
    nproc = last_option(parsed, "nproc_per_node")
    if found is not None and nproc is not None and nproc[1] is not None and decimal(nproc[1].text, MAX_DEVICES):
        # torch/distributed/run.py: nproc_per_node workers, each told LOCAL_WORLD_SIZE
        found.env.setdefault("LOCAL_WORLD_SIZE", _env_node(launch.builder, "LOCAL_WORLD_SIZE", nproc[1].text, *nproc))
    return found


def _child(launch: Launch, parsed: Parsed, rest: list[Field]) -> Found | None:
    """The training script a launcher starts (``-m``: a module; ``--no_python``: a program)."""
    if not rest:
        return None
    if last_option(parsed, "no_python") is not None:
        return launch.dispatch(rest, launch.env)
    return script(launch, rest[0], last_option(parsed, "module") is not None, rest[1:])


DEEPSPEED_FLAGS = {
    "module",
    "no_python",
    "no_local_rank",
    "no_ssh",
    "no_ssh_check",
    "force_multi",
    "save_pid",
    "elastic_training",
    "bind_cores_to_rank",
}


def deepspeed(launch: Launch) -> Found | None:
    parsed, index = launcher_options(
        launch.args, DEEPSPEED_FLAGS, short={"-H": "hostfile", "-i": "include", "-e": "exclude"}
    )
    found = _child(launch, parsed, launch.args[index:])
    if found is None:
        return None
    builder = launch.builder
    include, gpus = (
        last_option(parsed, "include"),
        last_option(parsed, "num_gpus") or last_option(parsed, "num_accelerators"),
    )
    if include is not None and include[1] is not None and not include[1].unresolved:
        slots = include[1].text.partition(":")[2]
        if "@" not in include[1].text and slots:
            found.env["CUDA_VISIBLE_DEVICES"] = _env_node(builder, "CUDA_VISIBLE_DEVICES", slots, *include)
    elif gpus is not None and gpus[1] is not None and (count := decimal(gpus[1].text, MAX_DEVICES)) is not None:
        ids = ",".join(str(i) for i in range(count))  # a count past any machine's is no count
        found.env["CUDA_VISIBLE_DEVICES"] = _env_node(builder, "CUDA_VISIBLE_DEVICES", ids, *gpus)
    elif last_option(parsed, "exclude") is not None:
        flag = last_option(parsed, "exclude")
        assert flag is not None
        builder.note(
            "not-followed",
            "`--exclude` leaves the devices to the machine's count: precheck keeps every device visible",
            flag[0].offset(),
        )
    return found


# -- accelerate launch ------------------------------------------------------------------------

ACCELERATE_FLAGS = {
    "quiet",
    "cpu",
    "multi_gpu",
    "tpu",
    "enable_cpu_affinity",
    "dynamo_use_fullgraph",
    "dynamo_use_dynamic",
    "dynamo_use_regional_compilation",
    "use_deepspeed",
    "use_fsdp",
    "use_parallelism_config",
    "use_megatron_lm",
    "same_network",
    "module",
    "no_python",
    "tpu_cluster",
    "no_tpu_cluster",
    "tpu_use_sudo",
    "downcast_bf16",
    "fp8_use_autocast_during_eval",
    "debug",
}
#: launch flags → the accelerate config key they override (``_validate_launch_command`` copies
#: ``deepspeed_config.x`` → ``args.x``, ``fsdp_config.x`` → ``args.fsdp_x``)
ACCELERATE_KEYS = {
    "mixed_precision": "mixed_precision",
    "num_processes": "num_processes",
    "num_machines": "num_machines",
    "gpu_ids": "gpu_ids",
    "downcast_bf16": "downcast_bf16",
    "dynamo_backend": "dynamo_config.dynamo_backend",
    "fp8_backend": "fp8_config.backend",
    **{
        k: f"deepspeed_config.{k}"
        for k in (
            "zero_stage",
            "offload_optimizer_device",
            "offload_param_device",
            "deepspeed_config_file",
            "gradient_accumulation_steps",
            "gradient_clipping",
            "zero3_init_flag",
            "zero3_save_16bit_model",
        )
    },
}
#: paradigm flags → ``distributed_type`` (the first set wins, as in ``launch_command``)
ACCELERATE_PARADIGMS = {
    "use_deepspeed": "DEEPSPEED",
    "use_fsdp": "FSDP",
    "use_megatron_lm": "MEGATRON_LM",
    "multi_gpu": "MULTI_GPU",
    "tpu": "XLA",
}


def _prepared_weights(loop: Found, config: dict[str, Node]) -> None:
    """The dtype of the weights the script's own loop builds and hands ``accelerator.prepare``
    (``from_pretrained(torch_dtype=torch.bfloat16)``, ``model.to(torch.bfloat16)``), kept on the
    accelerate config's run: accelerate does not cast a model (``prepare_model``); what FSDP or
    DeepSpeed then make of those weights is the accelerate resolver's."""
    weights = loop.root.get("torch_dtype")
    if weights is not None and weights.path is not None:
        config.setdefault("torch_dtype", weights)


def accelerate(launch: Launch) -> Found | None:
    builder = launch.builder
    parsed, index = launcher_options(launch.args, ACCELERATE_FLAGS, short={"-m": "module", "-q": "quiet", "-t": "tee"})
    config_file = last_option(parsed, "config_file")
    config = merged_config(launch, config_file[1] if config_file else None, "--config_file")
    if config_file is None:
        at = launch.head[0].offset()
        builder.note(
            "not-followed",
            "no `--config_file`: `accelerate launch` reads the default accelerate config "
            "(~/.cache/huggingface/accelerate/default_config.yaml) when there is one; precheck does not",
            at,
        )
    for flag, name, values in parsed.options:
        if name in ACCELERATE_PARADIGMS:
            line, column = builder.where(flag.offset())
            value = ACCELERATE_PARADIGMS[name]
            put(
                builder,
                config,
                "distributed_type",
                Node(value, line, column, flag.text, line, column),
                flag.offset(),
                "the launch flag wins",
            )
        elif name in ACCELERATE_KEYS:
            node = builder.value(flag, flag.text.partition("=")[0], values[0] if values else None, "yaml")
            if node is not None:
                if isinstance(node.value, (int, float, bool)) and name == "mixed_precision":
                    node.value = values[0].text if values else node.value
                put(builder, config, ACCELERATE_KEYS[name], node, flag.offset(), "the launch flag wins")
    rest = launch.args[index:]
    found = _child(launch, parsed, rest) if rest else None
    kind = config.get("distributed_type")
    sharded = kind is not None and str(kind.value).upper() in ("DEEPSPEED", "FSDP", "MEGATRON_LM")
    if (
        found is None
        or (found.dialect is None and not _detected(found.root))
        or (sharded and found.dialect == "pytorch")
    ):
        # a script precheck cannot read, or its own loop under an engine that shards and casts
        # it (DeepSpeed, FSDP, Megatron: the loop's reading knows none of them): the run is the
        # accelerate config the launch builds
        if config and found is not None and found.dialect == "pytorch":
            _prepared_weights(found, config)
        return Found("accelerate", config) if config else None
    found.env.update(_accelerate_env(launch, config))
    chosen = config.get("mixed_precision")
    if found.dialect == "pytorch" and chosen is not None and "autocast" not in found.root:
        # the script's Accelerator() leaves mixed_precision to ACCELERATE_MIXED_PRECISION, which the launch sets
        from .python_source import mixed_precision_keys

        found.root.update(mixed_precision_keys(chosen))
    deepspeed_file = _get(config, "deepspeed_config.deepspeed_config_file")
    if deepspeed_file is not None and "deepspeed" not in found.root and found.dialect in (None, "hf-trainer", "trl"):
        found.root["deepspeed"] = replace(deepspeed_file)
    return found


def _get(root: dict[str, Node], dotted: str) -> Node | None:
    current: dict[str, Node] | None = root
    node = None
    for part in dotted.split("."):
        if current is None:
            return None
        node = current.get(part)
        if node is None:
            return None
        current = node.value if isinstance(node.value, dict) else None
    return node


def _accelerate_env(launch: Launch, config: dict[str, Node]) -> dict[str, Node]:
    """What ``prepare_*_env`` exports to the training processes."""
    env: dict[str, Node] = {}

    def export(name: str, node: Node, value: str) -> None:
        env[name] = replace(node, value=value)

    mixed = config.get("mixed_precision")
    legacy = config.get("fp16")
    if mixed is not None and mixed.value is not None:
        export("ACCELERATE_MIXED_PRECISION", mixed, str(mixed.value).lower())
    elif legacy is not None and legacy.value:
        export("ACCELERATE_MIXED_PRECISION", legacy, "fp16")
    else:
        head = launch.head[-1]
        line, column = launch.builder.where(head.offset())
        env["ACCELERATE_MIXED_PRECISION"] = Node("no", line, column, "accelerate launch", line, column)
    kind = config.get("distributed_type")
    kind_value = str(kind.value).upper() if kind is not None else ""
    if kind is not None and kind_value == "DEEPSPEED":
        export("ACCELERATE_USE_DEEPSPEED", kind, "true")
        for key, name in (
            ("zero_stage", "ACCELERATE_DEEPSPEED_ZERO_STAGE"),
            ("offload_optimizer_device", "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE"),
            ("offload_param_device", "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE"),
        ):
            node = _get(config, f"deepspeed_config.{key}")
            if node is not None and node.value is not None:
                export(name, node, str(node.value).lower())
    if kind is not None and kind_value == "FSDP":
        export("ACCELERATE_USE_FSDP", kind, "true")
    gpu_ids = config.get("gpu_ids")
    if gpu_ids is not None and gpu_ids.value is not None and str(gpu_ids.value).strip().lower() != "all":
        export("CUDA_VISIBLE_DEVICES", gpu_ids, str(gpu_ids.value).replace(" ", ""))
    processes, machines = config.get("num_processes"), config.get("num_machines")
    count = processes.value if processes is not None else None
    nodes = machines.value if machines is not None and isinstance(machines.value, int) else 1
    if isinstance(count, int) and not isinstance(count, bool) and count > 0 and nodes > 0 and count % nodes == 0:
        # launch.py: num_processes // num_machines workers a machine (torchrun's nproc_per_node)
        assert processes is not None
        export("LOCAL_WORLD_SIZE", processes, str(count // nodes))
    return env


def _detected(root: dict[str, Node]) -> bool:
    """Whether key detection finds a training config in ``root`` (the registry decides)."""
    from . import registered
    from .nodes import Document

    return registered.detect(Document("", "shell", Node(root, 1, 1), "")) is not None


# -- the table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """A command line that starts a run: its program and subcommands, and its parser."""

    #: the program (basename) and its subcommands
    words: tuple[str, ...]
    handler: Handler


#: a framework's entry module's parser: (the launch, the module's own arguments) → the run
ModuleHandler = Callable[[Launch, list[Field]], Found | None]


@dataclass(frozen=True, eq=False, repr=False)
class ModuleEntry:
    """A Python module (``python -m``, ``torchrun -m``, or a script path of the same dotted
    name) that starts a framework's run, and the parser of its arguments."""

    #: searched in the dotted module name (``a/b/train.py`` reads as ``a.b.train``)
    pattern: re.Pattern[str]
    handler: ModuleHandler
    #: its options' defaults are read from its source where the repository holds it
    #: (argparse definitions; :mod:`.entry_defaults`): the flags it leaves out get them
    source_defaults: bool = False


def named_by(name: str, handler: Handler) -> Handler:
    """``handler``, its run read by dialect ``name`` (a framework's launchers, bound by its
    :class:`~precheck.frameworks.base.Framework`)."""

    def bound(launch: Launch) -> Found | None:
        found = handler(launch)
        if found is not None:
            found.dialect = name
        return found

    return bound


def module_named_by(name: str, handler: ModuleHandler) -> ModuleHandler:
    """:func:`named_by` for an entry module's parser."""

    def bound(launch: Launch, args: list[Field]) -> Found | None:
        found = handler(launch, args)
        if found is not None:
            found.dialect = name
        return found

    return bound


#: the launchers of no framework in particular (the run's dialect by detection)
GENERIC: tuple[Entry, ...] = (
    Entry(("accelerate", "launch"), accelerate),
    Entry(("accelerate-launch",), accelerate),
    Entry(("torchrun",), torchrun),
    Entry(("deepspeed",), deepspeed),
)


@lru_cache(maxsize=1)
def launchers() -> tuple[Entry, ...]:
    """Every command precheck follows: the generic launchers and each framework's own."""
    from . import registered  # the registry's table: it imports the frameworks' parsers, which import this module

    return (*GENERIC, *registered.launchers())


@lru_cache(maxsize=1)
def _by_program() -> dict[str, tuple[Entry, ...]]:
    """:func:`launchers` by the program that starts them, each program's in their order."""
    out: dict[str, list[Entry]] = {}
    for entry in launchers():
        out.setdefault(entry.words[0], []).append(entry)
    return {program: tuple(entries) for program, entries in out.items()}


@lru_cache(maxsize=1)
def modules() -> tuple[ModuleEntry, ...]:
    """Every framework's entry modules, in registry order."""
    from . import registered  # see launchers()

    return registered.modules()


_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


def match(argv: list[Field]) -> tuple[Entry | None, int]:
    """The launcher ``argv`` starts (and how many words name it), or (None, 0)."""
    if not argv:
        return None, 0
    program = program_name(argv[0].text)
    if _PYTHON.fullmatch(program):
        return Entry(("python",), python), 1
    for entry in _by_program().get(program, ()):
        words = entry.words
        if len(argv) < len(words):
            continue
        if all(argv[i].text == words[i] for i in range(1, len(words))):
            return entry, len(words)
    return None, 0


def named(argv: list[Field], count: int) -> list[Field]:
    """The words that name the run in its label: ``python -m pkg.cli.train``, ``accelerate launch``."""
    if not _PYTHON.fullmatch(program_name(argv[0].text)):
        return argv[:count]
    i = 1
    while i < len(argv):
        text = argv[i].text
        if text == "-m":
            return argv[: i + 2]
        if not text.startswith("-"):
            return argv[: i + 1]
        i += 2 if text in ("-W", "-X") else 1
    return argv[:1]


def label(head: list[Field], builder: Builder) -> str:
    line, _ = builder.where(head[0].offset())
    return f"`{' '.join(program_name(h.text) if i == 0 else h.text for i, h in enumerate(head))}` at line {line}"


__all__ = ["Entry", "Found", "Launch", "ModuleEntry", "label", "launchers", "match", "modules", "named"]
