"""Stage 3: apply each framework's real precedence to get a :class:`PrecisionPlan`."""

from __future__ import annotations

from collections.abc import Callable

from ..config import TrainingConfig
from ..hardware import Hardware
from ..versions import Versions
from . import h2o_llmstudio, hf, llama_recipes, ms_swift, simpletuner
from .plan import PLAN_FIELDS, Override, PrecisionPlan

Resolver = Callable[[TrainingConfig, Hardware, Versions], PrecisionPlan]

#: framework (distribution name) → resolver
RESOLVERS: dict[str, Resolver] = {
    "transformers": hf.resolve,
    "trl": hf.resolve_trl,
    "ms-swift": ms_swift.resolve,
    "simpletuner": simpletuner.resolve,
    "h2o-llmstudio": h2o_llmstudio.resolve,
    "llama-cookbook": llama_recipes.resolve,
}


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    return RESOLVERS[config.framework](config, hardware, versions)


__all__ = ["PLAN_FIELDS", "Override", "PrecisionPlan", "resolve"]
