"""``--deep`` key checks: the history table, the installed dataclasses, older releases."""

from __future__ import annotations

import dataclasses

import pytest

from helpers import read_as
from precheck.deep.history import READ_FROM, TRAINING_ARGUMENTS, describe
from precheck.deep.keys import Schema, check_keys, deprecation, typo_of
from precheck.deep.notes import DEPRECATED_KEY, REMOVED_KEY, UNKNOWN_KEY, DeepNote
from precheck.frameworks.hf_trainer.keys import REMOVED
from precheck.versions import VersionInfo, Versions, version_key

HF = "output_dir: out\nlearning_rate: 2.0e-5\nper_device_train_batch_size: 4\n"


def test_the_table_covers_every_key_the_static_list_calls_removed() -> None:
    for key in REMOVED:
        item = TRAINING_ARGUMENTS.get(key)
        assert item is not None and item.removed is not None, key
        assert version_key(item.removed) <= version_key(READ_FROM[1]), key


@pytest.mark.hf
def test_the_table_agrees_with_the_installed_transformers() -> None:
    """Every key the table places is present in, or absent from, the installed release as it says."""
    pytest.importorskip("transformers")
    from precheck.deep.keys import installed_schema

    schema = installed_schema()
    installed = version_key(schema.transformers)
    if installed < version_key(READ_FROM[0]) or installed > version_key(READ_FROM[1]):
        pytest.skip(f"the table was read from {READ_FROM[0]}..{READ_FROM[1]}")
    for key, item in TRAINING_ARGUMENTS.items():
        added = item.added is None or installed >= version_key(item.added)
        kept = item.removed is None or installed < version_key(item.removed)
        assert (key in schema.training_arguments) == (added and kept), key


def test_describe() -> None:
    assert describe("evaluation_strategy") == "deprecated in 4.41.0, removed in 4.51.0"
    assert describe("no_cuda") == "deprecated by 4.40.0, removed in 5.0.0"
    assert describe("eval_on_start") == "added in 4.42.0"
    assert describe("learning_rate") == ""


def test_deprecation_reads_the_help_text() -> None:
    help_text = "Deprecated alias of `activation_checkpointing`, will be removed in v6."
    assert deprecation(help_text) == (help_text, "activation_checkpointing")
    assert deprecation("Deprecated. Use `eval_strategy` instead") == (
        "Deprecated. Use `eval_strategy` instead",
        "eval_strategy",
    )
    assert deprecation("This argument is deprecated. It will be removed in version 5.0.") is not None
    # local_rank's help mentions a deprecated launcher, not a deprecated field
    assert deprecation("When using torch.distributed.launch (Deprecated), it will pass `local_rank`") is None


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("bf_16", "bf16"),
        ("learning_rat", "learning_rate"),
        ("learnimg_rate", "learning_rate"),
        ("fp61", "fp16"),
        ("gradient_checkpoint", "gradient_checkpointing"),
    ],
)
def test_typos(key: str, field: str) -> None:
    assert typo_of(key, ["bf16", "fp16", "learning_rate", "gradient_checkpointing", "local_rank"]) == field


@pytest.mark.parametrize("key", ["lora_rank", "dataset_mixture", "max_length", "warmup", "use_lora"])
def test_script_arguments_are_not_typos(key: str) -> None:
    fields = ["local_rank", "dataset_mixer", "max_seq_length", "warmup_steps", "use_dora"]
    assert typo_of(key, fields) is None


def _older(release: str) -> Schema:
    """The fields a release of the table's range has, from the table (no other install needed)."""
    pytest.importorskip("transformers")
    from precheck.deep.keys import installed_schema

    fields = dict(installed_schema().training_arguments)
    for key, item in TRAINING_ARGUMENTS.items():
        added = item.added is None or version_key(release) >= version_key(item.added)
        kept = item.removed is None or version_key(release) < version_key(item.removed)
        if added and kept:
            fields.setdefault(key, "")
        else:
            fields.pop(key, None)
    return Schema(release, fields)


def _notes(text: str, schema: Schema, versions: Versions | None = None) -> list[DeepNote]:
    config = read_as("hf-trainer", HF + text)
    check_keys(config, schema, versions)
    return [n for n in config.notes if isinstance(n, DeepNote)]


