"""Option schemas of frameworks whose code is not in the user's repository, as data (model
layer: frameworks' dialects, resolvers and rules read it, as they read the facts table).

``scripts/extract_schema.py`` reads each framework's released wheels with precheck's static
reader (:mod:`precheck.sources.release_schema`) and writes what it found to
``precheck/data/schemas/<framework>.json``: per release range, the CLI entry points (or the
config class a YAML is parsed into), each option's type, default and ``choices``, and where the
precision options flow. A framework package reads it here, so that its defaults and accepted
values come from the framework's code at a release, not from a table written by hand.

A release is chosen for a run's version: the range whose read versions include it, else the
newest range read before it, else the oldest; with no version, the newest (what a fresh install
gets). :attr:`ReleaseSchema.label` names the release read, for a finding's origin.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .versions import is_exact, version_key

#: the data files, beside the package's other data
FOLDER = Path(__file__).resolve().parent / "data" / "schemas"


@dataclass(frozen=True, slots=True)
class ReleaseSchema:
    """One release range of one framework's schema."""

    framework: str
    distribution: str
    #: the versions read (oldest first): the schema is the same in each
    versions: tuple[str, ...]
    schema: Mapping[str, Any]

    @property
    def label(self) -> str:
        """``llm-foundry 0.22.0`` or ``NAME 0.4.13–0.5.5``: the releases this schema was read from."""
        first, last = self.versions[0], self.versions[-1]
        return f"{self.distribution} {first}" if first == last else f"{self.distribution} {first}–{last}"

    def entry_point(self, command: str) -> Mapping[str, Any] | None:
        found: Mapping[str, Any] | None = self.schema.get("entry_points", {}).get(command)
        return found

    def commands(self) -> tuple[str, ...]:
        return tuple(self.schema.get("entry_points", {}))

    def option(self, command: str, name: str) -> Mapping[str, Any] | None:
        entry = self.entry_point(command)
        found: Mapping[str, Any] | None = entry["options"].get(name) if entry is not None else None
        return found

    def config_option(self, name: str) -> Mapping[str, Any] | None:
        config = self.schema.get("config_class")
        found: Mapping[str, Any] | None = config["options"].get(name) if config is not None else None
        return found

    def values(self, label: str) -> tuple[Any, ...]:
        found = self.schema.get("values", {}).get(label)
        return tuple(found["values"]) if found is not None else ()


@cache
def _document(framework: str) -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads((FOLDER / f"{framework}.json").read_text(encoding="utf-8"))
    return loaded


def release(framework: str, version: str | None = None) -> ReleaseSchema:
    """The schema of ``framework`` at ``version`` (see the module's docstring)."""
    document = _document(framework)
    releases = document["releases"]
    chosen = releases[-1]
    if version is not None and is_exact(version):
        wanted = version_key(version)
        before = [r for r in releases if version_key(r["versions"][0]) <= wanted]
        holding = [r for r in releases if version in r["versions"]]
        chosen = holding[0] if holding else (before[-1] if before else releases[0])
    return ReleaseSchema(document["framework"], document["distribution"], tuple(chosen["versions"]), chosen["schema"])


__all__ = ["FOLDER", "ReleaseSchema", "release"]
