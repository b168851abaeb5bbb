"""Every finding points at a place that exists: its file, a line of that file, a column
within that line (issue 29: a finding from an accelerate config was reported as ``run.sh:7:3``,
a line ``run.sh`` does not have; a notebook finding at a YAML file's line)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from precheck import api
from precheck.provenance import Origin

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TARGETS = {
    "examples": ROOT / "examples",
    "corpus": SHARED / "corpus",
    "projects": SHARED / "projects",
    "reports": SHARED / "reports",
}


@lru_cache(maxsize=4096)
def _lines(path: str) -> tuple[str, ...] | None:
    try:
        return tuple(Path(path).read_text(encoding="utf-8", errors="replace").split("\n"))
    except OSError:
        return None


def _misplaced(origin: Origin, where: str) -> str | None:
    if origin.path is None or origin.line is None or origin.path.startswith("<"):
        return None  # a default, a command line
    lines = _lines(origin.path)
    if lines is None:
        return f"{where}: {origin.path} is not a file"
    if not 1 <= origin.line <= len(lines):
        return f"{where}: {origin.path}:{origin.line} (the file has {len(lines)} lines)"
    if origin.column is not None and not 1 <= origin.column <= len(lines[origin.line - 1]) + 1:
        return f"{where}: {origin.path}:{origin.line}:{origin.column} (the line has {len(lines[origin.line - 1])})"
    return None


@pytest.mark.parametrize("gpu", ["8xA100-80GB", "V100"])
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_finding_is_at_a_line_of_its_file(target: str, gpu: str, monkeypatch) -> None:
    folder = TARGETS[target]
    if not folder.is_dir():
        pytest.skip(f"{folder} is not here (../shared is the project's shared material)")
    monkeypatch.chdir(ROOT)
    report = api.check(str(folder), gpu, use_project=False, details=False)
    wrong = []
    for finding in report.findings:
        for n, origin in enumerate((finding.origin, *finding.related)):
            said = _misplaced(origin, f"{finding.rule} {'at' if n == 0 else 'related'}")
            if said is not None:
                wrong.append(said)
    assert wrong == []


def test_a_line_the_file_does_not_have_is_caught(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\naccelerate launch --config_file acc.yaml train.py\n")
    assert _misplaced(Origin("file", str(script), 7, 3), "PC605") is not None
    assert _misplaced(Origin("file", str(script), 2, 60), "PC605") is not None  # past the line's end
    assert _misplaced(Origin("file", str(script), 2, 1), "PC605") is None
