"""What a framework is, as one object (as pre-commit's ``Language``).

A :class:`Framework` holds everything precheck knows about one trainer framework or one
component file (DeepSpeed, accelerate, FSDP): its one name, the distribution whose version
decides its semantics, its dialect (recognise and map its files), its resolver (its real
precedence), its traits, its detection priority and the commands that start it. Each
framework declares its object in its own package's ``__init__.py``; the registry
(:mod:`precheck.frameworks`) lists them, one line each.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from ..config import TrainingConfig
from ..dialects.base import Dialect, Priority
from ..hardware import Hardware
from ..plan import PrecisionPlan
from ..traits import Traits
from ..versions import Versions

if TYPE_CHECKING:
    from ..sources.launchers import Entry, ModuleEntry

#: a framework's precedence: (config, hardware, versions) → plan
Resolver = Callable[[TrainingConfig, Hardware, Versions], PrecisionPlan]


class LazyResolver:
    """A framework's resolver named by its module, imported on its first run: a check of
    one framework's files does not load the other frameworks' precedence."""

    __slots__ = ("_function", "module", "name")

    def __init__(self, module: str, name: str = "resolve") -> None:
        self.module, self.name = module, name
        self._function: Resolver | None = None

    def __call__(self, config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
        function = self._function
        if function is None:
            function = self._function = getattr(importlib.import_module(self.module), self.name)
        return function(config, hardware, versions)

    def __repr__(self) -> str:
        return f"LazyResolver({self.module!r}, {self.name!r})"


@dataclass(frozen=True, eq=False, repr=False)
class Framework:
    """One framework: declared once, read everywhere through the registry."""

    #: the one name, used everywhere a user sees or types one (reports, ``--dialect``)
    name: str
    #: the distribution (PyPI name) whose installed version decides the semantics
    distribution: str
    #: what the framework is like (rules ask these, never the name)
    traits: Traits
    #: the dialect class that recognises and maps the framework's files
    dialect_class: type[Dialect]
    #: the framework's precedence (fills a :class:`PrecisionPlan`); a :class:`LazyResolver`
    #: where its module need not load before a run of its files
    resolver: Resolver
    #: detection tier of its files: the highest score wins (see :class:`Priority`)
    priority: Priority
    #: the module (``<package>.launch``) that declares the command lines that start it
    #: (``ENTRIES``: ``PROGRAM SUBCOMMAND`` and its parser) and the Python modules that do
    #: (``MODULES``: ``python -m``, ``torchrun -m``, or a script of the same dotted name);
    #: imported the first time a launch line is read, so a run of config files never loads
    #: the launch parsers. None: nothing starts it by name
    launch: str | None = None
    #: ``module:function`` giving a config checked on its own as the framework's usual launch runs
    #: it, when that launch replaces the config's mixed precision (``Traits.amp_replaced_by_launch``):
    #: the what-if a finding on the config's own AMP path is judged against
    launched_with: str | None = None
    #: older names accepted wherever a user types a name
    aliases: tuple[str, ...] = ()
    #: top-level keys that only this framework's files have: the generic HF Trainer dialect
    #: leaves a file with any of them to its owner
    signature: frozenset[str] = frozenset()
    #: the dotted names of its rule modules (imported on demand by
    #: :func:`precheck.frameworks.rule_modules`, so the rule registry names no framework)
    rules: tuple[str, ...] = ()
    #: top-level Python packages whose ``Trainer``/``Fabric`` calls in a training script
    #: take a ``precision=`` argument that sets the run's mixed precision
    python_trainer_packages: tuple[str, ...] = ()
    #: precision plugins those trainers take as ``plugins=`` (the callee's last dotted name, in
    #: one of :attr:`python_trainer_packages`) and the precision each sets (None: its
    #: ``precision=`` argument)
    python_precision_plugins: tuple[tuple[str, str | None], ...] = ()
    #: the positional parameters of those plugins whose first is not ``precision``
    #: (``BitsandbytesPrecision(mode, dtype)``): the plugin's name → its parameters in order
    python_plugin_parameters: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: calls (dotted, as imported) that build another call later, the callee their first
    #: positional argument and its keywords theirs (``run.Config(Trainer, plugins=...)``): a
    #: training script's such call is read as the call it defers
    python_deferred_calls: tuple[str, ...] = ()
    #: factories that build a run with its trainer (a recipe), as a regular expression over the
    #: call's dotted name, and the precision their trainer takes when the call passes none
    #: (its ``precision=`` argument, where it has one, names it in the same words)
    python_recipe_defaults: tuple[tuple[str, str], ...] = ()
    #: model base classes (the last dotted name) a training script's model may derive from
    python_model_bases: tuple[str, ...] = ()
    #: other distributions released with this one under the same version numbers: a pin of
    #: one of them is this framework's version (:data:`precheck.versions.RELEASED_AS`)
    pinned_as: tuple[str, ...] = ()
    #: the dialect instances (bound to this framework: name, distribution, traits, priority)
    dialects: tuple[Dialect, ...] = field(init=False)

    def __post_init__(self) -> None:
        cls = self.dialect_class
        cls.name, cls.framework, cls.traits, cls.priority = self.name, self.distribution, self.traits, self.priority
        object.__setattr__(self, "dialects", (cls(),))

    @cached_property
    def launchers(self) -> tuple[Entry, ...]:
        """The command lines that start it, each with its parser; their runs are read by
        this framework's dialect."""
        from ..sources.launchers import Entry, named_by

        declared: tuple[Entry, ...] = importlib.import_module(self.launch).ENTRIES if self.launch else ()
        return tuple(Entry(e.words, named_by(self.name, e.handler)) for e in declared)

    @cached_property
    def modules(self) -> tuple[ModuleEntry, ...]:
        """The Python modules that start it, each with the parser of its arguments."""
        from ..sources.launchers import module_named_by

        declared: tuple[ModuleEntry, ...] = importlib.import_module(self.launch).MODULES if self.launch else ()
        return tuple(replace(m, handler=module_named_by(self.name, m.handler)) for m in declared)

    @cached_property
    def as_launched(self) -> Callable[[TrainingConfig], TrainingConfig] | None:
        """The function :attr:`launched_with` names, imported the first time it is asked for."""
        if self.launched_with is None:
            return None
        module, _, name = self.launched_with.partition(":")
        found: Callable[[TrainingConfig], TrainingConfig] = getattr(importlib.import_module(module), name)
        return found

    @property
    def dialect(self) -> Dialect:
        return self.dialects[0]

    @property
    def commands(self) -> tuple[str, ...]:
        """The command lines that start it, as typed (``tune run``)."""
        return tuple(" ".join(e.words) for e in self.launchers)

    @property
    def component(self) -> bool:
        return self.traits.component

    @property
    def names(self) -> tuple[str, ...]:
        """The name and every alias a user may type for it."""
        return (self.name, *self.aliases)
