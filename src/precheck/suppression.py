"""Inline suppression comments: ``# precheck: ignore[PC101]`` and ``# precheck: ignore-file``.

- ``# precheck: ignore[PC101,PC202]`` at the end of a line (or alone on it) silences those
  rules' findings that point at that line; a bare ``# precheck: ignore`` silences every rule
  there.
- ``# precheck: ignore-file[PC101]`` anywhere in a file silences those rules in the whole
  file; a bare ``# precheck: ignore-file`` silences every rule in it.

Comments exist in YAML, TOML and shell env files; JSON has none, so JSON files are
silenced with the project configuration's ``per-file-ignores``. The sources layer reads
the comments into notes of kind ``suppression`` / ``suppression-file`` (``message``: the
codes, comma-separated, empty for all), so the engine and the API see them without reading
files again. After every rule ran, the engine tells which comments covered a finding
(:func:`account`, as ruff's ``noqa`` checker): PC907 ``unused-suppression`` reports the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .provenance import Origin
from .rules.base import Finding, SuppressionComment, Suppressions
from .sources.nodes import SourceNote
from .sources.suppressions import FILE, LINE, malformed, scan

if TYPE_CHECKING:
    from .config import TrainingConfig

__all__ = ["FILE", "LINE", "Suppression", "account", "comments_of", "from_notes", "scan"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Suppression:
    """One suppression comment: a line's or a file's, for some rules or all."""

    kind: str
    line: int
    column: int
    #: empty: every rule
    codes: tuple[str, ...]

    def covers(self, line: int | None, code: str) -> bool:
        if self.kind == LINE and line != self.line:
            return False
        return not self.codes or code in self.codes

    @property
    def comment(self) -> str:
        name = "ignore-file" if self.kind == FILE else "ignore"
        return f"# precheck: {name}" + (f"[{', '.join(self.codes)}]" if self.codes else "")


def from_notes(notes: Iterable[SourceNote]) -> list[Suppression]:
    return [
        Suppression(n.kind, n.line, n.column, tuple(c for c in n.message.split(",") if c))
        for n in notes
        if n.kind in (LINE, FILE)
    ]


def comments_of(config: TrainingConfig) -> list[tuple[str, Suppression]]:
    """The suppression comments of a run's config and of every file it named, with their file."""
    out: list[tuple[str, Suppression]] = []
    pending = [config]
    while pending:
        current = pending.pop(0)
        out.extend((current.path, item) for item in from_notes(current.notes))
        pending.extend(current.attached.values())
    return out


def account(
    config: TrainingConfig,
    comments: list[tuple[str, Suppression]],
    findings: Iterable[Finding],
    undecided: frozenset[str],
    codes: frozenset[str],
) -> Suppressions:
    """What ``findings`` (every other rule's, placed by the engine) make of the run's
    ``comments`` (:func:`comments_of`); with the comments that look like suppressions but
    are not one. ``undecided``: rules that could not run; ``codes``: every rule's code."""
    reported = {(f.origin.path, f.origin.line, f.rule) for f in findings} if comments else set()
    used = []
    for path, item in comments:
        covered = frozenset(code for where, line, code in reported if where == path and item.covers(line, code))
        origin = Origin("file", path, item.line, item.column)
        used.append(SuppressionComment(origin, item.comment, item.kind == FILE, item.codes, covered))
    wrong: list[tuple[Origin, str]] = []
    pending = [config]
    while pending:
        current = pending.pop(0)
        wrong.extend((Origin("file", current.path, n.line, n.column), n.message) for n in malformed(current.notes))
        pending.extend(current.attached.values())
    return Suppressions(tuple(used), tuple(wrong), undecided, codes)
