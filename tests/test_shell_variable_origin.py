"""A flag whose value is a shell variable (``--torch_dtype ${torch_dtype}``) is decided where
the variable is assigned: the plan cites that line too (``; `${torch_dtype}` is set at
run_dpo.sh:5``), the flag's place stays the finding's anchor and the fix's target."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def plan_of(script: Path, gpu: str = "A100"):  # type: ignore[no-untyped-def]
    report = engine.run([script.name], from_specs([gpu], {}), env={})
    (run,) = [r for r in report.files if r.path == script.name and r.plan is not None]
    return run.plan


#: excerpt of LianjiaTech/BELLE train/scripts/run_dpo.sh (main)
BELLE_DPO = """\
#! /bin/bash

model_name=Llama-2-7b-hf
torch_dtype=bfloat16
learning_rate=5e-7

output_model_name=${model_name}_${learning_rate}_${torch_dtype}

torchrun --nnodes=1 --nproc_per_node=8 dpo_train.py \\
    --model_name_or_path meta-llama/${model_name} \\
    --torch_dtype ${torch_dtype} \\
    --bf16 True \\
    --learning_rate ${learning_rate} \\
    --output_dir out
"""


def test_a_flag_from_a_variable_cites_the_assignment(tmp_path: Path) -> None:
    script = tmp_path / "run_dpo.sh"
    script.write_text(BELLE_DPO)
    load = plan_of(script).load_dtype
    assert (load.value, load.origin.line, load.origin.key) == ("bfloat16", 11, "--torch_dtype")
    assert load.origin.detail == "`$torch_dtype` is set at run_dpo.sh:4"
    assert str(load.origin) == "run_dpo.sh:11:5 (--torch_dtype); `$torch_dtype` is set at run_dpo.sh:4"
    bf16 = plan_of(script).autocast_dtype  # written on its own line: nothing more to cite
    assert bf16.origin.line == 12 and bf16.origin.detail is None


#: excerpt of a public video-model training script (GitHub, code index id 16056355902):
#: ``accelerate launch --mixed_precision=${MIXED_PRECISION}`` with the variable set above
ACCELERATE = """\
NUM_GPUS=8
MIXED_PRECISION="bf16"

accelerate launch \\
  --num_processes=${NUM_GPUS} \\
  --num_machines=1 \\
  --mixed_precision=${MIXED_PRECISION} \\
  --main_process_port=29500 \\
  train_action_decoder.py
"""


def test_an_accelerate_flag_from_a_variable_cites_the_assignment(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(ACCELERATE)
    autocast = plan_of(script, "V100").autocast_dtype
    assert autocast.value == "bfloat16" and autocast.origin.line == 7
    assert "`$MIXED_PRECISION` is set at train.sh:2" in str(autocast.origin)


def test_a_variable_the_script_does_not_assign_cites_only_the_flag(tmp_path: Path) -> None:
    """A value from the environment (or a script that sourced another) has no line here."""
    script = tmp_path / "train.sh"
    script.write_text(ACCELERATE.replace('MIXED_PRECISION="bf16"\n', "").replace("NUM_GPUS=8\n", ""))
    report = engine.run([script.name], from_specs(["V100"], {}), env={"MIXED_PRECISION": "bf16"})
    for run in report.files:
        if run.plan is not None:
            assert run.plan.autocast_dtype.origin.detail is None
