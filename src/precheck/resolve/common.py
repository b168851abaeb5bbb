"""Pieces of resolution shared by several frameworks."""

from __future__ import annotations

# the rules ask these too: they live in the model layer (re-exported for the resolvers)
from ..bf16_support import BF16_CHECK_COUNTS_EMULATION as BF16_CHECK_COUNTS_EMULATION
from ..bf16_support import frameworks_see_bf16 as frameworks_see_bf16
from ..config import TrainingConfig
from ..provenance import Origin, Sourced
from ..training_method import PEFT_UPCASTS as PEFT_UPCASTS
from ..training_method import is_adapter_training as is_adapter_training
from ..training_method import quantized_base as quantized_base
from ..training_method import value as value
from ..versions import Versions

PEFT_ADAPTERS = Origin.default("peft>=0.12 casts LoRA adapter weights to float32 (autocast_adapter_dtype=True)")


def trainable_dtype(
    config: TrainingConfig, load: Sourced[str], default_train_type: str = "full", versions: Versions | None = None
) -> Sourced[str]:
    """Trainable parameters: adapters are fp32 under PEFT (0.12+); a full fine-tune trains the loaded weights."""
    if is_adapter_training(config, default_train_type):
        peft = versions.get("peft") if versions is not None else None
        old = peft is not None and not PEFT_UPCASTS.contains(peft.version)
        if old and peft is not None and load.value in ("float16", "bfloat16") and not quantized_base(config):
            return Sourced(
                load.value,
                Origin.default(f"peft {peft.version} ({peft.source}) creates LoRA weights in the base dtype"),
            )
        return Sourced("float32", PEFT_ADAPTERS)
    return Sourced(
        load.value,
        load.origin.derived("full fine-tune trains the loaded weights") if load.origin.in_file else load.origin,
    )


def amp_flags(config: TrainingConfig) -> Sourced[str | None]:
    """HF-style ``fp16``/``bf16`` switches → autocast dtype."""
    if config.fp16 is not None and config.fp16.value:
        return Sourced("float16", config.fp16.origin)
    if config.bf16 is not None and config.bf16.value:
        return Sourced("bfloat16", config.bf16.origin)
    flag = config.fp16 or config.bf16
    return Sourced(None, flag.origin if flag is not None else Origin.default("no fp16/bf16 flag: no autocast"))


def scaler_for(autocast: Sourced[str | None], detail: str) -> tuple[Sourced[str], Sourced[bool]]:
    """fp16 autocast gets dynamic loss scaling through a GradScaler; nothing else does."""
    if autocast.value == "float16":
        origin = autocast.origin.derived(detail) if autocast.origin.in_file else Origin.default(detail)
        return Sourced("dynamic", origin), Sourced(True, origin)
    none = Origin.default("loss scaling is only used with fp16 autocast")
    return Sourced("none", none), Sourced(False, none)
