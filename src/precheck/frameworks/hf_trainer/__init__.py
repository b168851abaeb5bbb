"""transformers' ``Trainer`` with ``TrainingArguments``, and TRL's trainer configs on top of it."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework
from . import dialect, resolve

_TRAINER = Traits(hf_trainer=True, honours_accelerate_env=True, fills_deepspeed_auto=True, launcher_shards=True)

HF_TRAINER = Framework(
    name="hf-trainer",
    distribution="transformers",
    traits=_TRAINER,
    dialect_class=dialect.HfTrainer,
    resolver=resolve.resolve,
    priority=Priority.HF_ARGUMENTS,
)

TRL = Framework(
    name="trl",
    distribution="trl",
    traits=_TRAINER,
    dialect_class=dialect.Trl,
    resolver=resolve.resolve_trl,
    priority=Priority.HF_ARGUMENTS,
)
