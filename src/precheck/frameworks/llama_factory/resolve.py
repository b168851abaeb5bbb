"""This framework: how ``bf16``/``fp16``/``pure_bf16`` become load, parameter and compute dtypes.

Read upstream in ``src/<package>`` (0.9.x up to 0.9.6.dev0; the lines
quoted are unchanged across those releases unless noted):

- ``hparams/parser.py`` ``get_train_args``: ``if training_args.bf16 or
  finetuning_args.pure_bf16: model_args.compute_dtype = torch.bfloat16 elif
  training_args.fp16: model_args.compute_dtype = torch.float16``. ``pure_bf16`` does not
  touch ``training_args.bf16``: the Trainer's autocast follows ``bf16``/``fp16`` only, so
  ``pure_bf16`` alone trains bf16 weights without AMP. Checks there: "This device does not
  support `pure_bf16`." (``is_torch_bf16_gpu_available()``, emulation-inclusive on torch
  >= 2.3) and "`pure_bf16` is incompatible with DeepSpeed ZeRO-3."; training with neither
  flag logs "We recommend enable mixed precision training."
- ``model/patcher.py`` ``patch_config``: with no compute dtype, ``infer_optim_dtype(
  model_dtype=config.torch_dtype)`` (``extras/misc.py``): bf16 when the device supports it
  and the checkpoint is bf16 (or, in later 0.9.x, has no dtype), else fp16 on a GPU, else
  fp32. ``infer_dtype`` only applies ``if ... not is_trainable``. Then ``init_kwargs
  ["torch_dtype"] = model_args.compute_dtype`` unless ``is_deepspeed_zero3_enabled() and
  quantization_bit is None`` ("do not cast data type of the model deepspeed zero3
  without qlora"): the load dtype is the compute dtype.
- ``model/adapter.py`` ``init_adapter``: ``cast_trainable_params_to_fp32`` unless
  ``pure_bf16`` or ``use_badam`` ("Pure bf16 / BAdam detected, remaining trainable params
  in half precision.") or ZeRO-3 without quantization ("DeepSpeed ZeRO3 detected, remaining
  trainable params in float32."; older 0.9.x releases said "ZeRO3 / FSDP" and skipped
  the cast under FSDP too, where accelerate upcasts FSDP flat params under mixed
  precision). ``_setup_full_tuning``, ``_setup_freeze_tuning`` and ``_setup_lora_tuning``
  then run ``param.data =
  param.data.to(torch.float32)`` on every trainable parameter — a full fine-tune with
  ``bf16: true`` trains fp32 weights under bf16 autocast. LoRA weights come from
  ``get_peft_model``, which upcasts adapters to fp32 itself from peft 0.12
  (``autocast_adapter_dtype=True``), ``pure_bf16`` or not.
- ``model/model_utils/quantization.py`` ``configure_quantization``: bitsandbytes 4-bit
  with ``bnb_4bit_compute_dtype=model_args.compute_dtype`` and
  ``bnb_4bit_quant_storage=model_args.compute_dtype``.
- ``model/model_utils/checkpointing.py`` ``prepare_model_for_training``: gradient
  checkpointing is enabled ``if not model_args.disable_gradient_checkpointing``, whatever
  TrainingArguments' ``gradient_checkpointing`` says.
- Megatron backends (``USE_MEGATRON_BRIDGE=1``: ``train/megatron_bridge/config_builder.py``
  builds ``DistributedDataParallelConfig(grad_reduce_in_fp32=True, ...)`` and passes
  ``mixed_precision`` (default ``bf16_mixed``) to Megatron Bridge; ``USE_MCA=1``:
  mcore_adapter) train Megatron-core models: weights in the recipe's dtype, fp32 main
  parameters and Adam states in Megatron's optimizer, no torch autocast.
"""

from __future__ import annotations

from typing import Any

