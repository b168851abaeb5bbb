"""An accelerate config's ``mixed_precision`` that names the dtype TrainingArguments' flags
chose is cited by the run's autocast too (``Origin.through``): with the flag gone it would
decide the same (transformers ``TrainingArguments.__post_init__`` reads
``ACCELERATE_MIXED_PRECISION`` first and lets fp16/bf16 override it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def autocast_places(script: Path, gpu: str = "A100") -> tuple[str, set[tuple[str, int]]]:
    report = engine.run([str(script)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    (result,) = [r for r in report.files if r.plan is not None]
    item = result.plan.autocast_dtype
    return str(item.value), {(Path(p).name, line) for p, line in item.origin.places}


TRAIN = """
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

parser = HfArgumentParser(TrainingArguments)
(training_args,) = parser.parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
Trainer(model=model, args=training_args).train()
"""

#: OpenBMB/MiniCPM ``minicpm_sala/finetune/trainer/configs/accelerate/fsdp_config.yaml`` (lines 1-4, 15-19)
MINICPM_FSDP = """
compute_environment: LOCAL_MACHINE
debug: false
distributed_type: FSDP
downcast_bf16: 'no'
machine_rank: 0
main_training_function: main
mixed_precision: bf16  # or fp16
num_machines: 1  # the number of nodes
num_processes: 8  # the number of GPUs in all nodes
"""

#: OpenBMB/MiniCPM ``minicpm_sala/finetune/trainer/scripts/accelerate/sft_finetune.sh`` (lines 1-3, 11)
MINICPM_LAUNCH = """
accelerate launch --config_file configs/accelerate/fsdp_config.yaml \\
    finetune.py \\
    --output_dir output \\
    --bf16 \\
    --max_steps 3000
"""


def test_the_accelerate_config_that_agrees_with_the_flag_is_cited(tmp_path: Path) -> None:
    write(tmp_path, "finetune.py", TRAIN)
    write(tmp_path, "configs/accelerate/fsdp_config.yaml", MINICPM_FSDP)
    script = write(tmp_path, "sft_finetune.sh", MINICPM_LAUNCH)
    value, places = autocast_places(script)
    assert value == "bfloat16"
    assert ("sft_finetune.sh", 4) in places and ("fsdp_config.yaml", 7) in places


#: huggingface/peft ``examples/sft/configs/deepspeed_config.yaml`` (lines 1-16) and ``run_peft_deepspeed.sh`` (excerpt)
PEFT_DEEPSPEED = """
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  deepspeed_multinode_launcher: standard
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: true
  zero3_save_16bit_model: true
  zero_stage: 3
distributed_type: DEEPSPEED
downcast_bf16: 'no'
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 8
"""

PEFT_LAUNCH = """
accelerate launch --config_file "configs/deepspeed_config.yaml"  train.py \\
--seed 100 \\
--bf16 True \\
--output_dir "llama-sft-lora-deepspeed"
"""


def test_a_deepspeed_accelerate_config_that_agrees(tmp_path: Path) -> None:
    write(tmp_path, "train.py", TRAIN)
    write(tmp_path, "configs/deepspeed_config.yaml", PEFT_DEEPSPEED)
    script = write(tmp_path, "run_peft_deepspeed.sh", PEFT_LAUNCH)
    report = engine.run([str(script)], from_specs(["A100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    plan = result.plan
    cited = {
        (Path(p).name, line)
        for name in ("param_dtype", "grad_dtype", "reduce_dtype", "autocast_dtype")
        for p, line in getattr(plan, name).origin.places
    }
    assert str(plan.param_dtype.value) == "bfloat16"  # ZeRO's bf16 section, filled from the flags
    assert ("deepspeed_config.yaml", 14) in cited


def test_a_config_that_disagrees_is_not_cited_as_deciding(tmp_path: Path) -> None:
    write(tmp_path, "finetune.py", TRAIN)
    write(tmp_path, "configs/accelerate/fsdp_config.yaml", MINICPM_FSDP.replace("bf16  #", "fp16  #"))
    script = write(tmp_path, "sft_finetune.sh", MINICPM_LAUNCH)
    value, places = autocast_places(script)
    assert value == "bfloat16"
    assert ("fsdp_config.yaml", 7) not in places
