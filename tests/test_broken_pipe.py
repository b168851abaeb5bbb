"""A reader that goes away (``precheck ... | head -1``) ends the run quietly, without an
"internal error" message or a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_closed_pipe_is_not_an_internal_error(tmp_path: Path) -> None:
    for index in range(300):
        (tmp_path / f"c{index:03}.yaml").write_text(
            "model_name_or_path: m\noutput_dir: o\nper_device_train_batch_size: 1\nlearning_rate: 1.0e-5\nfp_16: true\n"
        )
    command = f"{sys.executable} -m precheck --isolated --gpu A100 {tmp_path} | head -1"
    done = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.count("\n") == 1
    assert "PC905" in done.stdout
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