from ...config import TrainingConfig
from ...dialects.base import to_bool, to_int
from ...hardware import Hardware
from ...models import family_of
from ...provenance import Origin, Sourced
from ...resolve.common import PEFT_UPCASTS, amp_flags, frameworks_see_bf16, scaler_for
from ...resolve.plan import Override, PrecisionPlan, same_dtype_plan
from ...versions import Versions
from ..hf_trainer.resolve import default_load_dtype
from .label import LF

ADAPTERS = ("lora", "oft")


def _raw(config: TrainingConfig, key: str) -> Sourced[Any] | None:
    """A top-level key of the file as written (keys precheck has no field for)."""
    return config.keys.get(key)


def _flag(config: TrainingConfig, key: str) -> Sourced[bool] | None:
    item = _raw(config, key)
    if item is None or to_bool(item.value) is None:
        return None
    return Sourced(bool(to_bool(item.value)), item.origin)


def _on(item: Sourced[bool] | None) -> bool:
    return item is not None and bool(item.value)


def _derived(item: Sourced[Any], detail: str) -> Origin:
    return item.origin.derived(detail) if item.origin.in_file else Origin.default(f"{detail} ({item.origin})")


def checkpoint_dtype(config: TrainingConfig) -> tuple[str | None, str]:
    """The checkpoint's saved dtype (config.json, else the known family's) and where from."""
    if config.model_dtype is not None:
        return config.model_dtype.value, "the checkpoint's config.json"
    family = family_of(str(config.model.value)) if config.model is not None else None
    if family is not None:
        return family.native_dtype, f"the {family.name} checkpoint"
    return None, "no checkpoint dtype known"


def infer_optim_dtype(config: TrainingConfig, hardware: Hardware, versions: Versions) -> Sourced[str]:
    """``extras/misc.py`` ``infer_optim_dtype``: the compute dtype when no flag sets one."""
    saved, where = checkpoint_dtype(config)
    if hardware.known:
        bf16_ok, why = frameworks_see_bf16(hardware, versions)
        gpu = "bf16 supported" if bf16_ok else f"no bf16 ({why})"
    else:
        bf16_ok, gpu = True, "assuming a bf16-capable GPU"
    if bf16_ok and saved in ("bfloat16", None):
        pick = "bfloat16"
    elif hardware.known and not hardware.devices:
        pick = "float32"
    else:
        pick = "float16"
    detail = (
        f"{LF} infer_optim_dtype with no bf16/fp16/pure_bf16: {pick} ({where}: {saved or 'unknown'}; {gpu}; "
        "bf16 > fp16 > fp32)"
    )
    return Sourced(pick, Origin.default(detail))


def _zero_stage(config: TrainingConfig) -> Sourced[int] | None:
    attached = config.attached.get("deepspeed")
    if attached is not None and attached.zero_stage is not None:
        return attached.zero_stage
    return None


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    if config.variant == "v1":
        return _resolve_v1(config, hardware, versions)
    backend = config.megatron_backend
    if backend is not None:
        return _resolve_megatron(config, backend)
    return _resolve_trainer(config, hardware, versions)


