"""transformers up to 4.34 refuses bf16 below compute capability 8 by itself
(``utils/import_utils.py:313@4.34.0``), whatever torch's emulation-counting check says: an HF
Trainer run pinned to such a release stops at start on a V100, it does not run emulated
(auditE, issue 27). Tested on two repositories' own files (``tests/fixtures/fresh/README.md``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from precheck import api

FRESH = Path(__file__).parent / "fixtures" / "fresh"


def _pc101(tmp_path: Path, name: str, launch: str) -> list[str]:
    root = tmp_path / name
    shutil.copytree(FRESH / name, root)
    (root / ".git").mkdir()  # the repository's root: its pins are the run's
    report = api.check(str(root / launch), "V100", use_project=False)
    return [f.message for f in report.findings if f.rule == "PC101"]


@pytest.mark.parametrize(
    ("name", "launch", "pin"),
    [
        # transformers==4.32.0, torch not pinned (requirements.txt:1)
        ("Qwen-VL", "finetune/finetune_ds.sh", "transformers 4.32.0"),
        # transformers>=4.26.0,<=4.29.2, torch>=1.13.1 (requirements.txt:6, :14)
        ("alpaca_farm", "examples/scripts/dpo.sh", "transformers >=4.26.0,<=4.29.2"),
    ],
)
def test_old_transformers_stops_the_run_whatever_torch_counts(tmp_path: Path, name: str, launch: str, pin: str) -> None:
    messages = _pc101(tmp_path, name, launch)
    assert len(messages) == 1, messages
    assert pin in messages[0] and "stops at start" in messages[0], messages[0]
    assert "runs emulated" not in messages[0]
