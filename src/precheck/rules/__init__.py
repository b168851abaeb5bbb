"""Stage 4: the rule registry.

Families (the code's first digit): PC1xx device capability, PC2xx contradicting
precision settings, PC3xx optimizer and gradient dtypes, PC4xx loss scaling, PC5xx
device order and visibility, PC6xx sharded training (DeepSpeed, FSDP), PC7xx framework-specific
precision traps (one framework's own settings), PC8xx memory against the devices, PC9xx
input hygiene (PC92x: what the installed libraries say, with ``--deep``). Codes are never
reused.

Each rule declares its :class:`~precheck.rules.base.RuleStatus` (and since which release):
stable rules run by default, opt-in ones only when selected, deprecated ones only when
selected by their own code or name, removed ones never.
"""

from __future__ import annotations

from types import ModuleType

from ..errors import UsageError
from . import (
    consistency,
    deep,
    deepspeed_auto,
    deepspeed_engine,
    deepspeed_precision,
    device,
    fsdp,
    hygiene,
    kernels,
    loss_scale,
    memory,
    optimizer_support,
    precision,
    quantization,
    scaling,
    topology,
)
from .base import Context, Edit, Finding, Fix, FixSafety, Rule, RuleStatus, Severity

_GENERIC_MODULES = (
    device,
    kernels,
    precision,
    consistency,
    quantization,
    optimizer_support,
    scaling,
    loss_scale,
    topology,
    deepspeed_auto,
    deepspeed_engine,
    deepspeed_precision,
    fsdp,
    memory,
    hygiene,
    deep,
)

#: every rule by code (sorted), and by name: bound by :func:`_build` on first use
RULES: dict[str, Rule]
BY_NAME: dict[str, Rule]


def _modules() -> tuple[ModuleType, ...]:
    """The rule modules the registry reads: the generic ones, then the frameworks' (handed
    down by the framework registry, which sits above this one: :mod:`.registered`)."""
    from . import registered

    return (*_GENERIC_MODULES, *registered.modules())


def _build() -> None:
    """``RULES`` and ``BY_NAME``, built on first use rather than on import: a framework's rule
    module imports :mod:`precheck.rules.base`, which runs this package's ``__init__`` first; built
    then, the registry would take that half-imported module (without its rules) as it stands."""
    found = {item.code: item for module in _modules() for item in vars(module).values() if isinstance(item, Rule)}
    registry = dict(sorted(found.items()))
    globals().update(RULES=registry, BY_NAME={r.name: r for r in registry.values()})


def __getattr__(name: str) -> dict[str, Rule]:
    if name in ("RULES", "BY_NAME"):
        _build()
        registry: dict[str, Rule] = globals()[name]
        return registry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rules() -> dict[str, Rule]:
    """``RULES`` (as a test may have replaced it)."""
    registry: dict[str, Rule] = globals().get("RULES") or __getattr__("RULES")
    return registry


def _by_name() -> dict[str, Rule]:
    registry: dict[str, Rule] = globals().get("BY_NAME") or __getattr__("BY_NAME")
    return registry


#: the statuses a prefix or ``ALL`` selects (a deprecated rule only by its own code or name)
_BY_PREFIX = (RuleStatus.STABLE, RuleStatus.OPT_IN)


def resolve_selector(selector: str) -> list[Rule]:
    """A code (PC101), a family prefix (PC1, PC10), a slug, or ALL."""
    text = selector.strip()
    if text.upper() == "ALL":
        return [r for r in _rules().values() if r.status in _BY_PREFIX]
    upper = text.upper()
    own = _by_name().get(text) or _rules().get(upper)
    if own is not None:
        if own.status is RuleStatus.REMOVED:
            gone = f"{own.code} ({own.name}) was removed in precheck {own.since}"
            raise UsageError(f"{gone} (`precheck rule {own.code}` says why)")
        return [own]
    hits = [r for code, r in _rules().items() if code.startswith(upper)]
    if upper.startswith("PC") and hits:
        return [r for r in hits if r.status in _BY_PREFIX]
    raise UsageError(
        f"unknown rule selector {selector!r}{did_you_mean(text)} (a code like PC101, a prefix like PC1, a name, or ALL)"
    )


def did_you_mean(text: str) -> str:
    """``; did you mean 'PC201'?`` for a misspelt code or name, or nothing."""
    import difflib

    upper = text.upper()
    if upper.startswith("PC"):
        upper = "PC" + upper[2:].replace("O", "0").replace("I", "1").replace("L", "1")  # PC2O1
        close = difflib.get_close_matches(upper, list(_rules()), n=1, cutoff=0.6)
    else:
        close = difflib.get_close_matches(text.lower(), list(_by_name()), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def select_rules(
    select: list[str] | None, ignore: list[str] | None, extend_select: list[str] | None = None
) -> list[Rule]:
    """``select`` (default: the stable rules) plus ``extend_select``, less ``ignore``."""

    def split(values: list[str]) -> list[str]:  # ruff-style: repeated flags or commas
        return [part for value in values for part in value.split(",") if part.strip()]

    chosen: dict[str, Rule] = {}
    if select is None:
        chosen = {code: item for code, item in _rules().items() if item.status is RuleStatus.STABLE}
    for selector in split(select or []) + split(extend_select or []):
        for item in resolve_selector(selector):
            chosen[item.code] = item
    for selector in split(ignore or []):
        for item in resolve_selector(selector):
            chosen.pop(item.code, None)
    return [chosen[c] for c in sorted(chosen)]


def get(selector: str) -> Rule:
    text = selector.strip()
    found = _rules().get(text.upper()) or _by_name().get(text)
    if found is None:
        raise UsageError(f"no such rule: {selector!r}{did_you_mean(text)} (`precheck rules` lists them)")
    return found


def applicability(finding: Finding) -> FixSafety | None:
    """How ``--fix`` may apply the finding's fix: the fix's own applicability, else the one
    its rule declares (a finding made outside the engine); None without a fix."""
    if finding.fix is None:
        return None
    if finding.fix.applicability is not None:
        return finding.fix.applicability
    rule = _rules().get(finding.rule)
    return rule.fix_safety if rule is not None else FixSafety.MANUAL


def applicable(finding: Finding, unsafe: bool = False) -> bool:
    """Whether ``--fix`` (``unsafe``: ``--fix --unsafe-fixes``) applies the finding's fix."""
    if finding.fix is None or not finding.fix.edits:
        return False
    how = applicability(finding)
    return how is FixSafety.SAFE or (unsafe and how is FixSafety.UNSAFE)


__all__ = [
    "RULES",
    "Context",
    "Edit",
    "Finding",
    "Fix",
    "FixSafety",
    "Rule",
    "RuleStatus",
    "Severity",
    "applicability",
    "applicable",
    "get",
    "select_rules",
]
