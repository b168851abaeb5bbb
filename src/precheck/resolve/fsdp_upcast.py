"""Whether accelerate upcasts a model's low-precision parameters to fp32 when it wraps it in
FSDP with mixed precision on, by accelerate release.

- FSDP1 (``Accelerator.prepare_model``): from 0.30.0 (huggingface/accelerate#2674),
  ``if self.mixed_precision != "no"`` the flat parameter of each FSDP module that is not fp32
  gets ``param.data = param.data.to(torch.float32)`` (``accelerator.py:1486@0.30.0``); up to
  0.29.3 nothing does, and FSDP keeps the flat parameter in the module's dtype: its
  ``MixedPrecision(param_dtype=...)`` only casts the copy the forward and backward compute
  with, so the optimizer updates bf16 (or fp16) weights.
- FSDP2 (``fsdp2_prepare_model``): 1.13.x rebinds the loop variable (``param =
  param.to(torch.float32)``, ``utils/fsdp_utils.py:740@1.13.0``), which upcasts nothing
  (huggingface/accelerate#3979, fixed in 1.14.0).

An accelerate version precheck does not know is the newest release: it upcasts.
"""

from __future__ import annotations

from ..facts import span
from ..versions import Versions

FSDP1_UPCAST = span("accelerate.fsdp1_upcast")
FSDP2_UPCAST_NOOP = span("accelerate.fsdp2_upcast_noop")


def upcast_skipped(version: int, versions: Versions) -> str | None:
    """Why accelerate leaves low-precision parameters as they are under FSDP ``version`` with
    mixed precision on, for the run's accelerate release; None where it upcasts them."""
    info = versions.get("accelerate")
    if info is None:
        return None
    if version == 1 and not FSDP1_UPCAST.contains(info.version):
        return (
            f"accelerate {info.version} ({info.source}) does not upcast them under FSDP1 (the upcast came in "
            f"{FSDP1_UPCAST.low}): FSDP keeps the module's dtype, its MixedPrecision casts only the compute copy"
        )
    if version == 2 and FSDP2_UPCAST_NOOP.contains(info.version):
        return (
            f"accelerate {info.version} ({info.source}) upcasts nothing under FSDP2 (fsdp2_prepare_model rebinds "
            "the loop variable, accelerate#3979)"
        )
    return None
