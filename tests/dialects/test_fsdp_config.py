"""FSDP config files (HF ``fsdp_config`` / ms-swift ``--fsdp``) and what FSDP does to an HF run's precision."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from precheck import dialects, engine, resolve
from precheck.config import TrainingConfig
from precheck.frameworks.hf_trainer import resolve as hf
from precheck.hardware import from_specs
from precheck.resolve import fsdp as fsdp_resolve
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse
from precheck.versions import VersionInfo, Versions

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
HW = from_specs(["8xH100"], {})


def versions(**known: str) -> Versions:
    return Versions({name: VersionInfo(name, v, "flag") for name, v in known.items()})


def read_fsdp(text: str, path: str = "fsdp.json") -> TrainingConfig:
    doc = parse(path, textwrap.dedent(text).lstrip("\n"), "json")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "fsdp", dialect
    return dialect.read(doc, {})


def read_hf(text: str) -> TrainingConfig:
    doc = parse("train.yaml", textwrap.dedent(text).lstrip("\n"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name in ("hf-trainer", "trl"), dialect
    return dialect.read(doc, {})


def hf_with(main_yaml: str, fsdp_json: str | None, known: Versions | None = None) -> PrecisionPlan:
    main = read_hf(main_yaml)
    known = known or Versions()
    plan = hf.resolve(main, HW, known)
    return fsdp_resolve.apply_fsdp(plan, main, read_fsdp(fsdp_json) if fsdp_json else None, known)


# --- recognition --------------------------------------------------------------------------


def _corpus(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).glob("*")) if (CORPUS / folder).is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", _corpus("fsdp"), ids=lambda p: p.name[:70])
def test_every_corpus_fsdp_file_is_recognised_and_resolves(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "json")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "fsdp"
    config = dialect.read(doc, {})
    plan = resolve.resolve(config, HW, Versions())
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert plan.sharding is not None and plan.sharding.value == "FSDP2 full_shard"
    ac = raw["fsdp_config"].get("activation_checkpointing", False)
    assert plan.gradient_checkpointing is not None and plan.gradient_checkpointing.value is ac
    assert plan.autocast_dtype.value is None  # bf16/fp16 belong to the run that names the file


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
def test_no_other_corpus_file_is_read_as_fsdp() -> None:
    stolen = []
    for path in sorted(CORPUS.rglob("*")):
        if path.parent.name == "fsdp" or not path.is_file() or path.suffix not in (".json", ".yaml", ".yml"):
            continue
        try:
            doc = parse(str(path), path.read_text(encoding="utf-8"), "json" if path.suffix == ".json" else "yaml")
        except Exception:
            continue
        dialect = dialects.detect(doc)
        if dialect is not None and dialect.name == "fsdp":
            stolen.append(path.name)
    assert stolen == []


def test_a_training_config_with_fsdp_keys_is_not_an_fsdp_file() -> None:
    doc = parse(
        "t.yaml",
        "output_dir: o\nlearning_rate: 1.0e-5\nbf16: true\nfsdp: full_shard\nfsdp_config:\n  version: 2\n",
        "yaml",
    )
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "hf-trainer"


# --- mapping ------------------------------------------------------------------------------

SWIFT_WRAPPER = """
{
  "_description": "FSDP2",
  "fsdp": "full_shard auto_wrap offload",
  "fsdp_config": {
    "fsdp_version": 2,
    "reshard_after_forward": false,
    "activation_checkpointing": true
  }
}
"""


def test_wrapper_mapping() -> None:
    config = read_fsdp(SWIFT_WRAPPER)
    assert config.fsdp is not None and config.fsdp.value is True and config.fsdp.origin.line == 3
    # an explicit fsdp_config value beats the option string (_apply_legacy_fsdp_to_config: setdefault)
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "shard_grad_op"
    assert config.fsdp_sharding.origin.key == "fsdp_config.reshard_after_forward"
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    assert config.gradient_checkpointing is not None and config.gradient_checkpointing.value is True
    assert config.gradient_checkpointing.origin.line == 7


def test_bare_fsdp_config_with_prefixes() -> None:
    config = read_fsdp(
        '{"fsdp_version": 1, "fsdp_reshard_after_forward": "HYBRID_SHARD", "fsdp_cpu_offload": false,\n'
        ' "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer"}'
    )
    assert config.fsdp is None  # the run that names the file switches FSDP on
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "hybrid_shard"
    assert config.offload_param is not None and config.offload_param.value == "none"


def test_accelerate_spellings_transformers_ignores() -> None:
    config = read_fsdp(
        '{"fsdp_version": 2, "fsdp_offload_params": true, "mixed_precision": "bf16",\n"state_dict_type": "x"}'
    )
    notes = {n.key: n.message for n in config.notes}
    assert set(notes) == {"fsdp_offload_params", "mixed_precision"}
    assert "use `cpu_offload: true`" in notes["fsdp_offload_params"]
    assert "follows the run's `bf16`/`fp16`" in notes["mixed_precision"]
    assert config.offload_param is None


# --- standalone ---------------------------------------------------------------------------


def test_standalone_plan() -> None:
    plan = resolve.resolve(read_fsdp(SWIFT_WRAPPER), HW, Versions())
    assert plan.sharding is not None and plan.sharding.value == "FSDP2 shard_grad_op, parameters offloaded to cpu"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float32"
    assert plan.param_dtype.value == "float32" and plan.overrides == []


# --- applied to an HF run -----------------------------------------------------------------

HF_BF16 = """
output_dir: out
learning_rate: 1.0e-5
torch_dtype: bfloat16
bf16: true
fsdp: full_shard auto_wrap
"""

BARE = '{"fsdp_version": 2, "reshard_after_forward": true, "activation_checkpointing": true}'


def test_fsdp_policy_follows_bf16_and_upcasts_the_weights() -> None:
    plan = hf_with(HF_BF16, BARE)
    assert plan.autocast_dtype.value == "bfloat16"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"
    assert plan.param_dtype.value == "float32" and plan.grad_dtype.value == "float32"
    assert plan.optimizer_state_dtype.value == "float32"
    override = plan.override_of("param_dtype")
    assert override is not None and override.loser.value == "bfloat16" and override.loser.origin.line == 3
    assert "FSDP upcast of low precision parameters to fp32" in override.reason
    assert plan.sharding is not None and plan.sharding.value == "FSDP2 full_shard"
    assert plan.gradient_checkpointing is not None and plan.gradient_checkpointing.value is True


def test_fsdp_options_alone() -> None:
    plan = hf_with(HF_BF16.replace("full_shard auto_wrap", "shard_grad_op offload"), None)
    assert plan.sharding is not None and plan.sharding.value == "FSDP2 shard_grad_op, parameters offloaded to cpu"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"


def test_no_mixed_precision_no_policy() -> None:
    plan = hf_with(HF_BF16.replace("bf16: true", "bf16: false").replace("bfloat16", "float32"), BARE)
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float32"
    assert plan.override_of("param_dtype") is None and plan.param_dtype.value == "float32"


def test_fsdp_config_without_fsdp_does_nothing() -> None:
    plan = hf_with(HF_BF16.replace("fsdp: full_shard auto_wrap\n", ""), BARE)
    override = plan.override_of("fsdp")
    assert override is not None and "`--fsdp_config` is useful only when `--fsdp` is specified." in override.reason
    assert plan.param_dtype.value == "bfloat16" and plan.sharding is None


def test_both_activation_checkpointings_raise() -> None:
    plan = hf_with(HF_BF16 + "gradient_checkpointing: true\n", BARE)
    override = plan.override_of("gradient_checkpointing")
    assert override is not None and "can't both be set to True" in override.reason
    old = hf_with(HF_BF16 + "gradient_checkpointing: true\n", BARE, versions(transformers="4.57.6"))
    legacy = old.override_of("gradient_checkpointing")
    assert legacy is not None and "can't be set to True simultaneously" in legacy.reason


def test_version_defaults_by_transformers_release() -> None:
    bare = '{"reshard_after_forward": true, "state_dict_type": "FULL_STATE_DICT"}'
    assert hf_with(HF_BF16, bare).sharding.value == "FSDP2 full_shard"  # type: ignore[union-attr]
    for old in ("5.9.0", "4.57.6"):
        plan = hf_with(HF_BF16, bare, versions(transformers=old))
        assert plan.sharding is not None and plan.sharding.value.startswith("FSDP1"), old


def test_cpu_offload_key_needs_transformers_5_11() -> None:
    bare = '{"fsdp_version": 2, "cpu_offload": true}'
    assert "offloaded" in hf_with(HF_BF16, bare).sharding.value  # type: ignore[union-attr]
    plan = hf_with(HF_BF16, bare, versions(transformers="5.9.0"))
    assert plan.sharding is not None and "offloaded" not in plan.sharding.value
    assert plan.override_of("offload_param") is not None


def test_qlora_under_fsdp2_is_not_upcast() -> None:
    text = HF_BF16 + "load_in_4bit: true\nuse_peft: false\n"
    plan = hf_with(text, BARE)
    assert plan.override_of("param_dtype") is None


def test_fsdp_plan_fields_contract() -> None:
    main = read_hf(HF_BF16)
    # the plan before FSDP (hf.resolve itself applies FSDP for `fsdp:` options)
    base = hf.resolve(read_hf(HF_BF16.replace("fsdp: full_shard auto_wrap\n", "")), HW, Versions())
    fields, overrides = fsdp_resolve.fsdp_plan_fields(base, main, None, Versions())
    assert set(fields) >= {"reduce_dtype", "param_dtype", "grad_dtype", "sharding"}
    assert [o.field for o in overrides] == ["param_dtype"]
    off = read_hf(HF_BF16.replace("fsdp: full_shard auto_wrap\n", ""))
    assert fsdp_resolve.fsdp_plan_fields(base, off, None, Versions()) == ({}, [])


# --- ms-swift end to end ------------------------------------------------------------------


def test_ms_swift_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "fsdp2.json").write_text(SWIFT_WRAPPER)
    (tmp_path / "train.yaml").write_text(
        "model: Qwen/Qwen2.5-7B-Instruct\ntrain_type: full\ntorch_dtype: bfloat16\ntemplate: qwen\n"
        "gradient_checkpointing: true\nfsdp: fsdp2.json\n"
    )
    report = engine.run([str(tmp_path / "train.yaml")], HW, env={})
    [result] = [r for r in report.files if r.path.endswith("train.yaml")]
    assert result.plan is not None and result.dialect == "ms-swift"
    plan = result.plan
    assert plan.param_dtype.value == "float32" and plan.reduce_dtype is not None
    assert plan.reduce_dtype.value == "bfloat16"
    assert plan.sharding is not None and plan.sharding.value == "FSDP2 shard_grad_op, parameters offloaded to cpu"
    override = plan.override_of("gradient_checkpointing")
    assert override is not None and override.winner.value is False and "ms-swift turns" in override.reason


def test_inline_fsdp_config_as_the_hf_dialect_would_attach_it() -> None:
    """``read_attachments(..., {"fsdp_config": "fsdp"})`` reads an inline mapping with this dialect."""
    from precheck.dialects.base import read_attachments

    doc = parse(
        "train.yaml", HF_BF16.lstrip("\n") + "fsdp_config:\n  fsdp_version: 1\n  fsdp_offload_params: true\n", "yaml"
    )
    main = dialects.BY_NAME["hf-trainer"].read(doc, {})
    read_attachments(dialects.BY_NAME["hf-trainer"], doc, main, {}, {"fsdp_config": "fsdp"})
    attached = main.attached["fsdp"]
    assert [n.key for n in attached.notes] == ["fsdp_offload_params"] and attached.notes[0].line == 8
    plan = fsdp_resolve.apply_fsdp(hf.resolve(main, HW, Versions()), main, attached, Versions())
    assert plan.sharding is not None and plan.sharding.value == "FSDP1 full_shard"  # offload_params is ignored
    assert plan.sharding.origin.line == 5  # the `fsdp` options of the main file
