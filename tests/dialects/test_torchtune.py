"""torchtune: recognition, key mapping, and the pure-dtype plans its recipes produce."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import plan_for, read_as
from precheck import dialects
from precheck.config import TrainingConfig
from precheck.frameworks.hf_trainer.dialect import HfTrainer, _instantiates_components
from precheck.frameworks.torchtune.dialect import RecipeConfig, recipe_of
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
TT_CORPUS = sorted((CORPUS / "torchtune").glob("*.yaml")) if CORPUS.is_dir() else []
HYDRA = sorted((CORPUS / "other").glob("volcengine__verl__*.yaml")) if CORPUS.is_dir() else []


def read(text: str, path: str = "config.yaml") -> TrainingConfig:
    return read_as("torchtune", text, path=path)


def plan_of(text: str, gpus: list[str] | None = None, versions: dict[str, str] | None = None) -> PrecisionPlan:
    return plan_for(read(text), gpus, versions)


FULL_SINGLE = """
# Config for single device full finetuning in full_finetune_single_device.py
#   tune run full_finetune_single_device --config llama3_1/8B_full_single_device
output_dir: /tmp/out
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model
  max_seq_len: 2048
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Meta-Llama-3.1-8B-Instruct/
batch_size: 2
optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
gradient_accumulation_steps: 4
clip_grad_norm: 1.0
device: cuda
dtype: bf16
enable_activation_checkpointing: True
"""

LORA_DISTRIBUTED = """
#   tune run --nproc_per_node 2 lora_finetune_distributed --config llama3_1/8B_lora
base: /tmp/Meta-Llama-3.1-8B-Instruct
model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_rank: 8
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: ${base}/
optimizer:
  _component_: torch.optim.AdamW
