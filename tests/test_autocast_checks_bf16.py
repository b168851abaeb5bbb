"""An xtuner config's ``AmpOptimWrapper(dtype='bfloat16')`` runs under mmengine's autocast, which
checks bf16 support itself (``mmengine/runner/amp.py:121-125@0.10.4``: ``RuntimeError('Current CUDA
Device does not support bfloat16. Please switch dtype to float16.')``): with a torch < 2.3 the run
stops there, not at transformers' ``TrainingArguments`` check (fresh audit F, issue 28: the
message quoted transformers' "Your setup doesn't support bf16/gpu."). The repository's own files
(``tests/fixtures/fresh/README.md``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from precheck import api

FRESH = Path(__file__).parent / "fixtures" / "fresh"


def _pc101(tmp_path: Path, name: str, config: str) -> list[str]:
    root = tmp_path / name
    shutil.copytree(FRESH / name, root)
    (root / ".git").mkdir()  # the repository's root: its pins are the run's
    report = api.check(str(root / config), "V100", use_project=False)
    return [f.message for f in report.findings if f.rule == "PC101"]


def test_mmengine_autocast_refuses_bf16_under_old_torch(tmp_path: Path) -> None:
    messages = _pc101(tmp_path, "EmoLLM", "xtuner_config/internlm2_chat_7b_full.py")
    assert len(messages) == 1, messages
    assert "torch 2.1.2" in messages[0] and "Current CUDA Device does not support bfloat16" in messages[0]
    assert "Your setup doesn't support bf16/gpu" not in messages[0]
