"""``--fix`` applies fixes until none is left that it can apply (bounded passes, as ruff), and
says what remains (issue 32: a second ``--fix --unsafe-fixes`` run used to fix two more)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from precheck.check_command import MAX_FIX_PASSES

ROOT = Path(__file__).resolve().parents[1]


def _fix(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    return subprocess.run(
        [sys.executable, "-m", "precheck", "--gpu", "V100", "--fix", *args, "."],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _fixed_line(result: subprocess.CompletedProcess[str]) -> str:
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("precheck: fixed ")]
    return line


def test_one_fix_run_leaves_nothing_a_second_run_would_fix(tmp_path: Path) -> None:
    work = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", work)
    first = _fixed_line(_fix(work, "--unsafe-fixes"))
    assert " in 2 passes; " in first and first.endswith(" findings left"), first
    again = _fix(work, "--unsafe-fixes")
    assert _fixed_line(again).startswith("precheck: fixed 0 findings in 0 files; "), again.stderr
    left = int(first.rsplit("; ", 1)[1].split()[0])
    assert f"{left} findings left" in _fixed_line(again)


def test_the_safe_fixes_say_what_the_unsafe_flag_would_add(tmp_path: Path) -> None:
    work = tmp_path / "examples"
    shutil.copytree(ROOT / "examples" / "configs", work)
    line = _fixed_line(_fix(work))
    assert "more with --unsafe-fixes)" in line and "left" in line, line


def test_the_passes_are_bounded() -> None:
    assert 2 <= MAX_FIX_PASSES <= 100
