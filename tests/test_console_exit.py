"""The ``precheck`` command ends a plain check without tearing the interpreter down
(``entry.console``): what it prints and its exit code are exactly those of :func:`entry.main`
ending as Python does, however much it prints and wherever it goes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAIN = "import sys; from precheck.entry import main; main(sys.argv[1:])"

CASES = [
    ["--gpu", "V100", "--format", "json", "examples/configs"],  # findings: exit 1, a long report
    ["--gpu", "A100", "examples/configs/clean"],  # exit 0
    ["--gpu", "A100", "no-such-file.yaml"],  # exit 2
    ["--format", "sarif", "--gpu", "V100", "examples/configs"],
    ["--version"],  # the typer app
    ["probe", "--json"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a))
def test_console_prints_and_exits_as_main(args: list[str]) -> None:
    ours = subprocess.run([sys.executable, "-m", "precheck", *args], capture_output=True, cwd=ROOT)
    plain = subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, cwd=ROOT)
    assert (ours.returncode, ours.stdout, ours.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert ours.returncode in (0, 1, 2)


def test_output_to_a_file_is_complete(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    with out.open("wb") as handle:  # a file: stdout block-buffered, flushed before the process ends
        code = subprocess.run(
            [sys.executable, "-m", "precheck", "--gpu", "V100", "--format", "json", "examples/configs"],
            stdout=handle,
            cwd=ROOT,
        ).returncode
    import json

    assert code == 1 and json.loads(out.read_text(encoding="utf-8"))["summary"]["errors"] > 0
