"""The built-in table of checkpoint sizes: counts, lookups and local config.json parsing."""

from __future__ import annotations

import pytest

from precheck.model_sizes import SIZES, ModelSize, count_params, dims_from_config, size_for

BY_NAME = {size.name: size for size in SIZES}
PUBLISHED = [size for size in SIZES if size.published_params is not None]

#: parameter counts of the released checkpoints, from frameworks that load them and count
#: every tensor: keras-hub presets ("params"), KerasNLP's 2023 T5 presets, a checkpoint
#: weight index (Qwen3-1.7B's "total_parameters", Phi-2's total_size / 2 bytes) and, for
#: T5-3B/11B, a public table of the Hugging Face checkpoints' numel
EXACT_COUNTS = {
    "Llama-2-7b": 6_738_415_616,  # keras-hub llama2_7b_en
    "Meta-Llama-3-8B": 8_030_261_248,  # keras-hub llama3_8b_en
    "Llama-3.1-8B": 8_030_261_248,  # same dims as Llama 3 8B
    "Mistral-7B-v0.1": 7_241_732_096,  # keras-hub mistral_7b_en
    "Qwen2.5-0.5B": 494_032_768,  # keras-hub qwen2.5_0.5b_en
    "Qwen2.5-3B": 3_085_938_688,  # keras-hub qwen2.5_3b_en
    "Qwen2.5-32B": 32_763_876_352,  # keras-hub qwen2.5_instruct_32b_en
    "Qwen2.5-72B": 72_706_203_648,  # keras-hub qwen2.5_instruct_72b_en
    "Qwen3-0.6B": 596_049_920,  # keras-hub qwen3_0.6b_en
    "Qwen3-1.7B": 1_720_574_976,  # keras-hub qwen3_1.7b_en; weight index total_parameters
    "Qwen3-4B": 4_022_468_096,  # keras-hub qwen3_4b_en
    "Qwen3-8B": 8_190_735_360,  # keras-hub qwen3_8b_en
    "Qwen3-14B": 14_768_307_200,  # keras-hub qwen3_14b_en
    "Qwen3-32B": 32_762_123_264,  # keras-hub qwen3_32b_en
    "gemma-2b": 2_506_172_416,  # keras-hub gemma_2b_en
    "gemma-7b": 8_537_680_896,  # keras-hub gemma_7b_en
    "gemma-2-2b": 2_614_341_888,  # keras-hub gemma2_2b_en
    "gemma-2-9b": 9_241_705_984,  # keras-hub gemma2_9b_en
    "gemma-2-27b": 27_227_128_320,  # keras-hub gemma2_27b_en
    "phi-2": 2_779_683_840,  # weight index total_size 5,559,367,680 B / 2
    "Phi-3-mini": 3_821_079_552,  # keras-hub phi3_mini_4k_instruct_en
    "gpt2": 124_439_808,  # keras-hub gpt2_base_en
    "gpt2-medium": 354_823_168,  # keras-hub gpt2_medium_en
    "gpt2-large": 774_030_080,  # keras-hub gpt2_large_en
    "gpt2-xl": 1_557_611_200,  # keras-hub gpt2_extra_large_en
    "t5-small": 60_506_624,  # KerasNLP t5_small
    "t5-base": 222_903_552,  # KerasNLP t5_base
    "t5-large": 737_668_096,  # KerasNLP t5_large
    "t5-3b": 2_851_598_336,
    "t5-11b": 11_307_321_344,
}

REQUIRED = [
    "Llama-2-7b",
    "Llama-2-13b",
    "Llama-2-70b",
    "Meta-Llama-3-8B",
    "Meta-Llama-3-70B",
    "Llama-3.1-8B",
    "Llama-3.1-70B",
    "Llama-3.2-1B",
    "Llama-3.2-3B",
    "Mistral-7B-v0.1",
    "Qwen2.5-0.5B",
    "Qwen2.5-1.5B",
    "Qwen2.5-3B",
    "Qwen2.5-7B",
    "Qwen2.5-14B",
    "Qwen2.5-32B",
    "Qwen2.5-72B",
    "Qwen3-0.6B",
    "Qwen3-1.7B",
    "Qwen3-4B",
    "Qwen3-8B",
    "Qwen3-14B",
    "Qwen3-32B",
    "gemma-2b",
    "gemma-7b",
    "gemma-2-2b",
    "gemma-2-9b",
    "gemma-2-27b",
    "phi-2",
    "Phi-3-mini",
    "TinyLlama-1.1B",
    "gpt2",
    "gpt2-medium",
    "gpt2-large",
    "gpt2-xl",
    "t5-small",
    "t5-base",
    "t5-large",
    "t5-3b",
    "t5-11b",
    "internlm2-7b",
    "internlm2-1_8b",
]


