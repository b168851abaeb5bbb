"""The precision lines a run's files hold that precheck read but could not use.

A setting precheck cannot know before the run (a value computed at run time, a branch on
something only the running script knows, keyword arguments built elsewhere, a call or file
it does not follow) is left out of the run, never guessed: the source stage leaves a note
where it stands. These are listed per run (``precheck explain`` and the JSON reports), so a
user sees what was not understood, and a coverage count can tell them from lines that were
never read at all.

In JSON each is ``{"file", "line", "key", "why"}``: ``file`` (not ``path``) and a ``why``
with no ``FILE:LINE`` in it, so that a tool that counts the places a report *cites* (every
``path``/``line`` pair, every ``FILE:LINE`` in a text) does not count these as used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .config import TrainingConfig

#: the note kinds that mean "read, and left out": a value not known before the run, a
#: script or call not followed, a flag the launched script's code overrides, flags bash cut
#: off a launch
KINDS = frozenset({"unresolved-value", "unresolved", "not-followed", "overridden", "cut-off"})
#: ``train.py:12`` in a message: written ``train.py line 12`` in ``why``
_CITE = re.compile(r"([\w./+@-]+\.(?:py|sh|bash|slurm|sbatch|ya?ml|json|toml|ipynb|cfg|env)):(\d+)")


@dataclass(frozen=True, slots=True)
class Unused:
    """One setting a run's files write that precheck could not use, and why."""

    path: str
    line: int
    key: str | None
    why: str

    def as_json(self) -> dict[str, Any]:
        return {"file": self.path, "line": self.line, "key": self.key, "why": _CITE.sub(r"\1 line \2", self.why)}


def unused(config: TrainingConfig) -> list[Unused]:
    """The settings left out of the run of ``config`` and of every file it named, in file
    order, each place once."""
    out: dict[tuple[str, int, str | None], Unused] = {}
    pending = [config]
    seen: set[int] = set()
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        for note in current.notes:
            if note.kind not in KINDS or note.line < 1:
                continue
            path = note.path or current.path
            out.setdefault((path, note.line, note.key), Unused(path, note.line, note.key, note.message))
        pending.extend(current.attached.values())
    return sorted(out.values(), key=lambda u: (u.path, u.line, u.key or ""))


__all__ = ["KINDS", "Unused", "unused"]
