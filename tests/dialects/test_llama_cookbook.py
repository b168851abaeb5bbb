"""llama-cookbook (formerly llama-recipes): ``train_config`` keys and ``finetuning`` flags."""

from __future__ import annotations

from helpers import read_as

from .samples import EXAMPLES, at, read_file

CONFIGS = EXAMPLES / "configs" / "llama-recipes-titan-rtx-1080ti"


def test_lora_train_config() -> None:
    config = read_file(CONFIGS / "lora-fp16-one-card.yaml", "llama-cookbook")
    assert config.framework == "llama-cookbook" and config.traits.method_by_entry_point
    assert at(config.model) == ("meta-llama/Llama-3.2-3B-Instruct", 4, "model_name")
    assert at(config.fp16) == (True, 5, "use_fp16")
    assert at(config.train_type) == ("lora", 6, "use_peft")
    assert at(config.fsdp) == (False, 8, "enable_fsdp")


def test_full_finetune_train_config() -> None:
    config = read_file(CONFIGS / "full-finetune-fp16.yaml", "llama-cookbook")
    assert at(config.train_type) == ("full", 7, "use_peft")
    assert at(config.fp16) == (True, 6, "use_fp16")


def test_finetuning_module_flags() -> None:
    """``torchrun -m llama_recipes.finetuning --use_peft --use_fp16 ...``: python-fire flags."""
    config = read_file(EXAMPLES / "scripts" / "llama-recipes-titan-rtx-1080ti" / "finetune.sh", "llama-cookbook")
    assert at(config.train_type) == ("lora", 9, "--use_peft")
    assert at(config.fp16) == (True, 10, "--use_fp16")
    assert at(config.model) == ("meta-llama/Llama-3.2-3B-Instruct", 11, "--model_name")
    assert config.env["CUDA_VISIBLE_DEVICES"].value == "1"


def test_fsdp_block_and_quantisation() -> None:
    config = read_as(
        "llama-cookbook",
        """
        model_name: meta-llama/Llama-3.1-8B
        enable_fsdp: true
        use_peft: false
        quantization: 4bit
        fsdp_config:
          pure_bf16: true
          mixed_precision: false
          optimizer: anyprecision
        """,
    )
    assert at(config.fsdp) == (True, 2, "enable_fsdp")
    assert at(config.quantization_bits) == (4, 4, "quantization")
    assert at(config.pure_bf16) == (True, 6, "pure_bf16")
    assert at(config.fsdp_mixed_precision) == (False, 7, "mixed_precision")
    assert at(config.optimizer) == ("anyprecision", 8, "optimizer")
