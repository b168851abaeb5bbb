"""SimpleTuner (bghira/SimpleTuner): ``config.json``/``config.toml``/``config.env`` diffusion training."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework
from . import dialect, resolve

FRAMEWORK = Framework(
    name="simpletuner",
    distribution="simpletuner",
    traits=Traits(
        honours_accelerate_env=True,
        pure_bf16_by_design="SimpleTuner casts the trained model to its bf16 weight dtype by design",
        kahan_optimizer_prefix=("adamw_schedulefree", "SimpleTuner's AdamWScheduleFreeKahan"),
        grad_scaler_any_weights=True,
        bf16_optimizers=frozenset(resolve.BF16_OPTIMIZERS),
    ),
    dialect_class=dialect.ArgsFile,
    resolver=resolve.resolve,
    priority=Priority.WRAPPER,
    signature=frozenset(("model_family",)),
    rules=(f"{__name__}.optimizer_rules",),
)
