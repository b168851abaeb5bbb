"""ms-swift: arguments files and ``swift sft`` flags mapped onto the model, with provenance."""

from __future__ import annotations

import pytest

from helpers import read_as
from precheck.frameworks.ms_swift.dialect import DEEPSPEED_PRESETS

from .samples import CORPUS, EXAMPLES, at, read_file

SFT_YAML = CORPUS / "other" / "modelscope__ms-swift__examples__yaml__deepspeed__sft.yaml"


@pytest.mark.skipif(not SFT_YAML.is_file(), reason="../shared/corpus is not beside this checkout")
def test_upstream_sft_yaml() -> None:
    config = read_file(SFT_YAML, "ms-swift")
    assert config.framework == "ms-swift" and config.traits.lora_by_default
    assert at(config.model) == ("Qwen/Qwen2.5-7B-Instruct", 3, "model")
    assert at(config.torch_dtype) == ("bfloat16", 4, "torch_dtype")
    assert at(config.train_type) == ("lora", 6, "tuner_type")  # 4.x's name for train_type
    assert at(config.zero_stage) == (2, 36, "deepspeed")  # `deepspeed: zero2`, a shipped preset
    assert config.offload_optimizer is None
    assert at(config.batch_size) == (1, 24, "per_device_train_batch_size")
    assert at(config.grad_accum_steps) == (8, 27, "gradient_accumulation_steps")
    assert at(config.seq_len) == (2048, 17, "max_length")
    assert config.notes == []


def test_example_with_explicit_fp16_false() -> None:
    config = read_file(EXAMPLES / "configs" / "ms-swift-v100" / "fp16-false-ignored.yaml", "ms-swift")
    assert at(config.train_type) == ("lora", 4, "train_type")
    assert at(config.torch_dtype) == ("float16", 5, "torch_dtype")
    assert at(config.fp16) == (False, 6, "fp16")
    assert config.bf16 is None


def test_swift_sft_flags() -> None:
    config = read_file(EXAMPLES / "scripts" / "ms-swift-v100" / "train.sh", "ms-swift")
    assert at(config.model) == ("Qwen/Qwen2.5-7B-Instruct", 11, "--model")
    assert at(config.torch_dtype) == ("float16", 13, "--torch_dtype")
    assert at(config.fp16) == (False, 14, "--fp16")
    assert config.env["CUDA_VISIBLE_DEVICES"].value == "0"


def test_2x_names_env_block_quantisation_and_offload_presets() -> None:
    config = read_as(
        "ms-swift",
        """
        model_id_or_path: qwen/Qwen-7B-Chat
        sft_type: lora
        dtype: fp16
        quant_bits: 4
        bnb_4bit_compute_dtype: bfloat16
        template_type: qwen
        deepspeed: zero3_offload
        ENV:
          CUDA_VISIBLE_DEVICES: "0,1"
        """,
    )
    assert at(config.model) == ("qwen/Qwen-7B-Chat", 1, "model_id_or_path")
    assert at(config.train_type) == ("lora", 2, "sft_type")
    assert at(config.torch_dtype) == ("float16", 3, "dtype")
    assert at(config.quantization_bits) == (4, 4, "quant_bits")
    assert at(config.quant_compute_dtype) == ("bfloat16", 5, "bnb_4bit_compute_dtype")
    assert DEEPSPEED_PRESETS["zero3_offload"] == (3, True)
    assert at(config.zero_stage) == (3, 7, "deepspeed")
    assert config.offload_optimizer is not None and config.offload_optimizer.value == "cpu"
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    assert at(config.env["CUDA_VISIBLE_DEVICES"]) == ("0,1", 9, "CUDA_VISIBLE_DEVICES")
