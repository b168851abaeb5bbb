"""A DeepSpeed file's explicit ``bf16``/``fp16`` ``enabled`` decides the run's half precision,
and TrainingArguments' flag must say the same (transformers ``fill_match`` raises on a
mismatch, integrations/deepspeed.py@5.23.0): a flag in the launch that agrees is cited by the
value too (``Origin.through``)."""

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


def cited(script: Path) -> tuple[str, set[tuple[str, int]]]:
    report = engine.run([str(script)], from_specs(["A100"], {}), env={})
    assert not report.errors, report.errors
    (result,) = [r for r in report.files if r.plan is not None]
    plan = result.plan
    places = {
        (Path(p).name, line)
        for name in ("param_dtype", "autocast_dtype", "grad_dtype", "reduce_dtype", "optimizer_state_dtype")
        for p, line in getattr(plan, name).origin.places
    }
    return str(plan.param_dtype.value), places


TRAIN = """
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

parser = HfArgumentParser(TrainingArguments)
(training_args,) = parser.parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
Trainer(model=model, args=training_args).train()
"""

#: LianjiaTech/BELLE ``train/configs/deepspeed_config_stage3.json`` (its zero and bf16 sections)
BELLE_DS = """
{
    "zero_optimization": {
        "stage": 3
    },
    "bf16": {
        "enabled": true
    },
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto"
}
"""

#: LianjiaTech/BELLE ``train/scripts/run_sft.sh`` (lines 83-88, 105-106)
BELLE_LAUNCH = """
torchrun --nproc_per_node 8 sft_train.py \\
    --ddp_timeout 36000 \\
    --deepspeed configs/deepspeed_config_stage3.json \\
    --output_dir out \\
    --bf16 \\
    --seed 1234
"""


def test_a_flag_that_agrees_with_the_deepspeed_file_is_cited(tmp_path: Path) -> None:
    write(tmp_path, "sft_train.py", TRAIN)
    write(tmp_path, "configs/deepspeed_config_stage3.json", BELLE_DS)
    script = write(tmp_path, "run_sft.sh", BELLE_LAUNCH)
    value, places = cited(script)
    assert value == "bfloat16"
    assert ("deepspeed_config_stage3.json", 6) in places and ("run_sft.sh", 5) in places


#: databrickslabs/dolly ``config/a10_config.json`` (lines 1-7) and the ``--bf16 true`` train_dolly.py:144 passes
DOLLY_DS = """
{
    "fp16": {
      "enabled": false
    },
    "bf16": {
      "enabled": true
    },
    "train_micro_batch_size_per_gpu": "auto"
}
"""

DOLLY_LAUNCH = """
deepspeed --num_gpus=8 train.py \\
    --deepspeed config/a10_config.json \\
    --output_dir out \\
    --bf16 true
"""


def test_a_second_deepspeed_file_and_flag(tmp_path: Path) -> None:
    write(tmp_path, "train.py", TRAIN)
    write(tmp_path, "config/a10_config.json", DOLLY_DS)
    script = write(tmp_path, "train.sh", DOLLY_LAUNCH)
    value, places = cited(script)
    assert value == "bfloat16"
    assert ("a10_config.json", 6) in places and ("train.sh", 4) in places
