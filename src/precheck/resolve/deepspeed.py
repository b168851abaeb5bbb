"""DeepSpeed as a plan: a DeepSpeed file checked on its own, or the file a run names applied to
that run's plan.

Who hands the file to the engine decides what its ``"auto"`` values become: a framework that
trains through the HF Trainer fills them from TrainingArguments
(:mod:`~precheck.resolve.deepspeed_hf_trainer`), accelerate from its ``mixed_precision``
(:mod:`~precheck.resolve.deepspeed_accelerate`); anything else hands the file over as written.
The engine then decides the dtypes (:mod:`~precheck.resolve.deepspeed_engine`).
"""

from __future__ import annotations

from dataclasses import replace

from ..config import TrainingConfig
from ..hardware import Hardware
from ..provenance import Origin, Sourced
from ..versions import Versions
from .deepspeed_accelerate import ACCELERATE_IGNORED, IGNORED_BESIDE_FILE, accelerate_switches
from .deepspeed_device import device_switches
from .deepspeed_engine import Switches, engine, power_of_two, standalone_switches
from .deepspeed_hf_trainer import hf_switches
from .plan import PrecisionPlan


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    """A DeepSpeed file on its own: the launcher and script are unknown."""
    load = Sourced(
        "float32",
        Origin.default("the training script builds the model, not the DeepSpeed config: torch creates float32 weights"),
    )
    fields, overrides = engine(config, standalone_switches(config), versions, load)
    return PrecisionPlan(
        framework=config.framework,
        load_dtype=load,
        devices=Sourced("all", Origin.default("the deepspeed launcher starts one process per visible GPU")),
        overrides=overrides,
        **fields,
    )


def apply(plan: PrecisionPlan, main: TrainingConfig, ds: TrainingConfig, versions: Versions) -> PrecisionPlan:
    """The main run's plan once its DeepSpeed file is applied: the engine, not torch autocast, decides."""
    if main.traits.hf_trainer:
        switches, overrides = hf_switches(plan, main, ds, versions)
    elif main.framework == "accelerate":
        switches, overrides = accelerate_switches(main, ds)
    elif main.traits.deepspeed_auto_dtype_by_device:
        switches, overrides = device_switches(plan, ds), []
    else:
        switches, overrides = standalone_switches(ds), []
    fields, refused = engine(ds, switches, versions, plan.param_dtype)
    return replace(plan, **fields, overrides=[*plan.overrides, *overrides, *refused])


__all__ = [
    "ACCELERATE_IGNORED",
    "IGNORED_BESIDE_FILE",
    "Switches",
    "apply",
    "engine",
    "power_of_two",
    "resolve",
]
