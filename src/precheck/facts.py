"""Facts about framework releases that rules rely on: version boundaries and quoted messages.

Each fact lives in ``data/facts.json`` with the package, the releases it holds for (``low``
inclusive, ``high`` exclusive), the file in that package's released artifact, and a
``pattern`` that is present in the releases listed under ``present_in`` and absent from those
under ``absent_in``. ``scripts/verify_facts.py`` downloads those releases and checks every
fact; rules take their boundaries (:func:`span`) and quotes (:func:`quote`) from here only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .versions import VersionRange

FACTS_FILE = Path(__file__).parent / "data" / "facts.json"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Fact:
    """A checked claim about a package's source: a pattern present or absent in a file across versions."""

    id: str
    package: str
    low: str | None
    high: str | None
    file: str
    pattern: str
    present_in: tuple[str, ...]
    absent_in: tuple[str, ...]
    #: the released file:line the rule docs cite (``runtime/engine.py:1498@0.18.5``)
    cite: str
    #: the message as printed (``{field}`` where the release computes a part); the verifier
    #: checks that the release's source spells every other part of it
    message: str


@lru_cache(maxsize=1)
def all_facts() -> dict[str, Fact]:
    data = json.loads(FACTS_FILE.read_text(encoding="utf-8"))
    return {
        item["id"]: Fact(
            item["id"],
            item["package"],
            item.get("low"),
            item.get("high"),
            item["file"],
            item["pattern"],
            tuple(item.get("present_in", ())),
            tuple(item.get("absent_in", ())),
            item.get("cite", ""),
            item.get("message", item["pattern"]),
        )
        for item in data["facts"]
    }


def fact(fact_id: str) -> Fact:
    return all_facts()[fact_id]


def span(fact_id: str) -> VersionRange:
    """The releases a fact holds for, as a :class:`VersionRange`."""
    item = fact(fact_id)
    return VersionRange(item.package, item.low, item.high)


def quote(fact_id: str, **fields: object) -> str:
    """An upstream message, exactly as the release prints it.

    A message the release computes in part holds ``{field}`` where it does; pass those
    ``fields`` to fill them (``{_}`` marks where the source joins two strings and prints nothing).
    Without ``fields`` the text comes back as stored, placeholders included."""
    text = fact(fact_id).message
    return text.format(**{"_": "", **fields}) if fields else text
