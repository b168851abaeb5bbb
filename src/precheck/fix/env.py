"""Shell env files (``export KEY=value`` lines): a variable's value replaced in its own
quoting, its line removed, or a new assignment added at the end (``export``ed when the
file exports its variables)."""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..rules.base import Edit
from ..sources.env_source import _ASSIGNMENT
from .base import FixError, Replacement, line_end, line_start, newline_of


class _EnvDocument:
    def __init__(self, text: str):
        self.text = text
        #: key → [(line number, value start, value end, quote)]
        self.assignments: dict[str, list[tuple[int, int, int, str]]] = {}
        self.export = False
        index = 0
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            start, index = index, index + len(line)
            match = _ASSIGNMENT.match(line.rstrip("\r\n"))
            if match is None:
                continue
            self.export = self.export or line.lstrip().startswith("export ")
            value_start = start + match.start("value")
            value_end = value_start + self._word_end(match.group("value"))
            quote = match.group("value")[:1] if match.group("value")[:1] in ("'", '"') else ""
            self.assignments.setdefault(match.group("key"), []).append((number, value_start, value_end, quote))

    @staticmethod
    def _word_end(value: str) -> int:
        if value[:1] in ("'", '"'):
            close = value.find(value[0], 1)
            while close > 0 and value[0] == '"' and value[close - 1] == "\\":
                close = value.find('"', close + 1)
            if close == -1:
                raise FixError("a quoted value spans lines: change it by hand")
            return close + 1
        match = re.match(r"(?:\\.|[^\s#])*", value)
        return match.end() if match else 0

    @staticmethod
    def render(value: Any, quote: str = "") -> str:
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        if quote == '"':
            return '"' + re.sub(r'(["\\$`])', r"\\\1", text) + '"'
        if quote == "'" and "'" not in text:
            return f"'{text}'"
        return shlex.quote(text)

    def plan(self, edit: Edit) -> list[Replacement]:
        name = edit.key.rsplit(".", 1)[-1]
        places = self.assignments.get(name, [])
        chosen = next((p for p in places if p[0] == edit.line), places[-1] if places else None)
        if chosen is None:
            if edit.remove:
                return []
            newline = newline_of(self.text)
            lead = newline if self.text and not self.text.endswith("\n") else ""
            line = f"{'export ' if self.export else ''}{name}={self.render(edit.value)}{newline}"
            return [Replacement(len(self.text), len(self.text), lead + line)]
        _, start, end, quote = chosen
        if edit.remove:
            return [Replacement(line_start(self.text, start), line_end(self.text, start), "")]
        return [Replacement(start, end, self.render(edit.value, quote))]


class EnvEditor:
    """The :class:`~precheck.fix.base.Editor` of env files."""

    format = "env"
    rewrites = True

    def plan(self, text: str, edit: Edit) -> list[Replacement]:
        return _EnvDocument(text).plan(edit)