def _resolve_trainer(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    overrides: list[Override] = []
    pure = config.pure_bf16 if _on(config.pure_bf16) else None
    badam = _flag(config, "use_badam")
    badam = badam if _on(badam) else None
    bits = _raw(config, "quantization_bit")
    quantized = bits is not None and to_int(bits.value) is not None
    kind_item = config.train_type or Sourced("lora", Origin.default(f"{LF} default finetuning_type: lora"))
    kind = str(kind_item.value).strip().lower()

    # compute dtype (parser.py get_train_args, patcher.py patch_config)
    if _on(config.bf16):
        assert config.bf16 is not None
        compute = Sourced("bfloat16", _derived(config.bf16, f"{LF} compute dtype bf16 from bf16"))
    elif pure is not None:
        compute = Sourced("bfloat16", _derived(pure, f"{LF} compute dtype bf16 from pure_bf16"))
    elif _on(config.fp16):
        assert config.fp16 is not None
        compute = Sourced("float16", _derived(config.fp16, f"{LF} compute dtype fp16 from fp16"))
    else:
        compute = infer_optim_dtype(config, hardware, versions)
    infer = _raw(config, "infer_dtype")
    if infer is not None and str(infer.value).strip().lower() not in ("auto", ""):
        overrides.append(
            Override(
                field="load_dtype",
                winner=compute,
                loser=infer,
                reason=f"{LF} applies infer_dtype only when not training (patch_config: `not is_trainable`)",
            )
        )

    # load dtype: the compute dtype, except ZeRO-3 without quantization
    zero = _zero_stage(config)
    zero3 = zero is not None and zero.value == 3 and not quantized
    if zero3:
        assert zero is not None
        fallback = default_load_dtype(versions)
        if fallback.value == "auto":
            saved, where = checkpoint_dtype(config)
            if saved is not None:
                fallback = Sourced(saved, Origin.default(f"{fallback.origin}; dtype auto: {where}'s {saved}"))
        load = Sourced(
            fallback.value,
            _derived(zero, f"{LF} passes no torch_dtype under ZeRO-3 without quantization: {fallback.origin}"),
        )
        if compute.origin.in_file and compute.value != load.value:
            overrides.append(
                Override(
                    field="load_dtype",
                    winner=load,
                    loser=compute,
                    reason=f"{LF} does not cast the model to the compute dtype under DeepSpeed ZeRO-3 (patch_config)",
                )
            )
    else:
        load = compute

    # trainable parameters (adapter.py init_adapter)
    params = _trainable(kind, kind_item, load, compute, pure or badam, zero3, zero, versions, overrides)

    autocast = amp_flags(config)
    if autocast.value is None and pure is not None:
        # parser.py never sets training_args.bf16 from pure_bf16
        autocast = Sourced(None, _derived(pure, "pure_bf16 trains bf16 weights without autocast (bf16 AMP stays off)"))
    scaling, scaler = scaler_for(autocast, f"HF Trainer (under {LF}) creates a GradScaler for fp16")
    plan = same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced("all", Origin.default(f"{LF} (torchrun/accelerate launch) uses every visible GPU")),
        attention=_attention(config),
        quantization=_quantization(config, compute),
        gradient_checkpointing=_checkpointing(config, overrides),
        overrides=overrides,
    )
    return plan


def _trainable(
    kind: str,
    kind_item: Sourced[Any],
    load: Sourced[str],
    compute: Sourced[str],
    keep_half: Sourced[bool] | None,
    zero3: bool,
    zero: Sourced[int] | None,
    versions: Versions,
    overrides: list[Override],
) -> Sourced[str]:
    fp32 = Sourced(
        "float32",
        _derived(kind_item, f"{LF} upcasts trainable params to float32 ({kind}; init_adapter)")
        if kind_item.origin.in_file
        else Origin.default(f"{LF} upcasts trainable params to float32 (init_adapter)"),
    )
    if keep_half is None and not zero3:
        return fp32
    if kind in ADAPTERS:
        # no cast by the framework: the adapters keep the dtype peft gives them
        peft = versions.get("peft")
        if peft is not None and not PEFT_UPCASTS.contains(peft.version) and load.value in ("float16", "bfloat16"):
            return Sourced(
                load.value,
                Origin.default(f"peft {peft.version} ({peft.source}) creates LoRA weights in the base dtype"),
            )
        made = Sourced(
            "float32",
            Origin.default(
                "peft>=0.12 get_peft_model upcasts adapter weights to float32 (autocast_adapter_dtype=True)"
            ),
        )
        if keep_half is not None:
            overrides.append(
                Override(
                    field="param_dtype",
                    winner=made,
                    loser=keep_half,
                    reason=f"{LF} leaves adapters uncast ({keep_half.origin.key}), but peft>=0.12 makes them float32",
                )
            )
        return made
    if keep_half is not None:
        return Sourced(
            compute.value,
            _derived(keep_half, f"{LF} keeps trainable params in the compute dtype ({keep_half.origin.key})"),
        )
    assert zero is not None
    return Sourced(load.value, _derived(zero, f"{LF} does not upcast under ZeRO-3 (DeepSpeed holds the master copy)"))


