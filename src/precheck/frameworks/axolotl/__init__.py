"""axolotl (axolotl-ai-cloud/axolotl): ``axolotl train config.yml`` over the HF Trainer."""

from ...dialects.base import Priority
from ...traits import ON_HF_TRAINER
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="axolotl",
    distribution="axolotl",
    traits=ON_HF_TRAINER.adding(
        method_by_entry_point=True,
        kahan_optimizer="optimi_adamw",
        # check_fp8: capabilities.fp8 = compute_supports_fp8() (capability >= (9, 0)), from 0.13.1
        fp8_refused_below_hopper=("axolotl.fp8_needs_hopper", "axolotl.fp8_unsupported"),
        fp16_weights_fix=(
            "train in fp32 (axolotl's fp16 trains fp16 weights, which a full fine-tune cannot), or use LoRA"
        ),
    ),
    dialect_class=dialect.TrainConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    signature=frozenset(("base_model", "micro_batch_size")),
    rules=(f"{__name__}.rules",),
)
