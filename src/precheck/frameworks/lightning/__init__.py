"""PyTorch Lightning ``Trainer`` configs, with its LitGPT and NeMo variants."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect, modes

FRAMEWORK = Framework(
    name="lightning",
    distribution="lightning",
    traits=Traits(
        keeps_deepspeed_auto=True,
        precision_without_bf16=("16-mixed", "use fp16 mixed precision"),
        precision_modes=True,
        label=modes.LABEL,
        refuses_deepspeed_accumulation=f"{modes.PACKAGE}.deepspeed_accumulation",
        own_loop_variants=frozenset((modes.GPT_VARIANT,)),
    ),
    dialect_class=dialect.TrainerDialect,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    signature=frozenset(("trainer",)),
    python_trainer_packages=("lightning", "pytorch_lightning", "lightning_fabric"),
    python_model_bases=("LightningModule",),
    # pytorch-lightning X.Y.Z is the Trainer of lightning X.Y.Z: both are built from
    # Lightning-AI/pytorch-lightning (src/lightning, src/pytorch_lightning), released together
    pinned_as=("pytorch-lightning",),
    rules=(
        f"{__name__}.rules",
        f"{__name__}.variant_rules",
    ),
)
