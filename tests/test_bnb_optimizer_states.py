"""A bitsandbytes optimizer keeps its own state dtype whatever the weights' dtype
(``Optimizer2State.init_state``: ``optim_bits == 32`` -> float32, 8 -> uint8 blockwise;
bitsandbytes/optim/optimizer.py:492-510@0.50.2.dev0): PC207 on RLHFlow/Online-RLHF's axolotl
``sft/llama3-8b-it.yaml`` (``bf16: auto``, ``paged_adamw_32bit``) said "(bfloat16 optimizer
states)" and "the bf16 second moment does not decay", both false; the bf16 weights' lost
updates stay reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

FRESH = Path(__file__).parent / "fixtures" / "fresh" / "Online-RLHF" / "sft" / "llama3-8b-it.yaml"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "axolotl"


def _pc207(path: Path) -> str:
    report = api.check(str(path), "A100", use_project=False)
    (message,) = [f.message for f in report.findings if f.rule == "PC207"]
    return message


def test_paged_adamw_32bit_keeps_fp32_states() -> None:
    assert "optimizer: paged_adamw_32bit" in FRESH.read_text(encoding="utf-8")
    message = _pc207(FRESH)
    assert "(float32 optimizer states)" in message
    assert "second moment" not in message and "bfloat16 optimizer states" not in message


def test_paged_adamw_8bit_states_are_quantized() -> None:
    path = CORPUS / "axolotl-ai-cloud__axolotl__examples__llama-3__sparse-finetuning.yaml"
    if not path.exists():
        pytest.skip("the shared corpus is not here")
    assert "(8-bit quantized optimizer states)" in _pc207(path)


def test_torch_adamw_states_follow_the_weights(tmp_path: Path) -> None:
    text = FRESH.read_text(encoding="utf-8").replace("optimizer: paged_adamw_32bit", "optimizer: adamw_torch")
    path = tmp_path / "sft.yaml"
    path.write_text(text, encoding="utf-8")
    message = _pc207(path)
    assert "(bfloat16 optimizer states)" in message and "second moment does not decay" in message
