"""YAML with positions, read safely (no tag ever constructs a Python object)."""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import InputError
from .nodes import Document, Node, SourceNote

try:  # the C loader is several times faster; PyYAML without libyaml lacks it
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

_SAFE_TAGS = {
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:timestamp",
}
_BOOL_SPELLINGS = {"true", "false"}
_constructor = yaml.constructor.SafeConstructor()


def parse_yaml(path: str, text: str) -> Document:
    notes: list[SourceNote] = []
    try:
        documents = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        if mark is None:
            raise InputError(path, message) from None
        raise InputError(path, message, mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as exc:
        raise InputError(path, f"invalid YAML: {exc}") from None
    documents = [d for d in documents if d is not None]
    if not documents:
        return Document(path, "yaml", Node(None, 1, 1), text, notes)
    if len(documents) > 1:
        second = documents[1].start_mark
        notes.append(
            SourceNote(
                "multiple-documents",
                f"{len(documents)} YAML documents in one file; only the first is checked",
                second.line + 1,
                second.column + 1,
            )
        )
    try:
        root = _Converter(notes).convert(documents[0])
    except _TooDeep as deep:
        raise InputError(path, f"nesting deeper than {MAX_DEPTH} levels", deep.line, deep.column) from None
    return Document(path, "yaml", root, text, notes)


MAX_DEPTH = 200


class _TooDeep(Exception):
    def __init__(self, line: int, column: int):
        self.line, self.column = line, column


class _Converter:
    def __init__(self, notes: list[SourceNote]):
        self.notes = notes
        # aliases share composed nodes; converting each once keeps alias bombs linear
        self.memo: dict[int, Node] = {}
        self.depth = 0

    def convert(self, node: yaml.Node) -> Node:
        done = self.memo.get(id(node))
        if done is not None:
            return done
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        if self.depth >= MAX_DEPTH:
            raise _TooDeep(line, column)
        self.depth += 1
        try:
            return self._convert(node, line, column)
        finally:
            self.depth -= 1

    def _convert(self, node: yaml.Node, line: int, column: int) -> Node:
        if isinstance(node, yaml.MappingNode):
            out = Node({}, line, column)
            self.memo[id(node)] = out
            out.value = self._mapping(node)
            return out
        if isinstance(node, yaml.SequenceNode):
            out = Node([], line, column)
            self.memo[id(node)] = out
            out.value = [self.convert(item) for item in node.value]
            return out
        out = Node(self._scalar(node), line, column, raw=str(node.value))
        out.quoted = bool(getattr(node, "style", None) in ("'", '"'))
        self.memo[id(node)] = out
        return out

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag not in _SAFE_TAGS:
            return str(node.value)  # custom tags are kept as text, never constructed
        value = _constructor.construct_object(node, deep=True)
        if node.tag == "tag:yaml.org,2002:bool" and str(node.value).lower() not in _BOOL_SPELLINGS:
            self.notes.append(
                SourceNote(
                    "yaml11-boolean",
                    f"`{node.value}` is read as the boolean {value} (YAML 1.1); write {str(value).lower()}",
                    node.start_mark.line + 1,
                    node.start_mark.column + 1,
                )
            )
        return value

    def _mapping(self, node: yaml.MappingNode) -> dict[str, Node]:
        result: dict[str, Node] = {}
        merged: list[dict[str, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged.extend(self._merge_sources(value_node))
                continue
            key = str(self._scalar(key_node)) if isinstance(key_node, yaml.ScalarNode) else "?"
            child = self.convert(value_node)
            if child.key is not None and child.key != key:  # shared through an alias
                child = Node(child.value, child.line, child.column, raw=child.raw, quoted=child.quoted)
            child.key = key
            child.key_line = key_node.start_mark.line + 1
            child.key_column = key_node.start_mark.column + 1
            if key in result:
                first = result[key]
                self.notes.append(
                    SourceNote(
                        "duplicate-key",
                        f"duplicate key `{key}` (first at line {first.key_line}); the later value wins",
                        child.key_line,
                        child.key_column,
                        key,
                    )
                )
            result[key] = child
        for source in merged:
            for key, child in source.items():
                result.setdefault(key, child)
        return result

    def _merge_sources(self, value_node: yaml.Node) -> list[dict[str, Node]]:
        nodes = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        out = []
        for item in nodes:
            converted = self.convert(item)
            if isinstance(converted.value, dict):
                out.append(converted.value)
        return out
