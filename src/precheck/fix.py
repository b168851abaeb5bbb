"""``--fix`` and ``--diff``: apply the findings' edits in the user's own files.

Each :class:`~precheck.rules.base.Edit` (set a key, add it, or remove it) becomes a
:class:`Replacement` of a span of the file's text: the value's characters when a value
changes, the key's lines when a key goes, new lines after the mapping's last entry when a
key is added. Nothing else in the file changes, byte for byte: comments, key order,
quoting, indentation, line endings, a UTF-8 byte-order mark. The spans come from the
files' own positions (PyYAML's composer marks for YAML, a position-keeping scan for JSON,
key lines for TOML and env files); no file is ever re-serialised.

Which fixes apply: a finding's fix is applied when its applicability (the fix's own, else
its rule's ``fix_safety``) is ``safe`` (``unsafe`` ones with ``--unsafe-fixes``; ``manual``
ones never). An edit that cannot be
made without touching more than the value (an anchor or alias, a block scalar, a key that
shares its line with others, a mapping that would be left empty) is skipped and reported.
Two fixes that change the same span: the first wins; the next ``--fix`` run looks again.
After the edits the file must still parse, or none of that file's edits is written.

Writes are atomic: a temporary file in the same folder, flushed, then ``os.replace``d
over the original (whose permission bits it copies); on any failure the temporary file is
removed and the original is untouched.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import yaml

from . import rules
from .bounded_read import Refused, read_bytes
from .errors import InputError
from .fix_write import repository_root, write_atomic
from .rules.base import Edit, Finding
from .sources import FORMATS, parse, script_kind
from .sources.env_source import _ASSIGNMENT
from .sources.toml_source import _HEADER, _KEY, _split_key
from .sources.workflow_source import is_workflow


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


def format_of(path: str | Path) -> str:
    return FORMATS.get(Path(path).suffix.lower(), "yaml")


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


def plan(text: str, fmt: str, edit: Edit) -> list[Replacement]:
    """The replacements that make ``edit`` in ``text`` (raises :class:`FixError`)."""
    if fmt == "json":
        return _JsonEditor(text).plan(edit)
    if fmt == "toml":
        return _TomlEditor(text).plan(edit)
    if fmt == "env":
        return _EnvEditor(text).plan(edit)
    return _YamlEditor(text).plan(edit)


# --------------------------------------------------------------------------------------
# a tree of spans shared by YAML and JSON


@dataclass
class _Entry:
    key: str
    key_start: int
    key_end: int
    start: int
    #: the end of the value's own characters (a collection: of its last entry)
    end: int
    kind: str  # "scalar" | "mapping" | "sequence"
    flow: bool = False
    #: YAML scalar style ("", "'", '"', "|", ">"); JSON strings '"'
    style: str = ""
    #: why the value cannot be replaced in place (anchor, alias, tag, block scalar)
    problem: str | None = None
    children: dict[str, _Entry] = field(default_factory=dict)
    #: first key of a mapping, for its children's indentation
    first_child_column: int | None = None


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end(text: str, index: int) -> int:
    """The index after the newline that ends the line holding ``index`` (or the text's end)."""
    end = text.find("\n", index)
    return len(text) if end == -1 else end + 1


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _locate(root: _Entry, text: str, edit: Edit) -> tuple[_Entry, _Entry] | None:
    """(entry, its parent mapping) for the edit's key: by its line first, then by its path."""
    parts = edit.key.split(".")
    if edit.line is not None:
        hits = [
            (entry, parent)
            for entry, parent, path in _walk(root, ())
            if _line_of(text, entry.key_start) == edit.line
            and (entry.key == parts[-1] or ".".join(path) == edit.key or entry.key == edit.key)
        ]
        if len(hits) == 1:
            return hits[0]
    return _by_path(root, parts)


def _walk(entry: _Entry, path: tuple[str, ...]) -> Iterable[tuple[_Entry, _Entry, tuple[str, ...]]]:
    for key, child in entry.children.items():
        yield child, entry, (*path, key)
        yield from _walk(child, (*path, key))


def _by_path(mapping: _Entry, parts: list[str]) -> tuple[_Entry, _Entry] | None:
    for size in range(len(parts), 0, -1):  # a key may itself hold dots
        child = mapping.children.get(".".join(parts[:size]))
        if child is None:
            continue
        if size == len(parts):
            return child, mapping
        if child.kind == "mapping":
            found = _by_path(child, parts[size:])
            if found is not None:
                return found
    return None


def _deepest(root: _Entry, parts: list[str]) -> tuple[_Entry, list[str]]:
    """The deepest existing mapping on the path to a key that is not there, and what is left."""
    mapping, index = root, 0
    while index < len(parts) - 1:
        child = mapping.children.get(parts[index])
        if child is None:
            break
        if child.kind != "mapping":
            raise FixError(f"`{'.'.join(parts[: index + 1])}` is not a mapping: add `{'.'.join(parts)}` by hand")
        mapping, index = child, index + 1
    return mapping, parts[index:]


def _removal(text: str, entry: _Entry, parent: _Entry, root: _Entry, what: str) -> Replacement:
    """Delete the key's whole lines: from its line's start to the end of its value's line."""
    if parent.flow:
        raise FixError(f"`{what}` sits in a one-line mapping: remove it by hand")
    start = _line_start(text, entry.key_start)
    if text[start : entry.key_start].strip():
        raise FixError(f"`{what}` shares its line with other content: remove it by hand")
    end = _line_end(text, entry.end) if entry.end > 0 and text[entry.end - 1] != "\n" else entry.end
    rest = text[entry.end : end].strip()
    if rest and not rest.startswith("#"):
        raise FixError(f"`{what}` shares its line with other content: remove it by hand")
    if parent is not root and len(parent.children) == 1:
        raise FixError(f"removing `{what}` would leave its mapping empty: remove the mapping by hand")
    return Replacement(start, end, "")


# --------------------------------------------------------------------------------------
# YAML


def _yaml_scalar(value: Any) -> str:
    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=2**31 - 1, sort_keys=False)
    if dumped.endswith("\n...\n"):
        dumped = dumped[: -len("\n...\n")]
    dumped = dumped.rstrip("\n")
    if "\n" in dumped:
        raise FixError(f"the value {value!r} does not fit on one line")
    return dumped