batch_size: 2
dtype: bf16
device: cuda
fsdp_cpu_offload: True
fsdp_reshard_after_forward: False
"""


# -- recognition ------------------------------------------------------------------------


@pytest.mark.skipif(not TT_CORPUS, reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", TT_CORPUS, ids=lambda p: p.name.removeprefix("pytorch__torchtune__recipes__"))
def test_every_corpus_file_is_read_as_torchtune(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "torchtune"
    assert HfTrainer().score(doc) == 0 and _instantiates_components(doc)
    config = dialect.read(doc, {})
    plan = plan_for(config, ["8xH100"])
    # every corpus config trains in bf16 (the async GRPO recipe hard-codes it)
    assert plan.load_dtype.value == plan.param_dtype.value == "bfloat16"
    assert plan.autocast_dtype.value is None and plan.grad_scaler.value is False
    assert plan.loss_scaling.value == "none"


@pytest.mark.skipif(not HYDRA, reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", HYDRA, ids=lambda p: p.name)
def test_hydra_target_configs_are_not_torchtune(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "yaml")
    assert RecipeConfig().score(doc) == 0
    detected = dialects.detect(doc)
    assert detected is None or detected.name != "torchtune"


def test_hydra_target_snippet_is_not_torchtune() -> None:
    doc = parse("c.yaml", "model:\n  _target_: my.Model\noptimizer:\n  _target_: torch.optim.AdamW\n", "yaml")
    assert RecipeConfig().score(doc) == 0


def test_component_blocks_without_torchtune_paths_still_count() -> None:
    text = "model:\n  _component_: my.models.tiny\noptimizer:\n  _component_: torch.optim.SGD\ndtype: fp32\n"
    assert read(text).dialect == "torchtune"
    doc = parse("c.yaml", "optimizer:\n  _component_: torch.optim.SGD\nlr: 1\n", "yaml")
    assert RecipeConfig().score(doc) == 0  # one block, no torchtune component: not enough


def test_recipe_is_read_from_the_tune_run_comment() -> None:
    doc = parse("c.yaml", textwrap.dedent(LORA_DISTRIBUTED).lstrip("\n"), "yaml")
    assert recipe_of(doc) == ("lora_finetune_distributed", 1, 33)
    other = "#   tune run --nnodes 1 --nproc_per_node=4 dev/early_exit_finetune_distributed --config x\nmodel: {}\n"
    assert recipe_of(parse("c.yaml", other, "yaml"))[0] == "dev/early_exit_finetune_distributed"  # type: ignore[index]


# -- mapping ----------------------------------------------------------------------------


def test_full_single_device_mapping_with_lines() -> None:
    config = read(FULL_SINGLE)
    assert config.framework == "torchtune" and config.dialect == "torchtune"
    expected = {
        "precision": ("bf16", 20),
        "torch_dtype": ("bfloat16", 20),
        "train_type": ("full", 9),
        "batch_size": (2, 13),
        "grad_accum_steps": (4, 17),
        "max_grad_norm": (1.0, 18),
        "gradient_checkpointing": (True, 21),
        "seq_len": (2048, 7),
        "optimizer": ("torch.optim.AdamW", 15),
        "model": ("/tmp/Meta-Llama-3.1-8B-Instruct/", 12),
    }
    for name, (value, line) in expected.items():
        item = getattr(config, name)
        assert item is not None, name
        assert (item.value, item.origin.line) == (value, line), name
    assert config.precision is not None and config.precision.origin.key == "dtype"
    assert config.seq_len is not None and config.seq_len.origin.key == "tokenizer.max_seq_len"
    # the load dtype names no key, so generic fixes never write `dtype: float32`
    assert config.torch_dtype is not None and config.torch_dtype.origin.key is None
    assert config.fsdp is not None and config.fsdp.value is False and config.fsdp.origin.line == 2
    assert config.quantization_bits is None and config.flag_keys == {}
    assert not [n for n in config.notes if n.kind == "unknown-key"]


def test_lora_distributed_mapping() -> None:
    config = read(LORA_DISTRIBUTED)
    assert config.train_type is not None and config.train_type.value == "lora"
    assert config.model is not None and config.model.value == "/tmp/Meta-Llama-3.1-8B-Instruct/"
    assert config.fsdp is not None and config.fsdp.value is True
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "shard_grad_op"
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    assert config.offload_optimizer is not None and config.offload_optimizer.origin.line == 14


def test_qlora_builder_and_quantize_base() -> None:
    config = read("model:\n  _component_: torchtune.models.llama3_2.qlora_llama3_2_1b\ndtype: bf16\n")
    assert config.train_type is not None and config.train_type.value == "lora"
    assert config.quantization_bits is not None and config.quantization_bits.value == 4
    flagged = read("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  quantize_base: True\n")
    assert flagged.quantization_bits is not None and flagged.quantization_bits.origin.key == "model.quantize_base"
    plain = read("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\ndtype: bf16\n")
    assert plain.quantization_bits is None


def test_distributed_keys_mark_fsdp_without_a_comment() -> None:
    config = read("model:\n  _component_: torchtune.models.llama3_1.llama3_1_70b\nfsdp_cpu_offload: true\n")
    assert config.fsdp is not None and config.fsdp.value is True and config.fsdp.origin.line == 3
    unknown = read("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: bf16\n")
    assert unknown.fsdp is None


def test_optimizer_in_backward_is_mapped_and_the_model_kept() -> None:
    base = (
        "model:\n  _component_: torchtune.models.llama2.llama2_7b\n"
        "checkpointer:\n  checkpoint_dir: /tmp/Llama-2-7b-hf\n"
    )
    plain = read(base + "optimizer:\n  _component_: torch.optim.AdamW\n")
    assert plain.model is not None and plain.optimizer_in_backward is None
    paged = read(base + "optimizer:\n  _component_: bitsandbytes.optim.PagedAdamW\n")
    assert paged.model is not None
    in_bwd = read(base + "optimizer:\n  _component_: torch.optim.AdamW\noptimizer_in_bwd: True\n")
    assert in_bwd.model is not None
    assert in_bwd.optimizer_in_backward is not None and in_bwd.optimizer_in_backward.value is True
    assert in_bwd.optimizer_in_backward.origin.line == 7


def test_ppo_micro_batch_is_ppo_batch_size_over_accumulation() -> None:
    text = (
        "policy_model:\n  _component_: torchtune.models.mistral.mistral_7b\nbatch_size: 64\n"
        "ppo_batch_size: 32\ngradient_accumulation_steps: 4\n"
    )
    config = read(text)
    assert config.batch_size is not None and config.batch_size.value == 8 and config.batch_size.origin.line == 4


# -- resolution -------------------------------------------------------------------------


def test_bf16_full_single_device_is_pure_bf16() -> None:
    plan = plan_of(FULL_SINGLE, ["A100"])
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.grad_dtype.value) == ("bfloat16",) * 3
    assert plan.optimizer_state_dtype.value == "bfloat16"
    assert plan.autocast_dtype.value is None and plan.master_weights is not None
    assert plan.master_weights.value is None and "in place" in str(plan.master_weights.origin)
    assert (plan.loss_scaling.value, plan.grad_scaler.value) == ("none", False)
    assert plan.devices.value == "first" and plan.load_dtype.origin.key == "dtype"
    assert plan.sharding is not None and plan.sharding.value == "none"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value is None
    assert plan.gradient_checkpointing is not None and plan.gradient_checkpointing.value is True


def test_fp32() -> None:
    plan = plan_of("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: fp32\n")
    assert plan.load_dtype.value == plan.param_dtype.value == plan.optimizer_state_dtype.value == "float32"
    assert plan.grad_scaler.value is False and plan.autocast_dtype.value is None
    null = plan_of("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: null\n")
    assert null.load_dtype.value == "float32"


def test_lora_adapters_stay_in_dtype_not_float32() -> None:
    plan = plan_of(LORA_DISTRIBUTED, ["2xA100"])
    assert plan.param_dtype.value == "bfloat16" and "validate_expected_param_dtype" in str(plan.param_dtype.origin)
    assert plan.devices.value == "all"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"
    assert plan.sharding is not None and "FSDP shard_grad_op" in plan.sharding.value
    assert "offloaded to cpu" in plan.sharding.value


def test_qlora_quantization_computes_in_dtype() -> None:
    plan = plan_of("model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\ndtype: bf16\n")
    assert plan.quantization is not None and plan.quantization.value == "4-bit NF4 (torchao), compute bfloat16"
    fp32 = plan_of("model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\ndtype: fp32\n")
    assert fp32.quantization is not None and fp32.quantization.value.endswith("compute float32")


def test_fp16_is_shown_with_the_recipes_error() -> None:
    """Training recipes (their configs have an optimizer) refuse fp16; generate/eval/quantize take it."""
    training = "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\noptimizer:\n  lr: 1e-5\ndtype: fp16\n"
    plan = plan_of(training)
    assert plan.load_dtype.value == "float16" and plan.grad_scaler.value is False
    assert plan.loss_scaling.value == "none" and plan.autocast_dtype.value is None
    assert "full fp16 training is not supported with this recipe" in str(plan.load_dtype.origin)
    generation = plan_of("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: fp16\n")
    assert "not supported" not in str(generation.load_dtype.origin)


def test_torch_spelling_is_rejected_by_get_dtype() -> None:
    plan = plan_of("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: bfloat16\n")
    assert plan.load_dtype.value == "bfloat16"
    assert "Dtype bfloat16 must be one of fp16, bf16, fp32, fp64 for finetuning." in str(plan.load_dtype.origin)


def test_missing_dtype() -> None:
    plan = plan_of("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n")
    assert plan.load_dtype.value == "float32" and "Missing key dtype" in str(plan.load_dtype.origin)
    grpo = plan_of(
        "#     tune run dev/async_grpo_full_finetune_distributed --config dev/qwen3B_async_grpo\n"
        "model:\n  _component_: torchtune.models.qwen2_5.qwen2_5_3b\n"
    )
    assert grpo.load_dtype.value == "bfloat16" and "get_dtype('bf16')" in str(grpo.load_dtype.origin)
    assert grpo.devices.value == "all"


def test_bf16_on_old_torch_and_pre_ampere_stops_the_run() -> None:
    text = "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: bf16\n"
    old = plan_of(text, ["V100"], {"torch": "2.2.2"})
    assert "bf16 precision was requested but not available on this hardware" in str(old.load_dtype.origin)
    new = plan_of(text, ["V100"], {"torch": "2.4.0"})
    assert "not available" not in str(new.load_dtype.origin)
    cpu = plan_of(text + "device: cpu\n", ["V100"], {"torch": "2.2.2"})
    assert "not available" not in str(cpu.load_dtype.origin) and cpu.devices.value == ""


def test_device_index_and_cpu() -> None:
    base = "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: bf16\n"
    assert plan_of(base + "device: cuda:1\n").devices.value == "1"
    assert plan_of(base + "device: cpu\n").devices.value == ""
    assert plan_of(base).devices.value == "first"


def test_optimizer_state_dtypes() -> None:
    base = "model:\n  _component_: torchtune.models.llama2.llama2_7b\ndtype: bf16\noptimizer:\n  _component_: "
    assert plan_of(base + "bitsandbytes.optim.PagedAdamW\n").optimizer_state_dtype.value == "float32"
    assert plan_of(base + "bitsandbytes.optim.PagedAdamW8bit\n").optimizer_state_dtype.value == "uint8"
    assert plan_of(base + "torchao.optim.AdamW8bit\n").optimizer_state_dtype.value == "uint8"
    assert plan_of(base + "torch.optim.AdamW\n").optimizer_state_dtype.value == "bfloat16"


def test_fp8_training_by_version() -> None:
    text = (
        "#   tune run --nproc_per_node 8 full_finetune_distributed --config x\n"
        "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: bf16\nenable_fp8_training: true\n"
    )
    new = plan_of(text)
    assert new.fp8 is not None and new.fp8.value is not None and "torchao" in new.fp8.value
    old = plan_of(text, versions={"torchtune": "0.6.1"})
    assert old.fp8 is not None and old.fp8.value is None and "does not read" in str(old.fp8.origin)
