"""torchtune (pytorch/torchtune): ``tune run RECIPE --config CFG`` recipes."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="torchtune",
    distribution="torchtune",
    traits=Traits(
        method_by_entry_point=True,
        precision_without_bf16=("fp32", "train in fp32"),
        pure_bf16_by_design="torchtune trains in `dtype` with no fp32 copy by design",
        refuses_fp16=True,
    ),
    dialect_class=dialect.RecipeConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    rules=(f"{__name__}.rules",),
)
