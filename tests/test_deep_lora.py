"""The LoRA settings ``--deep`` counts adapters with, read from each framework's keys."""

from __future__ import annotations

from helpers import read_as
from precheck.deep.lora import ALL_LINEAR, lora_settings
from precheck.memory import DEFAULT_LORA_RANK

TRL = "model_name_or_path: m\noutput_dir: o\nlearning_rate: 1\nper_device_train_batch_size: 1\nuse_peft: true\n"


def test_trl_keys() -> None:
    config = read_as("trl", TRL + "lora_r: 8\nlora_target_modules: [q_proj, k_proj]\nlora_modules_to_save: [lm_head]\n")
    lora = lora_settings(config, "llama")
    assert (lora.rank, lora.targets, lora.modules_to_save, lora.dora) == (8, ("q_proj", "k_proj"), ("lm_head",), False)


def test_trl_defaults_are_peft_s_for_the_family() -> None:
    lora = lora_settings(read_as("trl", TRL), "qwen2")
    assert (lora.rank, lora.targets) == (DEFAULT_LORA_RANK, ("q_proj", "v_proj"))
    assert lora_settings(read_as("trl", TRL), "an_unknown_family").targets == ALL_LINEAR


def test_a_one_item_all_linear_list_is_all_linear() -> None:
    """TRL's ModelConfig turns ``[all-linear]`` into the string PEFT reads as every linear layer."""
    lora = lora_settings(read_as("trl", TRL + "lora_target_modules: [all-linear]\nuse_dora: true\n"), "llama")
    assert lora.targets == ALL_LINEAR and lora.dora


def test_llama_factory_keys() -> None:
    text = (
        "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nlora_rank: 4\nlora_target: q_proj,v_proj\n"
        "additional_target: embed_tokens\noutput_dir: o\nbf16: true\n"
    )
    lora = lora_settings(read_as("llama-factory", text), "llama")
    assert (lora.rank, lora.targets, lora.modules_to_save) == (4, ("q_proj", "v_proj"), ("embed_tokens",))
    everything = lora_settings(read_as("llama-factory", text.replace("q_proj,v_proj", "all")), "llama")
    assert everything.targets == ALL_LINEAR


def test_axolotl_lora_target_linear() -> None:
    text = "base_model: m\nadapter: lora\nlora_r: 32\nlora_target_linear: true\nmicro_batch_size: 1\nbf16: true\n"
    lora = lora_settings(read_as("axolotl", text), "llama")
    assert (lora.rank, lora.targets) == (32, ALL_LINEAR)