def yaml_value(value: Any, style: str = "") -> str:
    """A value as YAML writes it on one line, in the quoting the old value used."""
    if isinstance(value, str) and "\n" not in value:
        if style == '"':
            return json.dumps(value, ensure_ascii=False)
        if style == "'":
            return "'" + value.replace("'", "''") + "'"
    return _yaml_scalar(value)


class _YamlEditor:
    def __init__(self, text: str):
        self.text = text
        try:
            documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as exc:
            raise FixError(f"the file does not parse as YAML ({exc})") from None
        self.documents = len(documents)
        first = next((d for d in documents if d is not None), None)
        self.root = _Entry("", 0, 0, 0, len(text), "mapping")
        if first is None:
            return
        if not isinstance(first, yaml.MappingNode):
            raise FixError("the document is not a mapping")
        self.root = self._entry(first, "", first.start_mark.index, first.start_mark.index)

    def _entry(self, node: yaml.Node, key: str, key_start: int, key_end: int) -> _Entry:
        start, end = node.start_mark.index, node.end_mark.index
        if isinstance(node, yaml.ScalarNode):
            style = node.style or ""
            entry = _Entry(key, key_start, key_end, start, end, "scalar", style=style)
            if start < key_end:
                entry.problem = "its value is an alias (`*name`)"
            elif self.text[start : start + 1] in ("&", "!", "*"):
                entry.problem = "its value carries an anchor or a tag"
            elif style in ("|", ">"):
                entry.problem = "its value is a block scalar"
                end = start + len(self.text[start:end].rstrip())
                entry.end = end
            return entry
        kind = "mapping" if isinstance(node, yaml.MappingNode) else "sequence"
        flow = bool(getattr(node, "flow_style", False))
        entry = _Entry(key, key_start, key_end, start, end, kind, flow=flow)
        if start < key_end:
            entry.problem = "its value is an alias (`*name`)"
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                if entry.first_child_column is None:
                    entry.first_child_column = key_node.start_mark.column
                child = self._entry(value_node, str(key_node.value), key_node.start_mark.index, key_node.end_mark.index)
                entry.children[str(key_node.value)] = child
        if not flow:
            entry.end = self._last(node)
        return entry

    def _last(self, node: yaml.Node) -> int:
        """Where a block collection's last content ends (its end mark is the next token's start)."""
        if isinstance(node, yaml.ScalarNode):
            if node.style in ("|", ">"):
                return node.start_mark.index + len(self.text[node.start_mark.index : node.end_mark.index].rstrip())
            return int(node.end_mark.index)
        if getattr(node, "flow_style", False) or not node.value:
            return int(node.end_mark.index)
        last = node.value[-1]
        return self._last(last[1] if isinstance(node, yaml.MappingNode) else last)

    def plan(self, edit: Edit) -> list[Replacement]:
        found = _locate(self.root, self.text, edit)
        if found is None:
            if edit.remove:
                return []  # already gone
            return [self._add(edit)]
        entry, parent = found
        if edit.remove:
            return [_removal(self.text, entry, parent, self.root, edit.key)]
        if entry.problem:
            raise FixError(f"`{edit.key}`: {entry.problem}; change it by hand")
        if entry.kind != "scalar":
            raise FixError(f"`{edit.key}` holds a {entry.kind}: change it by hand")
        new = yaml_value(edit.value, entry.style)
        if entry.start == entry.end:  # `key:` with nothing after it
            gap = self.text[entry.key_end : entry.start]
            return [Replacement(entry.start, entry.end, ("" if gap.endswith(" ") else " ") + new)]
        return [Replacement(entry.start, entry.end, new)]

    def _add(self, edit: Edit) -> Replacement:
        parts = edit.key.split(".")
        mapping, rest = _deepest(self.root, parts)
        if mapping.flow:
            raise FixError(f"`{edit.key}` would go into a one-line mapping: add it by hand")
        newline = _newline(self.text)
        if mapping is self.root:
            if self.documents > 1 or re.search(r"^\.\.\.\s*$", self.text, re.MULTILINE):
                raise FixError(f"the file holds more than one YAML document: add `{edit.key}` by hand")
            column = mapping.first_child_column or 0
            position = len(self.text)
        else:
            column = mapping.first_child_column if mapping.first_child_column is not None else 0
            position = _line_end(self.text, mapping.end)
        unit = self._indent_unit()
        lines = []
        for depth, part in enumerate(rest):
            pad = " " * (column + depth * unit)
            key = _yaml_scalar(part)
            lines.append(f"{pad}{key}: {yaml_value(edit.value)}" if depth == len(rest) - 1 else f"{pad}{key}:")
        prefix = newline if position > 0 and not self.text[:position].endswith("\n") else ""
        return Replacement(position, position, prefix + newline.join(lines) + newline)

    def _indent_unit(self) -> int:
        for entry, _parent, _path in _walk(self.root, ()):
            if entry.kind == "mapping" and not entry.flow and entry.first_child_column is not None:
                key_column = entry.key_start - _line_start(self.text, entry.key_start)
                if entry.first_child_column > key_column:
                    return entry.first_child_column - key_column
        return 2


