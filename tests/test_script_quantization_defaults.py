"""A launched HF script's own ``load_in_4bit``/``load_in_8bit`` options left at their
``default=False`` are the run's "not quantized", cited at those defaults (as its fp16/bf16
defaults are): the launch gives neither flag."""

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


def quantization(script: Path) -> tuple[str, set[tuple[str, int]]]:
    report = engine.run([str(script)], from_specs(["A100"], {}), env={})
    assert not report.errors, report.errors
    (result,) = [r for r in report.files if r.plan is not None and Path(r.path).name == script.name]
    item = result.plan.quantization
    return str(item.value), {(Path(p).name, line) for p, line in item.origin.places}


#: shibing624/MedicalGPT ``training/pretraining.py`` (lines 60-70 shortened, 641-664 shortened, its parser)
PRETRAINING = """
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    load_in_8bit: bool = field(default=False, metadata={"help": "Whether to load the model in 8bit mode or not."})
    load_in_4bit: bool = field(default=False, metadata={"help": "Whether to load the model in 4bit mode or not."})


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    load_in_4bit = model_args.load_in_4bit
    load_in_8bit = model_args.load_in_8bit
    quantization_config = None
    if load_in_4bit or load_in_8bit:
        quantization_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path, quantization_config=quantization_config
    )
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    main()
"""

#: shibing624/MedicalGPT ``scripts/run_pt.sh`` (shortened)
RUN_PT = """
CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 pretraining.py \\
    --model_name_or_path Qwen/Qwen2.5-0.5B \\
    --bf16 \\
    --output_dir outputs-pt
"""


def test_the_scripts_off_defaults_are_the_runs_not_quantized(tmp_path: Path) -> None:
    write(tmp_path, "pretraining.py", PRETRAINING)
    script = write(tmp_path, "run_pt.sh", RUN_PT)
    value, cited = quantization(script)
    assert value == "none"
    assert {("pretraining.py", 11), ("pretraining.py", 12)} <= cited


#: shibing624/MedicalGPT ``training/supervised_finetuning.py`` (lines 76-77, 715-737 shortened, its parser)
SFT = """
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    load_in_8bit: bool = field(default=False, metadata={"help": "Whether to load the model in 8bit mode or not."})
    load_in_4bit: bool = field(default=False, metadata={"help": "Whether to load the model in 4bit mode or not."})


@dataclass
class ScriptArguments:
    qlora: bool = field(default=False, metadata={"help": "Whether to use qlora"})


def main():
    parser = HfArgumentParser((ModelArguments, ScriptArguments, TrainingArguments))
    model_args, script_args, training_args = parser.parse_args_into_dataclasses()
    load_in_4bit = model_args.load_in_4bit
    load_in_8bit = model_args.load_in_8bit
    quantization_config = None
    if load_in_4bit and load_in_8bit:
        raise ValueError("Error, load_in_4bit and load_in_8bit cannot be set at the same time")
    elif load_in_8bit or load_in_4bit:
        if load_in_8bit:
            quantization_config = BitsAndBytesConfig(load_in_8bit=True)
        elif load_in_4bit:
            if script_args.qlora:
                quantization_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, quantization_config=quantization_config)
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    main()
"""

#: shibing624/MedicalGPT ``scripts/run_sft.sh`` (shortened)
RUN_SFT = """
CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 supervised_finetuning.py \\
    --model_name_or_path Qwen/Qwen2.5-0.5B-Instruct \\
    --output_dir outputs-sft \\
    --bf16
"""


def test_a_second_script_with_off_defaults(tmp_path: Path) -> None:
    write(tmp_path, "supervised_finetuning.py", SFT)
    script = write(tmp_path, "run_sft.sh", RUN_SFT)
    value, cited = quantization(script)
    assert value == "none"
    assert {("supervised_finetuning.py", 11), ("supervised_finetuning.py", 12)} <= cited


def test_a_flag_that_turns_it_on_is_not_the_default(tmp_path: Path) -> None:
    write(tmp_path, "supervised_finetuning.py", SFT)
    script = write(tmp_path, "run_sft.sh", RUN_SFT.replace("--bf16", "--bf16 --load_in_8bit True"))
    value, cited = quantization(script)
    assert value.startswith("8-bit")
    assert ("supervised_finetuning.py", 11) not in cited
