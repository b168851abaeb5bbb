"""What the sources know of the frameworks, handed down by the registry.

The framework registry (:mod:`precheck.frameworks`) sits above the sources: it composes
each framework from its dialect, resolver and launch parsers, which import the sources. So
the sources never import it, not even inside a function; the registry fills this table
when it is imported (the engine, the CLI and the API import it before any check), and a
file reader reads the table when it needs to know a framework.

Read the names as attributes of this module (``registered.launchers()``), never with
``from ... import``: they are set after this module loads. Reading one that the registry
has not set raises :class:`LookupError` naming the registry, so that a caller that forgot
to import it fails loudly rather than reading files as if no framework existed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .launchers import Entry, ModuleEntry
    from .nodes import Document

#: every framework's own command lines (``PROGRAM SUBCOMMAND``), each
#: bound to its dialect; a function, so that the launch parsers load only with a launch line
launchers: Callable[[], tuple[Entry, ...]]
#: every framework's entry modules (``python -m PACKAGE.train``), in registry order
modules: Callable[[], tuple[ModuleEntry, ...]]
#: the name of the dialect key detection gives a document, or None (not a training config)
detect: Callable[[Document], str | None]
#: the packages whose ``Trainer``/``Fabric`` calls take ``precision=`` → their framework's dialect
trainer_packages: Mapping[str, str]
#: a precision plugin's callee (last dotted name) → the precision it sets (None: its ``precision=``)
precision_plugins: Mapping[str, str | None]
#: a precision plugin's callee (last dotted name) → its positional parameters, when its first is
#: not ``precision`` (``BitsandbytesPrecision(mode, dtype)``)
plugin_parameters: Mapping[str, tuple[str, ...]]
#: calls that build another call later, its callee their first argument (``run.Config(cls, **kw)``)
deferred_calls: frozenset[str]
#: recipe factories (a pattern over the call's dotted name) → the precision their trainer takes by default
recipe_defaults: tuple[tuple[re.Pattern[str], str], ...]
#: the model base classes (last dotted name) a training script's model may derive from
model_bases: tuple[str, ...]
#: dialect name → every top-level key it reads (the HF trainer argument classes' fields)
known_keys: Mapping[str, frozenset[str]]


def __getattr__(name: str) -> object:
    if name in __annotations__:
        raise LookupError(f"{__name__}.{name} is unset: import precheck.frameworks (the registry fills it) first")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
