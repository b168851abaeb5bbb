"""LLaMA-Factory: recognition, key mapping, and the precision plans its rules produce."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import Case, check_case, plan_for, read_as
from precheck import dialects
from precheck.config import TrainingConfig
from precheck.provenance import Origin, Sourced
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
LF_CORPUS = sorted((CORPUS / "llama-factory").glob("*.y*ml")) if CORPUS.is_dir() else []


def read(text: str, env: dict[str, str] | None = None, fmt: str = "yaml") -> TrainingConfig:
    return read_as("llama-factory", text, env, fmt=fmt)


def plan_of(text: str, gpus: list[str] | None = None, versions: dict[str, str] | None = None) -> PrecisionPlan:
    return plan_for(read(text), gpus, versions)


BASE = """
model_name_or_path: Qwen/Qwen3-4B-Instruct-2507
stage: sft
do_train: true
dataset: alpaca_en_demo
template: qwen3_nothink
output_dir: saves/x
"""


# -- recognition ------------------------------------------------------------------------


@pytest.mark.skipif(not LF_CORPUS, reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", LF_CORPUS, ids=lambda p: p.name.removeprefix("hiyouga__LLaMA-Factory__examples__"))
def test_every_corpus_file_is_read_as_llama_factory(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "llama-factory"
    config = dialect.read(doc, {})
    plan = plan_for(config, ["8xH100"])
    assert plan.load_dtype.value in ("bfloat16", "float16", "float32")
    # the official examples use only keys LLaMA-Factory reads
    assert [n.message for n in config.notes if n.kind == "unknown-key"] == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
def test_llama_factory_deepspeed_and_accelerate_files_are_left_to_their_dialects() -> None:
    for folder in ("deepspeed", "accelerate", "other"):
        for path in sorted((CORPUS / folder).glob("*")):
            if path.suffix not in (".json", ".yaml", ".yml"):
                continue
            doc = parse(str(path), path.read_text(encoding="utf-8"), "json" if path.suffix == ".json" else "yaml")
            dialect = dialects.detect(doc)
            assert dialect is None or dialect.name != "llama-factory", path.name


def test_recognised_without_stage_by_its_distinctive_keys() -> None:
    config = read("model_name_or_path: m\ntemplate: llama3\ndataset: d\ncutoff_len: 1024\nbf16: true\n")
    assert config.framework == "llamafactory" and config.seq_len is not None and config.seq_len.value == 1024


def test_plain_trainer_and_ms_swift_files_are_not_claimed() -> None:
    hf = parse("t.yaml", "model_name_or_path: m\noutput_dir: o\nlearning_rate: 1.0e-5\nbf16: true\n", "yaml")
    assert dialects.detect(hf) is not None and dialects.detect(hf).name != "llama-factory"  # type: ignore[union-attr]
    swift = parse(
        "s.yaml",
        "model: Qwen/Qwen3-8B\ntuner_type: lora\nlora_rank: 8\nmicro_batch_size: 1\nglobal_batch_size: 4\n",
        "yaml",
    )
    assert dialects.detect(swift) is not None and dialects.detect(swift).name == "ms-swift"  # type: ignore[union-attr]


# -- mapping ----------------------------------------------------------------------------


def test_keys_map_with_their_lines() -> None:
    config = read(
        BASE
        + """finetuning_type: lora
