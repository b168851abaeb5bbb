"""transformers Trainer / TRL: what TrainingArguments do with fp16/bf16.

``fp16``/``bf16`` turn on autocast (through accelerate's ``mixed_precision``); fp16
adds a GradScaler (dynamic loss scaling). The model is loaded by the user's script:
``torch_dtype`` when the recipe names one, otherwise ``from_pretrained``'s default
(float32 up to transformers 4.x, the checkpoint's own dtype from 5.0.0).
"""

from __future__ import annotations

from dataclasses import replace

from ...config import TrainingConfig
from ...facts import span
from ...hardware import Hardware
from ...models import family_of
from ...provenance import Origin, Sourced
from ...resolve.common import amp_flags, scaler_for, trainable_dtype
from ...resolve.complete import quantized
from ...resolve.fsdp import apply_fsdp
from ...resolve.plan import Override, PrecisionPlan, same_dtype_plan
from ...versions import Versions

#: TRL 0.19.0 made ``bf16`` default to ``not fp16`` in every trainer config
#: (``bf16: Optional[bool] = None``; ``__post_init__``: ``self.bf16 = not (self.fp16) if
#: self.bf16 is None else self.bf16``); 0.18.2 inherited TrainingArguments' False.
TRL_BF16_DEFAULT = span("trl.bf16_default")


def trl_bf16_default(config: TrainingConfig, versions: Versions) -> Sourced[bool] | None:
    """The bf16 flag TRL fills in when the file leaves it unset (None: not filled)."""
    if config.bf16 is not None:
        return None
    info = versions.get("trl")
    if info is not None and not TRL_BF16_DEFAULT.contains(info.version):
        return None
    fp16 = bool(config.fp16.value) if config.fp16 is not None else False
    known = f"trl {info.version} ({info.source})" if info else "trl version not known: newest behaviour"
    return Sourced(not fp16, Origin.default(f"default of {TRL_BF16_DEFAULT}: bf16 = not fp16 [{known}]"))


#: TRL 0.22.0 made ``gradient_checkpointing`` default to True in every trainer config
#: (``sft_config.py:111@0.22.0``; 1.16.0: ``_BaseConfig``, ``base_config.py:62``); 0.21.0
#: inherited TrainingArguments' False
TRL_CHECKPOINTING_DEFAULT = span("trl.gradient_checkpointing_default")

#: TRL 0.27.0 loads a model it loads itself (``trl sft``'s ``ModelConfig.dtype``, a model id
#: handed to a trainer) in float32 unless ``dtype`` is given: ``create_model_from_path``
#: ``dtype = kwargs.get("dtype", "float32")`` (``trainer/utils.py:1332@1.16.0``), ``ModelConfig.dtype``
#: default ``"float32"`` (``model_config.py:89@1.16.0``); the SFTTrainer docstring says this differs
#: from transformers 5's ``"auto"``. 0.26.2 (``kwargs.get("dtype", "auto")``) and 0.25.1 left
#: ``from_pretrained``'s default.
TRL_FLOAT32_LOAD = span("trl.load_float32_default")


def trl_checkpointing_default(config: TrainingConfig, versions: Versions) -> Sourced[bool] | None:
    """The gradient_checkpointing TRL's configs fill in when the file leaves it unset (None: not filled)."""
    if config.gradient_checkpointing is not None:
        return None
    holds, known = versions.holds(TRL_CHECKPOINTING_DEFAULT)
    if not holds:
        return None
    return Sourced(
        True, Origin.default(f"default of {TRL_CHECKPOINTING_DEFAULT}: gradient_checkpointing = True [{known}]")
    )


def trl_load_default(config: TrainingConfig, versions: Versions) -> Sourced[str] | None:
    """The dtype TRL loads the model in when it loads it and no dtype is given (None: from_pretrained's
    default, or the script loads the model itself: a ``from_pretrained`` call the Python source read)."""
    if config.torch_dtype is not None or config.setting("from_pretrained") is not None:
        return None
    holds, known = versions.holds(TRL_FLOAT32_LOAD)
    if not holds:
        return None
    detail = f"default of {TRL_FLOAT32_LOAD}: TRL loads the model in float32 unless `dtype` is given [{known}]"
    return Sourced("float32", Origin.default(detail))


