"""LLaMA-Factory (hiyouga/LLaMA-Factory): ``llamafactory-cli train config.yaml`` over the HF Trainer.

The framework's name is ``llama-factory``; its distribution on PyPI is ``llamafactory``.
"""

from ...dialects.base import Priority
from ...traits import ON_HF_TRAINER
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="llama-factory",
    distribution="llamafactory",
    traits=ON_HF_TRAINER.adding(
        lora_by_default=True,  # finetuning_type default "lora" (hparams/finetuning_args.py:464@0.9.5)
        method_by_entry_point=True,
        passes_precision_flags=True,
        refuses_unsupported_pure_bf16=True,
        optimizer_switches=dialect.OPTIMIZER_SWITCHES,
    ),
    dialect_class=dialect.TrainConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    signature=frozenset(("stage", "finetuning_type")),
    rules=(f"{__name__}.rules",),
)
