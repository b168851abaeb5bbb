"""What is worked out once per tree (:mod:`precheck.sources.tree_facts`) is what the readers
worked out on every read: a launched script read with one launch's flags, then another's,
reads as it does on a tree of its own (the model's loading kept for launches whose flags agree
on what it read, :mod:`precheck.sources.flag_memo`); the lists kept are those ``ast.walk``
gives; and the memo goes with the tree (nothing in it keeps a tree alive)."""

from __future__ import annotations

import ast
import gc
import warnings
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from precheck.hardware import from_specs
from precheck.sources import parsed, script_schema, tree_facts
from precheck.sources.flag_memo import ReadFlags, read_once
from precheck.sources.python_options import Given
from precheck.sources.python_source import model_keys, parse_code
from precheck.sources.script_overrides import overrides

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"
A100 = from_specs(["A100"], {})

#: real scripts a launch line starts, each with the flags of a few launches (one given none)
LAUNCHED = [
    (
        "huggingface__diffusers/examples/text_to_image/train_text_to_image.py",
        [{"mixed_precision": "fp16"}, {"mixed_precision": "bf16", "allow_tf32": True}, {}],
    ),
    (
        "huggingface__peft/examples/boft_controlnet/train_controlnet.py",
        [{"mixed_precision": "no"}, {"mixed_precision": "fp16"}],
    ),
    (
        "OpenBMB__MiniCPM/finetune/finetune.py",
        [
            {"bf16": True, "model_name_or_path": "openbmb/MiniCPM-2B-sft-bf16"},
            {"fp16": True},
            {"fp16": True, "learning_rate": 2e-5},  # (a flag the model's loading does not read: kept reading)
            {},
        ],
    ),
]


def _launch(flags: dict[str, Any]) -> dict[str, Given]:
    return {name: Given(value, f"run.sh:{n + 1}") for n, (name, value) in enumerate(flags.items())}


def _read(path: Path, text: str, flags: dict[str, Any]) -> str:
    given = _launch(flags)
    documents = parse_code(str(path), text, "python", A100, given)
    return repr((documents, model_keys(str(path), text, given)))


def _script(name: str) -> Path:
    path = PROJECTS / name
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared/projects)")
    return path


@pytest.mark.parametrize(("name", "launches"), LAUNCHED, ids=[n.split("/")[0] for n, _ in LAUNCHED])
def test_each_launch_reads_the_script_as_on_a_tree_of_its_own(name: str, launches: list[dict[str, Any]]) -> None:
    path = _script(name)
    text = path.read_text(encoding="utf-8")
    script_schema.clear()
    in_turn = [_read(path, text, flags) for flags in launches]  # one tree, read with each launch's flags
    fresh = []
    for flags in launches:
        script_schema.clear()  # (parsed.clear too): the next read parses the text into a new tree
        fresh.append(_read(path, text, flags))
    assert in_turn == fresh
    assert len(set(in_turn)) > 1  # the flags decide something: a memo that kept one launch's reading would show


@pytest.mark.parametrize(("name", "launches"), LAUNCHED, ids=[n.split("/")[0] for n, _ in LAUNCHED])
def test_overrides_with_each_schemas_options_as_on_trees_of_their_own(name: str, launches: list[Any]) -> None:
    path = _script(name)
    script_schema.clear()
    modules = script_schema.read_schema(path).modules
    option_sets = [set(), {"bf16", "fp16", "torch_dtype", "mixed_precision"}, {"bf16"}]
    in_turn = [overrides(modules, options) for options in option_sets]
    fresh = []
    for options in option_sets:
        copies = {p: ast.parse(ast.unparse(t)) for p, t in modules.items()}  # new trees: nothing remembered
        fresh.append([(o.key, o.value, o.source, o.kind) for o in overrides(copies, options)])
    assert [[(o.key, o.value, o.source, o.kind) for o in found] for found in in_turn] == fresh


def _python_files(limit: int) -> list[Path]:
    if not PROJECTS.is_dir():
        pytest.skip("../shared/projects not found")
    return sorted(PROJECTS.rglob("*.py"))[:limit]


def test_calls_and_looked_up_nodes_are_ast_walks() -> None:
    for path in _python_files(120):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        walked = list(ast.walk(tree))
        assert tree_facts.calls(tree) == [n for n in walked if isinstance(n, ast.Call)], path
        kinds = (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign)
        assert tree_facts.looked_up(tree) == [n for n in walked if isinstance(n, kinds)], path


def test_the_memo_goes_with_the_tree() -> None:
    path = _script(LAUNCHED[0][0])
    text = path.read_text(encoding="utf-8")
    script_schema.clear()
    _read(path, text, LAUNCHED[0][1][0])  # the collector's facts, the overrides, the options' lookups
    tree = parsed.parse(text, str(path))
    assert tree in tree_facts._MEMOS
    alive = weakref.ref(tree)
    del tree
    gc.disable()  # freed by reference counting alone: no memo value refers back to its tree
    try:
        script_schema.clear()
        assert alive() is None
    finally:
        gc.enable()


def test_remembered_computes_once_per_tree_and_key() -> None:
    tree, other = ast.parse("f(x)"), ast.parse("f(x)")
    computed: list[str] = []

    def compute(label: str) -> str:
        computed.append(label)
        return label

    assert tree_facts.remembered(tree, "k", lambda: compute("a")) == "a"
    assert tree_facts.remembered(tree, "k", lambda: compute("b")) == "a"
    assert tree_facts.remembered(tree, ("k", 2), lambda: compute("c")) == "c"
    assert tree_facts.remembered(other, "k", lambda: compute("d")) == "d"
    assert computed == ["a", "c", "d"]


def test_read_once_gives_a_kept_reading_only_to_flags_that_agree_on_what_it_read() -> None:
    tree = ast.parse("x")
    reads: list[dict[str, Any]] = []

    def read(flags: Mapping[str, Any]) -> dict[str, Any]:
        reads.append(dict(flags._flags) if isinstance(flags, ReadFlags) else dict(flags))
        return {"bf16": flags.get("bf16"), "seen": ["a"]}

    first = read_once(tree, "k", {"bf16": 1, "lr": 1}, read)
    first["seen"].append("marked")  # the caller's copy: what is kept is not changed
    assert read_once(tree, "k", {"bf16": 1, "lr": 2}, read) == {"bf16": 1, "seen": ["a"]}  # lr not read: kept
    assert read_once(tree, "k", {"bf16": 2, "lr": 1}, read) == {"bf16": 2, "seen": ["a"]}  # bf16 differs: read
    assert read_once(tree, "k", {"lr": 1}, read) == {"bf16": None, "seen": ["a"]}  # bf16 not given: read
    assert read_once(tree, "other", {"bf16": 1, "lr": 1}, read)["bf16"] == 1  # another key: read
    assert len(reads) == 4


def test_read_once_keeps_no_reading_that_went_over_all_the_flags() -> None:
    tree = ast.parse("x")
    count: list[int] = []

    def read(flags: Mapping[str, Any]) -> int:
        count.append(1)
        return len(dict(flags))

    assert read_once(tree, "k", {"a": 1}, read) == 1
    assert read_once(tree, "k", {"a": 1, "b": 2}, read) == 2
    assert len(count) == 2
