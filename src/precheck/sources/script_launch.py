"""A launch line's flags read against the schema of the script it starts.

``python train.py --bf16 True --use_flash_attn True`` (or the same through ``torchrun``,
``deepspeed``, ``accelerate launch``): the script is found where the launcher would find
it (the folder the shell script ``cd``-ed to, then its own folder, then the current one),
read with ``ast`` (:mod:`.script_schema`, :mod:`.script_effects`), and then:

- the run is read with the semantics of what the script parses into: a TRL trainer config
  (``HfArgumentParser((..., SFTConfig))``) gets TRL's defaults; ``TrainingArguments`` or a
  subclass gets transformers'; a script with its own options only never gets TRL's
  ``bf16 = not fp16`` (it does not construct a TRL config);
- the script's own options become run keys where its code says so
  (``--use_flash_attn True`` → ``attn_implementation: flash_attention_2`` at the flag;
  ``--use_4bit_quantization True`` → ``load_in_4bit``; ``--use_peft_lora True`` → LoRA),
  and their defaults where no flag sets them (pointing at the script's line);
- the keys the script defines are known to the unknown-key lint (PC905), which reports
  the others only when the script's parser is closed (it refuses a flag it does not define).

A script precheck cannot find or read leaves its schema unknown: no key is reported as
unknown and nothing is filled in.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .launch_args import locate, searched_from, shown, with_path
from .nodes import ATTENTION_PATCH, Document, Node, SourceNote
from .python_options import Given, defined_at, from_flag
from .python_values import Unknown
from .script_effects import SAME, UNKNOWN, Effect, effects, holds
from .script_formulas import Formula, Settled, settle
from .script_schema import HF_CLASSES, MISSING, TRL_CLASSES, Option, Schema, read_schema
from .tree_facts import calls

if TYPE_CHECKING:
    from .launch_args import Field
    from .launchers import Found, Launch
    from .script_overrides import Override

#: TrainingArguments fields whose default a script's own subclass may change
#: (``bf16: bool = field(default=True)``): carried into the run where no flag sets them
_CARRIED = frozenset({"fp16", "bf16", "tf32", "load_in_4bit", "load_in_8bit"})


def read_launched(launch: Launch, name: Field, module: bool, found: Found) -> Found:
    """``found`` (the launch's flags) read against the schema of the script it starts."""
    found.script_keys = frozenset()  # not readable: no key is reported unknown
    found.script_closed = False
    path = found.script_path  # resolved as the launcher would (script_path.resolve_script)
    schema = read_schema(path) if path is not None else None
    if schema is None or not schema.known:
        handed = None
        for option in _CONFIG_OPTIONS:
            if option in found.root:
                handed = _config_file(launch, None, option, found.root, path) or handed
        found.dialect = _dialect(None, found) or handed
        if found.dialect is None and path is not None:
            _own_loop(path, found)
        return found
    handed = None
    for option in sorted(schema.config_options):
        handed = _config_file(launch, schema, option, found.root, path) or handed
    for option in sorted(set(_CONFIG_OPTIONS) - schema.config_options):
        # `config = json.load(open(args.config))` ... `SFTConfig(**config["training"])`: the block handed
        if isinstance(found.root.get(option), Node) and schema.options.get(option) is not None:
            handed = _config_file(launch, schema, option, found.root, path, handed_only=True) or handed
    found.script_keys = schema.defined()
    # TRL's configs have more fields than precheck lists: a TRL schema is never closed; nor is a
    # script that hands a block of its config file over (the block's keys are the class's)
    found.script_closed = schema.closed and "trl" not in schema.frameworks and handed is None
    _defaults(schema, found.root)
    _defined_at(schema, found.root)
    before = set(found.root)
    if schema.effects is None:
        schema.effects = effects(schema.modules, set(schema.options), schema.commands)
    _apply(schema, found.root, schema.effects, launch.builder.notes)
    _apply_overrides(schema, found.root, launch.builder.notes)
    found.script_keys |= set(found.root) - before  # keys the script's code derives
    # argparse (HfArgumentParser too) takes a unique prefix of a long option: `--lr` for `--lr_scheduler`
    defined = found.script_keys
    found.script_keys |= {
        key
        for key, node in found.root.items()
        if node.path is None and key not in defined and any(k.startswith(key) for k in defined)
    }
    derived = set(found.root) - before
    # an option the code passes on as it is (``Accelerator(mixed_precision=args.mixed_precision)``): its flag
    derived |= {e.key for e in schema.effects if e.value is SAME and e.source == e.key and not e.when}
    given = _given(schema, found.root, launch.builder.path)
    if (
        not schema.frameworks
        and path is not None
        and not _builds_arguments(schema)
        and _own_loop(path, found, derived, given)
    ):
        return found  # no Trainer's arguments: what the script's own loop does with its options is the run
    found.dialect = _dialect(schema, found) or handed
    found.script_own_loop = not schema.frameworks and not _builds_trainer(schema)
    if path is not None and found.dialect in ("hf-trainer", "trl"):
        _model_loaded(path, found, given)
    return found


def _model_loaded(path: Path, found: Found, given: dict[str, Given]) -> None:
    """The model the script loads, read with the launch's flags as its options' values
    (:func:`.python_source.model_keys`): its dtype, quantization and attention where neither
    a flag nor an option's effect set them (``if bf16: dtype = torch.bfloat16`` in a function
    the script calls with ``bf16=training_args.bf16``), each at the script's line."""
    from .python_source import model_keys
    from .reading import read_text

    name = shown(path)
    try:
        keys = model_keys(name, read_text(path, name), given)
    except InputError:
        return
    for key, node in keys.items():
        if key not in found.root:
            found.root[key] = with_path(node, name)


def _builds_trainer(schema: Schema) -> bool:
    """Whether the script (or a module it imports) constructs a transformers/TRL trainer or
    config (``Trainer(...)``, ``SFTTrainer(...)``, ``TrainingArguments(...)``, ``SFTConfig(...)``):
    where it does not, the run is its own loop and the HF Trainer's defaults are not its."""
    wanted = HF_CLASSES | TRL_CLASSES
    for tree in schema.modules.values():
        for node in calls(tree):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in wanted or name.endswith("Trainer"):
                return True
    return False


def _own_loop(path: Path, found: Found, derived: set[str] | None = None, given: dict[str, Given] | None = None) -> bool:
    """A launched script that sets its precision in its own code (``Accelerator(mixed_precision=
    "bf16")``, ``torch.autocast`` and a ``GradScaler``, a cast of the model): the run is what
    that code does, as the script is read on its own (:mod:`.python_source`), its keys marked
    with the script's path. Its flags mean nothing precheck knows, and are left out, but for
    ``--model_name_or_path`` (the checkpoint, by the name every Hugging Face script gives it) and
    the keys its code derives from them (``derived``: ``--mixed_precision fp16`` passed to
    ``Accelerator(mixed_precision=args.mixed_precision)``, a ``torch_dtype`` an option picks).
    The script's code is read with the launch's flags as its options' values (``given``:
    :mod:`.python_options`; None: the script's options are not known, read as on its own).
    Whether it was such a script."""
    from .python_source import mixed_precision_keys, parse_code
    from .reading import read_text

    name = shown(path)
    try:
        runs = parse_code(name, read_text(path, name), "python", None, given if given is not None else {})
    except InputError:
        return False  # (the script itself, checked on its own, reports why it cannot be read)
    loops = [run for run in runs if run.dialect == "pytorch" or (run.dialect and "trainer" in run.mapping())]
    if len(loops) != 1:
        return False
    (loop,) = loops
    found.dialect = loop.dialect
    flags = found.root
    found.root = {key: with_path(node, name) for key, node in loop.mapping().items()}
    if found.script_keys is not None:
        found.script_keys = found.script_keys | set(found.root)  # (the flags are still linted)
    for key, node in flags.items():  # its own options: read by no field of the loop's run
        if key not in _READ_BY_LOOPS and key not in found.root:
            found.root[key] = node
    if loop.dialect == "pytorch":
        for key in sorted((derived or set()) & _LOOP_KEYS):
            if key in flags and (key not in found.root or from_flag(found.root[key].via, key)):
                found.root[key] = flags[key]  # the option's own value: changed at its flag
        chosen = flags.get("mixed_precision") if "mixed_precision" in (derived or set()) else None
        autocast = found.root.get("autocast")
        if chosen is not None and (
            ("autocast" not in found.root and "torch_dtype" not in found.root)
            or (autocast is not None and from_flag(autocast.via, "mixed_precision"))
        ):
            found.root.update(mixed_precision_keys(chosen))
    model = flags.get("model_name_or_path")
    if model is None or not isinstance(model.value, str):
        return True
    if loop.dialect == "pytorch":
        found.root.setdefault("model_name_or_path", model)  # the checkpoint the script is told to load
    elif (
        "model" not in found.root
    ):  # a framework Trainer's model: its init argument, as the framework's config writes it
        init = Node({"model_name_or_path": model}, model.line, model.column)
        found.root["model"] = Node({"init_args": init}, model.line, model.column)
    return True


def _defined_at(schema: Schema, root: dict[str, Node]) -> None:
    """Each flag of one of the script's options also cites where the script defines it."""
    for key, node in root.items():
        option = schema.options.get(key)
        if option is not None and node.via is None and node.path is None:
            node.via = f"the script's {defined_at(option)}"


def _given(schema: Schema, root: dict[str, Node], launched_from: str) -> dict[str, Given]:
    """The launch's flags as the script's parser gives them to its code (:mod:`.python_options`)."""
    out: dict[str, Given] = {}
    inherited = schema.framework_classes
    for key, node in root.items():
        option = schema.options.get(key)
        if node.path is not None:
            continue  # (a key from a config file the launch names, not a flag)
        if option is None and inherited and isinstance(node.value, (bool, int, float, str)):
            value: Any = node.value  # a TrainingArguments field the script's class inherits
        elif option is None:
            continue
        else:
            value = _converted(option, node)
        where = f"{launched_from}:{node.key_line or node.line}"
        out[key] = Given(
            Unknown(f"`--{key}` is given a value precheck cannot read") if value is MISSING else value,
            where,
            node.key,
        )
    return out


#: the keys a loop's run reads (``frameworks/pytorch_loop/dialect.py``; a framework Trainer's ``trainer``/``model``):
#: a flag of the same name is the script's own option, not one of them
_READ_BY_LOOPS = frozenset(
    {"model_name_or_path", "torch_dtype", "autocast", "autocast_dtype", "grad_scaler", "sharded_grad_scaler"}
    | {"distributed", "load_in_4bit", "load_in_8bit", "bnb_4bit_compute_dtype", "attn_implementation", "use_peft"}
    | {"trainer", "model", "precision", "dtype", "bnb_4bit_quant_type", "gradient_checkpointing", "tf32"}
)
#: keys a script's code derives from its options that its own loop's run reads
_LOOP_KEYS = frozenset(
    {"torch_dtype", "attn_implementation", "load_in_4bit", "load_in_8bit", "bnb_4bit_compute_dtype", "use_peft"}
)


#: the options a script precheck cannot read takes its settings file from (``--config
#: recipe.yaml``: TRL's ``TrlParser``, the HfArgumentParser scripts of open-r1 and its forks)
_CONFIG_OPTIONS = ("config", "config_file", "cfg")


def _config_file(
    launch: Launch,
    schema: Schema | None,
    option: str,
    root: dict[str, Node],
    script: Path | None = None,
    handed_only: bool = False,
) -> str | None:
    """The settings in the file an option names (its flag, else its default), merged under
    the command line's flags; a missing file is a note. ``schema`` None: a script precheck
    cannot read, whose ``--config`` names a file of a run's settings (one detection knows).
    Where the launched ``script`` hands one block of the file to an argument class
    (``SFTConfig(**config["training"])``, :mod:`.front_end`), that block is the settings, and
    the dialect of its class is returned (``handed_only``: only such a block is read)."""
    node = root.get(option)
    if node is None and schema is None:
        return None
    value = node.value if node is not None else schema.options[option].default  # type: ignore[union-attr]
    if not isinstance(value, str) or not value.lower().endswith((".json", ".yaml", ".yml")):
        return None
    target = locate(value, launch.bases)
    if target is None and handed_only:
        return None
    if target is None:
        if node is not None and not launch.builder.writes(value):
            launch.builder.notes.append(
                SourceNote(
                    "missing-reference",
                    f"`{node.key}` names `{value}`, which is not a file (looked in {searched_from(launch.bases)}): "
                    "precheck could not check it",
                    node.key_line or node.line,
                    node.key_column or node.column,
                    node.key,
                )
            )
        return None
    from .reading import load  # the package imports this module lazily

    name = shown(target)
    document = load(target, name)
    handed = _handed_block(document, script)
    if handed is not None:
        document = replace(document, root=handed[0])
    elif handed_only or (schema is None and not _detected(document)):
        return None  # a file the script reads for something else: not the run's settings
    if node is not None and (schema is None or handed is not None):
        del root[option]  # the flag is the file's name, not a setting
    for note in document.notes:
        launch.builder.notes.append(replace(note, path=note.path or name))
    for key, child in document.mapping().items():
        root.setdefault(key, with_path(child, name))
    return handed[1] if handed is not None else None


def _handed_block(document: Document, script: Path | None) -> tuple[Node, str] | None:
    """The block of ``document`` the launched script hands to an HF/TRL argument class, and
    that class's dialect; None when it hands none."""
    if script is None or document.format not in ("yaml", "json"):
        return None
    from .front_end import HF_CLASSES, blocks, handoffs  # read only where a launch names a config file

    present = blocks(document)
    for block, cls, _line in handoffs(script)[0] if present else ():
        if block in present:
            return document.mapping()[block], "hf-trainer" if cls in HF_CLASSES else "trl"
    return None


def _detected(document: Document) -> bool:
    """Whether detection knows ``document`` as a training config (the registry decides)."""
    from . import registered  # the registry's table (the registry imports the sources)

    return registered.detect(document) is not None


def _dialect(schema: Schema | None, found: Found) -> str | None:
    """TRL's defaults only where the script parses into a TRL trainer config; a script
    precheck cannot read, or one with its own options, is not TRL's entry point."""
    if schema is not None and schema.trl_configs:
        return "trl"  # the script constructs a TRL trainer config: its defaults apply
    if schema is not None and schema.frameworks:
        return "hf-trainer"
    if found.dialect is not None:
        return found.dialect
    from . import registered  # the registry's table (the registry imports the sources)

    detected = registered.detect(Document("", "shell", Node(found.root, 1, 1), ""))
    if detected == "trl":
        return "hf-trainer"  # the script's own options, not a TRL config: TRL's defaults do not apply
    if detected is None and schema is not None and _builds_arguments(schema):
        # its own options (click, fire, argparse) passed into a TrainingArguments it constructs
        # (dolly's ``TrainingArguments(fp16=fp16, bf16=bf16, deepspeed=deepspeed)``): transformers' semantics
        return "hf-trainer"
    return None


def _builds_arguments(schema: Schema) -> bool:
    """Whether the script's modules call a ``TrainingArguments`` class (read with their text)."""
    return schema.builds_arguments


def _defaults(schema: Schema, root: dict[str, Node]) -> None:
    """The script's own default for a precision or method key no flag sets."""
    if not schema.frameworks:
        return  # an own option means what the script's code makes of it (see _apply)
    for name, option in schema.options.items():
        if name not in _CARRIED or name in root or not isinstance(option.default, bool):
            continue
        line = option.default_line or option.name_line or option.line
        node = Node(option.default, line, 1, name, line, 1, raw=repr(option.default))
        node.path = shown(option.path)
        node.via = f"option default, the launch does not give --{name}; {defined_at(option)}"
        root[name] = node


def _apply(schema: Schema, root: dict[str, Node], found: list[Effect], notes: list[SourceNote]) -> None:
    chosen: dict[str, tuple[Any, Node]] = {}
    ambiguous: set[str] = set()
    for effect in found:
        if effect.key in root and effect.key not in ambiguous:
            _through_script(schema, root, effect)
        if effect.key in root or effect.key in ambiguous:
            continue
        if isinstance(effect.value, Formula):
            effect = _settled(schema, root, effect)
        if effect.value is UNKNOWN:
            if _possible(schema, root, effect):
                ambiguous.add(effect.key)
                chosen.pop(effect.key, None)
                notes.append(
                    SourceNote(
                        "unresolved-value",
                        f"`{effect.key}` is set by the script at {shown(effect.path)}:{effect.line} to a value "
                        "computed at run time: precheck leaves it out",
                        effect.line,
                        effect.column,
                        effect.key,
                        shown(effect.path),  # where the script sets it
                    )
                )
            continue
        result = _evaluate(schema, root, effect)
        if result is None:
            continue
        value, node = result
        previous = chosen.get(effect.key)
        if previous is not None and previous[0] != value:
            ambiguous.add(effect.key)
            del chosen[effect.key]
            continue
        chosen.setdefault(effect.key, (value, node))
        if effect.patch is not None and effect.key in chosen:
            notes.append(
                SourceNote(
                    ATTENTION_PATCH,
                    f"`{effect.patch}()` swaps FlashAttention into the attention it patches, taken as the model's: "
                    "precheck does not follow the model's code to see that it uses that attention (another patch "
                    "or a model of another family would not)",
                    effect.line,
                    effect.column,
                    effect.patch,
                    shown(effect.path),
                )
            )
    for key, (_, node) in chosen.items():
        root[key] = node


def _settled(schema: Schema, root: dict[str, Node], effect: Effect) -> Effect:
    """An effect whose value the script computes from its options (:mod:`.script_formulas`),
    with the value the launch gives it; UNKNOWN where it is not known. The options it read
    that a flag set become conditions that hold (so the value points at the first such flag),
    and the lines of the expression that decided the value are cited with it."""
    assert isinstance(effect.value, Formula)
    values: dict[str, Any] = {}
    flags: list[tuple[str, Any]] = []
    for option in effect.value.options:
        value, node = _option_value(schema, root, option)
        if value is MISSING:
            return replace(effect, value=UNKNOWN)
        values[option] = value
        if node is not None and _plain(value):  # (a condition that holds: the value points at the flag)
            flags.append((option, ("==", value)))
    result = settle(effect.value, values)
    if not isinstance(result, Settled):
        return replace(effect, value=UNKNOWN)
    through = tuple(dict.fromkeys((*effect.through, *result.lines)))
    return replace(effect, value=result.value, when=(*effect.when, *flags), through=through)


def _possible(schema: Schema, root: dict[str, Node], effect: Effect) -> bool:
    """Whether an effect's conditions may hold (none is known to fail)."""
    for condition in effect.when:
        value, _ = _option_value(schema, root, condition[0])
        if value is not MISSING and holds(condition, value) is False:
            return False
    return True


def _evaluate(schema: Schema, root: dict[str, Node], effect: Effect) -> tuple[Any, Node] | None:
    """The value and node an effect gives, or None when it does not apply or is not known."""
    trigger: Node | None = None
    for name, _ in effect.when:
        value, node = _option_value(schema, root, name)
        if value is MISSING:
            return None
        verdict = holds((name, _), value)
        if verdict is not True:
            return None
        if node is not None and trigger is None:
            trigger = node
    if effect.value is SAME:
        assert effect.source is not None
        value, node = _option_value(schema, root, effect.source)
        if value is MISSING or not _plain(value) or value is None:
            return None
        trigger = node or trigger
    else:
        value = effect.value
    if trigger is not None:
        # the option's own value (``load_in_4bit=args.use_4bit_quantization``) is changed at its
        # flag; a value the code picks (``"flash_attention_2"`` under ``if args.use_flash_attn``)
        # is pointed at, but no fix names the flag with a value it does not take
        key = trigger.key if effect.value is SAME else None
        made = Node(value, trigger.line, trigger.column, key, trigger.key_line, trigger.key_column)
        made.raw = trigger.raw if effect.value is SAME else None
        made.quoted, made.path, made.via = trigger.quoted, trigger.path, trigger.via
        made.through = (*trigger.through, *_script_lines(effect, True))  # the script's line that turns the flag into it
        return value, made
    made = Node(value, effect.line, effect.column, effect.key, effect.line, effect.column, raw=repr(value))
    made.path = shown(effect.path)
    made.through = _script_lines(effect, False)
    made.via = _defaults_read(schema, effect)
    return value, made


def _script_lines(effect: Effect, own: bool) -> tuple[tuple[str | None, int], ...]:
    """The lines of the launched script an effect's value flows through (``own``: its own line too)."""
    name = shown(effect.path)
    lines = (effect.line, *effect.through) if own else effect.through
    return tuple((name, line) for line in dict.fromkeys(lines))


def _through_script(schema: Schema, root: dict[str, Node], effect: Effect) -> None:
    """A flag the script passes on as it is (``--torch_dtype bfloat16`` → ``torch_dtype =
    getattr(torch, model_args.torch_dtype)`` → ``from_pretrained(torch_dtype=torch_dtype)``):
    its value cites the script's lines it flows through, where the effect's conditions hold."""
    node = root[effect.key]
    if effect.value is not SAME or effect.source != effect.key or node.path is not None:
        return  # (a node from another file: a value the script itself or a config file set)
    for name, expected in effect.when:
        value, _ = _option_value(schema, root, name)
        if value is MISSING or holds((name, expected), value) is not True:
            return
    root[effect.key] = replace(node, through=tuple(dict.fromkeys((*node.through, *_script_lines(effect, True)))))


def _defaults_read(schema: Schema, effect: Effect) -> str | None:
    """Which options' defaults an effect no flag triggers rests on (its conditions, its source)."""
    names = [name for name, _ in effect.when]
    if effect.value is SAME and effect.source is not None:
        names.append(effect.source)
    parts = [
        f"option default, the launch does not give --{name}; {defined_at(schema.options[name])}"
        for name in dict.fromkeys(names)
        if name in schema.options
    ]
    return "; ".join(parts) if parts else None


def _option_value(schema: Schema, root: dict[str, Node], name: str) -> tuple[Any, Node | None]:
    """An option's value as the script sees it, and the flag node that set it (None: its default)."""
    option = schema.options.get(name)
    node = root.get(name)
    if node is None:
        return (option.default if option is not None else MISSING), None
    return _converted(option, node), node


def _converted(option: Option | None, node: Node) -> Any:
    """What the script's parser makes of a flag's value."""
    value = node.value
    if option is None:
        return MISSING
    if option.kind in ("bool", "store_true", "store_false"):
        return value if isinstance(value, bool) else MISSING
    if option.kind == "type_bool":  # argparse type=bool: bool("False") is True
        return bool(node.raw) if node.raw is not None else value
    if option.type_name == "str":
        return node.raw.strip("'\"") if node.raw is not None and not isinstance(value, str) else value
    if option.type_name in ("int", "float"):
        return value if isinstance(value, int | float) and not isinstance(value, bool) else MISSING
    return MISSING


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


# -- the code over the flags (script_overrides) ----------------------------------------


def _apply_overrides(schema: Schema, root: dict[str, Node], notes: list[SourceNote]) -> None:
    """What the script's code decides over its flags (:mod:`.script_overrides`): an option set
    again after parsing, the one literal the call that builds a setting passes; a
    ``TrainingArguments`` switch set again after its ``__post_init__`` is read and not used."""
    from .nodes import OVERRIDDEN
    from .script_overrides import AFTER_INIT, ASSIGNED, HARD_CODED, UNREAD, overrides

    if schema.overrides is None:  # (the schema is cached per file version: read once)
        schema.overrides = overrides(schema.modules, set(schema.options))
    found = schema.overrides
    if not found:
        return
    decided = {effect.key for effect in schema.effects or ()}
    literals: dict[str, set[Any]] = {}
    for override in found:
        if override.kind == HARD_CODED:
            literals.setdefault(override.key, set()).add(override.value)
    for override in found:
        where = f"{shown(override.path)}:{override.line}"
        if override.kind == AFTER_INIT:
            notes.append(
                _note(
                    "not-followed",
                    f"`{override.key}` is set again after parsing, at {where}: "
                    "TrainingArguments.__post_init__ has already taken the mixed precision from the parsed value "
                    "(transformers training_args.py:1614-1618@5.24.0), so the run keeps the flags' (a transformers "
                    "release whose Trainer reads the switch itself would not)",
                    override,
                )
            )
            continue
        if override.kind == HARD_CODED and (override.key in decided or len(literals[override.key]) > 1):
            continue  # one of several places that set it: which one the run takes is the code's
        if override.kind == ASSIGNED and override.key not in schema.options:
            continue
        value = override.value
        if override.source is not None:
            value, _ = _option_value(schema, root, override.source)
        if value is UNREAD or value is MISSING:
            if override.kind == ASSIGNED:
                notes.append(
                    _note(
                        "unresolved-value",
                        f"`{override.key}` is set again after parsing, at "
                        f"{where}, to a value computed at run time: precheck keeps the flag's",
                        override,
                    )
                )
            continue
        node = Node(value, override.line, override.column, override.key, override.line, override.column)
        node.raw, node.path = repr(value), shown(override.path)
        flag = root.get(override.key)
        if flag is not None and _converted(schema.options.get(override.key), flag) != value and flag.value != value:
            how = (
                "sets it again after parsing"
                if override.kind == ASSIGNED
                else "passes a literal to the call that builds it"
            )
            notes.append(
                SourceNote(
                    OVERRIDDEN,
                    f"`{flag.key or override.key}` is not what the run uses: {where} {how} "
                    f"(`{override.key}={value!r}`)",
                    flag.key_line or flag.line,
                    flag.key_column or flag.column,
                    flag.key,
                    flag.path,
                )
            )
        root[override.key] = node


def _note(kind: str, message: str, override: Override) -> SourceNote:
    """A note at the script's line that sets it."""
    return SourceNote(kind, message, override.line, override.column, override.key, shown(override.path))


__all__ = ["read_launched"]
