"""What a run trains (its full weights or adapters) and what peft does with adapter dtypes (model layer).

Resolvers and rules both ask these questions; they read only the config.
"""

from __future__ import annotations

from typing import Any

from .config import TrainingConfig
from .facts import span
from .provenance import Sourced

#: peft 0.12.0 added ``get_peft_model(..., autocast_adapter_dtype=True)``, which upcasts
#: fp16/bf16 adapter weights to float32 (``tuners_utils._cast_adapter_dtype``); up to 0.11.1
#: ``LoraLayer.update_layer`` did ``self.to(weight.device, dtype=weight.dtype)``: adapters
#: in the base layer's dtype.
PEFT_UPCASTS = span("peft.adapters_upcast")


def value(item: Sourced[Any] | None, default: Any = None) -> Any:
    return item.value if item is not None else default


def is_adapter_training(config: TrainingConfig, default: str = "full") -> bool:
    kind = str(value(config.train_type, default)).lower()
    return kind not in ("full", "none", "")


def quantized_base(config: TrainingConfig) -> bool:
    """Whether the base weights are integers (bitsandbytes 4/8-bit, a GPTQ/AWQ checkpoint): peft
    before 0.12 gives adapters the base dtype only when the base weight is floating point."""
    if config.quantization_bits is not None and config.quantization_bits.value in (4, 8):
        return True
    model = str(value(config.model, "")).lower()
    return any(tag in model for tag in ("gptq", "awq"))
