"""xtuner (InternLM/xtuner): mmengine Python configs started by ``xtuner train CONFIG``."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect
from .label import NAME

FRAMEWORK = Framework(
    name=NAME,
    distribution=NAME,
    traits=Traits(
        label=NAME,
        adapters_follow_peft=True,
        launcher_shards=True,
        fills_deepspeed_auto=True,
        deepspeed_auto_dtype_by_device=True,
        amp_replaced_by_launch="--deepspeed",
        bf16_checked_by_autocast=True,
    ),
    dialect_class=dialect.MmengineConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    launched_with=f"{__name__}.launch:with_deepspeed",
)
