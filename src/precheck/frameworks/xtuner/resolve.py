"""What xtuner's ``SupervisedFinetune`` and mmengine's optimizer wrapper do with a config (see
:mod:`.dialect` for the sources read).

- The model loads with ``llm``'s ``from_pretrained`` arguments (no ``torch_dtype``:
  transformers' default); with ``attn_implementation="flash_attention_2"`` xtuner sets the
  dtype to bf16 where the GPU has it, else fp16 (``_prepare_for_flash_attn``).
- A ``lora`` trains fp32 adapters (``prepare_model_for_kbit_training`` upcasts the
  non-quantized parameters; PEFT's adapters are fp32); otherwise the loaded weights train.
- ``AmpOptimWrapper``: autocast in its ``dtype`` (float16 when unset) with a GradScaler;
  ``OptimWrapper``: no autocast, no scaler.
- launched with ``--deepspeed`` (a DeepSpeed file attached): the optimizer wrapper is
  DeepSpeed's (``tools/train.py:367-370``@0.2.0) and its ``"auto"`` dtypes are filled from the
  device (``tools/utils.py:157-175``@0.2.0): the plan's autocast dtype here is the device's
  answer, bf16 where ``is_bf16_supported()``, else fp16, for
  :mod:`precheck.resolve.deepspeed_device` to fill the file with; the DeepSpeed engine then
  decides the dtypes.
"""

from __future__ import annotations

from typing import Any

from ...bf16_support import frameworks_see_bf16
from ...config import TrainingConfig
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import trainable_dtype
from ...resolve.complete import quantized
from ...resolve.plan import PrecisionPlan, same_dtype_plan
from ...versions import Versions
from ..hf_trainer.resolve import default_load_dtype

FLASH = "flash_attention_2"


def _load(config: TrainingConfig, hardware: Hardware, versions: Versions) -> Sourced[str]:
    attention = config.attn_implementation
    if attention is not None and attention.value == FLASH and hardware.known and hardware.devices:
        bf16, why = frameworks_see_bf16(hardware, versions)
        dtype = "bfloat16" if bf16 else "float16"
        detail = f"xtuner sets torch_dtype {dtype} for flash_attention_2 (is_bf16_supported: {why})"
        return Sourced(dtype, attention.origin.derived(detail))
    return config.torch_dtype or default_load_dtype(versions)


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    load = _load(config, hardware, versions)
    params = trainable_dtype(config, load, "full", versions)
    amp = config.amp
    autocast: Sourced[str | None]
    scaling: Sourced[str]
    scaler: Sourced[bool]
    if "deepspeed" in config.attached:
        bf16, why = frameworks_see_bf16(hardware, versions)
        origin = Origin.default(
            f"xtuner train --deepspeed (the launch's, or the README's deepspeed_zero2 where sequence_parallel_size > 1 "
            f"requires one: check_cfg) replaces the optimizer wrapper and fills the DeepSpeed file's "
            f"fp16/bf16 `auto` from the device (auto_dtype_of_deepspeed_config): is_bf16_supported: {why}"
        )
        autocast = Sourced("bfloat16" if bf16 else "float16", origin)
        scaling, scaler = Sourced("none", origin), Sourced(False, origin)
    elif amp is not None and amp.value:
        autocast = config.amp_dtype or Sourced(
            "float16", amp.origin.derived("AmpOptimWrapper without dtype: torch's cuda autocast default, float16")
        )
        if autocast.value == "float32":
            autocast = Sourced(None, autocast.origin)
        scaling = Sourced("dynamic", amp.origin.derived("AmpOptimWrapper scales the loss with a GradScaler"))
        scaler = Sourced(True, scaling.origin)
    else:
        why = "OptimWrapper: no autocast, no loss scaling" if amp is not None else "no optim_wrapper read"
        origin = amp.origin.derived(why) if amp is not None else Origin.default(why)
        autocast, scaling, scaler = Sourced(None, origin), Sourced("none", origin), Sourced(False, origin)
    rest: dict[str, Any] = {}
    if config.attn_implementation is not None:
        rest["attention"] = config.attn_implementation
    if config.quantization_bits is not None:
        compute = config.quant_compute_dtype or Sourced("float32", Origin.default("bnb_4bit_compute_dtype default"))
        rest["quantization"] = quantized(config.quantization_bits, compute)
    devices = Sourced("all", Origin.default("xtuner train: one process per GPU (NPROC_PER_NODE), else the first"))
    return same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=devices,
        **rest,
    )
