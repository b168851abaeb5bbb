"""Plain data with positions: what every source format is read into.

A :class:`Node` is a value (a scalar, a ``dict[str, Node]`` or a ``list[Node]``) with
the 1-based line and column where it starts. A value inside a mapping also knows the key
it sits under, spelled as in the file, and where that key starts: findings point at keys.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

#: the note kind of flags bash runs as a command of their own after a launch (a comment or a
#: blank line after a backslash ended the launch): read, never passed to it (PC908)
CUT_OFF = "cut-off"
#: the note kind of a flag the launched script's code overrides (``training_args.bf16 = True``
#: after parsing, ``TrainingArguments(bf16=True)``): read, and not what the run uses
OVERRIDDEN = "overridden"
#: the note kind of a FlashAttention monkey patch taken as the model's attention: which
#: attention the model uses is its own code, so the flash attention is assumed (premises.py)
ATTENTION_PATCH = "attention-patch"


@dataclass(slots=True)
class Node:
    """A value read from a document, with where it (and its key) stands."""

    value: Any
    line: int
    column: int
    key: str | None = None
    key_line: int | None = None
    key_column: int | None = None
    #: the scalar as written (for YAML: ``yes``, ``"false"``...), None for collections
    raw: str | None = None
    #: True when the scalar was quoted in the source
    quoted: bool = False
    #: the file this node was read from, when it is not the document's own file (a shell
    #: script's launch command merges the YAML file it names with its command-line overrides)
    path: str | None = None
    #: other places the value flows through: (file, or None for the node's own file; line)
    #: (:attr:`precheck.provenance.Origin.through`)
    through: tuple[tuple[str | None, int], ...] = ()
    #: where the value came from when not from where it stands: a script's option it is read
    #: from (``mixed_precision=args.mixed_precision``: the option's default and its lines)
    via: str | None = None
    #: the setting the user spells to change this value when the node's own key is not one an
    #: edit may set (:attr:`precheck.provenance.Origin.option`): a launch's flag a Python line
    #: receives (``--precision``), the keyword of a call read as other keys
    option: str | None = None

    @property
    def anchor(self) -> tuple[int, int]:
        """Where a finding about this value points: its key if it has one."""
        if self.key_line is not None and self.key_column is not None:
            return self.key_line, self.key_column
        return self.line, self.column

    def get(self, name: str) -> Node | None:
        """The child under ``name`` when this node is a mapping."""
        if isinstance(self.value, dict):
            child = self.value.get(name)
            return child if isinstance(child, Node) else None
        return None

    def plain(self) -> Any:
        """The value without positions (for tests and debugging)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


@dataclass(slots=True)
class SourceNote:
    """Something odd but readable in the input: a duplicate key, a YAML 1.1 boolean."""

    kind: str
    message: str
    line: int
    column: int
    key: str | None = None
    #: the file the note is about when it is not the document's own (see ``Node.path``)
    path: str | None = None


@dataclass(slots=True)
class Document:
    """One parsed file."""

    path: str
    format: str  # "yaml" | "json" | "toml" | "env" | "shell" | "python"
    root: Node
    text: str
    notes: list[SourceNote] = field(default_factory=list)
    #: the dialect that reads this document when its source already knows it (a launch
    #: command names its framework's entry point), instead of detection by keys
    dialect: str | None = None
    #: environment variables the file sets for the run (``export CUDA_VISIBLE_DEVICES=1``,
    #: ``accelerate launch --mixed_precision fp16`` → ``ACCELERATE_MIXED_PRECISION``), each
    #: a scalar node where it is set; they beat the shell's environment
    env: dict[str, Node] = field(default_factory=dict)
    #: which run inside a file that holds several (the launch command at line 12 of a script)
    label: str | None = None
    #: the keys the program that reads this run defines (a launched script's own argument
    #: schema, its frameworks' keys included), and whether its parser refuses the others;
    #: None: the dialect's own key list decides (see ``sources.script_launch``)
    script_keys: frozenset[str] | None = None
    script_closed: bool = False
    #: the repository's own training script a launch command starts (``train.py``, as
    #: written), and the file it resolves to as the launcher would (None: not found)
    script: str | None = None
    script_path: str | None = None
    #: the launched script was read and builds its run itself, with no transformers/TRL
    #: trainer or config (a ``deepspeed.initialize`` loop): no framework's defaults are its
    script_own_loop: bool = False
    #: the folder a launch script ``cd``-s to before the launch (None: it does not): the
    #: files the run names are looked for there first (``sources.script_path``)
    cd: str | None = None

    def mapping(self) -> dict[str, Node]:
        """The top-level mapping, or an empty one when the document is not a mapping."""
        return self.root.value if isinstance(self.root.value, dict) else {}


#: the most values one file may hold: keys, values and collections, each counted once (an
#: alias once). Reading costs time and memory per value, not per byte: a 16 MiB
#: ``[1,1,1,...]`` holds 8 million values, whose nodes need some 5 GB and a minute. Real
#: configs hold thousands; 11 MB of 600,000 plain keys (1.2 million values) is still read,
#: and 1.5 million values take about 1 GB and 10 s. Past it the file is refused at the
#: value where the budget ran out.
MAX_VALUES = 1_500_000


def too_many_values() -> str:
    """The message for a file over :data:`MAX_VALUES`."""
    return f"more than {MAX_VALUES:,} values (keys, values and collections) in one file; not read"


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of the character at ``offset`` in ``text``.

    The line starts of the last text asked about are kept (a table and a binary search):
    a reader asking for every node's position costs O(log n) a node, not O(n)."""
    global _LAST
    if _LAST[0] is not text:
        _LAST = (text, line_starts(text))
    starts = _LAST[1]
    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


_LAST: tuple[str | None, list[int]] = (None, [0])


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (for ``bisect``: the line of an offset
    is ``bisect_right(starts, offset)``)."""
    starts = [0]
    find, at = text.find, text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = find("\n", at + 1)
    return starts
