"""What the rule registry knows of the frameworks, handed down by the framework registry.

Each framework's rules live in its package (:mod:`precheck.frameworks`), above this one; the
rule registry (:mod:`precheck.rules`) lists them with the generic rules without importing
the frameworks. The framework registry fills this table when it is imported; read the
names as attributes of this module. Reading one it has not set raises :class:`LookupError`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

#: every framework's rule modules, in the rule registry's order (imported on the first call)
modules: Callable[[], tuple[ModuleType, ...]]


def __getattr__(name: str) -> object:
    if name in __annotations__:
        raise LookupError(f"{__name__}.{name} is unset: import precheck.frameworks (the registry fills it) first")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
