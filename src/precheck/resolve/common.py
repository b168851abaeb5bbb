"""Pieces of resolution shared by several frameworks."""

from __future__ import annotations

from typing import Any

from ..config import TrainingConfig
from ..facts import span
from ..hardware import Hardware
from ..provenance import Origin, Sourced
from ..versions import Versions

#: peft 0.12.0 added ``get_peft_model(..., autocast_adapter_dtype=True)``, which upcasts
#: fp16/bf16 adapter weights to float32 (``tuners_utils._cast_adapter_dtype``); up to 0.11.1
#: ``LoraLayer.update_layer`` did ``self.to(weight.device, dtype=weight.dtype)``: adapters
#: in the base layer's dtype.
PEFT_UPCASTS = span("peft.adapters_upcast")
PEFT_ADAPTERS = Origin.default("peft>=0.12 casts LoRA adapter weights to float32 (autocast_adapter_dtype=True)")


#: torch 2.3.0 made ``is_bf16_supported()`` fall back to allocating a bf16 tensor
#: (``_check_bf16_tensor_supported``, pytorch#115924), which succeeds on pre-Ampere GPUs;
#: up to 2.2.2 it was ``major >= 8 and cuda >= 11``. transformers' ``is_torch_bf16_gpu_available``
#: and accelerate's ``is_bf16_available`` return it as is.
BF16_CHECK_COUNTS_EMULATION = span("torch.bf16_check_counts_emulation")


def frameworks_see_bf16(hardware: Hardware, versions: Versions) -> tuple[bool, str]:
    """What ``torch.cuda.is_bf16_supported()`` answers on these devices, and why."""
    if all(d.bf16 for d in hardware.devices):
        return True, "native bf16"
    torch = versions.get("torch")
    if torch is None or BF16_CHECK_COUNTS_EMULATION.contains(torch.version):
        known = f"torch {torch.version}" if torch else "torch version not known: newest behaviour"
        return True, f"torch>=2.3 counts bf16 emulation as support [{known}]"
    return False, f"torch {torch.version} reports no bf16 before Ampere"


def value(item: Sourced[Any] | None, default: Any = None) -> Any:
    return item.value if item is not None else default


def is_adapter_training(config: TrainingConfig, default: str = "full") -> bool:
    kind = str(value(config.train_type, default)).lower()
    return kind not in ("full", "none", "")


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


def quantized_base(config: TrainingConfig) -> bool:
    """Whether the base weights are integers (bitsandbytes 4/8-bit, a GPTQ/AWQ checkpoint): peft
    before 0.12 gives adapters the base dtype only when the base weight is floating point."""
    if config.quantization_bits is not None and config.quantization_bits.value in (4, 8):
        return True
    model = str(value(config.model, "")).lower()
    return any(tag in model for tag in ("gptq", "awq"))


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
