"""The files a run attaches (a DeepSpeed JSON, an accelerate config, an FSDP config): not
trainers, but read and resolved as frameworks are (``traits.component``)."""

from __future__ import annotations

from ..dialects.accelerate_config import AccelerateConfig
from ..dialects.base import Priority
from ..dialects.deepspeed import DeepSpeed
from ..dialects.fsdp_config import FsdpConfig
from ..resolve import accelerate, deepspeed, fsdp
from .base import Framework

DEEPSPEED = Framework(
    name=DeepSpeed.name,
    distribution=DeepSpeed.framework,
    traits=DeepSpeed.traits,
    dialect_class=DeepSpeed,
    resolver=deepspeed.resolve,
    priority=Priority.COMPONENTS,
    signature=frozenset(("zero_optimization", "train_micro_batch_size_per_gpu")),
)

ACCELERATE = Framework(
    name=AccelerateConfig.name,
    distribution=AccelerateConfig.framework,
    traits=AccelerateConfig.traits,
    dialect_class=AccelerateConfig,
    resolver=accelerate.resolve,
    priority=Priority.OWN_SCHEMA,
    signature=frozenset(("distributed_type",)),
)

FSDP = Framework(
    name=FsdpConfig.name,
    distribution=FsdpConfig.framework,
    traits=FsdpConfig.traits,
    dialect_class=FsdpConfig,
    resolver=fsdp.resolve,
    priority=Priority.FSDP_OPTIONS,
)
