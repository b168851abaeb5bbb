"""PC716-PC717 (issue 28): llm-foundry/Composer and LitGPT runs read against the option schemas
extracted from the frameworks' releases (``precheck/data/schemas/``). Real files: LitGPT's own
``config_hub`` (copies in ``../shared/corpus/lightning``); llm-foundry's in
``tests/dialects/test_llm_foundry.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precheck
from helpers import Case, check_case
from precheck.engine import run
from precheck.frameworks.lightning.launch import COMMANDS
from precheck.hardware import from_specs
from precheck.versions import parse_assumptions

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "lightning"
CONFIG_HUB = sorted(CORPUS.glob("Lightning-AI__litgpt__config_hub__*.yaml")) if CORPUS.is_dir() else []
needs_corpus = pytest.mark.skipif(not CONFIG_HUB, reason="the shared corpus is not here")


FOUNDRY = """
model:
  name: mpt_causal_lm
max_duration: 10ba
global_train_batch_size: 8
device_train_microbatch_size: 1
train_loader:
  name: text
precision: {precision}
fsdp_config:
  mixed_precision: {mixed}
"""
PRETRAIN = """
model_name: pythia-160m
out_dir: out/pretrain
precision: {precision}
devices: 1
train:
  global_batch_size: 8
  micro_batch_size: 1
"""

CASES = [
    # PC716: a precision or FSDP mixed precision Composer refuses
    Case("composer precision bf16", "PC716", FOUNDRY.format(precision="bf16", mixed="PURE"), expect={(8, 1)}),
    Case(
        "composer mixed_precision HALF", "PC716", FOUNDRY.format(precision="amp_bf16", mixed="HALF"), expect={(10, 3)}
    ),
    Case("fixed: composer amp_bf16 PURE", "PC716", FOUNDRY.format(precision="amp_bf16", mixed="PURE")),
    Case("composer names are case-insensitive", "PC716", FOUNDRY.format(precision="AMP_FP16", mixed="default")),
    # PC717: an option value the LitGPT command's parser refuses
    Case("litgpt pretrain 16-mixed", "PC717", PRETRAIN.format(precision="16-mixed"), ["V100"], {(3, 1)}),
    Case("fixed: litgpt pretrain 32-true", "PC717", PRETRAIN.format(precision="32-true"), ["V100"]),
    Case(
        "litgpt pretrain 16-true, pinned release",
        "PC717",
        PRETRAIN.format(precision="16-true"),
        expect={(3, 1)},
        versions={"litgpt": "0.5.12"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def found(path: Path, gpu: str, *assume: str) -> list[tuple[str, int | None, str]]:
    report = run([str(path)], from_specs([gpu], {}), env={}, assumed_versions=parse_assumptions(assume))
    return [(f.rule, f.origin.line, f.message) for f in report.findings if f.rule == "PC717"]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_every_released_training_command_is_a_launch() -> None:
    data = json.loads((Path(precheck.__file__).parent / "data" / "schemas" / "litgpt.json").read_text())
    released = {c for r in data["releases"] for c in r["schema"]["entry_points"]}
    assert released <= COMMANDS, released - COMMANDS


@needs_corpus
@pytest.mark.parametrize("path", CONFIG_HUB, ids=lambda p: p.name.split("config_hub__")[1])
def test_config_hub_takes_every_key(path: Path) -> None:
    assert found(path, "8xH100") == []


@needs_corpus
def test_pretrain_refuses_16_bit_precision(tmp_path: Path) -> None:
    text = (CORPUS / "Lightning-AI__litgpt__config_hub__pretrain__tinyllama.yaml").read_text(encoding="utf-8")
    assert "precision: bf16-mixed\n" in text
    path = write(tmp_path, "tinyllama.yaml", text.replace("precision: bf16-mixed\n", "precision: 16-mixed\n"))
    hits = found(path, "V100")
    assert [(rule, line) for rule, line, _ in hits] == [("PC717", 14)]
    assert "32-true, bf16-mixed, bf16-true" in hits[0][2] and "litgpt 0.5.13" in hits[0][2]


def test_launch_options_against_the_named_command(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "run.sh",
        "litgpt finetune_full checkpoints/x --quantize bnb.nf4 --precision bf16-true\n"
        "litgpt finetune_lora checkpoints/x --quantize bnb.nf8 --precision 16-true\n"
        "litgpt finetune_lora checkpoints/x --quantize bnb.nf4 --precision 16-true --lora_r 4\n"
        "litgpt finetune lora checkpoints/x --lora_rank 4\n",
    )
    hits = [(line, message.split(" is ")[0]) for _, line, message in found(script, "A100")]
    assert hits == [(1, "`quantize`"), (2, "`quantize: bnb.nf8`"), (4, "`lora_rank`")]


def test_release_read_follows_the_pinned_version(tmp_path: Path) -> None:
    # logger_name gained "litlogger" in 0.5.13; 0.5.12's parser refuses it
    text = "checkpoint_dir: checkpoints/x\nlogger_name: litlogger\nprecision: bf16-true\ndevices: 1\n"
    path = write(tmp_path, "lora.yaml", text + "train:\n  global_batch_size: 8\n  micro_batch_size: 1\n")
    assert found(path, "A100", "litgpt==0.5.13") == []
    hits = found(path, "A100", "litgpt==0.5.12")
    assert [(rule, line) for rule, line, _ in hits] == [("PC717", 2)] and "litgpt 0.5.12" in hits[0][2]
