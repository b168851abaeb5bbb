"""``precheck rules`` and ``precheck rule CODE``."""

from __future__ import annotations

import json

from . import frameworks as frameworks  # the registry: fills the rule registry's table of framework rules
from .rules import RULES, get
from .rules.base import Rule, RuleStatus


def rule_json(item: Rule) -> dict[str, object]:
    return {
        "code": item.code,
        "name": item.name,
        "severity": str(item.severity),
        "family": item.family,
        "summary": item.summary,
        "fix": item.fix_safety.value,
        "status": item.status.value,
        "since": item.since,
        "needs_hardware": item.hardware,
        "versions": [str(v) for v in item.versions],
        "affects_latest": item.affects_latest,
    }


def print_rules(fmt: str) -> None:
    if fmt == "json":
        print(json.dumps([rule_json(r) for r in RULES.values()], indent=2))
        return
    for item in RULES.values():
        versions = f"  [{', '.join(str(v) for v in item.versions)}]" if item.versions else ""
        status = "" if item.status is RuleStatus.STABLE else f" ({item.status.value})"
        print(f"{item.code}  {item.name:<38} {item.severity!s:<8} {item.summary}{versions}{status}")


def print_rule(selector: str) -> None:
    item = get(selector)
    print(f"# {item.name} ({item.code})\n")
    status = f"Status: {item.status.value} since {item.since}."
    print(f"Severity: {item.severity}. Fix: {item.fix_safety.value}. {status}", end="")
    if item.hardware:
        print(" Needs the target hardware.", end="")
    print()
    if item.versions:
        holds = ", ".join(str(v) for v in item.versions)
        latest = "" if item.affects_latest else " (not the latest release: unknown versions get a warning)"
        print(f"Holds for: {holds}{latest}.")
    print()
    print(item.doc)
