"""The launched script's code over its launch flags: a literal the call that builds a setting
always passes (``TrainingArguments(fp16=True)``) is the run's, a parsed option set again after
parsing is the run's (``args.bf16 = True`` before it is passed on), and a ``TrainingArguments``
switch set again after ``parse_args_into_dataclasses()`` is read and not used (its
``__post_init__`` has already taken the mixed precision from the flags)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources import Document, load_runs


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # files shown relative to the current folder


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def launch(folder: Path, line: str) -> Document:
    (document,) = [d for d in load_runs(write(folder, "run.sh", line)) if d.format == "shell"]
    return document


def plain(document: Document) -> dict[str, object]:
    value = document.root.plain()
    assert isinstance(value, dict)
    return value


def notes(document: Document, kind: str) -> list[tuple[str | None, int, str | None]]:
    return [(n.path, n.line, n.key) for n in document.notes if n.kind == kind]


#: excerpt of huggingface/peft examples/dora_finetuning/dora_finetuning.py (peft main, 2025):
#: argparse options passed into ``train_model``, whose ``TrainingArguments`` hard-codes ``fp16=True``
DORA = """
import argparse
import transformers
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def train_model(base_model: str, learning_rate: float, use_dora: bool):
    model = AutoModelForCausalLM.from_pretrained(base_model)
    training_args = TrainingArguments(
        output_dir="out",
        learning_rate=learning_rate,
        fp16=True,
        logging_steps=100,
    )
    trainer = Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Fine-tune LLaMA with DoRA and PEFT")
    parser.add_argument("--base_model", type=str, default="huggyllama/llama-7b", help="Base model path or name")
    parser.add_argument("--learning_rate", type=float, default=3e-4, help="Learning rate")
    parser.add_argument("--use_dora", action="store_true", help="Apply Dora")
    args = parser.parse_args()
    train_model(base_model=args.base_model, learning_rate=args.learning_rate, use_dora=args.use_dora)
"""

#: excerpt of tloen/alpaca-lora finetune.py (main): ``fire.Fire(train)``, ``fp16=True`` in the
#: ``transformers.TrainingArguments`` built inside ``Trainer(...)``
ALPACA_LORA = """
import fire
import transformers


def train(base_model: str = "", data_path: str = "yahma/alpaca-cleaned", learning_rate: float = 3e-4):
    model = transformers.LlamaForCausalLM.from_pretrained(base_model)
    trainer = transformers.Trainer(
        model=model,
        args=transformers.TrainingArguments(
            warmup_steps=100,
            learning_rate=learning_rate,
            fp16=True,
            logging_steps=10,
            output_dir="out",
        ),
    )
    trainer.train()


if __name__ == "__main__":
    fire.Fire(train)
"""


def test_a_literal_in_training_arguments_is_the_launch_runs(tmp_path: Path) -> None:
    write(tmp_path, "dora_finetuning.py", DORA)
    document = launch(tmp_path, "python dora_finetuning.py --base_model huggyllama/llama-7b --use_dora\n")
    fp16 = document.root.value["fp16"]  # type: ignore[index]
    assert (fp16.value, fp16.line, fp16.path) == (True, 11, "dora_finetuning.py")


def test_a_literal_in_a_fire_scripts_training_arguments(tmp_path: Path) -> None:
    write(tmp_path, "finetune.py", ALPACA_LORA)
    document = launch(tmp_path, "python finetune.py --base_model decapoda-research/llama-7b-hf\n")
    fp16 = document.root.value["fp16"]  # type: ignore[index]
    assert (fp16.value, fp16.line) == (True, 12)
    report = engine.run([str(tmp_path / "run.sh")], from_specs(["A100"], {}), env={})
    (run,) = [r for r in report.files if r.path.endswith("run.sh")]
    assert run.plan is not None and run.plan.autocast_dtype.value == "float16"


def test_a_literal_over_a_flag_of_the_same_name_notes_the_flag(tmp_path: Path) -> None:
    """The script defines ``--bf16`` and still passes ``bf16=True`` (the dora excerpt with
    such an option): the run trains in bf16 and the flag is read, not used."""
    write(
        tmp_path,
        "train.py",
        DORA.replace("fp16=True", "bf16=True").replace(
            "    args = parser.parse_args()\n",
            '    parser.add_argument("--bf16", type=str, default="False")\n    args = parser.parse_args()\n',
        ),
    )
    document = launch(tmp_path, "torchrun --nproc_per_node 8 train.py --bf16 False --learning_rate 2e-5\n")
    assert plain(document)["bf16"] is True
    assert notes(document, "overridden") == [(None, 1, "--bf16")]
    report = engine.run([str(tmp_path / "run.sh")], from_specs(["V100"], {}), env={})
    found = {(f.rule, f.origin.path, f.origin.line) for f in report.findings}
    assert ("PC101", "train.py", 11) in {(r, Path(p or "").name, n) for r, p, n in found}


def test_a_literal_in_one_of_several_loader_calls_is_not_the_runs(tmp_path: Path) -> None:
    """A reference model loaded in float16 next to the trained one loaded in ``--torch_dtype``:
    which call the run's dtype is is the code's, so the flag stays."""
    write(
        tmp_path,
        "train.py",
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        parser = argparse.ArgumentParser()
        parser.add_argument("--torch_dtype", type=str, default="float32")
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained("m", torch_dtype=getattr(torch, args.torch_dtype))
        reference = AutoModelForCausalLM.from_pretrained("m", torch_dtype=torch.float16)
        Trainer(model=model, args=TrainingArguments(output_dir="out")).train()
        """,
    )
    document = launch(tmp_path, "python train.py --torch_dtype bfloat16\n")
    assert plain(document)["torch_dtype"] == "bfloat16" and not notes(document, "overridden")


