"""axolotl's quantization setting ("4-bit, compute bfloat16") is decided by two lines: the
`load_in_4bit: true` that quantizes and the dtype the compute follows (`bf16: auto`). The plan
cites both (fresh-sample audit D: the `load_in_4bit` line of axolotl's examples was read, not used).
Excerpts of axolotl@067b021 examples/trinity/trinity-nano-preview-qlora.yaml and
examples/jamba/qlora_deepspeed.yaml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TRINITY = """base_model: arcee-ai/Trinity-Nano-Preview
revision_of_model: 2ee94b0

load_in_8bit: false
load_in_4bit: true

adapter: qlora
sequence_len: 2048
lora_r: 32
gradient_accumulation_steps: 4
micro_batch_size: 2
bf16: auto
tf32: false
gradient_checkpointing: true
"""

JAMBA = """base_model: ai21labs/Jamba-v0.1
# Automatically upload checkpoint and final model to HF
trust_remote_code: true

load_in_8bit: false
load_in_4bit: true
strict: false

adapter: qlora
lora_r: 8
micro_batch_size: 1
optimizer: paged_adamw_8bit
bf16: auto
tf32: false
"""


def _quantization_places(tmp_path: Path, name: str, text: str) -> set[int]:
    path = tmp_path / name
    path.write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    result = subprocess.run(
        [sys.executable, "-m", "precheck", "explain", "--gpu", "A100", "--format", "json", name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    document = json.loads(result.stdout)
    (run,) = [r for r in document["runs"] if r["dialect"] == "axolotl"]
    setting = run["plan"]["quantization"]
    assert setting["value"].startswith("4-bit, compute")
    origin = setting["origin"]
    return {origin["line"], *(p["line"] for p in origin.get("through", []))}


@pytest.mark.parametrize(
    ("name", "text", "quantize_line", "dtype_line"),
    [("trinity-qlora.yaml", TRINITY, 5, 12), ("jamba-qlora.yaml", JAMBA, 6, 13)],
)
def test_the_4bit_quantization_cites_load_in_4bit_and_the_compute_dtype(
    tmp_path: Path, name: str, text: str, quantize_line: int, dtype_line: int
) -> None:
    assert text.splitlines()[quantize_line - 1] == "load_in_4bit: true"
    assert text.splitlines()[dtype_line - 1] == "bf16: auto"
    assert {quantize_line, dtype_line} <= _quantization_places(tmp_path, name, text)
