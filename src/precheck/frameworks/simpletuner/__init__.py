"""SimpleTuner (bghira/SimpleTuner): ``config.json``/``config.toml``/``config.env`` diffusion training."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework
from . import dialect, resolve

FRAMEWORK = Framework(
    name="simpletuner",
    distribution="simpletuner",
    traits=Traits(honours_accelerate_env=True),
    dialect_class=dialect.SimpleTuner,
    resolver=resolve.resolve,
    priority=Priority.WRAPPER,
    signature=frozenset(("model_family",)),
)
