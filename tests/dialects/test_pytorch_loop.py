"""Plain PyTorch loops: the keys the Python source synthesises, read and resolved with torch's defaults."""

from __future__ import annotations

import textwrap

import pytest

from helpers import plan_for
from precheck import dialects
from precheck.config import TrainingConfig
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse
from precheck.sources.python_source import parse_code


def read(script: str) -> TrainingConfig:
    document = parse_code("train.py", textwrap.dedent(script).lstrip("\n"), "python", None)[0]
    dialect = dialects.detect(document)
    assert dialect is not None and dialect.name == "pytorch" and dialect.framework == "torch"
    return dialect.read(document, {})


def plan_of(script: str, gpus: list[str] | None = None, versions: dict[str, str] | None = None) -> PrecisionPlan:
    return plan_for(read(script), gpus or ["A100"], versions)


LOOP = """
import torch
model = Net().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""


def test_fields_and_where_they_come_from() -> None:
    config = read(LOOP)
    assert config.amp is not None and config.amp.value is True
    assert config.amp_dtype is not None and config.amp_dtype.value == "float16"
    assert config.amp_dtype.origin.location() == "train.py:6:45" and config.amp_dtype.origin.key == "dtype"
    assert config.grad_scaler is not None and config.grad_scaler.value is True
    assert config.grad_scaler.origin.location() == "train.py:4:10"
    assert config.torch_dtype is None and config.model is None


def test_textbook_fp16_amp_plan() -> None:
    plan = plan_of(LOOP)
    assert plan.framework == "torch"
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.grad_dtype.value) == ("float32",) * 3
    assert plan.autocast_dtype.value == "float16"
    assert (plan.grad_scaler.value, plan.loss_scaling.value) == (True, "dynamic")
    assert plan.devices.value == "first"
    assert "float32" in str(plan.load_dtype.origin)


@pytest.mark.parametrize(
    ("change", "autocast", "scaler"),
    [
        ('torch.autocast(device_type="cuda", dtype=torch.float16)', "float16", True),
        ('torch.autocast("cuda")', "float16", True),  # torch.get_autocast_dtype("cuda")
        ("torch.cuda.amp.autocast()", "float16", True),
        ("torch.cuda.amp.autocast(dtype=torch.bfloat16)", "bfloat16", True),
        ('torch.autocast("cuda", dtype=torch.bfloat16, enabled=False)', None, True),
        ("torch.cuda.amp.autocast(False)", None, True),
    ],
)
def test_autocast_spellings(change: str, autocast: str | None, scaler: bool) -> None:
    plan = plan_of(LOOP.replace('torch.autocast(device_type="cuda", dtype=torch.float16)', change))
    assert plan.autocast_dtype.value == autocast and plan.grad_scaler.value is scaler


def test_grad_scaler_spellings() -> None:
    off = plan_of(LOOP.replace('GradScaler("cuda")', 'GradScaler("cuda", enabled=False)'))
    assert off.grad_scaler.value is False and off.loss_scaling.value == "none"
    legacy = plan_of(LOOP.replace('torch.amp.GradScaler("cuda")', "torch.cuda.amp.GradScaler(2.0**10)"))
    assert legacy.grad_scaler.value is True
    none = plan_of(LOOP.replace('scaler = torch.amp.GradScaler("cuda")', "scaler = None"))
    assert none.grad_scaler.value is False and "no GradScaler" in str(none.grad_scaler.origin)


def test_weights_dtype_from_casts_and_loaders() -> None:
    assert plan_of(LOOP.replace("Net().cuda()", "Net().cuda().half()")).param_dtype.value == "float16"
    cast = LOOP.replace("scaler = ", "model.to(device='cuda', dtype=torch.bfloat16)\nscaler = ")
    assert plan_of(cast).load_dtype.value == "bfloat16"
    default = LOOP.replace("import torch\n", "import torch\ntorch.set_default_dtype(torch.bfloat16)\n")
    assert plan_of(default).load_dtype.value == "bfloat16"
    loaded = LOOP.replace(
        "Net().cuda()", 'transformers.AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")'
    ).replace("import torch\n", "import torch\nimport transformers\n")
    # no dtype: transformers' default, float32 in 4.x, the checkpoint's own (Qwen2: bf16) from 5.0
    assert plan_of(loaded, versions={"transformers": "4.46.1"}).load_dtype.value == "float32"
    assert plan_of(loaded, versions={"transformers": "5.0.0"}).load_dtype.value == "bfloat16"


def test_adapters_quantization_and_processes() -> None:
    lora = LOOP.replace(
        "Net().cuda()", 'get_peft_model(AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.bfloat16), cfg)'
    ).replace(
        "import torch\n",
        "import torch\nfrom peft import get_peft_model\nfrom transformers import AutoModelForCausalLM\n",
    )
    plan = plan_of(lora)
    assert (plan.load_dtype.value, plan.param_dtype.value) == ("bfloat16", "float32")  # peft>=0.12 adapters
    config = read(lora)
    assert config.train_type is not None and config.train_type.value == "lora"
    ddp = LOOP.replace(
        "scaler = ",
        "torch.distributed.init_process_group('nccl')\n"
        "model = torch.nn.parallel.DistributedDataParallel(model)\nscaler = ",
    )
    assert plan_of(ddp, ["4xA100"]).devices.value == "all"


def test_never_detected_from_a_config_file() -> None:
    document = parse("x.yaml", "autocast: true\nautocast_dtype: bfloat16\ngrad_scaler: true\n", "yaml")
    assert dialects.BY_NAME["pytorch"].score(document) == 0
    detected = dialects.detect(document)
    assert detected is None or detected.name != "pytorch"


def test_the_scaler_gated_on_the_autocast_dtype() -> None:
    gated = (
        LOOP.replace("import torch\n", "import torch\namp_dtype = torch.bfloat16\n")
        .replace('GradScaler("cuda")', 'GradScaler("cuda", enabled=(amp_dtype == torch.float16))')
        .replace("dtype=torch.float16)", "dtype=amp_dtype)")
    )
    plan = plan_of(gated)
    assert (plan.autocast_dtype.value, plan.grad_scaler.value) == ("bfloat16", False)
    assert plan_of(gated.replace("amp_dtype = torch.bfloat16", "amp_dtype = torch.float16")).grad_scaler.value is True
