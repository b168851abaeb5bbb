from pathlib import Path

import pytest

from helpers import Case, check_case, run_case

SWIFT = """
model: meta-llama/Llama-2-7b-chat-hf
train_type: lora
torch_dtype: float16
fp16: false
"""
AFFECTED = {"ms-swift": "3.2.2"}
FIXED = {"ms-swift": "3.3.1"}

TINYLLAMA = """
model_name_or_path: TinyLlama/TinyLlama-1.1B-Chat-v1.0
output_dir: out
per_device_train_batch_size: 2
fp16: true
"""

CASES = [
    Case("seed: fp16 false ignored on ms-swift 3.2.2", "PC201", SWIFT, ["V100"], {(3, 1)}, versions=AFFECTED),
    Case(
        "float32 is forced to fp16 AMP too",
        "PC201",
        SWIFT.replace("float16", "float32"),
        ["V100"],
        {(3, 1)},
        versions=AFFECTED,
    ),
    Case("fixed release keeps the flag", "PC201", SWIFT, ["V100"], versions=FIXED),
    Case("version unknown: still reported (as a warning)", "PC201", SWIFT, ["V100"], {(3, 1)}),
    Case(
        "fixed twin: fp16 AMP with fp32 weights",
        "PC201",
        SWIFT.replace("float16", "float32").replace("fp16: false", "fp16: true"),
        ["V100"],
        versions=AFFECTED,
    ),
    Case(
        "bf16 torch_dtype does not touch fp16",
        "PC201",
        SWIFT.replace("float16", "bfloat16"),
        ["A100"],
        versions=AFFECTED,
    ),
    Case("seed: TinyLlama in fp16", "PC202", TINYLLAMA, ["RTX 4090"], {(4, 1)}),
    Case("fixed: TinyLlama in bf16", "PC202", TINYLLAMA.replace("fp16: true", "bf16: true"), ["RTX 4090"]),
    Case(
        "Llama 2 was released in fp16",
        "PC202",
        TINYLLAMA.replace("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "meta-llama/Llama-2-7b-hf"),
        ["V100"],
    ),
    Case(
        "an unknown model is not guessed",
        "PC202",
        TINYLLAMA.replace("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "my-org/my-model"),
        ["RTX 4090"],
    ),
]


def test_llama_recipes_fix_never_invents_a_bf16_key() -> None:
    case = Case(
        "fp16 llama-recipes on an A100",
        "PC202",
        "model_name: meta-llama/Llama-3.2-3B\nuse_fp16: true\nuse_peft: true\n",
        ["A100"],
    )
    (finding,) = run_case(case)
    assert finding.fix is not None
    assert [(e.key, e.value) for e in finding.fix.edits] == [("use_fp16", False)]


HF_APEX = """
model_name_or_path: m
output_dir: out
learning_rate: 1.0e-5
bf16: true
half_precision_backend: apex
"""
V4 = {"transformers": "4.57.6"}
V5 = {"transformers": "5.0.0"}

APEX_CASES = [
    Case("apex with bf16 on transformers 4", "PC203", HF_APEX, ["A100"], {(5, 1)}, versions=V4),
    Case(
        "fixed: no backend key", "PC203", HF_APEX.replace("half_precision_backend: apex\n", ""), ["A100"], versions=V4
    ),
    Case("apex with fp16 is allowed", "PC203", HF_APEX.replace("bf16", "fp16"), ["V100"], versions=V4),
    Case("transformers 5 has no such key", "PC204", HF_APEX, ["A100"], {(5, 1)}, versions=V5),
    Case("version unknown: newest releases reject it", "PC204", HF_APEX, ["A100"], {(5, 1)}),
    Case("transformers 4 accepts the key", "PC204", HF_APEX, ["A100"], versions=V4),
    Case("fixed: key removed", "PC204", HF_APEX.replace("half_precision_backend: apex\n", ""), ["A100"], versions=V5),
]
CASES += APEX_CASES


BF16_MODEL_CASES = [
    Case(
        "TinyLlama loaded in fp16 with fp16 AMP",
        "PC202",
        TINYLLAMA.replace("output_dir: out", "torch_dtype: float16\noutput_dir: out"),
        ["A100"],
        {(5, 1)},
    ),
    Case(
        "ms-swift: torch_dtype float16 on a Qwen2.5",
        "PC202",
        "model: Qwen/Qwen2.5-7B-Instruct\ntrain_type: lora\ntorch_dtype: float16\n",
        ["A100"],
        {(3, 1)},
    ),
    Case(
        "llama-30b (LLaMA 1) is not Llama 3",
        "PC202",
        TINYLLAMA.replace("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "huggyllama/llama-30b"),
        ["A100"],
    ),
]
CASES += BF16_MODEL_CASES


BOTH = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nfp16: true\nbf16: true\n"
BOTH_CASES = [
    Case("fp16 and bf16 both true", "PC205", BOTH, ["A100"], {(5, 1)}),
    Case("on a V100 keep fp16", "PC205", BOTH, ["V100"], {(5, 1)}),
    Case("fixed: bf16 only", "PC205", BOTH.replace("fp16: true", "fp16: false"), ["A100"]),
]
CASES += BOTH_CASES


LOCAL_BF16 = {"ckpt/config.json": '{"architectures": ["MyForCausalLM"], "torch_dtype": "bfloat16"}'}
LOCAL_CASES = [
    Case(
        "fp16 on a local checkpoint saved in bf16",
        "PC202",
        "model_name_or_path: ckpt\noutput_dir: o\nlearning_rate: 1\nfp16: true\n",
        ["A100"],
        {(4, 1)},
        files=LOCAL_BF16,
    ),
    Case(
        "fixed: bf16 on the local checkpoint",
        "PC202",
        "model_name_or_path: ckpt\noutput_dir: o\nlearning_rate: 1\nbf16: true\n",
        ["A100"],
        files=LOCAL_BF16,
    ),
    Case(
        "fp16 on a local fp16 checkpoint",
        "PC202",
        "model_name_or_path: ckpt\noutput_dir: o\nlearning_rate: 1\nfp16: true\n",
        ["A100"],
        files={"ckpt/config.json": '{"torch_dtype": "float16"}'},
    ),
    Case(
        "QLoRA with an explicit fp32 compute dtype on fp16 weights",
        "PC206",
        "model_name_or_path: m\noutput_dir: o\nlearning_rate: 1\nload_in_4bit: true\ntorch_dtype: float16\n"
        "bnb_4bit_compute_dtype: float32\n",
        [],
        {(6, 1)},
    ),
    Case(
        "fixed: fp16 compute dtype",
        "PC206",
        "model_name_or_path: m\noutput_dir: o\nlearning_rate: 1\nload_in_4bit: true\ntorch_dtype: float16\n"
        "bnb_4bit_compute_dtype: float16\n",
    ),
    Case(
        "TRL computes 4-bit layers in torch_dtype",
        "PC206",
        "model_name_or_path: m\noutput_dir: o\nlearning_rate: 1\nload_in_4bit: true\ntorch_dtype: float16\n"
        "use_peft: true\nlora_r: 16\n",
    ),
]
LF = "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\ndo_train: true\ntemplate: llama3\n"
LOCAL_CASES += [
    Case("LLaMA-Factory with fp16 and bf16", "PC205", LF + "fp16: true\nbf16: true\n", ["A100"], {(7, 1)}),
    Case("fixed: LLaMA-Factory bf16 only", "PC205", LF + "bf16: true\n", ["A100"]),
]
CASES += LOCAL_CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def test_ms_swift_both_flags_are_rewritten_from_torch_dtype() -> None:
    """ms-swift 3.0.0-3.3.0.post1 `_init_torch_dtype` rewrites both flags (model_args.py:100-115@3.2.2):
    no "At most one" error, the user's fp16 is ignored; 3.3.1 keeps explicit flags and transformers refuses."""
    both = SWIFT.replace("fp16: false", "fp16: true\nbf16: true")
    old = run_case(Case("", "PC205", both, ["A100"], versions=AFFECTED))
    assert len(old) == 1 and "At most one" not in old[0].message
    assert "trains in fp16" in old[0].message and "ignored silently" in old[0].message
    new = run_case(Case("", "PC205", both, ["A100"], versions=FIXED))
    assert len(new) == 1 and "At most one of fp16 and bf16 can be True" in new[0].message


H2O_EXAMPLE = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "other"
H2O_EXAMPLE = H2O_EXAMPLE / "h2oai__h2o-llmstudio__examples__example_oasst2.yaml"


@pytest.mark.skipif(not H2O_EXAMPLE.is_file(), reason="../shared/corpus is not beside this checkout")
def test_h2o_float16_autocast_over_a_bf16_backbone() -> None:
    """llm_studio/train.py: autocast(dtype=mixed_precision_dtype) over the backbone_dtype weights (LoRA)."""
    text = H2O_EXAMPLE.read_text()
    text = text.replace("backbone_dtype: int4", "backbone_dtype: bfloat16")
    bad = text.replace("mixed_precision_dtype: bfloat16", "mixed_precision_dtype: float16")
    found = run_case(Case("", "PC202", bad, ["A100"]))
    assert [(f.rule, f.origin.line) for f in found] == [("PC202", 2)]
    assert run_case(Case("", "PC202", text, ["A100"])) == []