# --------------------------------------------------------------------------------------
# JSON


class _JsonEditor:
    _WS = re.compile(r"[ \t\n\r]*")
    _SCALAR = re.compile(r"true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        try:
            self._skip()
            if self.pos >= len(text):
                self.root = _Entry("", 0, 0, 0, 0, "mapping")
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

    def _value(self, key: str, key_start: int, key_end: int) -> _Entry:
        text, start = self.text, self.pos
        char = text[start]
        if char == "{":
            entry = _Entry(key, key_start, key_end, start, start, "mapping")
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
            return _Entry(key, key_start, key_end, start, self.pos, "sequence")
        if char == '"':
            _, self.pos = scanstring(text, start + 1, True)
            return _Entry(key, key_start, key_end, start, self.pos, "scalar", style='"')
        match = self._SCALAR.match(text, start)
        if match is None:
            raise ValueError(f"unexpected {char!r} at {start}")
        self.pos = match.end()
        return _Entry(key, key_start, key_end, start, self.pos, "scalar")

    def plan(self, edit: Edit) -> list[Replacement]:
        found = _locate(self.root, self.text, edit)
        if found is None:
            if edit.remove:
                return []
            return [self._add(edit)]
        entry, parent = found
        if edit.remove:
            return [self._remove(entry, parent)]
        return [Replacement(entry.start, entry.end, self._render(edit.value, self._indent_at(entry.key_start)))]

    def _indent_at(self, index: int) -> str:
        start = _line_start(self.text, index)
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
        return dumped.replace("\n", _newline(self.text) + indent)

    def _remove(self, entry: _Entry, parent: _Entry) -> Replacement:
        text = self.text
        after = self._WS.match(text, entry.end)
        assert after is not None
        if text[after.end() : after.end() + 1] == ",":  # a member follows: take our line and the comma
            comma_end = after.end() + 1
            start = _line_start(text, entry.key_start)
            if text[start : entry.key_start].strip():
                start = entry.key_start
                follow = self._WS.match(text, comma_end)
                assert follow is not None
                return Replacement(start, follow.end(), "")
            rest = text[comma_end : _line_end(text, comma_end)]
            end = _line_end(text, comma_end) if not rest.strip() else comma_end
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
        mapping, rest = _deepest(self.root, parts)
        value: Any = edit.value
        for part in reversed(rest[1:]):
            value = {part: value}
        name = json.dumps(rest[0], ensure_ascii=False)
        newline = _newline(self.text)
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


# --------------------------------------------------------------------------------------
# TOML


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


class _TomlEditor:
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
        if text.startswith(('"""', "'''"), pos):
            close = text.find(text[pos : pos + 3], pos + 3)
            return len(text) if close == -1 else close + 3
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
                    end = _line_end(text, end) - 1
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
        start = _line_start(text, found.key_start)
        end = _line_end(text, found.value_end - 1) if found.value_end > found.value_start else _line_end(text, start)
        rest = text[found.value_end : end].strip()
        if rest and not rest.startswith("#"):
            raise FixError(f"`{edit.key}` shares its line with other content: remove it by hand")
        return [Replacement(start, end, "")]

    def _add(self, edit: Edit) -> Replacement:
        text, newline = self.text, _newline(self.text)
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
            position = self._after_last_entry(_line_end(text, section_start), section_end)
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
        return _line_end(self.text, max(k.value_end for k in keys) - 1)

    def _before_comments(self, header: int) -> int:
        position = header
        while position > 0:
            previous = _line_start(self.text, position - 1)
            if not self.text[previous:position].strip().startswith("#"):
                break
            position = previous
        return position


# --------------------------------------------------------------------------------------
# shell env files


class _EnvEditor:
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
            newline = _newline(self.text)
            lead = newline if self.text and not self.text.endswith("\n") else ""
            line = f"{'export ' if self.export else ''}{name}={self.render(edit.value)}{newline}"
            return [Replacement(len(self.text), len(self.text), lead + line)]
        _, start, end, quote = chosen
        if edit.remove:
            return [Replacement(_line_start(self.text, start), _line_end(self.text, start), "")]
        return [Replacement(start, end, self.render(edit.value, quote))]


# --------------------------------------------------------------------------------------
# files: read, plan every finding's fix, write


@dataclass
class SourceFile:
    path: str
    text: str
    bom: bool = False

    @classmethod
    def read(cls, path: str) -> SourceFile:
        try:
            data = read_bytes(path)
        except OSError as exc:
            raise FixError(f"cannot read {path}: {exc.strerror or exc}") from None
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            text = data[3 if bom else 0 :].decode("utf-8")
        except UnicodeDecodeError:
            raise FixError(f"{path} is not UTF-8: fix it by hand") from None
        return cls(path, text, bom)

    def encode(self, text: str) -> bytes:
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode("utf-8")


@dataclass
class FileChange:
    path: str
    source: SourceFile
    after: str
    #: the findings whose fixes this change makes
    findings: list[Finding] = field(default_factory=list)

    @property
    def before(self) -> str:
        return self.source.text

    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}",
            tofile=f"b/{self.path}",
        )
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