def _attention(config: TrainingConfig) -> Sourced[str]:
    if config.attn_implementation is not None:
        return config.attn_implementation
    return Sourced("default", Origin.default("flash_attn: auto leaves transformers' choice (sdpa where supported)"))


def _quantization(config: TrainingConfig, compute: Sourced[str]) -> Sourced[str]:
    bits_item = _raw(config, "quantization_bit")
    bits = to_int(bits_item.value) if bits_item is not None else None
    if bits_item is None or bits is None:
        return Sourced("none", Origin.default("no quantization_bit: base weights are not quantized"))
    method_item = _raw(config, "quantization_method")
    method = str(method_item.value).strip().lower() if method_item is not None else "bnb"
    if method in ("bnb", "bitsandbytes"):
        if bits == 4:
            kind = _raw(config, "quantization_type")
            qtype = str(kind.value) if kind is not None else "nf4"
            return Sourced(
                f"4-bit {qtype} (bitsandbytes), compute {compute.value}, storage {compute.value}",
                _derived(bits_item, f"{LF} sets bnb_4bit_compute_dtype and quant_storage to the compute dtype"),
            )
        if bits == 8:
            return Sourced("8-bit (LLM.int8)", bits_item.origin)
    return Sourced(f"{bits}-bit {method}, compute {compute.value}", bits_item.origin)


def _checkpointing(config: TrainingConfig, overrides: list[Override]) -> Sourced[bool]:
    disable = _flag(config, "disable_gradient_checkpointing")
    trainer = config.gradient_checkpointing
    if _on(trainer):
        assert trainer is not None
        return trainer  # the Trainer enables it as well
    if _on(disable):
        assert disable is not None
        return Sourced(False, disable.origin)
    made = Sourced(
        True,
        Origin.default(
            f"{LF} enables gradient checkpointing unless disable_gradient_checkpointing (prepare_model_for_training)"
        ),
    )
    if trainer is not None and not trainer.value:
        overrides.append(
            Override(
                field="gradient_checkpointing",
                winner=made,
                loser=trainer,
                reason=f"{LF} turns it on itself; only `disable_gradient_checkpointing: true` turns it off",
            )
        )
    return made


def _megatron_dtype(name: str) -> str:
    """The weight dtype of a Megatron Bridge recipe name (``bf16_mixed``, ``fp16_mixed``, ``fp8...``)."""
    text = name.lower()
    if "fp16" in text or text == "16-mixed":
        return "float16"
    if "bf16" in text or "fp8" in text:
        return "bfloat16"
    return "float32" if "32" in text else "bfloat16"


