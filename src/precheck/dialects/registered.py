"""What the dialects know of the frameworks, handed down by the registry.

The framework registry (:mod:`precheck.frameworks`) binds each dialect to its framework and
lists them; it sits above the dialects, which never import it. It fills this table when it
is imported; read the names as attributes of this module (``registered.by_name``), never
with ``from ... import``. Reading one the registry has not set raises :class:`LookupError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..sources import Document
    from .base import Dialect

#: every dialect, in detection order
dialects: tuple[Dialect, ...]
#: a dialect name (or alias) → its dialect (the role of an attached file names its dialect)
by_name: Mapping[str, Dialect]
#: the dialect that scores highest on a document, or None (:func:`precheck.frameworks.detect`)
detect: Callable[[Document], Dialect | None]
#: the keys that mark one framework's files (each framework's declared ``signature``)
signature_keys: frozenset[str]
#: the labels of the frameworks that fill DeepSpeed's ``"auto"`` values themselves
auto_kept_by: tuple[str, ...]


def __getattr__(name: str) -> object:
    if name in __annotations__:
        raise LookupError(f"{__name__}.{name} is unset: import precheck.frameworks (the registry fills it) first")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
