from dataclasses import replace

import pytest

from helpers import Case, check_case, run_case

# the load dtype is named: without it transformers>=5 loads Qwen's own bf16 weights
HF_BF16 = """
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
output_dir: out
per_device_train_batch_size: 2
bf16: true
torch_dtype: float32
"""
HF_FP16 = HF_BF16.replace("bf16: true", "fp16: true")

CASES = [
    Case("bf16 flag on a V100", "PC101", HF_BF16, ["V100"], {(4, 1)}),
    Case("bf16 flag on a T4", "PC101", HF_BF16, ["T4"], {(4, 1)}),
    Case("fixed: fp16 on a V100", "PC101", HF_FP16, ["V100"]),
    Case("bf16 flag on a custom sm_100 card (compute capability 10.0)", "PC101", HF_BF16, ["sm_100:180GB"]),
    Case("bf16 on an A100 is native", "PC101", HF_BF16, ["A100"]),
    Case("one V100 among A100s bounds the plan", "PC101", HF_BF16, ["A100", "V100"], {(4, 1)}),
    Case("CUDA_VISIBLE_DEVICES hides the V100", "PC101", HF_BF16, ["A100", "V100"], env={"CUDA_VISIBLE_DEVICES": "0"}),
    Case(
        "bf16 torch_dtype on a T4",
        "PC101",
        "model_name_or_path: m\ntorch_dtype: bfloat16\noutput_dir: o\nlearning_rate: 1.0e-5\n",
        ["T4"],
        {(2, 1)},
    ),
    Case(
        "ms-swift picks fp16 on a V100 when torch_dtype is unset (torch 2.2: no emulated bf16)",
        "PC101",
        "model: m\ntrain_type: lora\ntemplate: default\n",
        ["V100"],
        versions={"torch": "2.2.2"},
    ),
    Case(
        "... but bf16 on torch>=2.3, whose bf16 check counts emulation",
        "PC101",
        "model: m\ntrain_type: lora\ntemplate: default\n",
        ["V100"],
        {(1, 1)},
        versions={"torch": "2.3.0"},
    ),
    Case(
        "ms-swift QLoRA computing in bf16 on a T4 (bnb_4bit_compute_dtype)",
        "PC101",
        "model: m\ntrain_type: lora\ntemplate: default\ntorch_dtype: float16\nquant_bits: 4\n"
        "bnb_4bit_compute_dtype: bfloat16\n",
        ["T4"],
        {(6, 1)},
        versions={"torch": "2.4.0"},
    ),
    Case(
        "fixed: ms-swift QLoRA computing in fp16 on a T4",
        "PC101",
        "model: m\ntrain_type: lora\ntemplate: default\ntorch_dtype: float16\nquant_bits: 4\n"
        "bnb_4bit_compute_dtype: float16\n",
        ["T4"],
        versions={"torch": "2.4.0"},
    ),
    Case(
        "ms-swift>=3.1 takes a bf16 checkpoint's dtype on a V100",
        "PC101",
        "model: Qwen/Qwen2.5-7B-Instruct\ntrain_type: lora\ntemplate: default\n",
        ["V100"],
        {(1, 1)},
        versions={"torch": "2.2.2", "ms-swift": "3.1.0"},
    ),
    Case(
        "ms-swift 3.0.0 chose fp16 by the bf16 check first",
        "PC101",
        "model: Qwen/Qwen2.5-7B-Instruct\ntrain_type: lora\ntemplate: default\n",
        ["V100"],
        versions={"torch": "2.2.2", "ms-swift": "3.0.0"},
    ),
    Case(
        "SimpleTuner's default mixed_precision is bf16",
        "PC101",
        '{"--model_family": "flux", "--optimizer": "adamw_bf16"}',
        ["V100"],
        {(1, 1)},
        fmt="json",
    ),
    Case("fp16 on a GTX 1080 Ti is slow", "PC102", HF_FP16, ["GTX 1080 Ti"], {(4, 1)}),
    Case("fixed: fp32 on a GTX 1080 Ti", "PC102", HF_FP16.replace("fp16: true", "fp16: false"), ["GTX 1080 Ti"]),
    Case("fp16 on a P100 is full rate", "PC102", HF_FP16, ["P100"]),
    Case(
        "llama-recipes runs on the first visible card only",
        "PC102",
        "model_name: m\nuse_fp16: true\nuse_peft: true\n",
        ["TITAN RTX", "GTX 1080 Ti"],
    ),
    Case(
        "... unless CUDA_VISIBLE_DEVICES makes that the 1080 Ti",
        "PC102",
        "model_name: m\nuse_fp16: true\nuse_peft: true\n",
        ["TITAN RTX", "GTX 1080 Ti"],
        {(2, 1)},
        env={"CUDA_VISIBLE_DEVICES": "1"},
    ),
    Case(
        "quantised llama-recipes spreads over every visible card",
        "PC102",
        "model_name: m\nuse_fp16: true\nuse_peft: true\nquantization: 8bit\n",
        ["TITAN RTX", "GTX 1080 Ti"],
        {(2, 1)},
    ),
]


