"""transformers' ``Trainer`` with ``TrainingArguments``, and TRL's trainer configs on top of it."""

from ...dialects.base import Priority
from ...traits import ON_HF_TRAINER
from ..base import Framework, LazyResolver
from . import dialect

_TRAINER = ON_HF_TRAINER.adding(
    arguments_for_user_script=True,
    plain_hf_trainer=True,
    passes_precision_flags=True,
    adapters_follow_peft=True,
    grad_scaler_any_weights=True,
    peft_default_lora_targets=True,
)

HF_TRAINER = Framework(
    name="hf-trainer",
    distribution="transformers",
    traits=_TRAINER,
    dialect_class=dialect.HfTrainer,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.HF_ARGUMENTS,
)

TRL = Framework(
    name="trl",
    distribution="trl",
    traits=_TRAINER,
    dialect_class=dialect.Trl,
    resolver=LazyResolver(f"{__name__}.resolve", "resolve_trl"),
    priority=Priority.HF_ARGUMENTS,
    launch=f"{__name__}.launch",
)
