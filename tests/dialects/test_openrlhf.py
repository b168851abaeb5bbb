"""OpenRLHF (the registry demo: one package, one registry line): its ``--ds.*`` launch flags
mapped onto the model, and the DeepSpeed config it writes from them resolved by DeepSpeed's
own rules. Semantics read in OpenRLHF 0.11.0 (see the dialect's docstring)."""

from __future__ import annotations

from pathlib import Path

from precheck import frameworks, resolve
from precheck.engine import run
from precheck.hardware import from_specs
from precheck.plan import PrecisionPlan
from precheck.versions import Versions

from .samples import ROOT, at, read_file

MIXTRAL_LORA = ROOT / "tests" / "fixtures" / "openrlhf" / "train_sft_mixtral_lora.sh"
H100 = from_specs(["8xH100"], {})


def plan_for(path: Path) -> PrecisionPlan:
    return resolve.resolve(read_file(path, "openrlhf"), H100, Versions())


def test_registered_by_its_entry_modules() -> None:
    framework = frameworks.named("openrlhf")
    assert framework is not None and framework.distribution == "openrlhf"
    assert framework.dialect.priority == 0 and not framework.launchers  # named by `-m openrlhf.cli.*` only


def test_upstream_mixtral_lora_example_maps_with_provenance() -> None:
    config = read_file(MIXTRAL_LORA, "openrlhf")
    assert at(config.model) == ("mistralai/Mixtral-8x7B-v0.1", 12, "--model.model_name_or_path")
    assert at(config.precision) == ("bf16", 19, "--ds.param_dtype")
    assert at(config.train_type) == ("lora", 23, "--ds.lora.rank")
    assert at(config.gradient_checkpointing) == (True, 20, "--model.gradient_checkpointing_enable")
    assert at(config.attn_implementation) == ("flash_attention_2", 21, "--ds.attn_implementation")
    assert at(config.batch_size) == (4, 10, "--train.micro_batch_size")
    assert at(config.seq_len) == (2048, 5, "--data.max_len")
    deepspeed = config.attached["deepspeed"]  # what get_train_ds_config writes
    assert at(deepspeed.zero_stage) == (3, 17, "--ds.zero_stage")
    assert deepspeed.bf16 is not None and deepspeed.bf16.value is True and deepspeed.bf16.origin.line == 19
    assert deepspeed.fp16 is not None and deepspeed.fp16.value is False
    assert config.notes == []


def test_bf16_run_is_deepspeed_bf16_mode() -> None:
    plan = plan_for(MIXTRAL_LORA)
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-3"
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.autocast_dtype.value) == ("bfloat16", "bfloat16", None)
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.loss_scaling.value == "none"


def test_fp16_with_adam_offload_and_defaults(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(
        "deepspeed --module openrlhf.cli.train_dpo \\\n"
        "    --model.model_name_or_path meta-llama/Llama-2-7b-hf \\\n"
        "    --ds.param_dtype fp16 \\\n"
        "    --ds.adam_offload\n"
    )
    config = read_file(script, "openrlhf")
    assert config.train_type is not None and config.train_type.value == "full"  # --ds.lora.rank 0
    deepspeed = config.attached["deepspeed"]
    assert deepspeed.zero_stage is not None and deepspeed.zero_stage.value == 2  # default --ds.zero_stage
    assert at(deepspeed.offload_optimizer) == ("cpu", 4, "--ds.adam_offload")
    plan = plan_for(script)
    assert (plan.load_dtype.value, plan.param_dtype.value) == ("float16", "float16")
    assert plan.loss_scaling.value == "dynamic"  # DeepSpeed fp16 mode, loss_scale 0
    assert plan.sharding is not None and plan.sharding.value.startswith("ZeRO-2")


def test_generic_rules_need_no_change_bf16_on_a_v100() -> None:
    report = run([str(MIXTRAL_LORA)], from_specs(["V100"], {}), env={})
    assert [f.dialect for f in report.files] == ["openrlhf"]
    found = {(f.rule, f.origin.line) for f in report.findings}
    assert ("PC101", 19) in found  # bf16 on sm_70, pointing at --ds.param_dtype
