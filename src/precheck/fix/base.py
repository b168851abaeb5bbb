"""What every editor shares: the :class:`Editor` protocol, a :class:`Replacement` of a span
of a document's text, and the error an edit that cannot be made in place raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..rules.base import Edit


class FixError(Exception):
    """An edit that cannot be made without touching more than the value."""


@dataclass(frozen=True, slots=True)
class Replacement:
    """Replace ``text[start:end]`` with ``new`` (``start == end``: insert)."""

    start: int
    end: int
    new: str

    def overlaps(self, other: Replacement) -> bool:
        if self == other:
            return False
        if self.start == self.end and other.start == other.end:
            return False  # two insertions at one point: both go in, in order
        if self.start == self.end:
            return other.start < self.start < other.end
        if other.start == other.end:
            return self.start < other.start < self.end
        return self.start < other.end and other.start < self.end


class Editor(Protocol):
    """Makes edits in the documents of one format (:data:`precheck.fix.editors.EDITORS`).

    An editor gets a document's whole text (without its byte-order mark) and one
    :class:`~precheck.rules.base.Edit` (set, add or remove a key), and returns the
    replacements of spans of that text that make the edit: nothing else in the document
    changes. It raises :class:`FixError` when the edit cannot be made without touching
    more than the value; an edit already made (a key to remove that is not there) is no
    replacement."""

    #: the ``Document.format`` it edits ("yaml", "json", "toml", "env", "shell"...)
    format: str
    #: False: precheck reads documents of this format but never rewrites them; every edit
    #: is refused before the file is read
    rewrites: bool

    def plan(self, text: str, edit: Edit) -> list[Replacement]:
        """The replacements that make ``edit`` in ``text`` (raises :class:`FixError`)."""
        ...


def apply_replacements(text: str, replacements: Iterable[Replacement]) -> str:
    ordered = sorted(enumerate(replacements), key=lambda p: (p[1].start, p[1].start != p[1].end, p[0]))
    out: list[str] = []
    position = 0
    for _, item in ordered:
        out.append(text[position : item.start])
        out.append(item.new)
        position = max(position, item.end)
    out.append(text[position:])
    return "".join(out)


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def line_end(text: str, index: int) -> int:
    """The index after the newline that ends the line holding ``index`` (or the text's end)."""
    end = text.find("\n", index)
    return len(text) if end == -1 else end + 1


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