def test_table_covers_the_popular_checkpoints() -> None:
    assert sorted(BY_NAME) == sorted(REQUIRED)
    assert len(BY_NAME) == len(SIZES)
    assert all(size.source for size in SIZES)


@pytest.mark.parametrize("size", PUBLISHED, ids=lambda size: size.name)
def test_count_within_two_percent_of_published(size: ModelSize) -> None:
    assert size.published_params is not None
    assert count_params(size) == pytest.approx(size.published_params, rel=0.02)


@pytest.mark.parametrize(("name", "expected"), sorted(EXACT_COUNTS.items()))
def test_count_matches_the_released_checkpoint(name: str, expected: int) -> None:
    assert count_params(BY_NAME[name]) == expected


def test_params_property_is_the_count() -> None:
    assert BY_NAME["Llama-2-7b"].params == 6_738_415_616


@pytest.mark.parametrize(
    ("model_name", "expected"),
    [
        ("meta-llama/Llama-2-7b-hf", "Llama-2-7b"),
        ("meta-llama/Llama-2-7b-chat-hf", "Llama-2-7b"),
        ("meta-llama/Llama-2-70b-hf", "Llama-2-70b"),
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B"),
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen2.5-72B"),
        ("unsloth/tinyllama-bnb-4bit", "TinyLlama-1.1B"),
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "TinyLlama-1.1B"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("google/gemma-2b", "gemma-2b"),
        ("google/gemma-1.1-7b-it", "gemma-7b"),
        ("openai-community/gpt2-large", "gpt2-large"),
        ("openai-community/gpt2", "gpt2"),
        ("google-t5/t5-base", "t5-base"),
        ("t5-11b", "t5-11b"),
        ("NousResearch/Meta-Llama-3.1-8B", "Llama-3.1-8B"),
        ("meta-llama/Meta-Llama-3-70B-Instruct", "Meta-Llama-3-70B"),
        ("unsloth/llama-3-8b-bnb-4bit", "Meta-Llama-3-8B"),
        ("unsloth/Llama-3.2-1B-Instruct-unsloth-bnb-4bit", "Llama-3.2-1B"),
        ("mistralai/Mistral-7B-Instruct-v0.2", "Mistral-7B-v0.1"),
        ("unsloth/mistral-7b-bnb-4bit", "Mistral-7B-v0.1"),
        ("Qwen/Qwen3-8B-Base", "Qwen3-8B"),
        ("microsoft/Phi-3-mini-128k-instruct", "Phi-3-mini"),
        ("microsoft/phi-2", "phi-2"),
        ("internlm/internlm2-chat-7b", "internlm2-7b"),
        ("/root/share/model_repos/internlm2-chat-7b", "internlm2-7b"),
        ("internlm/internlm2_5-7b-chat", "internlm2-7b"),
        ("internlm/internlm2-chat-1_8b", "internlm2-1_8b"),
        ("META-LLAMA/LLAMA-2-13B-HF", "Llama-2-13b"),
        ("/data/checkpoints/Qwen2.5-0.5B-Instruct/", "Qwen2.5-0.5B"),
        (
            "/root/.cache/huggingface/hub/models--google--gemma-2-27b/snapshots/" + "a" * 40,
            "gemma-2-27b",
        ),
    ],
)
def test_size_for_known(model_name: str, expected: str) -> None:
    found = size_for(model_name)
    assert found is not None
    assert found.name == expected