quantization_bit: 4
flash_attn: fa2
deepspeed: examples/deepspeed/ds_z3_config.json
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
cutoff_len: 4096
optim: paged_adamw_8bit
pure_bf16: false
bf16: true
"""
    )
    assert config.model is not None and config.model.value == "Qwen/Qwen3-4B-Instruct-2507"
    assert config.model.origin.line == 1
    assert config.train_type is not None and (config.train_type.value, config.train_type.origin.line) == ("lora", 7)
    assert config.quantization_bits is not None and config.quantization_bits.value == 4
    assert config.attn_implementation is not None
    assert (config.attn_implementation.value, config.attn_implementation.origin.line) == ("flash_attention_2", 9)
    ref = config.references["deepspeed"]
    assert (ref.value, ref.origin.line) == ("examples/deepspeed/ds_z3_config.json", 10)
    assert config.batch_size is not None and config.batch_size.value == 2
    assert config.grad_accum_steps is not None and config.grad_accum_steps.value == 8
    assert config.seq_len is not None and config.seq_len.value == 4096
    assert config.optimizer is not None and config.optimizer.value == "paged_adamw_8bit"
    assert config.pure_bf16 is not None and config.pure_bf16.value is False
    assert config.bf16 is not None and (config.bf16.value, config.bf16.origin.line) == (True, 16)
    assert dict(config.flag_keys) == {"fp16": "fp16", "bf16": "bf16", "pure_bf16": "pure_bf16", "tf32": "tf32"}


def test_fp8_and_fsdp_options() -> None:
    config = read(BASE + "bf16: true\nfp8: true\nfp8_backend: te\nfsdp:\n  - full_shard\n  - auto_wrap\n")
    assert config.fp8 is not None and config.fp8.value == "te"
    assert config.fsdp is not None and config.fsdp.value and config.fsdp_sharding is not None
    assert config.fsdp_sharding.value == "full_shard"
    # an auto backend is accelerate's AORecipeKwargs: torchao
    auto = read(BASE + "fp8: true\n")
    assert auto.fp8 is not None and auto.fp8.value == "torchao"


def test_json_config_is_read_too() -> None:
    config = read('{"model_name_or_path": "m", "stage": "sft", "finetuning_type": "full", "fp16": true}', fmt="json")
    assert config.fp16 is not None and config.fp16.value and config.train_type is not None


# -- unknown keys -----------------------------------------------------------------------


def test_misspelt_switch_is_named_with_a_did_you_mean() -> None:
    config = read(BASE + "bf_16: true\n")
    notes = [n for n in config.notes if n.kind == "unknown-key"]
    assert len(notes) == 1 and notes[0].key == "bf_16" and notes[0].line == 7
    assert (
        "did you mean `bf16`" in notes[0].message
        and "Some keys are not used by the HfArgumentParser" in notes[0].message
    )


def test_every_unknown_key_is_refused_unless_allow_extra_args() -> None:
    text = BASE + "my_own_key: 3\nbf_16: true\n"
    strict = {n.key for n in read(text).notes if n.kind == "unknown-key"}
    assert strict == {"my_own_key", "bf_16"}
    allowed = [n for n in read(text, {"ALLOW_EXTRA_ARGS": "1"}).notes if n.kind == "unknown-key"]
    assert [n.key for n in allowed] == ["bf_16"] and "ALLOW_EXTRA_ARGS=1" in allowed[0].message


def test_unknown_key_rule_points_at_the_key() -> None:
    check_case(Case("llama-factory typo", "PC905", BASE + "bf_16: true\n", expect={(7, 1)}))
    check_case(Case("llama-factory fixed", "PC905", BASE + "bf16: true\n"))


# -- plans ------------------------------------------------------------------------------


def test_bf16_full_finetune_upcasts_trainable_params_to_fp32() -> None:
    plan = plan_of(BASE + "finetuning_type: full\nbf16: true\n", ["A100"])
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.autocast_dtype.value) == (
        "bfloat16",
        "float32",
        "bfloat16",
    )
    assert plan.optimizer_state_dtype.value == "float32" and not plan.grad_scaler.value
    assert plan.load_dtype.origin.line == 8 and "init_adapter" in str(plan.param_dtype.origin)


def test_pure_bf16_full_finetune_has_bf16_weights_states_and_no_autocast() -> None:
    plan = plan_of(BASE + "finetuning_type: full\npure_bf16: true\n", ["A100"])
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.optimizer_state_dtype.value) == (
        "bfloat16",
        "bfloat16",
        "bfloat16",
    )
    assert plan.autocast_dtype.value is None and plan.loss_scaling.value == "none"
    assert plan.param_dtype.origin.line == 8 and plan.autocast_dtype.origin.line == 8


def test_pure_bf16_lora_adapters_follow_peft() -> None:
    text = BASE + "finetuning_type: lora\npure_bf16: true\n"
    new = plan_of(text, ["A100"], {"peft": "0.17.1"})
    assert new.param_dtype.value == "float32"
    override = new.override_of("param_dtype")
    assert override is not None and override.loser.origin.line == 8
    old = plan_of(text, ["A100"], {"peft": "0.11.1"})
    assert old.param_dtype.value == "bfloat16" and old.override_of("param_dtype") is None


def test_badam_keeps_half_precision_like_pure_bf16() -> None:
    plan = plan_of(BASE + "finetuning_type: full\nfp16: true\nuse_badam: true\n", ["A100"])
    assert plan.param_dtype.value == "float16" and plan.grad_scaler.value


def test_fp16_lora_scales_the_loss_and_upcasts_adapters() -> None:
    plan = plan_of(BASE + "finetuning_type: lora\nfp16: true\n", ["V100"])
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.autocast_dtype.value) == (
        "float16",
        "float32",
        "float16",
    )
    assert plan.grad_scaler.value and plan.loss_scaling.value == "dynamic"


def test_no_flag_infers_the_compute_dtype_from_checkpoint_and_gpu() -> None:
    qwen = plan_of(BASE, ["A100"])
    assert qwen.load_dtype.value == "bfloat16" and qwen.autocast_dtype.value is None
    assert "infer_optim_dtype" in str(qwen.load_dtype.origin)
    llama2 = plan_of(BASE.replace("Qwen/Qwen3-4B-Instruct-2507", "meta-llama/Llama-2-7b-hf"), ["A100"])
    assert llama2.load_dtype.value == "float16"
    v100 = plan_of(BASE, ["V100"], {"torch": "2.2.2"})
    assert v100.load_dtype.value == "float16"
    emulated = plan_of(BASE, ["V100"], {"torch": "2.4.0"})
    assert emulated.load_dtype.value == "bfloat16"


def test_qlora_computes_in_the_compute_dtype() -> None:
    bf16 = plan_of(BASE + "quantization_bit: 4\nbf16: true\n", ["A100"])
    assert bf16.quantization is not None and "compute bfloat16" in bf16.quantization.value
    assert bf16.quantization.origin.line == 7 and bf16.param_dtype.value == "float32"
    fp16 = plan_of(BASE + "quantization_bit: 4\nquantization_type: fp4\nfp16: true\n", ["T4"])
    assert fp16.quantization is not None and fp16.quantization.value.startswith(
        "4-bit fp4 (bitsandbytes), compute float16"
    )
    int8 = plan_of(BASE + "quantization_bit: 8\nbf16: true\n", ["A100"])
    assert int8.quantization is not None and int8.quantization.value == "8-bit (LLM.int8)"


def _with_zero(config: TrainingConfig, stage: int) -> TrainingConfig:
    ds = TrainingConfig(
        dialect="deepspeed",
        framework="deepspeed",
        path="ds.json",
        zero_stage=Sourced(stage, Origin("file", "ds.json", 3, 5, "stage")),
    )
    config.attached["deepspeed"] = ds
    return config


def test_zero3_without_quantization_loads_without_the_compute_dtype() -> None:
    text = BASE + "finetuning_type: full\nbf16: true\ndeepspeed: ds.json\n"
    plan = plan_for(_with_zero(read(text), 3), ["A100"], {"transformers": "4.57.1"})
    # LLaMA-Factory passes no dtype under ZeRO-3: transformers 4 loads float32 ...
    assert plan.load_dtype.value == "float32"
    override = plan.override_of("load_dtype")
    assert override is not None and override.loser.value == "bfloat16" and override.loser.origin.line == 8
    # ... and DeepSpeed's bf16 mode (added by accelerate for bf16: true) casts the model to
    # bf16, keeps fp32 master weights and runs no autocast
    assert (plan.param_dtype.value, plan.autocast_dtype.value) == ("bfloat16", None)
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    # transformers 5 loads the checkpoint's dtype
    new = plan_for(_with_zero(read(text), 3), ["A100"], {"transformers": "5.23.0"})
    assert new.load_dtype.value == "bfloat16" and new.param_dtype.value == "bfloat16"
    # ZeRO-2 and quantized ZeRO-3 load in the compute dtype
    zero2 = plan_for(_with_zero(read(text), 2), ["A100"], {"transformers": "4.57.1"})
    assert (zero2.load_dtype.value, zero2.param_dtype.value, zero2.overrides) == ("bfloat16", "bfloat16", [])
    qlora = plan_for(_with_zero(read(BASE + "quantization_bit: 4\nbf16: true\n"), 3), ["A100"])
    assert qlora.load_dtype.value == "bfloat16"


def test_infer_dtype_does_not_apply_to_training() -> None:
    plan = plan_of(BASE + "infer_dtype: float16\nbf16: true\n", ["A100"])
    assert plan.load_dtype.value == "bfloat16"
    override = plan.override_of("load_dtype")
    assert override is not None and override.loser.origin.line == 7


def test_gradient_checkpointing_is_on_unless_disabled() -> None:
    assert plan_of(BASE + "bf16: true\n").gradient_checkpointing.value is True  # type: ignore[union-attr]
    off = plan_of(BASE + "disable_gradient_checkpointing: true\n").gradient_checkpointing
    assert off is not None and off.value is False and off.origin.line == 7
    trainer_off = plan_of(BASE + "gradient_checkpointing: false\n")
    assert trainer_off.gradient_checkpointing is not None and trainer_off.gradient_checkpointing.value is True
    assert trainer_off.override_of("gradient_checkpointing") is not None


def test_attention_and_batch() -> None:
    plan = plan_of(BASE + "flash_attn: disabled\nper_device_train_batch_size: 4\ncutoff_len: 2048\n")
    assert plan.attention is not None and plan.attention.value == "eager"
    assert plan.batch is not None and plan.batch.value == "micro-batch 4, sequence 2048"
    assert plan.devices.value == "all"
    auto = plan_of(BASE)
    assert auto.attention is not None and auto.attention.value == "default"


def test_megatron_bridge_keeps_fp32_master_weights() -> None:
    text = BASE + "bf16: true\ntensor_model_parallel_size: 2\nmixed_precision: bf16_mixed\n"
    plan = plan_of(text)
    assert (plan.param_dtype.value, plan.grad_dtype.value, plan.optimizer_state_dtype.value) == (
        "bfloat16",
        "float32",
        "float32",
    )
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.autocast_dtype.value is None and not plan.grad_scaler.value
    mca = plan_for(read(BASE + "fp16: true\n", {"USE_MCA": "1"}))
    assert mca.param_dtype.value == "float16" and mca.loss_scaling.value == "dynamic" and not mca.grad_scaler.value


V1_QLORA = """
model: Qwen/Qwen3-0.6B
model_class: llm
peft_config:
  name: lora
  r: 16
