"""A word's characters gathered into fields as the shell splits them (:mod:`.shell_source`
expands a word's parts into one of these)."""

from __future__ import annotations

from .launch_args import Field
from .shell_lexer import Word

#: ``(start, end, what)``: characters of a text that stand for a value precheck does not know
Holes = list[tuple[int, int, str]]


class Fields:
    """Accumulates characters into words, splitting unquoted expansions on whitespace.

    An unknown value (``$1``, ``$(...)``) is added with its hole: the field its characters
    land in is unresolved, and only that one (``ARGS="--lr $LR --bf16 True"`` split by
    ``$ARGS`` leaves ``--bf16 True`` known)."""

    def __init__(self, word: Word):
        self.word = word
        self.out: list[Field] = []
        self._reset()

    def _reset(self) -> None:
        self.text: list[str] = []
        self.at: list[int] = []
        self.quoted = False
        self.started = False
        self.unresolved: list[str] = []
        self.holes: Holes = []

    def _hole(self, start: int, end: int, what: str) -> None:
        if what not in self.unresolved:
            self.unresolved.append(what)
        self.holes.append((start, end, what))

    def add(self, text: str, at: list[int], split: bool, holes: Holes | None = None) -> None:
        if not split or not ("\n" in text or " " in text or "\t" in text):  # no field break: all at once
            count = min(len(text), len(at))
            base = len(self.text)
            if count:
                self.text.extend(text[:count])
                self.at.extend(at[:count])
                self.started = True
            for start, end, what in holes or ():
                self._hole(base + start, base + max(end, start), what)
            return
        pending = sorted(holes or ())
        for index, (ch, offset) in enumerate(zip(text, at, strict=False)):
            if split and ch in " \t\n":
                self.end()
                continue
            self.text.append(ch)
            self.at.append(offset)
            self.started = True
            for start, end, what in pending:
                if start <= index < end:
                    here = len(self.text) - 1
                    self._hole(here, here + 1, what)

    def mark_quoted(self) -> None:
        self.quoted = self.started = True

    def end(self, force: bool = False) -> None:
        if self.started or force:
            text = "".join(self.text)
            holes = _merged(self.holes)
            self.out.append(
                Field(
                    text,
                    self.at,
                    text,
                    self.at[0] if self.at else self.word.start,
                    self.quoted,
                    self.unresolved,
                    holes,
                )
            )
        self._reset()

    def done(self) -> list[Field]:
        self.end()
        if len(self.out) == 1:
            self.out[0].raw = self.word.raw.text
        return self.out


def _merged(holes: Holes) -> Holes:
    """Adjacent ranges of one unknown value as one range."""
    out: Holes = []
    for start, end, what in holes:
        if out and out[-1][2] == what and out[-1][1] >= start:
            out[-1] = (out[-1][0], max(out[-1][1], end), what)
        else:
            out.append((start, end, what))
    return out


__all__ = ["Fields", "Holes"]