def test_a_literal_in_a_second_model_load_is_not_the_runs(tmp_path: Path) -> None:
    """The policy loaded without a dtype, a reward model in float16: the literal is the
    reward model's, so the run keeps no torch_dtype from it (nor from the flag's absence)."""
    write(
        tmp_path,
        "train.py",
        """
        import argparse
        import torch
        from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

        parser = argparse.ArgumentParser()
        parser.add_argument("--model", type=str)
        parser.add_argument("--reward_model", type=str)
        args = parser.parse_args()
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        policy = AutoModelForCausalLM.from_pretrained(args.model)
        reward = AutoModelForSequenceClassification.from_pretrained(args.reward_model, torch_dtype=torch.float16)
        policy.backward()
        """,
    )
    document = launch(tmp_path, "python train.py --model m --reward_model r\n")
    assert "torch_dtype" not in plain(document)


def test_an_option_set_again_after_parse_args_beats_its_flag(tmp_path: Path) -> None:
    """``args.bf16 = True`` on argparse's namespace, then passed to ``TrainingArguments``
    (the dora excerpt with its arguments built where it parses)."""
    write(
        tmp_path,
        "train.py",
        """
        import argparse
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        if __name__ == "__main__":
            parser = argparse.ArgumentParser(description="Fine-tune LLaMA with DoRA and PEFT")
            parser.add_argument("--base_model", type=str, default="huggyllama/llama-7b")
            parser.add_argument("--bf16", action="store_true")
            args = parser.parse_args()
            args.bf16 = True
            model = AutoModelForCausalLM.from_pretrained(args.base_model)
            training_args = TrainingArguments(output_dir="out", bf16=args.bf16)
            Trainer(model=model, args=training_args).train()
        """,
    )
    document = launch(tmp_path, "python train.py --base_model huggyllama/llama-7b\n")
    bf16 = document.root.value["bf16"]  # type: ignore[index]
    assert (bf16.value, bf16.line, bf16.path) == (True, 9, "train.py")


#: excerpt of a FastChat/stanford_alpaca-derived ``train_lora.py`` (public GitHub, code index id
#: 27274514386): ``training_args.bf16 = True`` after ``parse_args_into_dataclasses()``
TRAIN_LORA = """
import transformers
from trl import SFTTrainer


def train():
    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained("lmsys/vicuna-7b-v1.5")

    training_args.bf16 = True

    trainer = SFTTrainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    train()
"""

#: excerpt of a MIMIC-IV-CDM classifier's training script (public GitHub, code index id
#: 56807249071): a ``TrainingArguments`` subclass, defaults set again after parsing
MIMIC = """
from dataclasses import dataclass, field
from typing import Optional
from transformers import HfArgumentParser, Trainer, TrainingArguments


@dataclass
class CustomTrainingArguments(TrainingArguments):
    wandb_project: Optional[str] = field(default="MIMIC-IV-CDM", metadata={"help": "W&B project name."})


def main():
    parser = HfArgumentParser((CustomTrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    training_args.lr_scheduler_type = "cosine"
    training_args.save_total_limit = 2
    training_args.bf16 = True
    training_args.dataloader_num_workers = 8
    trainer = Trainer(model=None, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_a_training_arguments_switch_set_after_parsing_keeps_the_flags(tmp_path: Path) -> None:
    """transformers 5.24 ``TrainingArguments.__post_init__`` sets ``self.mixed_precision`` from
    the parsed fp16/bf16 (``training_args.py:1614-1618``) and the Trainer hands that to
    ``Accelerator``: setting ``bf16`` afterwards does not change the autocast."""
    write(tmp_path, "train_lora.py", TRAIN_LORA)
    document = launch(tmp_path, "deepspeed train_lora.py --output_dir out --fp16 True\n")
    assert plain(document)["fp16"] is True and "bf16" not in plain(document)
    assert notes(document, "not-followed") == [("train_lora.py", 10, "bf16")]


def test_a_subclass_switch_set_after_parsing_is_read_not_used(tmp_path: Path) -> None:
    write(tmp_path, "train.py", MIMIC)
    document = launch(tmp_path, "torchrun --nproc_per_node 4 train.py --output_dir out\n")
    assert "bf16" not in plain(document)
    assert notes(document, "not-followed") == [("train.py", 16, "bf16")]
    report = engine.run([str(tmp_path / "run.sh")], from_specs(["A100"], {}), env={})
    (run,) = [r for r in report.files if r.path.endswith("run.sh")]
    assert run.plan is not None and run.plan.autocast_dtype.value is None
    assert any(u.line == 16 and u.path.endswith("train.py") for u in run.unused)
