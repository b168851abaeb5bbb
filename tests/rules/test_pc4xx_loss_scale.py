import json

import pytest

from helpers import Case, check_case, run_case
from precheck.rules.base import Severity

LIGHTNING = "trainer:\n  precision: 16-true\n  devices: 1\n  max_epochs: 1\nmodel:\n  class_path: m.M\n"
HF = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"
TORCHTUNE_FP16 = (
    "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: fp16\n"
    "optimizer:\n  _component_: torch.optim.AdamW\nbatch_size: 1\ndevice: cuda\n"
)
MICRO = 1
Z2 = {"stage": 2}


def ds(**sections: object) -> str:
    return json.dumps({"train_micro_batch_size_per_gpu": MICRO, **sections}, indent=2) + "\n"


CASES = [
    # PC405: fp16 gradients with no loss scaling
    Case("Lightning 16-true", "PC405", LIGHTNING, ["V100"], {(2, 3)}),
    Case("fixed: 16-mixed", "PC405", LIGHTNING.replace("16-true", "16-mixed"), ["V100"]),
    Case("bf16-true has the range", "PC405", LIGHTNING.replace("16-true", "bf16-true"), ["A100"]),
    Case("HF full fine-tune of fp16 weights, no fp16 flag", "PC405", HF + "torch_dtype: float16\n", expect={(4, 1)}),
    Case(
        "transformers 5 loads Llama 2's own float16",
        "PC405",
        "model_name_or_path: meta-llama/Llama-2-7b-hf\noutput_dir: out\nlearning_rate: 2.0e-5\n",
        expect={(1, 1)},
        versions={"transformers": "5.0.0"},
    ),
    Case("HF LoRA on fp16 weights: fp32 adapters", "PC405", HF + "torch_dtype: float16\nuse_peft: true\n"),
    Case("a script's own LoRA switch", "PC405", HF + "torch_dtype: float16\nuse_qlora: true\nlora_rank: 64\n"),
    Case("torchtune refuses fp16 before training", "PC405", TORCHTUNE_FP16, ["V100"]),
    Case(
        "DeepSpeed fp16 scales the loss",
        "PC405",
        ds(fp16={"enabled": True}, zero_optimization=Z2),
        fmt="json",
    ),
    # PC406: a static DeepSpeed loss scale
    Case(
        "static loss scale 1024",
        "PC406",
        ds(fp16={"enabled": True, "loss_scale": 1024}, zero_optimization=Z2),
        expect={(5, 5)},
        fmt="json",
    ),
    Case(
        "fixed: dynamic loss scaling",
        "PC406",
        ds(fp16={"enabled": True, "loss_scale": 0}, zero_optimization=Z2),
        fmt="json",
    ),
    Case(
        "bf16 run: the setting is dead (PC610)",
        "PC406",
        ds(fp16={"enabled": False, "loss_scale": 1024}, bf16={"enabled": True}, zero_optimization=Z2),
        fmt="json",
    ),
    Case(
        "fp16 filled from TrainingArguments in an HF run",
        "PC406",
        HF + "fp16: true\ndeepspeed:\n  fp16:\n    enabled: auto\n    loss_scale: 128\n  zero_optimization:\n"
        "    stage: 2\n",
        expect={(8, 5)},
    ),
    # PC407: loss-scaler values DeepSpeed cannot use
    Case(
        "negative loss scale",
        "PC407",
        ds(fp16={"enabled": True, "loss_scale": -1}, zero_optimization=Z2),
        expect={(5, 5)},
        fmt="json",
    ),
    Case(
        "zero loss_scale_window and min_loss_scale",
        "PC407",
        ds(fp16={"enabled": True, "loss_scale_window": 0, "min_loss_scale": 0}, zero_optimization=Z2),
        expect={(5, 5), (6, 5)},
        fmt="json",
    ),
    Case(
        "zero window with fp16 off: DeepSpeed never reads it",
        "PC407",
        ds(fp16={"enabled": False, "loss_scale_window": 0, "min_loss_scale": 0}, zero_optimization=Z2),
        fmt="json",
    ),
    Case(
        "zero window with a static scale: DeepSpeed never reads it",
        "PC407",
        ds(fp16={"enabled": True, "loss_scale": 128, "loss_scale_window": 0}, zero_optimization=Z2),
        fmt="json",
    ),
    Case(
        "negative scale with fp16 off is refused from 0.18.8",
        "PC407",
        ds(fp16={"enabled": False, "loss_scale": -1}, zero_optimization=Z2),
        expect={(5, 5)},
        fmt="json",
        versions={"deepspeed": "0.18.8"},
    ),
    Case(
        "negative scale with fp16 off is never read before 0.18.8",
        "PC407",
        ds(fp16={"enabled": False, "loss_scale": -1}, zero_optimization=Z2),
        fmt="json",
        versions={"deepspeed": "0.18.7"},
    ),
    Case(
        "zero window in dynamic fp16 before 0.19.3: ZeroDivisionError mid-training",
        "PC407",
        ds(fp16={"enabled": True, "loss_scale_window": 0}, zero_optimization=Z2),
        expect={(5, 5)},
        fmt="json",
        versions={"deepspeed": "0.19.2"},
    ),
    Case(
        "fixed: DeepSpeed's defaults",
        "PC407",
        ds(
            fp16={"enabled": True, "loss_scale": 0, "loss_scale_window": 1000, "min_loss_scale": 1},
            zero_optimization=Z2,
        ),
        fmt="json",
    ),
]


def _case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


def test_invalid_values_quote_deepspeed() -> None:
    messages = [f.message for f in run_case(_case("zero loss_scale_window and min_loss_scale"))]
    assert any('"fp16.loss_scale_window must be > 0 when dynamic loss scaling is enabled' in m for m in messages)
    name = "zero window in dynamic fp16 before 0.19.3: ZeroDivisionError mid-training"
    old = [f.message for f in run_case(_case(name))]
    assert any("ZeroDivisionError" in m and "deepspeed 0.19.2" in m for m in old)
    negative = run_case(_case("negative loss scale"))[0].message
    assert "`fp16.loss_scale: -1`" in negative and "must be >= 0" in negative


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def test_no_floor_before_0_19_3_is_a_warning_naming_its_premise() -> None:
    """DeepSpeed < 0.19.3 takes min_loss_scale <= 0 as no floor (loss_scaler.py:273@0.19.2): the run
    starts and goes on; from 0.19.3 the config is refused (precision_config.py:196@0.19.3)."""
    config = ds(fp16={"enabled": True, "loss_scale": 0, "min_loss_scale": 0}, zero_optimization=Z2)
    old = run_case(Case("old", "PC407", config, fmt="json", versions={"deepspeed": "0.19.2"}))
    assert [f.severity for f in old] == [Severity.WARNING] and "no floor" in old[0].message
    assert "overflow" in old[0].message and "deepspeed 0.19.2" in old[0].message
    new = run_case(Case("new", "PC407", config, fmt="json", versions={"deepspeed": "0.19.3"}))
    assert [f.severity for f in new] == [Severity.ERROR] and "must be > 0" in new[0].message
