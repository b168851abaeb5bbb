"""Stage 3: apply each framework's real precedence to get a :class:`PrecisionPlan`.

A framework's resolver sets the core fields (:data:`plan.CORE_FIELDS`). Files the run
names (a DeepSpeed JSON, an FSDP config) are then applied by their role's resolver in
:data:`ATTACHMENTS`, and :func:`complete.complete` fills whatever is still unset from the
config and the libraries' defaults.
"""

from __future__ import annotations

from collections.abc import Callable

from ..config import TrainingConfig
from ..hardware import Hardware
from ..versions import Versions
from . import (
    accelerate,
    axolotl,
    complete,
    deepspeed,
    fsdp,
    h2o_llmstudio,
    hf,
    lightning,
    llama_factory,
    llama_recipes,
    ms_swift,
    pytorch_loop,
    simpletuner,
    torchtune,
)
from .launch_env import apply_launch_env
from .plan import PLAN_FIELDS, Override, PrecisionPlan

Resolver = Callable[[TrainingConfig, Hardware, Versions], PrecisionPlan]
#: (plan so far, the run's main config, the attached file's config, versions) → plan
Attachment = Callable[[PrecisionPlan, TrainingConfig, TrainingConfig, Versions], PrecisionPlan]

#: framework (distribution name) → resolver
RESOLVERS: dict[str, Resolver] = {
    "deepspeed": deepspeed.resolve,
    "accelerate": accelerate.resolve,
    "fsdp": fsdp.resolve,
    "transformers": hf.resolve,
    "trl": hf.resolve_trl,
    "ms-swift": ms_swift.resolve,
    "simpletuner": simpletuner.resolve,
    "h2o-llmstudio": h2o_llmstudio.resolve,
    "llama-cookbook": llama_recipes.resolve,
    "llamafactory": llama_factory.resolve,
    "axolotl": axolotl.resolve,
    "lightning": lightning.resolve,
    "torchtune": torchtune.resolve,
    "torch": pytorch_loop.resolve,
}

#: role of an attached file → how it changes the plan
ATTACHMENTS: dict[str, Attachment] = {"deepspeed": deepspeed.apply, "fsdp": fsdp.apply}


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    apply_launch_env(config)  # sharding the launcher's environment adds, as part of the run
    plan = RESOLVERS[config.framework](config, hardware, versions)
    for role, attached in config.attached.items():
        apply = ATTACHMENTS.get(role)
        if apply is not None:
            plan = apply(plan, config, attached, versions)
    return complete.complete(config, plan)


__all__ = ["ATTACHMENTS", "PLAN_FIELDS", "Override", "PrecisionPlan", "resolve"]
