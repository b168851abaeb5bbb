"""axolotl (axolotl-ai-cloud/axolotl): ``axolotl train config.yml`` over the HF Trainer."""

import re

from ...dialects.base import Priority
from ...sources.launchers import Entry, ModuleEntry
from ...traits import ON_HF_TRAINER
from ..base import Framework
from . import dialect, launch, resolve

FRAMEWORK = Framework(
    name="axolotl",
    distribution="axolotl",
    traits=ON_HF_TRAINER.adding(
        method_by_entry_point=True,
        kahan_optimizer="optimi_adamw",
        fp16_weights_fix=(
            "train in fp32 (axolotl's fp16 trains fp16 weights, which a full fine-tune cannot), or use LoRA"
        ),
    ),
    dialect_class=dialect.TrainConfig,
    resolver=resolve.resolve,
    priority=Priority.OWN_SCHEMA,
    launchers=(Entry(("axolotl", "train"), launch.command),),
    modules=(ModuleEntry(re.compile(r"(^|\.)axolotl\.cli\.train$"), launch.module),),
    signature=frozenset(("base_model", "micro_batch_size")),
    rules=(f"{__name__}.rules",),
)