def resolve_trl(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    filled = trl_bf16_default(config, versions)
    if filled is not None:
        config = replace(config, bf16=filled)
    load = trl_load_default(config, versions)
    if load is not None:
        config = replace(config, torch_dtype=load)
    plan = resolve(config, hardware, versions)
    checkpointing = trl_checkpointing_default(config, versions)
    if checkpointing is not None and plan.gradient_checkpointing is None:
        plan.gradient_checkpointing = checkpointing  # what the memory estimate counts
    dtype = config.torch_dtype
    if config.quantization_bits is not None and config.quantization_bits.value == 4 and dtype is not None:
        # trl ``get_quantization_config``: ``bnb_4bit_compute_dtype=model_args.dtype`` (and the
        # quant storage), "for consistency with model weights" (utils.py:265@1.16.0): float32 by
        # ModelConfig's default from 0.27.0
        compute = config.quant_compute_dtype or Sourced(
            dtype.value, dtype.origin.derived("TRL's get_quantization_config computes 4-bit layers in torch_dtype")
        )
        plan.quantization = quantized(config.quantization_bits, compute)
    return plan


#: transformers 5.0.0 ``from_pretrained``: ``if dtype is None: dtype = "auto"`` (the
#: checkpoint's config.json dtype); 4.x left it None: "the model will get loaded in
#: `torch.float` (fp32)" (``modeling_utils.py``, 4.57.1 vs 5.0.0).
FROM_PRETRAINED_AUTO = span("transformers.from_pretrained_auto")


#: ACCELERATE_MIXED_PRECISION's values as the autocast dtype they give
_ENV_DTYPE = {"fp16": "float16", "bf16": "bfloat16", "no": None}


def _agrees(env: object, autocast: object) -> bool:
    """An ACCELERATE_MIXED_PRECISION that names the autocast dtype the flags chose."""
    return str(env).strip().lower() in ("fp16", "bf16") and _ENV_DTYPE[str(env).strip().lower()] == autocast


def default_load_dtype(versions: Versions) -> Sourced[str]:
    """What ``from_pretrained`` loads when the recipe names no dtype."""
    info = versions.get("transformers")
    if info is not None and not FROM_PRETRAINED_AUTO.contains(info.version):
        return Sourced(
            "float32", Origin.default(f"transformers {info.version} ({info.source}): from_pretrained loads float32")
        )
    known = (
        f"transformers {info.version} ({info.source})" if info else "transformers version not known: newest behaviour"
    )
    return Sourced("auto", Origin.default(f"from_pretrained default dtype auto in {FROM_PRETRAINED_AUTO} [{known}]"))


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    load = config.torch_dtype or default_load_dtype(versions)
    why = "" if config.torch_dtype is not None else f" ({load.origin.detail})"
    if load.value == "auto" and config.model_dtype is not None:
        native = config.model_dtype
        load = Sourced(native.value, native.origin.derived(f"dtype auto: the checkpoint's own config.json dtype{why}"))
    if load.value == "auto":
        family = family_of(str(config.model.value)) if config.model is not None else None
        if family is not None:
            detail = f"dtype auto: the {family.name} checkpoint's {family.native_dtype}"
            load = Sourced(
                family.native_dtype,
                load.origin.derived(detail) if load.origin.in_file else Origin.default(f"{load.origin}; {detail}"),
            )
    default_kind = "lora" if config.quantization_bits else "full"
    params = trainable_dtype(config, load, default_kind, versions)
    autocast = amp_flags(config)
    env = config.env.get("ACCELERATE_MIXED_PRECISION")
    overrides: list[Override] = []
    if autocast.value is None and env is not None and env.value in ("fp16", "bf16"):
        # transformers 4.x writes the variable back and accelerate reads it; 5.x passes
        # os.environ's value to Accelerator(mixed_precision=...): flags win, else the env
        autocast = Sourced("float16" if env.value == "fp16" else "bfloat16", env.origin)
    elif autocast.value is not None and env is not None and env.origin.in_file and _agrees(env.value, autocast.value):
        # the launcher's config says the same: with the flag gone it would decide it
        autocast = Sourced(autocast.value, autocast.origin.with_through(env.origin.places))
    elif autocast.value is not None and env is not None and _ENV_DTYPE.get(str(env.value)) != autocast.value:
        overrides.append(
            Override(
                field="autocast_dtype",
                winner=autocast,
                loser=Sourced(env.value, env.origin),
                reason="TrainingArguments' fp16/bf16 decide mixed precision over the environment's "
                "ACCELERATE_MIXED_PRECISION (transformers 4.x writes the variable, 5.x reads it only "
                "when both are off)",
            )
        )
    scaling, scaler = scaler_for(autocast, "Trainer creates a GradScaler for fp16")
    plan = same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced("all", Origin.default("Trainer uses every visible GPU")),
    )
    if overrides:
        plan = replace(plan, overrides=[*plan.overrides, *overrides])
    if config.fsdp is not None and config.fsdp.value and "fsdp" not in config.attached:
        # `fsdp: full_shard auto_wrap` with an inline or absent fsdp_config (a named file is an attachment)
        plan = apply_fsdp(plan, config, None, versions)
    return plan
