"""What the resolvers know of the frameworks, handed down by the registry.

The framework registry (:mod:`precheck.frameworks`) sits above the resolvers and lists each
framework's; :func:`precheck.resolve.resolve` reads them here. The registry fills this
table when it is imported; read the names as attributes of this module. Reading one the
registry has not set raises :class:`LookupError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import TrainingConfig
    from ..hardware import Hardware
    from ..plan import PrecisionPlan
    from ..versions import Versions

#: a framework's precedence: (config, hardware, versions) → plan
Resolver = Callable[["TrainingConfig", "Hardware", "Versions"], "PrecisionPlan"]

#: distribution → its framework's resolver
resolvers: Mapping[str, Resolver]


def __getattr__(name: str) -> object:
    if name in __annotations__ and name != "Resolver":
        raise LookupError(f"{__name__}.{name} is unset: import precheck.frameworks (the registry fills it) first")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
