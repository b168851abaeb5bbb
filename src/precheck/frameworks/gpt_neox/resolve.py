"""gpt-neox's precedence: NeoXArgs builds the DeepSpeed config (:mod:`.dialect`) and builds the
model in ``params_dtype``; the DeepSpeed engine then decides the dtypes, as for a DeepSpeed file
launched on its own (``deepspeed.initialize(model, ..., config=neox_args.deepspeed_config)``,
``megatron/training.py``@ea7aefd)."""

from __future__ import annotations

from typing import Any

from ...config import TrainingConfig
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.deepspeed import engine
from ...resolve.deepspeed_engine import standalone_switches
from ...resolve.plan import PrecisionPlan
from ...versions import Versions
from .label import NAME


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    load: Sourced[str] = Sourced(
        "float32", Origin.default(f"{NAME}: no precision set, NeoXArgs.params_dtype is float32")
    )
    if config.torch_dtype is not None:
        load = Sourced(str(config.torch_dtype.value), config.torch_dtype.origin)
    fields, overrides = engine(config, standalone_switches(config), versions, load)
    extra: dict[str, Any] = {}
    if config.attn_implementation is not None:
        extra["attention"] = config.attn_implementation
    return PrecisionPlan(
        framework=config.framework,
        load_dtype=load,
        devices=Sourced("all", Origin.default("deepy.py starts DeepSpeed's launcher: one process per visible GPU")),
        overrides=overrides,
        **fields,
        **extra,
    )
