"""Inline suppression comments: ``# precheck: ignore[PC101]`` and ``# precheck: ignore-file``.

- ``# precheck: ignore[PC101,PC202]`` at the end of a line (or alone on it) silences those
  rules' findings that point at that line; a bare ``# precheck: ignore`` silences every rule
  there.
- ``# precheck: ignore-file[PC101]`` anywhere in a file silences those rules in the whole
  file; a bare ``# precheck: ignore-file`` silences every rule in it.

Comments exist in YAML, TOML and shell env files; JSON has none, so JSON files are
silenced with the project configuration's ``per-file-ignores``. The sources layer reads
the comments into notes of kind ``suppression`` / ``suppression-file`` (``message``: the
codes, comma-separated, empty for all), so rules (PC907 ``unused-suppression``) and the
API see them without reading files again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .sources.nodes import SourceNote
from .sources.suppressions import FILE, LINE, scan

__all__ = ["FILE", "LINE", "Suppression", "from_notes", "scan"]


@dataclass(frozen=True, slots=True)
class Suppression:
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
