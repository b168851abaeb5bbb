"""ms-swift (modelscope/ms-swift): ``swift sft|pt|rlhf`` over the HF Trainer."""

from ...dialects.base import Priority
from ...facts import span
from ...traits import ON_HF_TRAINER
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="ms-swift",
    distribution="ms-swift",
    traits=ON_HF_TRAINER.adding(
        lora_by_default=True,
        method_by_entry_point=True,
        passes_precision_flags=True,
        flags_from_torch_dtype=span("ms-swift.overrides_flags"),
        grad_scaler_any_weights=True,
        fsdp_from_file="ms-swift.fsdp2_disables_gradient_checkpointing",
        resolves_unset_method_as_lora=True,
    ),
    dialect_class=dialect.MsSwift,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.WRAPPER,
    launch=f"{__name__}.launch",
    signature=frozenset(("tuner_type", "train_type", "sft_type")),
    rules=(f"{__name__}.precision_rules",),
)
