"""llm-foundry on Composer (issue 28): its training YAMLs read with Composer's precision
semantics, defaults and accepted values taken from the release data
(``precheck/data/schemas/llm-foundry.json``). Real files: llm-foundry's own
``scripts/train/yamls`` (``../shared/projects/mosaicml__llm-foundry``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import frameworks, resolve
from precheck.engine import run
from precheck.hardware import from_specs
from precheck.versions import VersionInfo, Versions

from .samples import ROOT, at, read_file

YAMLS = ROOT.parent / "shared" / "projects" / "mosaicml__llm-foundry" / "scripts" / "train" / "yamls"
MPT_125M = YAMLS / "pretrain" / "mpt-125m.yaml"
DBRX_LORA = YAMLS / "finetune" / "dbrx-lora-ft.yaml"
needs_projects = pytest.mark.skipif(not YAMLS.is_dir(), reason="the shared real projects are not here")

BASE = """\
model:
  name: mpt_causal_lm
  attn_config:
    attn_impl: torch
max_duration: 10ba
global_train_batch_size: 8
device_train_microbatch_size: 1
train_loader:
  name: text
tokenizer:
  name: EleutherAI/gpt-neox-20b
optimizer:
  name: decoupled_adamw
scheduler:
  name: cosine_with_warmup
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def findings(path: Path, gpu: str) -> set[tuple[str, int | None]]:
    report = run([str(path)], from_specs([gpu], {}), env={})
    return {(f.rule, f.origin.line) for f in report.findings if f.severity.name == "ERROR"}


def test_registered() -> None:
    framework = frameworks.named("llm-foundry")
    assert framework is not None and frameworks.named("composer") is framework
    assert framework.commands == ("composer",)


@needs_projects
def test_mpt_pretrain_yaml_maps_with_provenance() -> None:
    config = read_file(MPT_125M, "llm-foundry")
    assert at(config.precision) == ("amp_bf16", 88, "precision")
    assert at(config.fsdp_sharding) == ("FULL_SHARD", 92, "sharding_strategy")
    plan = resolve.resolve(config, from_specs(["8xH100"], {}), Versions())
    assert plan.autocast_dtype.value == "bfloat16" and plan.autocast_dtype.origin.line == 88
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"  # PURE
    assert plan.reduce_dtype.origin.line == 93
    assert (plan.param_dtype.value, plan.grad_dtype.value) == ("float32", "float32")
    assert plan.attention is not None and (plan.attention.value, plan.attention.origin.line) == (
        "flash_attention_2",
        24,
    )


@needs_projects
@pytest.mark.parametrize("path", sorted(YAMLS.rglob("*.yaml")) if YAMLS.is_dir() else [], ids=lambda p: p.name)
def test_maintained_yamls_clean_on_h100(path: Path) -> None:
    assert findings(path, "8xH100") == set()


@needs_projects
def test_bf16_and_flash_attention_on_a_v100() -> None:
    assert findings(MPT_125M, "V100") == {("PC101", 88), ("PC105", 24)}
    assert findings(DBRX_LORA, "V100") == {("PC101", 102), ("PC105", 29)}  # use_flash_attention_2: true


def test_unset_precision_is_the_release_default(tmp_path: Path) -> None:
    config = read_file(write(tmp_path, BASE), "llm-foundry")
    plan = resolve.resolve(config, from_specs(["A100"], {}), Versions())
    assert plan.autocast_dtype.value == "bfloat16"
    assert "TrainConfig.precision default 'amp_bf16' (llm-foundry 0.22.0" in str(plan.autocast_dtype.origin.detail)
    pinned = Versions({"llm-foundry": VersionInfo("llm-foundry", "0.22.0", "requirements.txt:1")})
    plan = resolve.resolve(config, from_specs(["A100"], {}), pinned)
    assert "llm-foundry 0.22.0 (requirements.txt:1)" in str(plan.autocast_dtype.origin.detail)
    assert findings(write(tmp_path, BASE), "V100") == {("PC101", 1)}  # the default: the top of the file


def test_fp16_pure_fsdp_reduces_in_fp16_with_a_grad_scaler(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "precision: AMP_FP16\nfsdp_config:\n  mixed_precision: pure\n")
    plan = resolve.resolve(read_file(path, "llm-foundry"), from_specs(["V100"], {}), Versions())
    assert plan.autocast_dtype.value == "float16" and plan.grad_scaler.value is True
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float16"
    assert findings(path, "V100") == set()


def test_default_mixed_precision_reduces_in_fp32(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "precision: amp_bf16\nfsdp_config:\n  sharding_strategy: SHARD_GRAD_OP\n")
    plan = resolve.resolve(read_file(path, "llm-foundry"), from_specs(["A100"], {}), Versions())
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float32"
    assert "FSDPConfig.mixed_precision default 'DEFAULT'" in str(plan.reduce_dtype.origin.detail)
    assert plan.sharding is not None and plan.sharding.value == "FSDP SHARD_GRAD_OP"


def test_fp8_needs_sm89(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "precision: amp_fp8\n")
    assert findings(path, "A100") == {("PC104", 16)}
    assert findings(path, "H100") == set()


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("precision: bf16\n", {("PC716", 16)}),
        ("precision: amp_bf16\nfsdp_config:\n  mixed_precision: HALF\n", {("PC716", 18)}),
        ("precision: amp_bf16\nfsdp_config:\n  mixed_precision: {param_dtype: bf16, reduce_dtype: fp32}\n", set()),
    ],
)
def test_values_composer_refuses(tmp_path: Path, extra: str, expected: set[tuple[str, int]]) -> None:
    assert findings(write(tmp_path, BASE + extra), "A100") == expected


def test_composer_launch_with_overrides(tmp_path: Path) -> None:
    write(tmp_path, BASE + "precision: amp_bf16\n")
    script = tmp_path / "launch.sh"
    script.write_text("composer -n 8 train.py run.yaml precision=amp_fp16 max_duration=1ba\n", encoding="utf-8")
    config = read_file(script, "llm-foundry")
    assert at(config.precision) == ("amp_fp16", 1, "precision")
    assert findings(script, "V100") == set()


def test_master_weights_dtype_trains_the_cast_model(tmp_path: Path) -> None:
    text = BASE.replace("  name: mpt_causal_lm\n", "  name: mpt_causal_lm\n  master_weights_dtype: bf16\n")
    path = write(tmp_path, text + "precision: amp_bf16\nfsdp_config:\n  mixed_precision: PURE\n")
    config = read_file(path, "llm-foundry")
    assert at(config.torch_dtype) == ("bfloat16", 3, "master_weights_dtype")
    plan = resolve.resolve(config, from_specs(["A100"], {}), Versions())
    assert (plan.load_dtype.value, plan.param_dtype.value) == ("bfloat16", "bfloat16")
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"  # low-precision grads kept
