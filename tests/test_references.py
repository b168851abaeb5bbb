"""Runs spread over several files: references, model folders, grouping, folder excludes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import write
from precheck import engine
from precheck.hardware import from_specs
from precheck.sources import parse

A100 = from_specs(["A100"], {})
TRAIN = """
model_name_or_path: {model}
output_dir: out
learning_rate: 1.0e-5
bf16: true
deepspeed: {ds}
"""
DS = {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}


def test_reference_is_found_next_to_the_config_and_grouped(tmp_path: Path) -> None:
    write(tmp_path, "run/train.yaml", TRAIN.format(model="m", ds="ds.json"))
    write(tmp_path, "run/ds.json", json.dumps(DS))
    report = engine.run([str(tmp_path)], A100, env={})
    by_name = {Path(r.path).name: r for r in report.files}
    train, ds = by_name["train.yaml"], by_name["ds.json"]
    assert [Path(p).resolve() for p in train.attached] == [(tmp_path / "run" / "ds.json").resolve()]
    assert train.config is not None and train.config.attached["deepspeed"].zero_stage is not None
    assert ds.part_of == train.path
    assert not any(f in report.findings for f in ds.findings)


def test_reference_relative_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "configs/train.yaml", TRAIN.format(model="m", ds="ds_configs/z3.json"))
    write(tmp_path, "ds_configs/z3.json", json.dumps(DS))
    monkeypatch.chdir(tmp_path)
    report = engine.run(["configs/train.yaml"], A100, env={})
    assert report.files[0].attached == ["ds_configs/z3.json"]
    assert not [f for f in report.findings if f.rule == "PC904"]


def test_missing_reference_is_a_warning_at_the_key(tmp_path: Path) -> None:
    config = write(tmp_path, "train.yaml", TRAIN.format(model="m", ds="nowhere/ds.json"))
    report = engine.run([str(config)], A100, env={})
    missing = [f for f in report.findings if f.rule == "PC904"]
    assert [(f.origin.line, f.origin.column) for f in missing] == [(5, 1)]
    assert report.exit_code() == 0


def test_unparsable_reference_names_that_file(tmp_path: Path) -> None:
    config = write(tmp_path, "train.yaml", TRAIN.format(model="m", ds="ds.json"))
    write(tmp_path, "ds.json", '{"bf16": {"enabled": true,}')
    report = engine.run([str(config)], A100, env={})
    assert report.exit_code() == 2
    assert report.errors[0].path.endswith("ds.json")


def test_local_model_folder_config_json(tmp_path: Path) -> None:
    write(
        tmp_path,
        "ckpt/config.json",
        json.dumps({"architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16", "hidden_size": 4096}),
    )
    config = write(tmp_path, "train.yaml", "model_name_or_path: ckpt\noutput_dir: o\nlearning_rate: 1\n")
    report = engine.run([str(config)], A100, env={})
    run = report.files[0].config
    assert run is not None
    assert run.model_dtype is not None and run.model_dtype.value == "bfloat16"
    assert run.model_dtype.origin.path is not None and run.model_dtype.origin.path.endswith("config.json")
    assert run.model_arch is not None and run.model_arch.value == "LlamaForCausalLM"
    assert run.model_dims["hidden_size"].value == 4096


def test_hub_id_is_never_fetched(tmp_path: Path) -> None:
    config = write(tmp_path, "train.yaml", "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: o\nlr: 1\n")
    report = engine.run([str(config)], A100, env={})
    assert report.files[0].attached == []


def test_gitignore_and_exclude(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "build/\n*.tmp.yaml\n!keep.tmp.yaml\n")
    for name in ("a.yaml", "build/b.yaml", "x.tmp.yaml", "keep.tmp.yaml", "sub/c.yaml", "sub/d.json"):
        write(tmp_path, name, "output_dir: o\nlearning_rate: 1\nfp16: true\n")
    write(tmp_path, "sub/.gitignore", "/d.json\n")
    names = {Path(r.path).relative_to(tmp_path).as_posix() for r in engine.run([str(tmp_path)], A100, env={}).files}
    assert names == {"a.yaml", "keep.tmp.yaml", "sub/c.yaml"}
    names = {
        Path(r.path).relative_to(tmp_path).as_posix()
        for r in engine.run([str(tmp_path)], A100, env={}, exclude=["sub/"]).files
    }
    assert names == {"a.yaml", "keep.tmp.yaml"}


def test_named_file_is_checked_even_when_excluded(tmp_path: Path) -> None:
    config = write(tmp_path, "build/a.yaml", "output_dir: o\nlearning_rate: 1\nfp16: true\n")
    write(tmp_path, ".gitignore", "build/\n")
    assert [r.path for r in engine.run([str(config)], A100, env={}, exclude=["build/"]).files] == [str(config)]


def test_env_file_source() -> None:
    doc = parse(
        "config.env",
        "# c\nexport BASE='/x'\nexport OUT=\"${BASE}/m\"  # comment\nMIXED_PRECISION=bf16\nif [ x ]; then\nfi\n",
        "env",
    )
    root = doc.mapping()
    assert {k: v.value for k, v in root.items()} == {"BASE": "/x", "OUT": "/x/m", "MIXED_PRECISION": "bf16"}
    assert (root["OUT"].key_line, root["OUT"].key_column) == (3, 8)
    assert (root["MIXED_PRECISION"].key_line, root["MIXED_PRECISION"].key_column) == (4, 1)


def test_simpletuner_config_env(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "config.env",
        'export MODEL_TYPE=\'lora\'\nexport OPTIMIZER="adamw_bf16"\nexport MIXED_PRECISION="bf16"\n',
    )
    report = engine.run([str(config)], from_specs(["V100"], {}), env={})
    assert report.files[0].dialect == "simpletuner"
    bf16 = [f for f in report.findings if f.rule == "PC101"]
    assert [(f.origin.line, f.origin.column) for f in bf16] == [(3, 8)]
    assert bf16[0].fix is not None and "MIXED_PRECISION=fp16" in bf16[0].fix.text()


def test_launcher_only_env_file_is_not_a_run(tmp_path: Path) -> None:
    config = write(tmp_path, "config.env", "export TRAINING_NUM_PROCESSES=1\n")
    assert engine.run([str(config)], A100, env={}).files[0].dialect is None


def test_accelerate_launch_environment_adds_deepspeed(tmp_path: Path) -> None:
    config = write(tmp_path, "train.yaml", "model_name_or_path: meta-llama/Llama-2-7b-hf\noutput_dir: o\nbf16: true\n")
    env = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"}
    report = engine.run([str(config)], from_specs(["8xA100-80GB"], {}), env=env)
    plan = report.files[0].plan
    assert plan is not None and plan.sharding is not None
    assert plan.sharding.value == "ZeRO-3" and str(plan.sharding.origin) == "env:ACCELERATE_DEEPSPEED_ZERO_STAGE"
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.param_dtype.value == "bfloat16" and plan.autocast_dtype.value is None
    plain = engine.run([str(config)], from_specs(["8xA100-80GB"], {}), env={}).files[0].plan
    assert plain is not None and plain.sharding is not None and plain.sharding.value == "none"


def test_accelerate_launch_environment_adds_fsdp(tmp_path: Path) -> None:
    config = write(tmp_path, "train.yaml", "model_name_or_path: m\noutput_dir: o\nbf16: true\n")
    report = engine.run([str(config)], A100, env={"ACCELERATE_USE_FSDP": "true"})
    plan = report.files[0].plan
    assert plan is not None and plan.sharding is not None and plan.sharding.value.startswith("FSDP")
    config = report.files[0].config
    assert config is not None and config.fsdp is not None and str(config.fsdp.origin) == "env:ACCELERATE_USE_FSDP"
