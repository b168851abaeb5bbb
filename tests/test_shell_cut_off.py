"""Flags cut off a launch by bash: a comment line (or a blank line) after a backslash ends the
command, and the flags below it start a command of their own. precheck reads the launch as
bash runs it, without them, and says so on that run (read, not used)."""

from __future__ import annotations

from pathlib import Path

import pytest

import precheck.frameworks  # noqa: F401 (the registry the shell reader consults)
from precheck.sources import Document, load_runs
from precheck.sources.nodes import CUT_OFF


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def runs(tmp_path: Path, text: str) -> list[Document]:
    (tmp_path / "run.sh").write_text(text)
    return load_runs(Path("run.sh"))


def cut(document: Document) -> list[tuple[int, str | None]]:
    return [(n.line, n.key) for n in document.notes if n.kind == CUT_OFF]


#: excerpt of OpenBMB/MiniCPM finetune/sft_finetune.sh (main): a comment above every flag
MINICPM = """\
#!/bin/bash
formatted_time=$(date +"%Y%m%d%H%M%S")

deepspeed --include localhost:0,1 finetune.py \\
    # 预训练模型路径或名称
    --model_name_or_path MiniCPM-2B-sft-bf16 \\
    # 启用BF16混合精度
    --bf16 \\
    # DeepSpeed配置文件路径
    --deepspeed configs/ds_config_zero2.json
"""

#: excerpt of a public open-r1 fork's video SFT script (GitHub, code index id 36984596674):
#: one commented-out flag in the middle cuts off the attention and the rest
OPEN_R1_VIDEO = """\
CUDA_VISIBLE_DEVICES=0 python src/open_r1/sft_video.py \\
    --output_dir "outputs/log/Qwen2.5-VL-2B-Video-2B-cot-sft" \\
    --model_name_or_path "Qwen/Qwen2-VL-2B-Instruct" \\
    --per_device_train_batch_size 1 \\
    --bf16 \\
    # --report_to wandb \\
    --gradient_checkpointing true \\
    --attn_implementation flash_attention_2 \\
    --num_train_epochs 1
"""


#: the part of MiniCPM finetune/finetune.py that parses its flags
FINETUNE = """\
from dataclasses import dataclass, field
from typing import Optional
import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="openbmb/MiniCPM-2B-sft-bf16")


if __name__ == "__main__":
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    transformers.Trainer(model=None, args=training_args).train()
"""


def test_comments_between_the_flags_end_the_launch(tmp_path: Path) -> None:
    (tmp_path / "finetune.py").write_text(FINETUNE)
    (document,) = [d for d in runs(tmp_path, MINICPM) if d.format == "shell"]
    assert "bf16" not in document.root.value and "deepspeed" not in document.root.value  # type: ignore[operator]
    assert cut(document) == [(6, "--model_name_or_path")]  # one note for the launch, at its first line cut off
    (note,) = [n for n in document.notes if n.kind == CUT_OFF]
    assert "on lines 6, 8, 10" in note.message and "`--bf16`" in note.message


def test_a_commented_out_flag_cuts_off_the_rest(tmp_path: Path) -> None:
    (document,) = runs(tmp_path, OPEN_R1_VIDEO)
    flags = document.root.plain()
    assert flags["bf16"] is True and "attn_implementation" not in flags  # type: ignore[index,operator]
    assert cut(document) == [(7, "--gradient_checkpointing")]


def test_flags_of_a_command_before_any_launch_are_not_noted(tmp_path: Path) -> None:
    (document,) = runs(tmp_path, "echo start\n" + OPEN_R1_VIDEO.replace("    # --report_to wandb \\\n", ""))
    assert not cut(document) and document.root.plain()["attn_implementation"] == "flash_attention_2"  # type: ignore[index]
