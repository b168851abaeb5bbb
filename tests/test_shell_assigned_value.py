"""A flag whose value is a shell variable the script assigns on another line
(``torch_dtype=bfloat16`` ... ``--torch_dtype ${torch_dtype}``) cites that assignment line too
(``Origin.through``): the flag stays the value's place, the assignment is where it is written."""

from __future__ import annotations

import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources.launch_args import assigned_through


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def places(path: Path, field: str) -> tuple[str, int | None, set[int]]:
    report = engine.run([str(path)], from_specs(["V100"], {}), env={})
    assert not report.errors, report.errors
    (result,) = [r for r in report.files if r.plan is not None and Path(r.path).name == path.name]
    item = getattr(result.plan, field)
    lines = {line for p, line in item.origin.places if Path(p).name == path.name}
    return str(item.value), item.origin.line, lines


#: LianjiaTech/BELLE ``train/scripts/run_dpo.sh`` (lines 1-6, 30-35), its launched script a stub
BELLE_DPO = """
#! /bin/bash

dataset_name=...
model_name=...
torch_dtype=bfloat16
per_device_train_batch_size=1

torchrun --nnodes=1 --nproc_per_node=8 train.py \\
    --ddp_timeout 50000 \\
    --model_name_or_path ${model_name} \\
    --torch_dtype ${torch_dtype} \\
    --output_dir out
"""

TRAIN = """
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    torch_dtype: Optional[str] = field(default=None)


parser = HfArgumentParser((ModelArguments, TrainingArguments))
model_args, training_args = parser.parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, torch_dtype=model_args.torch_dtype)
Trainer(model=model, args=training_args).train()
"""


def test_a_flag_from_a_shell_variable_cites_its_assignment(tmp_path: Path) -> None:
    write(tmp_path, "train.py", TRAIN)
    script = write(tmp_path, "run_dpo.sh", BELLE_DPO)
    value, line, lines = places(script, "load_dtype")
    assert value == "bfloat16"
    assert line == 11  # the flag: findings and fixes stay there
    assert 5 in lines  # `torch_dtype=bfloat16`


#: a BridgeVLA DiffSynth-Studio training script (``MIXED_PRECISION="bf16"`` and its accelerate launch)
ACCELERATE = """
#!/bin/bash
NUM_GPUS=8
# 显存优化参数
DATASET_NUM_WORKERS=0
MIXED_PRECISION="bf16"
DATALOADER_PIN_MEMORY=false

accelerate launch \\
  --num_processes=${NUM_GPUS} \\
  --num_machines=1 \\
  --mixed_precision=${MIXED_PRECISION} \\
  --main_process_port=29500 \\
  train.py \\
  --learning_rate 1e-4
"""

LOOP = """
import torch
from accelerate import Accelerator

accelerator = Accelerator()
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = accelerator.prepare(model, optimizer)
for batch in range(10):
    loss = model(torch.randn(2, 4)).sum()
    accelerator.backward(loss)
    optimizer.step()
"""


def test_an_accelerate_launch_option_from_a_shell_variable_cites_its_assignment(tmp_path: Path) -> None:
    write(tmp_path, "train.py", LOOP)
    script = write(tmp_path, "train_action_decoder.sh", ACCELERATE)
    value, line, lines = places(script, "autocast_dtype")
    assert value == "bfloat16"
    assert line == 11
    assert 5 in lines  # MIXED_PRECISION="bf16"


def test_only_a_value_written_right_after_an_assignment() -> None:
    text = 'A=bf16\nB="x-$A"\nexport P="fp16"\n'
    assert assigned_through(text, text.index("bf16"), 1, 3) == ((None, 1),)
    assert assigned_through(text, text.index("fp16"), 3, 5) == ((None, 3),)
    # a value pieced from other text (`x-` before it) is not the assignment's own value
    assert assigned_through(text, text.index("x-") + 2, 2, 5) == ()
    assert assigned_through(text, text.index("bf16"), 1, 1) == ()  # written at the flag itself
