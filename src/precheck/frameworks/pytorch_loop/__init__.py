"""A plain PyTorch training loop, read from the script's own calls (autocast, GradScaler)."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="pytorch",
    distribution="torch",
    traits=Traits(
        script=True,
        adapters_follow_peft=True,
        grad_scaler_any_weights=True,
    ),
    dialect_class=dialect.PytorchLoop,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.NAMED_ONLY,
)
