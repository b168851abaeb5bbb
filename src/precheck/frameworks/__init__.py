"""The registry: every framework precheck knows, one line each (as pre-commit's
``all_languages.py``).

Adding a framework is one package under ``frameworks/`` (its ``Framework`` object, dialect
and resolver) and one line in :data:`FRAMEWORKS`. Everything else that needs to know the
frameworks (detection, resolution, launchers, versions) asks the queries below.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import TYPE_CHECKING

from .. import versions
from ..dialects.base import Dialect
from ..sources import Document
from ..traits import Traits
from . import (
    axolotl,
    components,
    gpt_neox,
    h2o_llmstudio,
    hf_trainer,
    lightning,
    llama_cookbook,
    llama_factory,
    llm_foundry,
    ms_swift,
    openrlhf,
    pytorch_loop,
    simpletuner,
    torchtune,
    xtuner,
)
from .base import Framework, Resolver

if TYPE_CHECKING:
    from ..sources.launchers import Entry, ModuleEntry

#: in detection order: on equal scores the earlier one wins
FRAMEWORKS: tuple[Framework, ...] = (
    components.DEEPSPEED,
    components.ACCELERATE,
    components.FSDP,
    ms_swift.FRAMEWORK,
    simpletuner.FRAMEWORK,
    h2o_llmstudio.FRAMEWORK,
    llama_cookbook.FRAMEWORK,
    llama_factory.FRAMEWORK,
    axolotl.FRAMEWORK,
    lightning.FRAMEWORK,
    torchtune.FRAMEWORK,
    llm_foundry.FRAMEWORK,
    gpt_neox.FRAMEWORK,
    xtuner.FRAMEWORK,
    hf_trainer.TRL,
    hf_trainer.HF_TRAINER,
    pytorch_loop.FRAMEWORK,
    openrlhf.FRAMEWORK,
)

#: every dialect, in detection order
DIALECTS = tuple(dialect for framework in FRAMEWORKS for dialect in framework.dialects)

#: a name or an alias → its framework
_BY_NAME: dict[str, Framework] = {name: f for f in FRAMEWORKS for name in f.names}
_BY_DISTRIBUTION: dict[str, Framework] = {f.distribution: f for f in FRAMEWORKS}

#: dialect name (or alias) → dialect
BY_NAME = {name: f.dialect for name, f in _BY_NAME.items()}

#: distribution → resolver
RESOLVERS: dict[str, Resolver] = {f.distribution: f.resolver for f in FRAMEWORKS}
# the versions read a pin of a distribution released with a framework as the framework's
versions.RELEASED_AS.update({alias: f.distribution for f in FRAMEWORKS for alias in f.pinned_as})


def named(name: str) -> Framework | None:
    """The framework a user-typed name (or an old alias) names."""
    return _BY_NAME.get(name)


def by_distribution(distribution: str) -> Framework | None:
    """The framework whose semantics ``distribution``'s version decides."""
    return _BY_DISTRIBUTION.get(distribution)


def with_trait(trait: str, value: object = True) -> tuple[Framework, ...]:
    """The frameworks whose :class:`~precheck.traits.Traits` field ``trait`` is ``value``."""
    if trait not in Traits.__dataclass_fields__:
        raise KeyError(trait)
    return tuple(f for f in FRAMEWORKS if getattr(f.traits, trait) == value)


def trainers() -> tuple[Framework, ...]:
    """The trainer frameworks (not the files a run attaches)."""
    return tuple(f for f in FRAMEWORKS if not f.component)


#: the keys that mark one framework's files (each framework's declared ``signature``)
SIGNATURE_KEYS = frozenset(key for f in FRAMEWORKS for key in f.signature)


def rule_modules() -> tuple[ModuleType, ...]:
    """Every framework's rule modules, in the rule registry's order.

    Imported here on demand (not by the packages): the rule registry (:mod:`precheck.rules`)
    gets this function through its table (:mod:`precheck.rules.registered`)."""
    return tuple(importlib.import_module(name) for name in _RULE_MODULES)


#: the frameworks' rule modules, in the order the rule registry lists them
_RULE_MODULES: tuple[str, ...] = tuple(
    name
    for framework in (
        torchtune,
        lightning,
        axolotl,
        llama_factory,
        llama_cookbook,
        ms_swift,
        simpletuner,
        h2o_llmstudio,
    )
    for name in framework.FRAMEWORK.rules
)
_UNORDERED = {name for f in FRAMEWORKS for name in f.rules} - set(_RULE_MODULES)
_RULE_MODULES += tuple(sorted(_UNORDERED))


def detect(doc: Document) -> Dialect | None:
    """The dialect that scores highest on ``doc``, or None (not a training config).

    A document whose source knows its framework (a launch command) names it."""
    if doc.dialect is not None:
        return BY_NAME[doc.dialect]
    if not doc.mapping():
        return None
    best, best_score = None, 0
    for dialect in DIALECTS:
        score = dialect.score(doc)
        if score > best_score:
            best, best_score = dialect, score
    return best


def _launchers() -> tuple[Entry, ...]:
    """Every framework's own command lines (its launch module is imported on the first call)."""
    return tuple(entry for framework in FRAMEWORKS for entry in framework.launchers)


def _modules() -> tuple[ModuleEntry, ...]:
    """Every framework's entry modules, in registry order."""
    return tuple(entry for framework in FRAMEWORKS for entry in framework.modules)


def _detected_name(doc: Document) -> str | None:
    dialect = detect(doc)
    return dialect.name if dialect is not None else None


def _register() -> None:
    """Hand the stages below what they must know of the frameworks, as data: they never
    import this package (it imports them). Each stage's table is its ``registered`` module."""
    from ..dialects import registered as dialects_table
    from ..resolve import registered as resolve_table
    from ..rules import registered as rules_table
    from ..sources import registered as sources_table

    sources_table.launchers = _launchers
    sources_table.modules = _modules
    sources_table.detect = _detected_name
    sources_table.trainer_packages = {p: f.name for f in FRAMEWORKS for p in f.python_trainer_packages}
    sources_table.precision_plugins = {n: p for f in FRAMEWORKS for n, p in f.python_precision_plugins}
    sources_table.plugin_parameters = {n: p for f in FRAMEWORKS for n, p in f.python_plugin_parameters}
    sources_table.deferred_calls = frozenset(n for f in FRAMEWORKS for n in f.python_deferred_calls)
    sources_table.recipe_defaults = tuple((re.compile(p), d) for f in FRAMEWORKS for p, d in f.python_recipe_defaults)
    sources_table.model_bases = tuple(b for f in FRAMEWORKS for b in f.python_model_bases)
    sources_table.known_keys = {name: f.dialect.known_keys for f in FRAMEWORKS for name in f.names}
    dialects_table.dialects = DIALECTS
    dialects_table.by_name = BY_NAME
    dialects_table.detect = detect
    dialects_table.signature_keys = SIGNATURE_KEYS
    dialects_table.auto_kept_by = tuple(f.traits.label for f in with_trait("keeps_deepspeed_auto") if f.traits.label)
    resolve_table.resolvers = RESOLVERS
    rules_table.modules = rule_modules


_register()

__all__ = [
    "BY_NAME",
    "DIALECTS",
    "FRAMEWORKS",
    "RESOLVERS",
    "SIGNATURE_KEYS",
    "Framework",
    "by_distribution",
    "detect",
    "named",
    "rule_modules",
    "trainers",
    "with_trait",
]
