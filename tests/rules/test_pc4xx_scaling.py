import pytest

from helpers import Case, check_case, run_case

RECIPES_FULL = """
model_name: meta-llama/Llama-3.2-3B-Instruct
use_fp16: true
use_peft: false
batch_size_training: 1
"""
HF_FP16_WEIGHTS = """
model_name_or_path: m
torch_dtype: float16
output_dir: out
learning_rate: 1.0e-5
fp16: true
"""
H2O_OLD = """
architecture:
    backbone_dtype: bfloat16
environment:
    mixed_precision: true
experiment_name: e
llm_backbone: h2oai/h2ogpt-4096-llama2-7b
problem_type: text_causal_language_modeling
training:
    lora: true
"""
V140 = {"h2o-llmstudio": "1.4.0"}

CASES = [
    Case("seed: llama-recipes full fine-tune with use_fp16", "PC401", RECIPES_FULL, ["TITAN RTX"], {(2, 1)}),
    Case(
        "fixed: LoRA adapters are fp32",
        "PC401",
        RECIPES_FULL.replace("use_peft: false", "use_peft: true"),
        ["TITAN RTX"],
    ),
    Case("FSDP's ShardedGradScaler takes fp16", "PC401", RECIPES_FULL + "enable_fsdp: true\n", ["8xA100"]),
    Case("HF fp16 AMP on fp16 weights", "PC401", HF_FP16_WEIGHTS, ["V100"], {(5, 1)}),
    Case(
        "fixed: fp32 master weights",
        "PC401",
        HF_FP16_WEIGHTS.replace("torch_dtype: float16", "torch_dtype: float32"),
        ["V100"],
    ),
    Case("seed: H2O v1.4.0, bf16 backbone, mixed precision", "PC402", H2O_OLD, ["A100"], {(4, 5)}, versions=V140),
    Case(
        "fixed: mixed precision off",
        "PC402",
        H2O_OLD.replace("mixed_precision: true", "mixed_precision: false"),
        ["A100"],
        versions=V140,
    ),
    Case("fixed release gates the scaler on float16", "PC402", H2O_OLD, ["A100"], versions={"h2o-llmstudio": "1.5.0"}),
    Case(
        "full fine-tune turns mixed precision off itself",
        "PC402",
        H2O_OLD.replace("lora: true", "lora: false"),
        ["A100"],
        versions=V140,
    ),
    Case(
        "a file with mixed_precision_dtype was saved by a fixed release",
        "PC402",
        H2O_OLD.replace("mixed_precision: true", "mixed_precision: true\n    mixed_precision_dtype: bfloat16"),
        ["A100"],
    ),
    Case(
        "int4 backbone: LoRA gradients are fp32",
        "PC402",
        H2O_OLD.replace("backbone_dtype: bfloat16", "backbone_dtype: int4"),
        ["A100"],
        versions=V140,
    ),
    Case(
        "float16 backbone is not bf16",
        "PC402",
        H2O_OLD.replace("backbone_dtype: bfloat16", "backbone_dtype: float16"),
        ["A100"],
        versions=V140,
    ),
]


HF_LORA_FP16 = """
model_name_or_path: m
torch_dtype: float16
use_peft: true
output_dir: out
learning_rate: 1.0e-4
fp16: true
"""

PEFT_CASES = [
    Case("LoRA on fp16 with peft 0.11.1", "PC403", HF_LORA_FP16, ["T4"], {(2, 1)}, versions={"peft": "0.11.1"}),
    Case("peft 0.12.0 upcasts adapters", "PC403", HF_LORA_FP16, ["T4"], versions={"peft": "0.12.0"}),
    Case("version unknown: a warning", "PC403", HF_LORA_FP16, ["T4"], {(2, 1)}),
    Case("fixed: fp32 base", "PC403", HF_LORA_FP16.replace("float16", "float32"), ["T4"], versions={"peft": "0.11.1"}),
    Case(
        "llama-recipes use_fp16 with LoRA, old peft",
        "PC403",
        "model_name: m\nuse_fp16: true\nuse_peft: true\n",
        ["T4"],
        {(2, 1)},
        versions={"peft": "0.10.0"},
    ),
    Case("PC401 leaves adapters to PC403", "PC401", HF_LORA_FP16, ["T4"], versions={"peft": "0.11.1"}),
    Case(
        "QLoRA: a 4-bit base keeps fp32 adapters with peft 0.11.1 (lora/layer.py:128-131)",
        "PC403",
        HF_LORA_FP16 + "load_in_4bit: true\n",
        ["T4"],
        versions={"peft": "0.11.1"},
    ),
    Case(
        "8-bit base keeps fp32 adapters with peft 0.11.1",
        "PC403",
        HF_LORA_FP16 + "load_in_8bit: true\n",
        ["T4"],
        versions={"peft": "0.11.1"},
    ),
    Case(
        "GPTQ base keeps fp32 adapters with peft 0.11.1",
        "PC403",
        HF_LORA_FP16.replace("model_name_or_path: m", "model_name_or_path: TheBloke/Llama-2-7B-GPTQ"),
        ["T4"],
        versions={"peft": "0.11.1"},
    ),
]
CASES += PEFT_CASES