TORCH_CASES = [
    Case("bf16 on a T4, torch 2.2.2: stops at start", "PC101", HF_BF16, ["T4"], {(4, 1)}, versions={"torch": "2.2.2"}),
    Case("bf16 on a T4, torch 2.3.0: runs emulated", "PC101", HF_BF16, ["T4"], {(4, 1)}, versions={"torch": "2.3.0"}),
    Case(
        "ACCELERATE_MIXED_PRECISION=bf16 with no flag is bf16",
        "PC101",
        HF_BF16.replace("bf16: true", "fp16: false"),
        ["V100"],
        {(1, 1)},
        env={"ACCELERATE_MIXED_PRECISION": "bf16"},
    ),
    Case(
        "an explicit flag beats ACCELERATE_MIXED_PRECISION",
        "PC101",
        HF_BF16.replace("bf16: true", "fp16: true"),
        ["V100"],
        env={"ACCELERATE_MIXED_PRECISION": "bf16"},
    ),
]
CASES += TORCH_CASES


def test_message_says_what_the_torch_version_does() -> None:
    from helpers import run_case

    old = run_case(TORCH_CASES[0])[0].message
    new = run_case(TORCH_CASES[1])[0].message
    assert "stops at start" in old and "Your setup doesn't support bf16/gpu." in old
    assert "counts emulation" in new and "torch 2.3.0" in new


NO_DTYPE = "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\noutput_dir: out\nlearning_rate: 1.0e-5\n"
LOAD_CASES = [
    Case(
        "transformers 5 loads Qwen's bf16 weights on a V100",
        "PC101",
        NO_DTYPE,
        ["V100"],
        {(1, 1)},
        versions={"transformers": "5.0.0"},
    ),
    Case("transformers 4 loads float32", "PC101", NO_DTYPE, ["V100"], versions={"transformers": "4.57.6"}),
    Case("version unknown: newest behaviour", "PC101", NO_DTYPE, ["V100"], {(1, 1)}),
]
CASES += LOAD_CASES

AXOLOTL = "base_model: meta-llama/Llama-3.2-1B\ndatasets:\n  - path: x\nmicro_batch_size: 1\n"
TORCHTUNE = (
    "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\n"
    "optimizer:\n  _component_: torch.optim.AdamW\nbatch_size: 1\ndevice: cuda\n"
)
FRAMEWORK_FIX_CASES = [
    # axolotl: fp16 means fp16 weights, so a full fine-tune's fix is fp32 (bf16 off), even from `bf16: auto`
    Case("axolotl bf16: auto on a V100", "PC101", AXOLOTL + "bf16: auto\n", ["V100"], {(5, 1)}),
    Case("fixed: axolotl bf16 off on a V100", "PC101", AXOLOTL + "bf16: false\n", ["V100"]),
    Case("torchtune bf16 on a T4", "PC101", TORCHTUNE + "dtype: bf16\n", ["T4"], {(7, 1)}),
    Case("fixed: torchtune fp32 on a T4", "PC101", TORCHTUNE + "dtype: fp32\n", ["T4"]),
    Case(
        "Lightning bf16-mixed on a V100",
        "PC101",
        "trainer:\n  precision: bf16-mixed\n  devices: 1\n  max_epochs: 1\nmodel:\n  class_path: m.M\n",
        ["V100"],
        {(2, 3)},
    ),
    Case(
        "fixed: Lightning 16-mixed on a V100",
        "PC101",
        "trainer:\n  precision: 16-mixed\n  devices: 1\n  max_epochs: 1\nmodel:\n  class_path: m.M\n",
        ["V100"],
    ),
]
CASES += FRAMEWORK_FIX_CASES

LOOP = """
import torch
model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for x, y in data:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x, y)
    loss.backward()
    optimizer.step()
"""
LOOP_CASES = [
    Case("loop: bf16 autocast on a V100", "PC101", LOOP, ["V100"], {(5, 33)}, fmt="py"),
    Case("loop fixed: fp16 autocast on a V100", "PC101", LOOP.replace("bfloat16", "float16"), ["V100"], fmt="py"),
    Case("loop: bf16 autocast on an A100", "PC101", LOOP, ["A100"], fmt="py"),
    Case(
        "loop: model.bfloat16() without autocast on a T4",
        "PC101",
        LOOP.replace("Net().cuda()", "Net().cuda().bfloat16()").replace(
            'with torch.autocast("cuda", dtype=torch.bfloat16):', "if True:"
        ),
        ["T4"],
        {(2, 22)},
        fmt="py",
    ),
]
CASES += LOOP_CASES


def test_loop_message_names_what_torch_autocast_does() -> None:
    from helpers import run_case

    old = run_case(replace(LOOP_CASES[0], versions={"torch": "2.2.2"}))[0]
    assert 'torch.autocast raises "RuntimeError: Current CUDA Device does not support bfloat16.' in old.message
    new = run_case(replace(LOOP_CASES[0], versions={"torch": "2.4.0"}))[0]
    assert "torch.autocast lets the run start and it runs emulated" in new.message
    assert new.fix is not None and 'torch.autocast(device_type="cuda", dtype=torch.float16)' in new.fix.text()
    cast = run_case(LOOP_CASES[3])[0]
    assert "nothing checks bf16 weights" in cast.message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def test_pc101_with_torch_unknown_says_how_to_pin_it() -> None:
    found = run_case(Case("", "PC101", HF_BF16, ["V100"]))
    assert len(found) == 1 and "--assume-version torch==VERSION" in found[0].message
    known = run_case(Case("", "PC101", HF_BF16, ["V100"], versions={"torch": "2.4.0"}))
    assert len(known) == 1 and "not known" not in known[0].message