@pytest.mark.parametrize(
    "model_name",
    [
        "",
        "/",
        "bert-base-uncased",
        "distilgpt2",
        "mistralai/Mistral-7B-Instruct-v0.3",
        "Qwen/Qwen2.5-7B-Instruct-1M",
        "Qwen/Qwen2.5-Coder-7B-Instruct",
        "google/t5-v1_1-base",
        "google/flan-t5-base",
        "meta-llama/Llama-2-34b-hf",
        "my-org/llama-2-7b-finetuned",
        "microsoft/Phi-3.5-mini-instruct",
        "TinyLlama/TinyLlama_v1.1",
        "t5",
        "Qwen/Qwen3-30B-A3B",
        "internlm/internlm2-chat-20b",
        "internlm/internlm-chat-7b",
    ],
)
def test_size_for_unknown_is_none(model_name: str) -> None:
    assert size_for(model_name) is None


@pytest.mark.parametrize("size", SIZES, ids=lambda size: size.name)
def test_every_entry_is_found_by_its_own_name(size: ModelSize) -> None:
    assert size_for(size.name) is size


LLAMA_2_7B_CONFIG: dict[str, object] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "rms_norm_eps": 1e-05,
    "torch_dtype": "float16",
}

GPT2_CONFIG: dict[str, object] = {
    "architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2",
    "n_embd": 768,
    "n_layer": 12,
    "n_head": 12,
    "n_inner": None,
    "n_positions": 1024,
    "n_ctx": 1024,
    "vocab_size": 50257,
}


def test_dims_from_llama_config() -> None:
    dims = dims_from_config(LLAMA_2_7B_CONFIG)
    assert dims is not None
    assert (dims.hidden_size, dims.num_hidden_layers, dims.intermediate_size) == (4096, 32, 11008)
    assert dims.mlp == "gated"
    assert not dims.tie_word_embeddings
    assert count_params(dims) == count_params(BY_NAME["Llama-2-7b"]) == 6_738_415_616


def test_dims_from_llama_config_with_grouped_query_attention() -> None:
    tinyllama = {
        **LLAMA_2_7B_CONFIG,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 22,
        "num_key_value_heads": 4,
    }
    dims = dims_from_config(tinyllama)
    assert dims is not None
    assert count_params(dims) == count_params(BY_NAME["TinyLlama-1.1B"]) == 1_100_048_384


def test_dims_from_gpt2_config() -> None:
    dims = dims_from_config(GPT2_CONFIG)
    assert dims is not None
    assert dims.intermediate_size == 4 * 768
    assert (dims.mlp, dims.bias, dims.norm, dims.learned_positions) == ("plain", "all", "layer", 1024)
    assert dims.tie_word_embeddings
    assert count_params(dims) == 124_439_808


def test_dims_from_t5_config() -> None:
    t5_small = {
        "model_type": "t5",
        "d_model": 512,
        "d_ff": 2048,
        "d_kv": 64,
        "num_heads": 8,
        "num_layers": 6,
        "num_decoder_layers": 6,
        "vocab_size": 32128,
        "feed_forward_proj": "relu",
        "is_encoder_decoder": True,
    }
    dims = dims_from_config(t5_small)
    assert dims is not None
    assert dims.encoder_decoder
    assert count_params(dims) == 60_506_624


def test_dims_from_qwen3_config_reads_head_dim() -> None:
    qwen3 = {
        "model_type": "qwen3",
        "hidden_size": 1024,
        "intermediate_size": 3072,
        "num_attention_heads": 16,
        "num_hidden_layers": 28,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    }
    dims = dims_from_config(qwen3)
    assert dims is not None
    assert count_params(dims) == 596_049_920


@pytest.mark.parametrize("missing", ["hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"])
def test_dims_from_config_without_a_required_key_is_none(missing: str) -> None:
    config = {key: value for key, value in LLAMA_2_7B_CONFIG.items() if key != missing}
    assert dims_from_config(config) is None


def test_dims_from_config_needs_the_mlp_size_except_for_gpt2() -> None:
    config = {key: value for key, value in LLAMA_2_7B_CONFIG.items() if key != "intermediate_size"}
    assert dims_from_config(config) is None
    assert dims_from_config({}) is None
    assert dims_from_config({"hidden_size": True, "num_hidden_layers": 2, "num_attention_heads": 2}) is None
