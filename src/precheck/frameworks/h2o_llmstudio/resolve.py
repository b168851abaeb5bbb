"""This framework: ``environment.mixed_precision`` + ``mixed_precision_dtype``.

Read upstream in ``llm_studio/train.py`` ``run_train``: autocast with
``dtype=mixed_precision_dtype``; ``GradScaler(enabled=(mixed_precision_dtype ==
"float16"))``. ``modeling_utils.create_nlp_backbone``: a full fine-tune whose
``backbone_dtype`` is not float32 turns mixed precision off ("Disabling mixed precision
as dtype not set to float32."); with LoRA on an int4/int8 backbone the remaining
fp16/bf16 parameters are cast to float32. ``environment.gpus`` picks the devices.

Defaults (``llm_studio/python_configs/text_causal_language_modeling_config.py@v1.14.9``, the same
at v1.4.0): ``training.lora = True`` (line 189), ``architecture.backbone_dtype = "int4"`` (368),
``architecture.gradient_checkpointing = True`` (369): the plan (and so the memory estimate) loads
a 4-bit backbone, trains LoRA adapters and recomputes activations unless the file says otherwise.
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...facts import quote, span
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import is_adapter_training, trainable_dtype
from ...resolve.plan import Override, PrecisionPlan, same_dtype_plan
from ...versions import Versions
from .label import LABEL, NAME

#: releases whose GradScaler ignored the dtype: ``scaler = GradScaler()`` in train.py at
#: v1.4.0/v1.4.1; v1.5.0 added ``mixed_precision_dtype`` and ``enabled=(... == "float16")``
#: (read at the tags, see the fact's note)
SCALER_ALWAYS_ON = span(f"{NAME}.scaler_always_on")


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    backbone = config.torch_dtype
    quantized = config.quantization_bits
    if quantized is not None:
        load: Sourced[str] = Sourced(f"int{quantized.value}", quantized.origin)
    else:
        load = backbone or Sourced("int4", Origin.default(f"{LABEL} default backbone_dtype: int4"))
    lora = is_adapter_training(config, "lora")
    amp = config.amp or Sourced(True, Origin.default(f"{LABEL} default mixed_precision: true"))
    overrides: list[Override] = []
    if amp.value and not lora and load.value != "float32":
        off = Sourced(False, load.origin.derived(quote(f"{NAME}.mixed_precision_off")))
        overrides.append(Override(field="autocast_dtype", winner=off, loser=amp, reason=off.origin.detail or ""))
        amp = off
    weights = load if load.value.startswith("float") or load.value == "bfloat16" else Sourced("float32", load.origin)
    info = versions.get(NAME)
    if info is not None and SCALER_ALWAYS_ON.contains(info.version):
        # up to v1.4.x: autocast() without a dtype (fp16 on CUDA), GradScaler() whenever
        # mixed precision is on, and LoRA weights in the backbone's dtype (PEFT of 2024)
        old = f"{NAME} {info.version} ({info.source})"
        dtype: Sourced[str] = Sourced("float16", Origin.default(f"{old}: autocast() without dtype is fp16"))
        params = Sourced(weights.value, Origin.default(f"{old}: LoRA weights in the backbone dtype"))
        scaler_on = bool(amp.value)
        why = Origin.default(f"{old}: GradScaler() whenever mixed precision is on")
    else:
        default = Origin.default(f"{LABEL} default mixed_precision_dtype: bfloat16")
        dtype = config.amp_dtype or Sourced("bfloat16", default)
        params = trainable_dtype(config, weights, "lora")
        scaler_on = bool(amp.value) and dtype.value == "float16"
        why = Origin.default("GradScaler(enabled=(mixed_precision_dtype == 'float16'))")
    autocast: Sourced[str | None] = Sourced(
        dtype.value if amp.value else None, dtype.origin if amp.value else amp.origin
    )
    gpus = config.devices or Sourced("all", Origin.default(f"{LABEL} uses every visible GPU by default"))
    plan = same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=Sourced("dynamic" if scaler_on else "none", why),
        grad_scaler=Sourced(scaler_on, why),
        devices=gpus,
        overrides=overrides,
    )
    # ConfigNLPCausalLMArchitecture.gradient_checkpointing = True
    # (python_configs/text_causal_language_modeling_config.py:369@v1.14.9)
    plan.gradient_checkpointing = config.gradient_checkpointing or Sourced(
        True, Origin.default(f"{LABEL} default gradient_checkpointing: true")
    )
    return plan
