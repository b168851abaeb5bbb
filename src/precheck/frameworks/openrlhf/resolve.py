"""This framework trains without torch autocast: the model is loaded in ``--ds.param_dtype``
and the DeepSpeed config it writes from the same flag (attached by the dialect) decides the
engine's precision, as :mod:`precheck.resolve.deepspeed` resolves it. LoRA adapters come from
``get_peft_model`` (peft's own dtype rules)."""

from __future__ import annotations

from ...config import TrainingConfig
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import trainable_dtype
from ...resolve.plan import PrecisionPlan, same_dtype_plan
from ...versions import Versions
from .dialect import param_dtype


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    detail = "from_pretrained(torch_dtype=convert_to_torch_dtype(param_dtype))"
    if config.precision is not None:
        load = Sourced(param_dtype(config), config.precision.origin.derived(detail))
    else:
        load = Sourced("bfloat16", Origin.default(f"default --ds.param_dtype bf16: {detail}"))
    if config.quantization_bits is not None:
        load = Sourced(f"int{config.quantization_bits.value}", config.quantization_bits.origin)
    none = Origin.default("no torch autocast: the DeepSpeed engine runs in the parameter dtype")
    return same_dtype_plan(
        config.framework,
        load=load,
        params=trainable_dtype(config, load, "full", versions),
        autocast=Sourced(None, none),
        loss_scaling=Sourced("none", none),
        grad_scaler=Sourced(False, none),
        devices=Sourced("all", Origin.default("the deepspeed launcher starts one process per visible GPU")),
        gradient_checkpointing=config.gradient_checkpointing
        or Sourced(False, Origin.default("default: --model.gradient_checkpointing_enable not given")),
    )
