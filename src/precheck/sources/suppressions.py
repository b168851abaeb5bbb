"""Read ``# precheck: ignore[...]`` comments into notes (see :mod:`precheck.suppression`)."""

from __future__ import annotations

import re

from .nodes import SourceNote

LINE = "suppression"
FILE = "suppression-file"

#: a ``#`` that starts a comment: at the start of a line or after whitespace
_COMMENT = re.compile(
    r"(?:^|(?<=\s))#\s*precheck\s*:\s*(?P<kind>ignore-file|ignore)(?![\w-])(?:\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
_COMMENTED = {"yaml", "toml", "env", "python"}  # python: scripts and notebooks (# inside a cell's string)


def scan(text: str, fmt: str) -> list[SourceNote]:
    """The suppression comments of a file, as notes (line and column of the ``#``)."""
    if fmt not in _COMMENTED or "precheck" not in text.lower():
        return []
    notes = []
    for number, line in enumerate(text.splitlines(), start=1):
        if "precheck" not in line.lower():
            continue
        match = _COMMENT.search(line)
        if match is None:
            continue
        kind = FILE if match.group("kind").lower() == "ignore-file" else LINE
        codes = ",".join(c.strip().upper() for c in (match.group("codes") or "").split(",") if c.strip())
        notes.append(SourceNote(kind, codes, number, match.start() + 1))
    return notes
