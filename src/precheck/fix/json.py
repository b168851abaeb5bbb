"""JSON documents: a position-keeping scan of the text (the standard library's own string
scanner) gives each key's span; a value is replaced in place, a member removed with its
comma, a new member added after the object's last one in the file's own indentation."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from ..rules.base import Edit
from .base import FixError, Replacement, line_end, line_start, newline_of
from .spans import Entry, deepest, locate


class _JsonDocument:
    _WS = re.compile(r"[ \t\n\r]*")
    _SCALAR = re.compile(r"true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        try:
            self._skip()
            if self.pos >= len(text):
                self.root = Entry("", 0, 0, 0, 0, "mapping")
                self.empty = True
                return
            self.empty = False
            self.root = self._value("", 0, 0)
        except (ValueError, IndexError) as exc:
            raise FixError(f"the file does not parse as JSON ({exc})") from None
        if self.root.kind != "mapping":
            raise FixError("the document is not a JSON object")

    def _skip(self) -> None:
        match = self._WS.match(self.text, self.pos)
        assert match is not None
        self.pos = match.end()

    def _value(self, key: str, key_start: int, key_end: int) -> Entry:
        text, start = self.text, self.pos
        char = text[start]
        if char == "{":
            entry = Entry(key, key_start, key_end, start, start, "mapping")
            self.pos += 1
            self._skip()
            while text[self.pos] != "}":
                child_start = self.pos
                name, self.pos = scanstring(text, self.pos + 1, True)
                child_end = self.pos
                self._skip()
                self.pos += 1  # ':'
                self._skip()
                entry.children[name] = self._value(name, child_start, child_end)
                self._skip()
                if text[self.pos] == ",":
                    self.pos += 1
                    self._skip()
            self.pos += 1
            entry.end = self.pos
            return entry
        if char == "[":
            self.pos += 1
            self._skip()
            while text[self.pos] != "]":
                self._value("", self.pos, self.pos)
                self._skip()
                if text[self.pos] == ",":
                    self.pos += 1
                    self._skip()
            self.pos += 1
            return Entry(key, key_start, key_end, start, self.pos, "sequence")
        if char == '"':
            _, self.pos = scanstring(text, start + 1, True)
            return Entry(key, key_start, key_end, start, self.pos, "scalar", style='"')
        match = self._SCALAR.match(text, start)
        if match is None:
            raise ValueError(f"unexpected {char!r} at {start}")
        self.pos = match.end()
        return Entry(key, key_start, key_end, start, self.pos, "scalar")

    def plan(self, edit: Edit) -> list[Replacement]:
        found = locate(self.root, self.text, edit)
        if found is None:
            if edit.remove:
                return []
            return [self._add(edit)]
        entry, parent = found
        if edit.remove:
            return [self._remove(entry, parent)]
        return [Replacement(entry.start, entry.end, self._render(edit.value, self._indent_at(entry.key_start)))]

    def _indent_at(self, index: int) -> str:
        start = line_start(self.text, index)
        head = self.text[start:index]
        return head if not head.strip() else ""

    def _unit(self) -> str:
        for line in self.text.splitlines():
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            if indent and line.strip():
                return indent
        return "  "

    def _render(self, value: Any, indent: str) -> str:
        if not isinstance(value, (dict, list)) or not value:
            return json.dumps(value, ensure_ascii=False)
        unit = self._unit()
        dumped = json.dumps(value, ensure_ascii=False, indent=unit if "\n" in self.text.strip() else None)
        return dumped.replace("\n", newline_of(self.text) + indent)

    def _remove(self, entry: Entry, parent: Entry) -> Replacement:
        text = self.text
        after = self._WS.match(text, entry.end)
        assert after is not None
        if text[after.end() : after.end() + 1] == ",":  # a member follows: take our line and the comma
            comma_end = after.end() + 1
            start = line_start(text, entry.key_start)
            if text[start : entry.key_start].strip():
                start = entry.key_start
                follow = self._WS.match(text, comma_end)
                assert follow is not None
                return Replacement(start, follow.end(), "")
            rest = text[comma_end : line_end(text, comma_end)]
            end = line_end(text, comma_end) if not rest.strip() else comma_end
            return Replacement(start, end, "")
        before = entry.key_start
        while before > 0 and text[before - 1] in " \t\r\n":
            before -= 1
        if text[before - 1 : before] == ",":  # the last member: take the comma before it
            return Replacement(before - 1, entry.end, "")
        # the only member: leave `{}` with the closing brace where it was
        return Replacement(before, after.end(), "")

    def _add(self, edit: Edit) -> Replacement:
        if self.empty:
            raise FixError(f"the file is empty: add `{edit.key}` by hand")
        parts = edit.key.split(".")
        mapping, rest = deepest(self.root, parts)
        value: Any = edit.value
        for part in reversed(rest[1:]):
            value = {part: value}
        name = json.dumps(rest[0], ensure_ascii=False)
        newline = newline_of(self.text)
        if mapping.children:
            last = list(mapping.children.values())[-1]
            indent = self._indent_at(last.key_start)
            if indent:
                member = f"{name}: {self._render(value, indent)}"
                return Replacement(last.end, last.end, f",{newline}{indent}{member}")
            return Replacement(last.end, last.end, f", {name}: {self._render(value, '')}")
        inside = self.text[mapping.start + 1 : mapping.end - 1]
        if "\n" not in inside:
            return Replacement(mapping.start + 1, mapping.end - 1, f"{name}: {self._render(value, '')}")
        closing = self._indent_at(mapping.end - 1)
        indent = closing + self._unit()
        member = f"{name}: {self._render(value, indent)}"
        return Replacement(mapping.start + 1, mapping.start + 1, f"{newline}{indent}{member}")


class JsonEditor:
    """The :class:`~precheck.fix.base.Editor` of JSON documents."""

    format = "json"
    rewrites = True

    def plan(self, text: str, edit: Edit) -> list[Replacement]:
        return _JsonDocument(text).plan(edit)
