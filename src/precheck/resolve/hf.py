"""transformers Trainer / TRL: what TrainingArguments do with fp16/bf16.

``fp16``/``bf16`` turn on autocast (through accelerate's ``mixed_precision``); fp16
adds a GradScaler (dynamic loss scaling). The model is loaded by the user's script:
``torch_dtype`` when the recipe names one, otherwise ``from_pretrained``'s float32.
"""

from __future__ import annotations

from ..config import TrainingConfig
from ..hardware import Hardware
from ..provenance import Origin, Sourced
from ..versions import Versions
from .common import amp_flags, scaler_for, trainable_dtype
from .plan import PrecisionPlan


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    load = config.torch_dtype or Sourced(
        "float32", Origin.default("from_pretrained loads float32 when torch_dtype is unset")
    )
    default_kind = "lora" if config.quantization_bits else "full"
    params = trainable_dtype(config, load, default_kind)
    autocast = amp_flags(config)
    scaling, scaler = scaler_for(autocast, "Trainer creates a GradScaler for fp16")
    return PrecisionPlan(
        framework=config.framework,
        load_dtype=load,
        param_dtype=params,
        autocast_dtype=autocast,
        grad_dtype=params,
        optimizer_state_dtype=params,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced("all", Origin.default("Trainer uses every visible GPU")),
    )
