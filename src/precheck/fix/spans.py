"""A tree of spans shared by the YAML and JSON editors: each key with where its key and its
value start and end in the text, found by the line the edit names or by its dotted path."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..rules.base import Edit
from .base import FixError, Replacement, line_end, line_of, line_start


@dataclass
class Entry:
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
    children: dict[str, Entry] = field(default_factory=dict)
    #: first key of a mapping, for its children's indentation
    first_child_column: int | None = None


def locate(root: Entry, text: str, edit: Edit) -> tuple[Entry, Entry] | None:
    """(entry, its parent mapping) for the edit's key: by its line first, then by its path."""
    parts = edit.key.split(".")
    if edit.line is not None:
        hits = [
            (entry, parent)
            for entry, parent, path in walk(root, ())
            if line_of(text, entry.key_start) == edit.line
            and (entry.key == parts[-1] or ".".join(path) == edit.key or entry.key == edit.key)
        ]
        if len(hits) == 1:
            return hits[0]
    return _by_path(root, parts)


def walk(entry: Entry, path: tuple[str, ...]) -> Iterable[tuple[Entry, Entry, tuple[str, ...]]]:
    for key, child in entry.children.items():
        yield child, entry, (*path, key)
        yield from walk(child, (*path, key))


def _by_path(mapping: Entry, parts: list[str]) -> tuple[Entry, Entry] | None:
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


def deepest(root: Entry, parts: list[str]) -> tuple[Entry, list[str]]:
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


def removal(text: str, entry: Entry, parent: Entry, root: Entry, what: str) -> Replacement:
    """Delete the key's whole lines: from its line's start to the end of its value's line."""
    if parent.flow:
        raise FixError(f"`{what}` sits in a one-line mapping: remove it by hand")
    start = line_start(text, entry.key_start)
    if text[start : entry.key_start].strip():
        raise FixError(f"`{what}` shares its line with other content: remove it by hand")
    end = line_end(text, entry.end) if entry.end > 0 and text[entry.end - 1] != "\n" else entry.end
    rest = text[entry.end : end].strip()
    if rest and not rest.startswith("#"):
        raise FixError(f"`{what}` shares its line with other content: remove it by hand")
    if parent is not root and len(parent.children) == 1:
        raise FixError(f"removing `{what}` would leave its mapping empty: remove the mapping by hand")
    return Replacement(start, end, "")
