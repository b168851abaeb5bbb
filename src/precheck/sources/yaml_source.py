"""YAML with positions, read safely (no tag ever constructs a Python object).

Hostile input is refused with a position rather than allowed to exhaust the process:

* nesting deeper than :data:`MAX_DEPTH` levels. libyaml's composer (``CSafeLoader``)
  recurses once per level with no limit and overflows the C stack, a segmentation fault,
  near 100,000 levels (``[[[[...``); PyYAML's pure-Python composer raises RecursionError.
  A cheap upper bound on the depth is computed first and, only when it is high, the
  (iterative) event stream is scanned before anything is composed.
* aliases that expand to more than :data:`MAX_ALIAS_EXPANSION` values beyond those
  written (the "billion laughs": nine aliases of nine aliases...). The composer shares
  aliased nodes, so composing is linear, but every later walk over the values would
  pay for the expansion. go-yaml refuses the same documents ("document contains
  excessive aliasing", yaml.v2 decode.go ``allowedAliasRatio``).
* recursive aliases (``a: &a {b: *a}``), which no walk over the values would finish.
* more than :data:`~.nodes.MAX_VALUES` nodes in the file (a 16 MiB ``[1,1,1,...]`` holds
  8 million): composing costs about 500 bytes and several microseconds a node, so such a
  file would take gigabytes and a minute. The event stream is counted before anything is
  composed, in constant memory, whenever the text is long enough to hold that many.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml

from ..errors import FileTooLarge, InputError
from ..escape import shorten
from .nodes import MAX_VALUES, Document, Node, SourceNote, too_many_values

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
_STR = "tag:yaml.org,2002:str"

MAX_DEPTH = 200
#: values a document may gain through aliases beyond those written in it
MAX_ALIAS_EXPANSION = 100_000
#: above this bound on the depth, the event stream is scanned before composing (libyaml's
#: composer handles 20,000 levels in the main thread's stack; 1,000 leaves room for threads)
_SCAN_ABOVE = 1000
#: the characters that may come before a block collection on its line (indentation and
#: the compact ``- ``, ``? ``, ``: `` indicators)
_LINE_PREFIX = re.compile(r"^[ \t?:-]+", re.MULTILINE)
_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
#: the events that each make one node
_NODES = {yaml.ScalarEvent, yaml.AliasEvent, *_OPENS}
#: a bound on the nodes per character: every node but an empty scalar starts with a
#: character of its own, and an empty one needs an indicator (``?``, ``:``, ``-``) and a
#: separator; the densest texts found (``{?,?,?}``, ``?\n?\n``, ``[?:,?:]``) give one a
#: character. A text shorter than MAX_VALUES / this needs no count.
_NODES_PER_CHAR = 2


def parse_yaml(path: str, text: str) -> Document:
    notes: list[SourceNote] = []
    try:
        if len(text) * _NODES_PER_CHAR > MAX_VALUES or _depth_bound(text) > _SCAN_ABOVE:
            _check_events(path, text)
        try:
            documents = list(yaml.compose_all(text, Loader=_Loader))
        except RecursionError:  # PyYAML's pure-Python composer (no libyaml)
            _check_events(path, text)
            raise InputError(path, f"nesting deeper than {MAX_DEPTH} levels") from None
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
    except _Refused as refused:
        raise InputError(path, refused.message, refused.line, refused.column) from None
    return Document(path, "yaml", root, text, notes)


def _depth_bound(text: str) -> int:
    """An upper bound on how deep ``text`` nests, in a few passes of C code.

    Each flow collection opens with ``[`` or ``{``. A block collection starts either at the
    start of a line or after the compact indicators ``- ``, ``? ``, ``: ``; the column it
    starts at grows with its depth, and at most two nested levels (a mapping and the
    sequence that is its value) share a column. So the depth is at most the number of
    brackets plus twice the longest run of spaces and indicators that starts a line.
    """
    prefix = max(map(len, _LINE_PREFIX.findall(text)), default=0)
    return text.count("[") + text.count("{") + 2 * (prefix + 1)


def _check_events(path: str, text: str) -> None:
    """Refuse ``text`` when its collections nest deeper than MAX_DEPTH or it holds more than
    MAX_VALUES nodes, at the node where the bound is passed (libyaml's parser produces
    events without recursion and keeps none of them; only its composer recurses)."""
    depth = nodes = 0
    loader = _Loader(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            kind = type(event)
            if kind in _NODES:
                nodes += 1
                if nodes > MAX_VALUES:  # a resource bound, as the size limit is
                    _fail_at(path, too_many_values(), event, FileTooLarge)
                if kind in _OPENS:
                    depth += 1
                    if depth > MAX_DEPTH:
                        _fail_at(path, f"nesting deeper than {MAX_DEPTH} levels", event)
            elif kind in _CLOSES:
                depth -= 1
    finally:
        loader.dispose()


def _fail_at(path: str, message: str, event: yaml.Event, error: type[InputError] = InputError) -> None:
    mark = event.start_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    raise error(path, message, line, column)


class _Refused(Exception):
    def __init__(self, message: str, line: int, column: int):
        self.message, self.line, self.column = message, line, column


class _Converter:
    def __init__(self, notes: list[SourceNote]):
        self.notes = notes
        # aliases share composed nodes; converting each once keeps alias bombs linear
        self.memo: dict[int, Node] = {}
        #: composed nodes being converted: an alias to one of them is a recursive structure
        self.open: set[int] = set()
        #: per collection value: (values it holds with aliases expanded, levels below it)
        self.sizes: dict[int, tuple[int, int]] = {}
        self.depth = 0
        # one per document: SafeConstructor caches every node it constructs
        self.constructor = yaml.constructor.SafeConstructor()

    def convert(self, node: yaml.Node) -> Node:
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        done = self.memo.get(id(node))
        if done is not None:
            if id(node) in self.open:
                raise _Refused(
                    "an alias refers to a value that contains it (a recursive structure anchored here)", line, column
                )
            if self.depth + self.size(done)[1] >= MAX_DEPTH:  # an alias reaching deep
                raise _Refused(f"nesting deeper than {MAX_DEPTH} levels", line, column)
            return done
        if self.depth >= MAX_DEPTH:
            raise _Refused(f"nesting deeper than {MAX_DEPTH} levels", line, column)
        if type(node) is yaml.ScalarNode:  # holds nothing: no level below, no alias inside
            return self._leaf(node, line, column)
        self.depth += 1
        self.open.add(id(node))
        try:
            return self._convert(node, line, column)
        finally:
            self.depth -= 1
            self.open.discard(id(node))

    def size(self, node: Node) -> tuple[int, int]:
        """(values with aliases expanded, levels below) of a converted node."""
        if isinstance(node.value, (dict, list)):
            return self.sizes[id(node.value)]
        return 1, 0

    def _measure(self, out: Node, children: Any) -> None:
        values, levels = 1, 0
        for child in children:
            count, below = self.size(child)
            values += count
            levels = max(levels, below + 1)
        self.sizes[id(out.value)] = values, levels
        if values - len(self.memo) > MAX_ALIAS_EXPANSION:
            raise _Refused(
                f"aliases expand this document by more than {MAX_ALIAS_EXPANSION:,} values (an alias bomb?); not read",
                out.line,
                out.column,
            )

    def _convert(self, node: yaml.Node, line: int, column: int) -> Node:
        if isinstance(node, yaml.MappingNode):
            out = Node({}, line, column)
            self.memo[id(node)] = out
            out.value = self._mapping(node)
            self._measure(out, out.value.values())
            return out
        if isinstance(node, yaml.SequenceNode):
            out = Node([], line, column)
            self.memo[id(node)] = out
            out.value = [self.convert(item) for item in node.value]
            self._measure(out, out.value)
            return out
        return self._leaf(node, line, column)

    def _leaf(self, node: yaml.Node, line: int, column: int) -> Node:
        out = Node(self._scalar(node), line, column, raw=str(node.value))
        out.quoted = bool(getattr(node, "style", None) in ("'", '"'))
        self.memo[id(node)] = out
        return out

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR:  # what SafeConstructor.construct_yaml_str returns, without its cache
            return node.value
        if node.tag not in _SAFE_TAGS:
            return str(node.value)  # custom tags are kept as text, never constructed
        constructor = self.constructor
        # a safe scalar tag's constructor returns its value (no generator, nothing to recurse
        # into): called directly, without construct_object's cache and recursion bookkeeping
        build = constructor.yaml_constructors.get(node.tag)
        try:
            value = build(constructor, node) if build is not None else constructor.construct_object(node, deep=True)
        except Exception:  # PyYAML's scalar constructors raise several types
            return self._unconstructed(node)
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

    def _unconstructed(self, node: yaml.Node) -> str:
        """A scalar PyYAML's safe constructor refuses: a date that does not exist
        (``2023-02-30``) stays text, as loaders without the timestamp type read it; a
        number is an error, as it is for ``yaml.safe_load`` in the training script."""
        text = str(node.value)
        if node.tag == "tag:yaml.org,2002:timestamp":
            return text
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        digits = sum(c.isdigit() for c in text)
        limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
        if node.tag == "tag:yaml.org,2002:int" and limit and digits > limit:
            message = (
                f"an integer of {digits} digits: Python refuses to convert more than {limit} "
                "(the training script's YAML loader fails on it too)"
            )
        else:
            kind = node.tag.rsplit(":", 1)[-1]
            shown = text if len(text) <= 40 else text[:40] + "..."
            message = f"`{shown}` is not a valid {kind}"
        raise _Refused(message, line, column)

    def _mapping(self, node: yaml.MappingNode) -> dict[str, Node]:
        result: dict[str, Node] = {}
        merged: list[dict[str, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged.extend(self._merge_sources(value_node))
                continue
            if not isinstance(key_node, yaml.ScalarNode):  # ``? [a, b]``: no setting has such a key
                continue
            key = str(self._scalar(key_node))
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
                        f"duplicate key `{shorten(key)}` (first at line {first.key_line}); the later value wins",
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