def _resolve_megatron(config: TrainingConfig, backend: Sourced[str]) -> PrecisionPlan:
    label = backend.value
    if config.precision is not None:
        dtype = _megatron_dtype(config.precision.value)
        weights = Sourced(dtype, _derived(config.precision, f"{label} recipe {config.precision.value}"))
        fp8 = "fp8" in config.precision.value.lower()
    elif _on(config.fp16):
        assert config.fp16 is not None
        weights, fp8 = Sourced("float16", _derived(config.fp16, f"{label} fp16 weights")), False
    elif _on(config.bf16) or label == "Megatron Bridge":
        origin = (
            _derived(config.bf16, f"{label} bf16 weights")  # type: ignore[arg-type]
            if _on(config.bf16)
            else Origin.default("Megatron Bridge default mixed_precision: bf16_mixed")
        )
        weights, fp8 = Sourced("bfloat16", origin), False
    else:
        weights, fp8 = Sourced("float32", Origin.default(f"{label} with neither bf16 nor fp16: float32")), False
    half = weights.value in ("float16", "bfloat16")
    master = Origin.default(f"{label}: Megatron's optimizer keeps float32 main params and Adam states")
    grads = Origin.default(
        f"{label}: float32 main_grad buffers ({LF}'s Megatron Bridge DDP config: grad_reduce_in_fp32=True)"
    )
    if weights.value == "float16":
        scale = Origin.default(f"{label}: Megatron's dynamic loss scaler for fp16 (not a torch GradScaler)")
        scaling: Sourced[str] = Sourced("dynamic", scale)
    else:
        scaling = Sourced("none", Origin.default("loss scaling is only used with fp16"))
    plan = PrecisionPlan(
        framework=config.framework,
        load_dtype=weights,
        param_dtype=weights,
        autocast_dtype=Sourced(
            None, Origin.default(f"{label}: no torch autocast, modules compute in the weight dtype")
        ),
        grad_dtype=Sourced("float32", grads) if half else weights,
        optimizer_state_dtype=Sourced("float32", master),
        loss_scaling=scaling,
        grad_scaler=Sourced(False, Origin.default(f"{label} scales the loss itself: no torch GradScaler")),
        devices=Sourced("all", Origin.default(f"{label} (torchrun) uses every visible GPU")),
        master_weights=Sourced("float32", master) if half else None,
        reduce_dtype=Sourced("float32", grads) if half else None,
        fp8=Sourced(config.precision.value, config.precision.origin) if fp8 and config.precision else None,
        gradient_checkpointing=_megatron_recompute(config),
    )
    return plan


def _megatron_recompute(config: TrainingConfig) -> Sourced[bool]:
    item = _raw(config, "recompute_granularity")
    if item is not None and item.value:
        return Sourced(True, item.origin)
    return Sourced(False, Origin.default("Megatron: no activation recomputation unless recompute_granularity"))


def _resolve_v1(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    """The framework's v1 (``USE_V1=1``): only what its FSDP2 engine and bnb plugin show."""
    load = default_load_dtype(versions)
    if load.value == "auto":
        saved, where = checkpoint_dtype(config)
        if saved is not None:
            load = Sourced(saved, Origin.default(f"{load.origin}; dtype auto: {where}'s {saved}"))
    kind = str(config.train_type.value).lower() if config.train_type is not None else "full"
    if kind in ADAPTERS:
        params: Sourced[str] = Sourced(
            "float32", Origin.default("peft>=0.12 get_peft_model upcasts adapter weights to float32")
        )
    else:
        params = Sourced(load.value, Origin.default(f"v1 full fine-tune trains the loaded weights ({load.origin})"))
    if config.fsdp_param_dtype is not None and config.fsdp_param_dtype.value != "float32":
        autocast: Sourced[str | None] = Sourced(
            config.fsdp_param_dtype.value,
            _derived(config.fsdp_param_dtype, "v1 FSDP2 MixedPrecisionPolicy param_dtype (get_mp_policy)"),
        )
    else:
        autocast = amp_flags(config)
    scaling, scaler = scaler_for(autocast, "v1 with fp16 compute")
    quant = None
    if config.quantization_bits is not None and config.quantization_bits.value == 4:
        compute = config.quant_compute_dtype.value if config.quant_compute_dtype is not None else "float16"
        quant = Sourced(
            f"4-bit (bitsandbytes), compute {compute}",
            config.quant_compute_dtype.origin
            if config.quant_compute_dtype is not None
            else _derived(config.quantization_bits, "v1 BnbParams compute_dtype default float16"),
        )
    return same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced("all", Origin.default(f"{LF} v1 (torchrun) uses every visible GPU")),
        reduce_dtype=Sourced("float32", config.fsdp_reduce_dtype.origin) if config.fsdp_reduce_dtype else None,
        quantization=quant,
    )
