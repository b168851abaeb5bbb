"""YAML documents: a value replaced in its own characters (in the quoting it had), a key's
lines removed, new keys added after their mapping's last entry. The spans are PyYAML's
composer marks; the document is never re-serialised."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from ..rules.base import Edit
from .base import FixError, Replacement, line_end, line_start, newline_of
from .spans import Entry, deepest, locate, removal, walk


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


#: why a node is not edited: other keys share it
SHARED = "other keys share it (an anchor merged or aliased elsewhere): editing it would change them too"


def _shared(root: yaml.Node) -> set[int]:
    """The nodes (by id) reached more than once: an anchored node that a ``*alias`` or a
    ``<<: *merge`` uses again (PyYAML's composer gives every use the same node)."""
    seen: set[int] = set()
    shared: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            pending.extend(item for pair in node.value for item in pair)
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
    return shared


class _YamlDocument:
    def __init__(self, text: str):
        self.text = text
        try:
            documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as exc:
            raise FixError(f"the file does not parse as YAML ({exc})") from None
        self.documents = len(documents)
        first = next((d for d in documents if d is not None), None)
        self.root = Entry("", 0, 0, 0, len(text), "mapping")
        if first is None:
            return
        if not isinstance(first, yaml.MappingNode):
            raise FixError("the document is not a mapping")
        self.shared = _shared(first)
        self.root = self._entry(first, "", first.start_mark.index, first.start_mark.index)

    def _entry(self, node: yaml.Node, key: str, key_start: int, key_end: int, shared: bool = False) -> Entry:
        start, end = node.start_mark.index, node.end_mark.index
        shared = shared or id(node) in self.shared
        if isinstance(node, yaml.ScalarNode):
            style = node.style or ""
            entry = Entry(key, key_start, key_end, start, end, "scalar", style=style)
            if start < key_end:
                entry.problem = "its value is an alias (`*name`)"
            elif self.text[start : start + 1] in ("&", "!", "*"):
                entry.problem = "its value carries an anchor or a tag"
            elif style in ("|", ">"):
                entry.problem = "its value is a block scalar"
                end = start + len(self.text[start:end].rstrip())
                entry.end = end
            if shared:
                entry.problem = SHARED
            return entry
        kind = "mapping" if isinstance(node, yaml.MappingNode) else "sequence"
        flow = bool(getattr(node, "flow_style", False))
        entry = Entry(key, key_start, key_end, start, end, kind, flow=flow)
        if start < key_end:
            entry.problem = "its value is an alias (`*name`)"
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                if entry.first_child_column is None:
                    entry.first_child_column = key_node.start_mark.column
                child = self._entry(
                    value_node, str(key_node.value), key_node.start_mark.index, key_node.end_mark.index, shared
                )
                entry.children[str(key_node.value)] = child
        if not flow:
            entry.end = self._last(node)
        if shared:
            entry.problem = SHARED
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
        found = locate(self.root, self.text, edit)
        if found is None:
            if edit.remove:
                return []  # already gone
            return [self._add(edit)]
        entry, parent = found
        if entry.problem == SHARED or parent.problem == SHARED:
            raise FixError(f"`{edit.key}`: {SHARED}; change it by hand")
        if edit.remove:
            return [removal(self.text, entry, parent, self.root, edit.key)]
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
        mapping, rest = deepest(self.root, parts)
        if mapping.flow:
            raise FixError(f"`{edit.key}` would go into a one-line mapping: add it by hand")
        newline = newline_of(self.text)
        if mapping is self.root:
            if self.documents > 1 or re.search(r"^\.\.\.\s*$", self.text, re.MULTILINE):
                raise FixError(f"the file holds more than one YAML document: add `{edit.key}` by hand")
            column = mapping.first_child_column or 0
            position = len(self.text)
        else:
            column = mapping.first_child_column if mapping.first_child_column is not None else 0
            position = line_end(self.text, mapping.end)
        unit = self._indent_unit()
        lines = []
        for depth, part in enumerate(rest):
            pad = " " * (column + depth * unit)
            key = _yaml_scalar(part)
            lines.append(f"{pad}{key}: {yaml_value(edit.value)}" if depth == len(rest) - 1 else f"{pad}{key}:")
        prefix = newline if position > 0 and not self.text[:position].endswith("\n") else ""
        return Replacement(position, position, prefix + newline.join(lines) + newline)

    def _indent_unit(self) -> int:
        for entry, _parent, _path in walk(self.root, ()):
            if entry.kind == "mapping" and not entry.flow and entry.first_child_column is not None:
                key_column = entry.key_start - line_start(self.text, entry.key_start)
                if entry.first_child_column > key_column:
                    return entry.first_child_column - key_column
        return 2


class YamlEditor:
    """The :class:`~precheck.fix.base.Editor` of YAML documents."""

    format = "yaml"
    rewrites = True

    def plan(self, text: str, edit: Edit) -> list[Replacement]:
        return _YamlDocument(text).plan(edit)
