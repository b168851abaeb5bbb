"""A library's trainer that builds its own config when the caller passes none
(``if args is None: args = KTOConfig(...)`` in ``__init__``) or converts the caller's
(``elif isinstance(args, TrainingArguments): args = SFTConfig(**dict_args)``) configures no run:
the run is the caller's. Real code, trimmed: huggingface/trl@f2cd577
``trl/trainer/kto_trainer.py:589-592`` and ``trl/trainer/sft_trainer.py:925-934`` (13 false V100
PC101 errors in the fresh audit D). A script's own config, or a module function's
``if args is None`` default, is still the run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs

KTO = """
import torch
from peft import get_peft_model
from transformers import Trainer
from .kto_config import KTOConfig


class KTOTrainer(Trainer):
    def __init__(self, model=None, ref_model=None, args: KTOConfig | None = None, train_dataset=None, peft_config=None):
        # Args
        if args is None:
            model_name = model if isinstance(model, str) else model.config._name_or_path
            model_name = model_name.split("/")[-1]
            args = KTOConfig(f"{model_name}-KTO")

        if train_dataset is None:
            raise ValueError("`train_dataset` is required")
        if peft_config is not None:
            model = get_peft_model(model, peft_config)
        super().__init__(model=model, args=args, train_dataset=train_dataset)
"""

SFT = """
import transformers
from packaging.version import Version
from peft import get_peft_model
from transformers import Trainer, TrainingArguments
from .sft_config import SFTConfig


class SFTTrainer(Trainer):
    def __init__(self, model, args: SFTConfig | TrainingArguments | None = None, train_dataset=None, peft_config=None):
        # Args
        if args is None:
            model_name = model if isinstance(model, str) else model.config._name_or_path
            model_name = model_name.split("/")[-1]
            args = SFTConfig(f"{model_name}-SFT")
        elif isinstance(args, TrainingArguments) and not isinstance(args, SFTConfig):
            dict_args = args.to_dict()
            dict_args["hub_token"] = args.hub_token  # to_dict hides the hub_token
            if Version(transformers.__version__) < Version("5.0.0"):
                dict_args.pop("push_to_hub_token")
            args = SFTConfig(**dict_args)

        if peft_config is not None:
            model = get_peft_model(model, peft_config)
        super().__init__(model=model, args=args, train_dataset=train_dataset)
"""

VENDORED = """
import torch
from transformers import TrainingArguments


class Trainer:
    def __init__(self, model=None, args: TrainingArguments = None):
        if args is None:
            output_dir = "tmp_trainer"
            args = TrainingArguments(output_dir=output_dir)
        self.args = args
        self.model = model
        if args.fp16:
            self.scaler = torch.cuda.amp.GradScaler()

    def training_step(self, model, inputs):
        with torch.cuda.amp.autocast():
            loss = model(**inputs).loss
        self.scaler.scale(loss).backward()
        return loss.detach()

    def prediction_loop(self, dataloader):
        model = self.model
        if not self.is_in_train and self.args.fp16_full_eval:
            model = model.half().to(self.args.device)
        return model
"""

SCRIPT = """
from trl import SFTConfig, SFTTrainer


def main(args=None):
    if args is None:
        args = SFTConfig(output_dir="out", bf16=True)
    trainer = SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=args, train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def errors(path: Path, gpu: str) -> set[str]:
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return {f.rule for f in report.findings if str(f.severity) == "error"}


def test_a_library_trainers_own_default_config_is_not_a_run(tmp_path: Path) -> None:
    assert errors(write(tmp_path, "kto_trainer.py", KTO), "V100") == set()


def test_a_library_trainers_conversion_of_the_callers_config_is_not_a_run(tmp_path: Path) -> None:
    assert errors(write(tmp_path, "sft_trainer.py", SFT), "V100") == set()


def test_a_vendored_trainer_is_not_read_as_a_loop(tmp_path: Path) -> None:
    """microsoft/LoRA@c4593f0 vendors transformers' ``trainer.py`` (examples/NLU/src/transformers,
    trimmed): with its fallback config left out, its GradScaler and its evaluation's ``.half()``
    must not make it a plain loop (a false A100 PC401 error)."""
    assert errors(write(tmp_path, "trainer.py", VENDORED), "A100") == set()


def test_a_scripts_own_default_config_is_still_the_run(tmp_path: Path) -> None:
    """`def main(args=None): if args is None: args = SFTConfig(bf16=True)`: a function, not a
    method, so the default is the script's run."""
    assert "PC101" in errors(write(tmp_path, "train.py", SCRIPT), "V100")
