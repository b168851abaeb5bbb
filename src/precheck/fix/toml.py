"""TOML documents: the key lines and table headers the TOML reader recognises, with each
value's span (strings, arrays and inline tables scanned to their end); a value replaced in
place, a key's line removed, a new key added after its table's last entry."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..rules.base import Edit
from ..sources.toml_source import _HEADER, _KEY, _split_key, string_end
from .base import FixError, Replacement, line_end, line_start, newline_of


def toml_value(value: Any, style: str = "") -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        if style == "'" and "'" not in value and "\n" not in value:
            return f"'{value}'"
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise FixError(f"TOML has no way to write {value!r}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


@dataclass
class _TomlKey:
    path: tuple[str, ...]
    line: int
    key_start: int
    value_start: int
    value_end: int
    style: str


class _TomlDocument:
    def __init__(self, text: str):
        self.text = text
        self.keys: list[_TomlKey] = []
        #: (table path, index of the header line's start, is an array of tables)
        self.headers: list[tuple[tuple[str, ...], int, bool]] = []
        table: tuple[str, ...] = ()
        index = 0
        number = 0
        skip_until = 0
        for line in text.splitlines(keepends=True):
            number += 1
            start, index = index, index + len(line)
            if start < skip_until:
                continue
            header = _HEADER.match(line)
            if header:
                table = _split_key(header.group(2))
                self.headers.append((table, start, header.group(1) == "[["))
                continue
            key = _KEY.match(line)
            if not key:
                continue
            value_start = start + key.end()
            while value_start < len(text) and text[value_start] in " \t":
                value_start += 1
            value_end = self._value_end(value_start)
            style = text[value_start : value_start + 1]
            self.keys.append(
                _TomlKey(
                    table + _split_key(key.group(2)),
                    number,
                    start + len(key.group(1)),
                    value_start,
                    value_end,
                    style if style in ("'", '"') else "",
                )
            )
            skip_until = value_end

    def _value_end(self, pos: int) -> int:
        text = self.text
        if text.startswith(('"""', "'''"), pos):  # escapes and runs of quotes as TOML reads them
            return string_end(text, pos)
        char = text[pos : pos + 1]
        if char == '"':
            end = pos + 1
            while end < len(text) and text[end] not in '"\n':
                end += 2 if text[end] == "\\" else 1
            return end + 1
        if char == "'":
            close = text.find("'", pos + 1)
            return len(text) if close == -1 else close + 1
        if char in "[{":
            depth, end = 0, pos
            while end < len(text):
                c = text[end]
                if c in "[{":
                    depth += 1
                elif c in "]}":
                    depth -= 1
                    if depth == 0:
                        return end + 1
                elif c in "\"'":
                    end = self._value_end(end) - 1
                elif c == "#":
                    end = line_end(text, end) - 1
                end += 1
            return len(text)
        match = re.compile(r"[^\s#,\]}]*").match(text, pos)
        assert match is not None
        return match.end()

    def _find(self, edit: Edit) -> _TomlKey | None:
        parts = tuple(edit.key.split("."))
        if edit.line is not None:
            hits = [k for k in self.keys if k.line == edit.line and k.path[-1] == parts[-1]]
            if len(hits) == 1:
                return hits[0]
        hits = [k for k in self.keys if k.path == parts]
        if len(hits) > 1:
            raise FixError(f"`{edit.key}` is set in more than one table: change it by hand")
        return hits[0] if hits else None

    def plan(self, edit: Edit) -> list[Replacement]:
        found = self._find(edit)
        text = self.text
        if found is None:
            return [] if edit.remove else [self._add(edit)]
        if text.startswith(('"""', "'''"), found.value_start):
            raise FixError(f"`{edit.key}` holds a multi-line string: change it by hand")
        if not edit.remove:
            return [Replacement(found.value_start, found.value_end, toml_value(edit.value, found.style))]
        start = line_start(text, found.key_start)
        end = line_end(text, found.value_end - 1) if found.value_end > found.value_start else line_end(text, start)
        rest = text[found.value_end : end].strip()
        if rest and not rest.startswith("#"):
            raise FixError(f"`{edit.key}` shares its line with other content: remove it by hand")
        return [Replacement(start, end, "")]

    def _add(self, edit: Edit) -> Replacement:
        text, newline = self.text, newline_of(self.text)
        parts = tuple(edit.key.split("."))
        tables = {path: start for path, start, array in self.headers if not array}
        prefix: tuple[str, ...] = ()
        for size in range(len(parts) - 1, 0, -1):
            if parts[:size] in tables:
                prefix = parts[:size]
                break
        rest = parts[len(prefix) :]
        taken = [k.path for k in self.keys] + [h[0] for h in self.headers]
        if len(rest) > 1 and any(p[: len(prefix) + 1] == (*prefix, rest[0]) for p in taken):
            raise FixError(f"`{'.'.join((*prefix, rest[0]))}` is defined elsewhere: add `{edit.key}` by hand")
        line = f"{'.'.join(_toml_key(p) for p in rest)} = {toml_value(edit.value)}{newline}"
        starts = sorted(start for _, start, _ in self.headers)
        if prefix:
            section_start = tables[prefix]
            following = [s for s in starts if s > section_start]
            section_end = following[0] if following else len(text)
            position = self._after_last_entry(line_end(text, section_start), section_end)
        elif starts:
            position = self._after_last_entry(0, starts[0])
            if position == 0:
                position = self._before_comments(starts[0])
        else:
            position = len(text)
        lead = newline if position > 0 and not text[:position].endswith("\n") else ""
        return Replacement(position, position, lead + line)

    def _after_last_entry(self, start: int, end: int) -> int:
        """After the last line of the section ``[start, end)`` that is not blank or a comment."""
        keys = [k for k in self.keys if start <= k.key_start < end]
        if not keys:
            return start
        return line_end(self.text, max(k.value_end for k in keys) - 1)

    def _before_comments(self, header: int) -> int:
        position = header
        while position > 0:
            previous = line_start(self.text, position - 1)
            if not self.text[previous:position].strip().startswith("#"):
                break
            position = previous
        return position


class TomlEditor:
    """The :class:`~precheck.fix.base.Editor` of TOML documents."""

    format = "toml"
    rewrites = True

    def plan(self, text: str, edit: Edit) -> list[Replacement]:
        return _TomlDocument(text).plan(edit)