@pytest.mark.hf
def test_a_key_newer_than_the_installed_release() -> None:
    (note,) = _notes("include_for_metrics: [inputs]\n", _older("4.45.2"))
    assert note.kind == REMOVED_KEY and (note.line, note.column) == (4, 1)
    assert "transformers 4.45.2 (added in 4.46.0)" in note.message
    assert note.fix == "upgrade transformers to 4.46.0 or later, or remove `include_for_metrics`"


@pytest.mark.hf
def test_a_key_an_older_release_still_has() -> None:
    assert _notes("evaluation_strategy: steps\n", _older("4.45.2")) == []
    (note,) = _notes("evaluation_strategy: steps\n", _older("4.51.0"))
    assert note.kind == REMOVED_KEY and note.fix == "replace `evaluation_strategy` with `eval_strategy`"
    assert "['evaluation_strategy']" in note.message  # HfArgumentParser's own words


@pytest.mark.hf
def test_a_pinned_release_other_than_the_installed_one_is_mentioned() -> None:
    pinned = Versions({"transformers": VersionInfo("transformers", "4.46.1", "requirements.txt:3")})
    (note,) = _notes("no_cuda: false\n", _older("5.23.0"), pinned)
    assert "the run says transformers 4.46.1 (requirements.txt:3); --deep asked the installed 5.23.0" in note.message


def test_a_deprecated_field_of_the_installed_release() -> None:
    schema = Schema("5.23.0", {"gradient_checkpointing": "Deprecated alias of `activation_checkpointing`, will be"})
    (note,) = _notes("gradient_checkpointing: true\n", schema)
    assert note.kind == DEPRECATED_KEY and note.fix == "rename `gradient_checkpointing` to `activation_checkpointing`"
    assert "since 5.23.0" in note.message


@pytest.mark.hf
def test_the_deep_verdict_replaces_the_static_unknown_key_note() -> None:
    pytest.importorskip("transformers")
    from precheck.deep.keys import installed_schema

    config = read_as("hf-trainer", HF + "bf_16: true\n")
    assert [n.kind for n in config.notes] == ["unknown-key"]
    check_keys(config, installed_schema())
    assert [n.kind for n in config.notes] == [UNKNOWN_KEY]


@pytest.mark.hf
def test_trl_fields_count_as_known_where_trl_is_installed() -> None:
    pytest.importorskip("transformers")
    trl = pytest.importorskip("trl")
    from precheck.deep.keys import installed_schema

    installed_schema.cache_clear()
    schema = installed_schema()
    assert schema.trl == trl.__version__
    sft = {f.name for f in dataclasses.fields(trl.SFTConfig)}
    assert sft <= set(schema.training_arguments) | set(schema.trl_fields)


def test_trl_model_config_torch_dtype() -> None:
    """Read from the trl wheels: ModelConfig.dtype from 0.23.0, torch_dtype warns until 0.27.0 removes it."""
    removed = _notes("torch_dtype: bfloat16\n", Schema("5.23.0", {}, "0.27.0", {"dtype": ""}))
    assert [(n.kind, n.fix) for n in removed] == [(REMOVED_KEY, "replace `torch_dtype` with `dtype`")]
    assert "TrlParser stops with \"ValueError: Unknown arguments from config file: ['--torch_dtype', 'bfloat16']. " in (
        removed[0].message
    )
    (warned,) = _notes("torch_dtype: bfloat16\n", Schema("5.23.0", {}, "0.26.2", {"dtype": "", "torch_dtype": ""}))
    assert warned.kind == DEPRECATED_KEY and warned.fix == "rename `torch_dtype` to `dtype`"
    assert "deprecated and will be removed in version 0.27.0, please use `dtype` instead" in warned.message
    assert _notes("torch_dtype: bfloat16\n", Schema("5.23.0", {}, "0.22.2", {"torch_dtype": ""})) == []
    # without TRL installed, the key is the script's to judge
    assert _notes("torch_dtype: bfloat16\n", Schema("5.23.0", {})) == []
