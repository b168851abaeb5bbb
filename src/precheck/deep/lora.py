"""The LoRA settings a run's file gives, as PEFT will apply them (for the exact trainable count).

Keys, as the frameworks spell them: the rank ``lora_r`` or ``lora_rank``; the targets
``lora_target_modules``, ``target_modules`` (``all-linear``), ``lora_target`` (``all`` or a
comma list) or ``lora_target_linear: true``; the fully trained modules ``lora_modules_to_save``,
``modules_to_save`` or ``additional_target``; ``use_dora``/``peft_use_dora``.

PEFT semantics (huggingface/peft ``src/peft/tuners/tuners_utils.py`` ``check_target_module_exists``):
a list entry matches a module whose qualified name equals it or ends with ``"." + entry``;
a string is a regular expression matched in full; ``all-linear`` is every linear layer
but the output layer. With no target modules, ``LoraConfig`` falls back to
``TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`` (``src/peft/utils/constants.py``),
of which :data:`PEFT_DEFAULT_TARGETS` copies the decoder families precheck knows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import TrainingConfig
from ..memory import DEFAULT_LORA_RANK
from ..sources.nodes import Node

ALL_LINEAR = "all-linear"

#: huggingface/peft src/peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
PEFT_DEFAULT_TARGETS: dict[str, tuple[str, ...]] = {
    "llama": ("q_proj", "v_proj"),
    "mistral": ("q_proj", "v_proj"),
    "mixtral": ("q_proj", "v_proj"),
    "gemma": ("q_proj", "v_proj"),
    "gemma2": ("q_proj", "v_proj"),
    "qwen2": ("q_proj", "v_proj"),
    "qwen3": ("q_proj", "v_proj"),
    "phi": ("q_proj", "v_proj", "fc1", "fc2"),
    "gpt2": ("c_attn",),
    "opt": ("q_proj", "v_proj"),
    "gpt_neox": ("query_key_value",),
    "falcon": ("query_key_value",),
    "t5": ("q", "v"),
}

_RANK_KEYS = ("lora_r", "lora_rank")
_TARGET_KEYS = ("lora_target_modules", "lora_target", "target_modules")
_SAVE_KEYS = ("lora_modules_to_save", "modules_to_save", "additional_target")
_DORA_KEYS = ("use_dora", "peft_use_dora")


@dataclass(frozen=True)
class LoraSettings:
    rank: int
    #: module-name suffixes, or a regular expression (PEFT's str form), or ALL_LINEAR
    targets: tuple[str, ...] | str
    modules_to_save: tuple[str, ...] = ()
    dora: bool = False
    #: how each setting was found, for the count's origin
    notes: tuple[str, ...] = ()


def _value(config: TrainingConfig, key: str) -> object:
    """The plain value of a top-level key (a list of strings, not of source nodes), or None."""
    item = config.setting(key)
    if item is None:
        return None
    value = item.value
    if isinstance(value, list):
        return [v.plain() if isinstance(v, Node) else v for v in value]
    return value.plain() if isinstance(value, Node) else value


def _names(value: object) -> tuple[str, ...] | str | None:
    if isinstance(value, list):
        names = tuple(str(v).strip() for v in value if str(v).strip())
        # TRL's ModelConfig turns a one-item list into its string: ["all-linear"] is all-linear
        return ALL_LINEAR if len(names) == 1 and names[0].lower() == ALL_LINEAR else names
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.lower() in ("all", ALL_LINEAR):
            return ALL_LINEAR
        if "," in text:
            return tuple(p.strip() for p in text.split(",") if p.strip())
        return text
    return None


def lora_settings(config: TrainingConfig, model_type: str) -> LoraSettings:
    """The rank, targets, modules to save and DoRA switch of ``config``'s adapters."""
    notes: list[str] = []
    rank = None
    for key in _RANK_KEYS:
        value = _value(config, key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            rank = value
            notes.append(f"rank {rank} from `{key}`")
            break
    if rank is None:
        rank = DEFAULT_LORA_RANK
        notes.append(f"rank not set: {rank} assumed (TRL ModelConfig's default)")
    targets: tuple[str, ...] | str | None = None
    for key in _TARGET_KEYS:
        targets = _names(_value(config, key))
        if targets is not None:
            notes.append(f"targets from `{key}`")
            break
    if targets is None and _value(config, "lora_target_linear") is True:
        targets = ALL_LINEAR
        notes.append("targets: every linear layer (`lora_target_linear`)")
    if targets is None and config.traits.peft_default_lora_targets and model_type in PEFT_DEFAULT_TARGETS:
        targets = PEFT_DEFAULT_TARGETS[model_type]
        notes.append(f"targets not set: PEFT's default for {model_type} ({', '.join(targets)})")
    if targets is None:
        targets = ALL_LINEAR
        notes.append("targets not set: every linear layer assumed (the largest choice)")
    save: tuple[str, ...] = ()
    for key in _SAVE_KEYS:
        names = _names(_value(config, key))
        if names is not None and names != ALL_LINEAR:
            save = (names,) if isinstance(names, str) else names
            break
    dora = any(_value(config, k) is True for k in _DORA_KEYS)
    return LoraSettings(rank, targets, save, dora, tuple(notes))
