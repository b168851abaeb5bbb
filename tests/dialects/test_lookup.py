"""The dialects' key look-up: a dict look-up for keys as written, the same as the scan."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from precheck import frameworks
from precheck.dialects.base import CLOSE, Dialect, _sourced_keys, close_key, lookup, origin_of
from precheck.errors import InputError
from precheck.hardware import from_specs
from precheck.provenance import Sourced
from precheck.sources import Document, Node, load_runs

from .samples import CORPUS, EXAMPLES

SUFFIXES = {".yaml", ".yml", ".json", ".toml", ".py", ".sh", ".ipynb", ".env", ".cfg"}


def _documents() -> Iterator[Document]:
    hardware = from_specs(["A100"], {})
    for folder in (EXAMPLES, CORPUS):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            try:
                yield from load_runs(path, str(path), hardware)
            except InputError:
                continue


def _paths(mapping: dict[str, Node], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, node in mapping.items():
        yield (*prefix, str(key))
        if isinstance(node.value, dict) and len(prefix) < 3:
            yield from _paths(node.value, (*prefix, str(key)))


def test_keys_as_written_are_looked_up_as_the_scan_finds_them() -> None:
    """For every document of the examples and the corpus, every key path in it, every
    field path of every dialect and a few that are not there: the dict look-up the base
    dialect uses finds the node the scan over the keys finds, and ``keys`` is the scan's set."""
    plain = Dialect()
    scan = lambda key: key  # noqa: E731 - not the base method: lookup scans
    documents = list(_documents())
    assert len(documents) > 20
    compared = 0
    for document in documents:
        for dialect in frameworks.DIALECTS:
            root = dialect.root(document)
            wanted = [*_paths(root), *(p for f in dialect.fields for p in f.paths), ("nope",), ("fp16", "nope")]
            for path in wanted:
                if type(dialect).normalise_key is Dialect.normalise_key:
                    assert lookup(root, path, dialect.normalise_key) is lookup(root, path, scan)
                assert lookup(root, path, plain.normalise_key) is lookup(root, path, scan)
                compared += 1
            assert dialect.keys(document) == {dialect.normalise_key(k) for k in root}
    assert compared > 1000


def test_a_normalising_dialect_takes_the_first_key_that_normalises_onto_the_part() -> None:
    first, second = Node("a", 1, 1, key="--fp16"), Node("b", 2, 1, key="fp16")
    root = {"--fp16": first, "fp16": second}
    assert lookup(root, ("fp16",), lambda key: key.removeprefix("--")) is first
    assert lookup(root, ("fp16",), Dialect().normalise_key) is second


def test_close_key_is_difflibs_answer() -> None:
    """``close_key`` asks difflib only about candidates of lengths that can reach the cutoff:
    the same answer as asking about all of them, for every key set a dialect compares with,
    on typos, truncations, extensions, unrelated and empty words."""
    sets = {tuple(sorted(d.known_keys)) for d in frameworks.DIALECTS if d.known_keys}
    sets |= {tuple(sorted({p[0] for f in d.fields for p in f.paths})) for d in frameworks.DIALECTS}
    sets.add(("", "a", "ab", "fp16", "bf16", "fp16", "fp61"))  # an empty candidate, a duplicate
    asked = 0
    for candidates in sets:
        words = {"", "x", "fp16", "bf_16", "learning_rat", "gradient_accumulation", "zzzzzzzzzzzzzzzzzzzz"}
        for key in candidates[:: max(1, len(candidates) // 40)]:
            words |= {key, key[:-1], key + "s", key[1:], key.replace("_", ""), key[::-1], key[: len(key) // 2]}
        for word in sorted(words):
            expected = difflib.get_close_matches(word, list(candidates), n=1, cutoff=CLOSE)
            assert close_key(word, candidates) == (expected[0] if expected else None), (word, candidates[:5])
            asked += 1
    assert asked > 1000


def test_sourced_keys_are_origin_of_each_key() -> None:
    """``read``'s keys, built in one loop, are ``Sourced(value, origin_of(doc, node))`` for
    every top-level key of every dialect's root in the examples and the corpus, and for a
    node merged from another file (its path, no format)."""
    compared = 0
    for document in _documents():
        for dialect in frameworks.DIALECTS:
            root = dialect.root(document)
            want = {k: Sourced(n.value, origin_of(document, n)) for k, n in root.items()}
            got = _sourced_keys(document, root)
            assert got == want and list(got) == list(want)
            compared += len(root)
    merged = Node(2, 3, 4, key="fp16", key_line=3, key_column=1, raw="2", path="other.yaml")
    own = Node(1, 1, 7, key="bf16", raw="1")
    document = Document("run.sh", "shell", Node({"fp16": merged, "bf16": own}, 1, 1), "", [])
    root = document.mapping()
    assert _sourced_keys(document, root) == {k: Sourced(n.value, origin_of(document, n)) for k, n in root.items()}
    assert _sourced_keys(document, root)["fp16"].origin.format is None
    assert compared > 1000