@dataclass
class FixPlan:
    changes: list[FileChange] = field(default_factory=list)
    #: fixable findings left alone, and why
    skipped: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def fixed(self) -> int:
        return len({id(f) for change in self.changes for f in change.findings})


def applicable(finding: Finding, unsafe: bool = False) -> bool:
    """Whether ``--fix`` (or ``--fix --unsafe-fixes``) applies this finding's fix."""
    return rules.applicable(finding, unsafe)


def _key(path: str) -> str:
    return str(Path(path).resolve())


def plan_fixes(findings: Iterable[Finding], unsafe: bool = False) -> FixPlan:
    """Every applicable fix of ``findings``, as whole-file changes (nothing written)."""
    result = FixPlan()
    sources: dict[str, SourceFile] = {}
    accepted: dict[str, list[Replacement]] = {}
    owners: dict[str, list[Finding]] = {}
    for finding in findings:
        if not applicable(finding, unsafe):
            continue
        assert finding.fix is not None
        try:
            wanted = _replacements(finding.fix.edits, sources)
        except FixError as error:
            result.skipped.append((finding, str(error)))
            continue
        clash = any(r.overlaps(a) for key, reps in wanted.items() for r in reps for a in accepted.get(key, []))
        if clash:
            result.skipped.append((finding, "another fix changes the same place; run --fix again"))
            continue
        for key, reps in wanted.items():
            have = accepted.setdefault(key, [])
            have.extend(r for r in reps if r not in have)
            owners.setdefault(key, []).append(finding)
    for key, reps in accepted.items():
        source = sources[key]
        after = apply_replacements(source.text, reps)
        try:
            parse(source.path, after, format_of(source.path))
        except InputError as error:
            result.skipped.extend((f, f"the fixed file would not parse ({error.message})") for f in owners[key])
            continue
        if after != source.text:
            result.changes.append(FileChange(source.path, source, after, owners[key]))
    return result


