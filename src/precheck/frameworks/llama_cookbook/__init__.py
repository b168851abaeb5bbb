"""llama-cookbook (meta-llama/llama-cookbook, formerly llama-recipes): ``train_config`` /
``fsdp_config`` keys of ``llama_cookbook.finetuning``.

One name, ``llama-cookbook`` (the package's name since it was renamed); ``llama-recipes``,
the old name, is still accepted wherever a user types a framework's name.
"""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="llama-cookbook",
    distribution="llama-cookbook",
    aliases=("llama-recipes",),
    traits=Traits(
        method_by_entry_point=True,
        adapters_follow_peft=True,
        grad_scaler_any_weights=True,
    ),
    dialect_class=dialect.TrainConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.WRAPPER,
    # the package's module (old and new name), or the cookbook's wrapper script
    launch=f"{__name__}.launch",
    signature=frozenset(("use_fp16",)),
    rules=(f"{__name__}.rules",),
)
