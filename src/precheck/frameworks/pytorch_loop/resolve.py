"""Plain PyTorch loops: what the script's own calls do, with torch's defaults.

Read in torch 2.13 (``torch/amp/autocast_mode.py``, ``torch/amp/grad_scaler.py``):

- parameters are created in ``torch.get_default_dtype()`` (float32) unless the script casts
  the model (``.half()``, ``.to(dtype)``); a model from ``from_pretrained`` without a dtype
  gets transformers' default (see :func:`.hf.default_load_dtype`).
- ``torch.autocast(device_type, dtype=None, enabled=True)``: ``dtype=None`` means
  ``torch.get_autocast_dtype("cuda")``, float16; ``torch.cuda.amp.autocast`` defaults to
  ``dtype=torch.float16``. Autocast changes the compute dtype only: gradients keep the
  parameters' dtype.
- ``GradScaler(enabled=True)`` scales whatever the autocast dtype is; its
  ``unscale_`` refuses fp16 gradients ("Attempting to unscale FP16 gradients.") and the
  CUDA unscale kernel has no bf16 version.
- one process computes on the current device (``cuda:0``) unless the script starts a
  process group / DDP (then one process per visible GPU).
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...hardware import Hardware
from ...models import family_of
from ...provenance import Origin, Sourced
from ...resolve.common import trainable_dtype
from ...resolve.plan import PrecisionPlan, same_dtype_plan
from ...sources.python_source import DEEPSPEED_ENGINE
from ...versions import Versions
from ..hf_trainer.resolve import default_load_dtype


def load_dtype(config: TrainingConfig, versions: Versions) -> Sourced[str]:
    """The weights' dtype: the script's cast or load dtype, else the loader's or torch's default."""
    if config.torch_dtype is not None and config.torch_dtype.value != "auto":
        return config.torch_dtype
    if config.model is None:
        return Sourced("float32", Origin.default("torch creates parameters in float32 (torch.get_default_dtype())"))
    load = config.torch_dtype or default_load_dtype(versions)
    if load.value == "auto":
        native = config.model_dtype
        if native is not None:
            return Sourced(native.value, native.origin.derived("dtype auto: the checkpoint's own config.json dtype"))
        family = family_of(str(config.model.value))
        if family is not None:
            detail = f"dtype auto: the {family.name} checkpoint's {family.native_dtype}"
            origin = load.origin.derived(detail) if load.origin.in_file else Origin.default(f"{load.origin}; {detail}")
            return Sourced(family.native_dtype, origin)
    return load


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    load = load_dtype(config, versions)
    params = trainable_dtype(config, load, "lora" if config.quantization_bits else "full", versions)
    amp = config.amp
    if amp is not None and amp.value:
        dtype = config.amp_dtype or Sourced("float16", amp.origin.derived('torch.get_autocast_dtype("cuda")'))
        autocast: Sourced[str | None] = Sourced(dtype.value, dtype.origin)
    else:
        autocast = Sourced(None, amp.origin if amp is not None else Origin.default("the script uses no autocast"))
    scaler = config.grad_scaler or Sourced(False, Origin.default("the script creates no GradScaler"))
    scaling = Sourced("dynamic" if scaler.value else "none", scaler.origin)
    devices = config.devices or Sourced("first", Origin.default("one process computes on the current device, cuda:0"))
    plan = same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=devices,
    )
    engine = next((n for n in config.notes if n.kind == DEEPSPEED_ENGINE), None)
    if engine is not None and "deepspeed" not in config.attached and not scaler.value:
        # deepspeed.initialize: the engine's config (not read here) decides loss scaling and the
        # master copy. DeepSpeed's fp16 (FP16_Optimizer, ZeRO) keeps fp32 master weights and scales
        # the loss dynamically (loss_scale 0, the default); its bf16 (BF16_Optimizer, ZeRO) keeps
        # fp32 master weights (deepspeed/runtime/engine.py _configure_optimizer). Unknown, never none.
        where = Origin("file", engine.path or config.path, engine.line, engine.column, engine.key, format="python")
        said = "deepspeed.initialize: the DeepSpeed config precheck did not read decides"
        plan.loss_scaling = Sourced("unknown", where.derived(said))
        plan.master_weights = Sourced("unknown", where.derived(said))
    return plan
