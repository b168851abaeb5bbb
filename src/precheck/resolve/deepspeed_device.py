"""A launch that fills a DeepSpeed file's ``fp16``/``bf16`` ``"auto"`` from the device
(``Traits.deepspeed_auto_dtype_by_device``), as xtuner's ``auto_dtype_of_deepspeed_config``
does (``xtuner/tools/utils.py:157-175``@0.2.0, the same since 0.1.x):

- an ``fp16`` section alone: ``enabled: auto`` becomes ``torch.cuda.is_available()``;
- a ``bf16`` section alone: ``enabled: auto`` becomes ``torch.cuda.is_bf16_supported()``;
- both: each ``auto`` filled so, and when both end up true, fp16 is switched off and bf16 kept.

The framework's resolver, which knows the device, puts the device's bf16 answer in the plan's
autocast dtype (``bfloat16`` where ``is_bf16_supported()``, else ``float16``); this module
reads it from there.
"""

from __future__ import annotations

from ..config import TrainingConfig
from ..provenance import Sourced
from .deepspeed_engine import Switches, auto_key, derive, standalone_stage
from .plan import PrecisionPlan


def device_switches(plan: PrecisionPlan, ds: TrainingConfig) -> Switches:
    """The engine's switches once the launch filled ``"auto"`` from the device."""
    bf16_ok = plan.autocast_dtype.value == "bfloat16"
    answers = {
        "fp16": (True, "`fp16.enabled: auto` filled by the launch with torch.cuda.is_available(): true"),
        "bf16": (
            bf16_ok,
            f"`bf16.enabled: auto` filled by the launch with is_bf16_supported(): {str(bf16_ok).lower()}",
        ),
    }
    values: dict[str, Sourced[bool]] = {}
    for name, (answer, why) in answers.items():
        auto = auto_key(ds, f"{name}.enabled")
        explicit: Sourced[bool] | None = getattr(ds, name)
        if auto is not None:
            values[name] = Sourced(answer, derive(auto, f"{why} ({plan.autocast_dtype.origin})"))
        elif explicit is not None:
            values[name] = explicit
        else:
            values[name] = Sourced(False, derive(plan.autocast_dtype, f"no {name} section: DeepSpeed's default false"))
    fp16, bf16 = values["fp16"], values["bf16"]
    if fp16.value and bf16.value and ("fp16" in ds.keys and "bf16" in ds.keys):
        fp16 = Sourced(False, derive(fp16, "both enabled: the launch switches fp16 off and keeps bf16"))
    return Switches(fp16, bf16, standalone_stage(ds))


__all__ = ["device_switches"]
