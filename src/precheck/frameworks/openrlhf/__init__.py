"""OpenRLHF (OpenRLHF/OpenRLHF): ``deepspeed --module openrlhf.cli.train_sft --ds.* ...``.

Its runs are command lines only (no config file format): the entry modules name them.
"""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="openrlhf",
    distribution="openrlhf",
    traits=Traits(precision_without_bf16=("fp16", "train in fp16: DeepSpeed's fp16 mode, dynamic loss scaling")),
    dialect_class=dialect.OpenRlhf,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.NAMED_ONLY,
    launch=f"{__name__}.launch",
    rules=(f"{__name__}.rules",),
)