def _replacements(edits: Iterable[Edit], sources: dict[str, SourceFile]) -> dict[str, list[Replacement]]:
    out: dict[str, list[Replacement]] = {}
    for edit in edits:
        if script_kind(edit.path) is not None or is_workflow(edit.path):
            raise FixError("precheck does not rewrite scripts, workflows or notebooks; change the argument by hand")
        key = _key(edit.path)
        if key not in sources:
            sources[key] = SourceFile.read(edit.path)
        source = sources[key]
        out.setdefault(key, []).extend(plan(source.text, format_of(source.path), edit))
    return out


def apply(fixes: FixPlan) -> list[InputError]:
    """Write each changed file (atomically). A file that cannot be written is that file's
    input error, at the first finding its fix was for (a read-only checkout is not a bug);
    the other files are still written."""
    failures = []
    for change in fixes.changes:
        try:
            write_atomic(change.path, change.source.encode(change.after))
        except OSError as exc:
            first = change.findings[0].origin if change.findings else None
            line = first.line if first is not None and first.path == change.path else None
            column = first.column if line is not None and first is not None else None
            reason = str(exc) if isinstance(exc, Refused) else (exc.strerror or str(exc))
            failures.append(InputError(change.path, f"cannot write the fix: {reason}", line, column))
    return failures


def sarif_changes(finding: Finding) -> dict[str, tuple[str, list[Replacement]]] | None:
    """One finding's fix as replacements: path as given → (the file's text, replacements).

    None when the fix names no edit or one that cannot be made in place.
    """
    if finding.fix is None or not finding.fix.edits:
        return None
    sources: dict[str, SourceFile] = {}
    try:
        by_key = _replacements(finding.fix.edits, sources)
    except FixError:
        return None
    return {sources[key].path: (sources[key].text, reps) for key, reps in by_key.items() if reps}


__all__ = [
    "FileChange",
    "FixError",
    "FixPlan",
    "Replacement",
    "SourceFile",
    "applicable",
    "apply",
    "apply_replacements",
    "plan",
    "plan_fixes",
    "repository_root",
    "sarif_changes",
    "write_atomic",
]
