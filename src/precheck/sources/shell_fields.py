"""A word's characters gathered into fields as the shell splits them (:mod:`.shell_source`
expands a word's parts into one of these)."""

from __future__ import annotations

from .launch_args import Field
from .shell_lexer import Word


class Fields:
    """Accumulates characters into words, splitting unquoted expansions on whitespace."""

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

    def add(self, text: str, at: list[int], split: bool) -> None:
        if not split or not ("\n" in text or " " in text or "\t" in text):  # no field break: all at once
            count = min(len(text), len(at))
            if count:
                self.text.extend(text[:count])
                self.at.extend(at[:count])
                self.started = True
            return
        for ch, offset in zip(text, at, strict=False):
            if split and ch in " \t\n":
                self.end()
                continue
            self.text.append(ch)
            self.at.append(offset)
            self.started = True

    def mark_quoted(self) -> None:
        self.quoted = self.started = True

    def end(self, force: bool = False) -> None:
        if self.started or force:
            text = "".join(self.text)
            self.out.append(
                Field(text, self.at, text, self.at[0] if self.at else self.word.start, self.quoted, self.unresolved)
            )
        self._reset()

    def done(self) -> list[Field]:
        self.end()
        if len(self.out) == 1:
            self.out[0].raw = self.word.raw.text
        return self.out


__all__ = ["Fields"]
