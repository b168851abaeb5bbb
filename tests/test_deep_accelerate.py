"""``--deep`` accelerate checks: accelerate's own loader and launch code on config files."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("accelerate")

from helpers import write
from precheck import dialects, sources
from precheck.config import TrainingConfig
from precheck.deep.accelerate_check import check_accelerate
from precheck.deep.notes import ACCELERATE_REFUSES, LAUNCH_REFUSES, DeepNote

pytestmark = pytest.mark.hf

CORPUS = Path("/work/shared/corpus/accelerate")


def read(path: Path) -> TrainingConfig:
    doc = sources.load(path, str(path))
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "accelerate", path
    return dialect.read(doc, {})


def deep_notes(config: TrainingConfig) -> list[DeepNote]:
    return [n for n in config.notes if isinstance(n, DeepNote)]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_precheck_reads_the_corpus_as_accelerate_launches_it() -> None:
    """For every corpus accelerate config that accelerate launches, the precision and sharding
    precheck reads statically are the ones accelerate's launcher exports."""
    compared = 0
    for path in sorted(CORPUS.iterdir()):
        config = read(path)
        env = check_accelerate(config, path)
        if env is None:
            continue
        compared += 1
        static = config.mixed_precision.value if config.mixed_precision is not None else "no"
        assert env["ACCELERATE_MIXED_PRECISION"] == static, path.name
        kind = str(config.distributed_type.value) if config.distributed_type is not None else "NO"
        assert (env.get("ACCELERATE_USE_FSDP") == "true") == (kind == "FSDP"), path.name
        assert (env.get("ACCELERATE_USE_DEEPSPEED") == "true") == (kind == "DEEPSPEED"), path.name
    assert compared >= 25


def test_unknown_keys_one_finding_each_in_accelerate_s_words(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "acc.yaml",
        """
        distributed_type: "NO"
        mixed_precision: bf16
        mixed_precison: fp16
        fsdp_sharding_stratgy: FULL_SHARD
        """,
    )
    config = read(path)
    assert {n.key for n in config.notes if n.kind == "unknown-key"} == {"mixed_precison", "fsdp_sharding_stratgy"}
    assert check_accelerate(config, path) is None
    notes = deep_notes(config)
    assert [(n.kind, n.key, n.line) for n in notes] == [
        (ACCELERATE_REFUSES, "fsdp_sharding_stratgy", 4),
        (ACCELERATE_REFUSES, "mixed_precison", 3),
    ]
    assert "had unknown keys (['fsdp_sharding_stratgy', 'mixed_precison']), please try upgrading" in notes[0].message
    assert not [n for n in config.notes if n.kind == "unknown-key"]  # accelerate's verdict replaces PC905's


def test_a_missing_distributed_type(tmp_path: Path) -> None:
    path = write(tmp_path, "acc.yaml", "compute_environment: LOCAL_MACHINE\nmixed_precision: bf16\nnum_processes: 2\n")
    config = dialects.BY_NAME["accelerate"].read(sources.load(path, str(path)), {})
    assert check_accelerate(config, path) is None
    (note,) = deep_notes(config)
    assert note.kind == ACCELERATE_REFUSES and (note.line, note.column) == (1, 1)
    assert note.message.endswith("ValueError: A `distributed_type` must be specified in the config file.")


def test_an_unquoted_no_is_a_boolean_accelerate_cannot_lower(tmp_path: Path) -> None:
    path = write(tmp_path, "acc.yaml", "distributed_type: MULTI_GPU\nmixed_precision: no\nnum_processes: 2\n")
    config = read(path)
    assert check_accelerate(config, path) is None
    (note,) = deep_notes(config)
    assert note.kind == LAUNCH_REFUSES
    assert note.message.endswith("AttributeError: 'bool' object has no attribute 'lower'")


def test_what_depends_on_this_machine_is_not_a_finding(tmp_path: Path) -> None:
    """fp8 needs Transformer Engine, MS-AMP or torchao installed where the run starts, not here."""
    from accelerate.utils import is_fp8_available

    if is_fp8_available():
        pytest.skip("an fp8 backend is installed here")
    path = write(tmp_path, "acc.yaml", "distributed_type: MULTI_GPU\nmixed_precision: fp8\nnum_processes: 2\n")
    config = read(path)
    assert check_accelerate(config, path) is None
    assert deep_notes(config) == []
