import json

import pytest

from helpers import Case, check_case

BASE = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"
AXOLOTL_FP8 = (
    "base_model: meta-llama/Llama-3.2-1B\ndatasets:\n  - path: x\nmicro_batch_size: 1\nbf16: true\nfp8: true\n"
)
WIDE_HEADS = {"config.json": json.dumps({"hidden_size": 4096, "num_attention_heads": 8, "torch_dtype": "bfloat16"})}

CASES = [
    Case("tf32 on a V100", "PC103", BASE + "tf32: true\n", ["V100"], {(4, 1)}),
    Case("fixed: tf32 off on a V100", "PC103", BASE + "tf32: false\n", ["V100"]),
    Case("tf32 on an A100", "PC103", BASE + "tf32: true\n", ["A100"]),
    # sm_100 is compute capability 10.0 (Blackwell), not 1.0
    Case("tf32 on a custom sm_100 card", "PC103", BASE + "tf32: true\n", ["sm_100:180GB"]),
    Case("tf32 on a mixed box, weakest card", "PC103", BASE + "tf32: true\n", ["A100", "T4"], {(4, 1)}),
    Case("bf16 on an A100 is not fp8", "PC104", BASE + "bf16: true\n", ["A100"]),
    Case(
        "LLaMA-Factory fp8 on an A100 (accelerate falls back to fp16)",
        "PC104",
        "model_name_or_path: m\nstage: sft\nfinetuning_type: full\ndo_train: true\ntemplate: llama3\n"
        "bf16: true\nfp8: true\n",
        ["A100"],
        {(7, 1)},
    ),
    # axolotl's check_fp8 asks compute capability 9.0 (cli/config.py:356@0.19.0): sm_89 is refused too
    Case("axolotl fp8 on an L40S (sm_89)", "PC104", AXOLOTL_FP8, ["L40S"], {(6, 1)}),
    Case(
        "axolotl 0.12.2 fp8 on an L40S (no own check then)",
        "PC104",
        AXOLOTL_FP8,
        ["L40S"],
        versions={"axolotl": "0.12.2"},
    ),
    Case("fixed: axolotl fp8 on an H100", "PC104", AXOLOTL_FP8, ["H100"]),
    Case(
        "fixed: LLaMA-Factory fp8 on an H100",
        "PC104",
        "model_name_or_path: m\nstage: sft\nfinetuning_type: full\ndo_train: true\ntemplate: llama3\n"
        "bf16: true\nfp8: true\n",
        ["H100"],
    ),
    Case(
        "flash-attention-2 on a T4",
        "PC105",
        BASE + "bf16: false\nfp16: true\nattn_implementation: flash_attention_2\n",
        ["T4"],
        {(6, 1)},
    ),
    Case("fixed: sdpa on a T4", "PC105", BASE + "fp16: true\nattn_implementation: sdpa\n", ["T4"]),
    Case(
        "flash-attention-2 on an A100", "PC105", BASE + "bf16: true\nattn_implementation: flash_attention_2\n", ["A100"]
    ),
    # FlashAttention-3's hopper/ build runs on sm_80+ (hopper/flash_api.cpp:677@v2.8.3)
    Case(
        "flash-attention-3 on an A100", "PC105", BASE + "bf16: true\nattn_implementation: flash_attention_3\n", ["A100"]
    ),
    Case(
        "flash-attention-2 on a custom sm_120 card",
        "PC105",
        BASE + "bf16: true\nattn_implementation: flash_attention_2\n",
        ["sm_120:32GB"],
    ),
    Case(
        "flash-attention-3 on a V100",
        "PC105",
        BASE + "fp16: true\nattn_implementation: flash_attention_3\n",
        ["V100"],
        {(5, 1)},
    ),
    Case(
        "flash-attention-3 on an H100", "PC105", BASE + "bf16: true\nattn_implementation: flash_attention_3\n", ["H100"]
    ),
    Case(
        "head dim 512 from the local checkpoint",
        "PC105",
        "model_name_or_path: .\noutput_dir: out\nlearning_rate: 1.0e-5\nbf16: true\n"
        "attn_implementation: flash_attention_2\n",
        ["H100"],
        {(5, 1)},
        files=WIDE_HEADS,
    ),
    Case(
        "flash attention in fp32 (transformers 4 loads float32, no autocast)",
        "PC106",
        BASE + "attn_implementation: flash_attention_2\n",
        [],
        {(4, 1)},
        versions={"transformers": "4.46.1"},
    ),
    Case(
        "fixed: bf16 autocast",
        "PC106",
        BASE + "bf16: true\nattn_implementation: flash_attention_2\n",
        versions={"transformers": "4.46.1"},
    ),
    Case(
        "explicit float32 weights with flash attention",
        "PC106",
        BASE + "torch_dtype: float32\nattn_implementation: flash_attention_2\n",
        [],
        {(5, 1)},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)