BF16_WEIGHTS_FP16_AMP = (
    "model_name_or_path: m\ntorch_dtype: bfloat16\noutput_dir: out\nlearning_rate: 1.0e-5\nfp16: true\n"
)
BF16_GRAD_CASES = [
    Case("full fine-tune of bf16 weights under fp16 AMP", "PC404", BF16_WEIGHTS_FP16_AMP, ["A100"], {(5, 1)}),
    Case("fixed: fp32 master weights", "PC404", BF16_WEIGHTS_FP16_AMP.replace("bfloat16", "float32"), ["A100"]),
    Case("LoRA adapters are fp32", "PC404", BF16_WEIGHTS_FP16_AMP + "use_peft: true\n", ["A100"]),
    Case("bf16 AMP has no GradScaler", "PC404", BF16_WEIGHTS_FP16_AMP.replace("fp16: true", "bf16: true"), ["A100"]),
]
CASES += BF16_GRAD_CASES


# hand-written PyTorch loops (dialect "pytorch"): the script creates the GradScaler itself
LOOP_BF16 = """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
scaler = torch.amp.GradScaler("cuda")
for batch in loader:
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""
LOOP_HALF = """
import torch
from torch.cuda.amp import GradScaler, autocast

model = Net().cuda().half()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = GradScaler()
for x in loader:
    with autocast():
        loss = model(x)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
"""
LOOP_CASES = [
    Case("loop: GradScaler over bf16 weights, at the GradScaler", "PC404", LOOP_BF16, ["A100"], {(6, 10)}, fmt="py"),
    Case(
        "loop fixed: the scaler is disabled",
        "PC404",
        LOOP_BF16.replace('GradScaler("cuda")', 'GradScaler("cuda", enabled=False)'),
        ["A100"],
        fmt="py",
    ),
    Case(
        "loop: fp32 weights under bf16 autocast have fp32 gradients",
        "PC404",
        LOOP_BF16.replace("torch_dtype=torch.bfloat16", "torch_dtype=torch.float32"),
        ["A100"],
        fmt="py",
    ),
    Case("loop: model.half() under a GradScaler", "PC401", LOOP_HALF, ["V100"], {(6, 10)}, fmt="py"),
    Case("loop fixed: fp32 weights", "PC401", LOOP_HALF.replace(".cuda().half()", ".cuda()"), ["V100"], fmt="py"),
    Case(
        "loop: FSDP's ShardedGradScaler allows fp16 gradients",
        "PC401",
        LOOP_HALF.replace(
            "from torch.cuda.amp import GradScaler, autocast",
            "from torch.cuda.amp import autocast\n"
            "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler as GradScaler",
        ),
        ["V100"],
        fmt="py",
    ),
]
CASES += LOOP_CASES

LOOP_LORA = """
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
model = get_peft_model(base, LoraConfig(r=8))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.cuda.amp.GradScaler()
for batch in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
"""
CASES += [
    Case(
        "loop: LoRA on fp16 weights, peft 0.11.1",
        "PC403",
        LOOP_LORA,
        ["T4"],
        {(5, 50)},
        "py",
        versions={"peft": "0.11.1"},
    ),
    Case("loop: peft 0.12.0 upcasts the adapters", "PC403", LOOP_LORA, ["T4"], fmt="py", versions={"peft": "0.12.0"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def test_pc404_from_an_unknown_transformers_says_so() -> None:
    """bf16 weights from transformers 5's from_pretrained default ("auto": the checkpoint's dtype);
    4.x loads fp32. With the version not known the finding names it and how to pin it."""
    text = BF16_WEIGHTS_FP16_AMP.replace("torch_dtype: bfloat16\n", "").replace(
        "model_name_or_path: m\n", "model_name_or_path: ckpt\n"
    )
    files = {"ckpt/config.json": '{"architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16"}'}
    found = run_case(Case("", "PC404", text, ["A100"], files=files))
    assert len(found) == 1 and "--assume-version transformers==VERSION" in found[0].message
    assert run_case(Case("", "PC404", text, ["A100"], files=files, versions={"transformers": "4.57.6"})) == []
    pinned = run_case(Case("", "PC404", text, ["A100"], files=files, versions={"transformers": "5.23.0"}))
    assert len(pinned) == 1 and "not known" not in pinned[0].message
