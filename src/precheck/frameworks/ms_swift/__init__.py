"""ms-swift (modelscope/ms-swift): ``swift sft|pt|rlhf`` over the HF Trainer."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework
from . import dialect, resolve

FRAMEWORK = Framework(
    name="ms-swift",
    distribution="ms-swift",
    traits=Traits(
        hf_trainer=True,
        honours_accelerate_env=True,
        fills_deepspeed_auto=True,
        launcher_shards=True,
        lora_by_default=True,
        method_by_entry_point=True,
    ),
    dialect_class=dialect.MsSwift,
    resolver=resolve.resolve,
    priority=Priority.WRAPPER,
    signature=frozenset(("tuner_type", "train_type", "sft_type")),
)
