"""A framework entry module found in the checked repository (OpenRLHF's own checkout):
the options a launch gives or leaves to their default cite where the module defines them
and the lines that read them off ``args`` (``param_dtype=args.ds.param_dtype``), as a
launched script's own options do; ``--ds.load_in_4bit``'s store_true default is the
"not quantized" it decides."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def places(script: Path, field: str) -> tuple[str, set[tuple[str, int]]]:
    """Checked from the repository's root, where ``--module`` finds the entry module."""
    report = engine.run([str(script)], from_specs(["A100"], {}), env={})
    assert not report.errors, report.errors
    (result,) = [r for r in report.files if r.plan is not None and Path(r.path).name == script.name]
    item = getattr(result.plan, field)
    return str(item.value), {(Path(p).name, line) for p, line in item.origin.places}


#: OpenRLHF/OpenRLHF ``openrlhf/cli/train_sft.py`` (lines 1, 13-26, 150-151, 178-185, 257, 303-304; the
#: second option of each pair shortened)
TRAIN_SFT = """
import argparse


def train(args):
    strategy = get_strategy(args)
    strategy.setup_distributed()

    # configure model
    # load huggingface model
    model = Actor(
        args.model.model_name_or_path,
        attn_implementation=args.ds.attn_implementation,
        experts_implementation=args.ds.experts_implementation,
        param_dtype=args.ds.param_dtype,  # default: bf16
        load_in_4bit=args.ds.load_in_4bit,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ds.zero_stage", type=int, default=2, help="DeepSpeed ZeRO stage")
    parser.add_argument(
        "--ds.param_dtype",
        type=str,
        default="bf16",
        choices=["bf16", "fp16"],
        help="Model data type",
    )
    parser.add_argument("--ds.load_in_4bit", action="store_true", default=False)
    parser.add_argument("--model.model_name_or_path", type=str, default=None)
    args = parser.parse_args()
    train(args)
"""

#: OpenRLHF/OpenRLHF ``examples/scripts/train_sft.sh`` (lines 1-4, 12, 17-19, 26-31)
SFT_LAUNCH = """
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_sft \\
   --model.model_name_or_path meta-llama/Meta-Llama-3-8B \\
   --ds.zero_stage 2 \\
   --ds.param_dtype bf16
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
"""


def test_a_given_flag_cites_its_definition_and_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "openrlhf/cli/train_sft.py", TRAIN_SFT)
    script = write(tmp_path, "examples/scripts/train_sft.sh", SFT_LAUNCH)
    value, cited = places(script, "load_dtype")
    assert value == "bfloat16"
    assert ("train_sft.sh", 7) in cited  # the flag
    assert ("train_sft.py", 23) in cited  # "--ds.param_dtype",
    assert ("train_sft.py", 14) in cited  # param_dtype=args.ds.param_dtype,
    assert ("train_sft.py", 25) not in cited  # its default="bf16": the flag decides


def test_a_store_true_default_is_the_not_quantized_it_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "openrlhf/cli/train_sft.py", TRAIN_SFT)
    script = write(tmp_path, "examples/scripts/train_sft.sh", SFT_LAUNCH)
    value, cited = places(script, "quantization")
    assert value == "none"
    assert {("train_sft.py", 29), ("train_sft.py", 15)} <= cited


#: OpenRLHF/OpenRLHF ``openrlhf/cli/train_dpo.py`` (lines 1, 13-25, 205-215 shortened, 289; its parse_args)
TRAIN_DPO = """
import argparse


def train(args):
    strategy = get_strategy(args)
    model = Actor(
        args.model.model_name_or_path,
        attn_implementation=args.ds.attn_implementation,
        param_dtype=args.ds.param_dtype,  # default: bf16
        load_in_4bit=args.ds.load_in_4bit,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--ds.param_dtype",
        type=str,
        default="bf16",
        choices=["bf16", "fp16"],
        help="Model data type",
    )
    parser.add_argument("--ds.load_in_4bit", action="store_true", default=False)
    args = parser.parse_args()
    train(args)
"""

#: OpenRLHF/OpenRLHF ``examples/scripts/train_dpo_llama.sh`` without ``--ds.param_dtype`` (its default then)
DPO_LAUNCH = """
read -r -d '' training_commands <<EOF
openrlhf.cli.train_dpo \\
   --model.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \\
   --ds.zero_stage 3
EOF
deepspeed --module $training_commands
"""


def test_a_default_taken_cites_default_definition_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "openrlhf/cli/train_dpo.py", TRAIN_DPO)
    script = write(tmp_path, "train_dpo_llama.sh", DPO_LAUNCH)
    value, cited = places(script, "load_dtype")
    assert value == "bfloat16"
    assert {("train_dpo.py", 19), ("train_dpo.py", 17), ("train_dpo.py", 9)} <= cited
