"""H2O LLM Studio (h2oai/h2o-llmstudio): experiment ``cfg.yaml`` files."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect

FRAMEWORK = Framework(
    name="h2o-llmstudio",
    distribution="h2o-llmstudio",
    traits=Traits(
        # training.lora = True (python_configs/text_causal_language_modeling_config.py:189@v1.14.9)
        lora_by_default=True,
        resolves_unset_method_as_lora=True,
    ),
    dialect_class=dialect.ExperimentConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.WRAPPER,
    signature=frozenset(("llm_backbone",)),
    rules=(f"{__name__}.scaler_rules",),
)