quant_config:
  name: bnb
  quantization_bit: 4
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
micro_batch_size: 1
cutoff_len: 2048
"""


def test_v1_files_map_their_blocks() -> None:
    config = read(V1_QLORA)
    assert config.train_type is not None and config.train_type.value == "lora"
    assert config.quantization_bits is not None and config.quantization_bits.origin.line == 8
    assert config.fsdp_param_dtype is not None and config.fsdp_param_dtype.value == "bfloat16"
    assert [n for n in config.notes if n.kind == "unknown-key"] == []
    plan = plan_for(config, ["A100"])
    assert plan.quantization is not None and plan.quantization.value == "4-bit (bitsandbytes), compute float16"
    assert plan.autocast_dtype.value == "bfloat16" and plan.param_dtype.value == "float32"
    ds = read("model: m\nmodel_class: llm\ndist_config:\n  name: deepspeed\n  config_file: ds/z3.json\n")
    assert ds.references["deepspeed"].value == "ds/z3.json" and ds.references["deepspeed"].origin.line == 5


def test_bf16_on_v100_is_reported_with_a_fix_to_fp16() -> None:
    check_case(Case("lf bf16 on V100", "PC101", BASE + "bf16: true\n", gpus=["V100"], expect={(7, 1)}))
    check_case(Case("lf fp16 on V100", "PC101", BASE + "fp16: true\n", gpus=["V100"]))
