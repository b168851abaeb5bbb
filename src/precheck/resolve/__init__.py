"""Stage 3: apply each framework's real precedence to get a :class:`PrecisionPlan`.

A framework's resolver (its :class:`~precheck.frameworks.base.Framework`'s) sets the core
fields (:data:`plan.CORE_FIELDS`). Files the run names (a DeepSpeed JSON, an FSDP config)
are then applied by their role's resolver in :data:`ATTACHMENTS`, and
:func:`complete.complete` fills whatever is still unset from the config and the
libraries' defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import TrainingConfig
from ..hardware import Hardware
from ..versions import Versions
from . import complete, deepspeed, fsdp
from .launch_env import with_launch_env
from .plan import PLAN_FIELDS, Override, PrecisionPlan

#: (plan so far, the run's main config, the attached file's config, versions) → plan
Attachment = Callable[[PrecisionPlan, TrainingConfig, TrainingConfig, Versions], PrecisionPlan]

#: role of an attached file → how it changes the plan
ATTACHMENTS: dict[str, Attachment] = {"deepspeed": deepspeed.apply, "fsdp": fsdp.apply}


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    """The plan of ``config``: its framework's resolver, the attached files', the defaults.

    ``config`` is the run as launched: :func:`with_launch_env` has added the sharding its
    launch environment switches on (the engine does so before resolving)."""
    from . import registered  # the registry's table (the registry imports the resolvers)

    plan = registered.resolvers[config.framework](config, hardware, versions)
    for role, attached in config.attached.items():
        apply = ATTACHMENTS.get(role)
        if apply is not None:
            plan = apply(plan, config, attached, versions)
    return complete.complete(config, plan)


def __getattr__(name: str) -> Any:
    if name == "RESOLVERS":  # the registry's, for existing callers
        from . import registered

        return registered.resolvers
    raise AttributeError(name)


__all__ = ["ATTACHMENTS", "PLAN_FIELDS", "Override", "PrecisionPlan", "resolve", "with_launch_env"]
