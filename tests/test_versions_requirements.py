"""Versions as pip reads a real requirements.txt: pre-releases, ranges, pip-compile hashes,
constraints, extras and markers, judged through a PC201 check (ms-swift 3.0.0-3.3.0.post1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck.api import check
from precheck.rules.base import Severity

CONFIG = Path(__file__).parent.parent / "examples" / "configs" / "ms-swift-v100" / "fp16-false-ignored.yaml"


def _pc201(tmp_path: Path, requirements: str, **extra: str) -> list[tuple[Severity, str]]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.yaml").write_text(CONFIG.read_text())
    (tmp_path / "requirements.txt").write_text(requirements)
    for name, text in extra.items():
        (tmp_path / name.replace("_", ".")).write_text(text)
    report = check([str(tmp_path / "train.yaml")], ["V100"], select=["PC201"], use_project=False)
    return [(f.severity, f.message) for r in report.files for f in r.findings]


@pytest.mark.parametrize(
    ("requirements", "expected"),
    [
        ("ms-swift==3.3.1rc1\n", Severity.ERROR),  # a release candidate comes before 3.3.1
        ("ms-swift==3.3.1\n", None),
        ("ms-swift==3.2.*\n", Severity.ERROR),  # every 3.2 release is affected
        ("ms-swift==3.3.*\n", Severity.WARNING),  # 3.3.0 is, 3.3.1 is not
        ("ms-swift~=3.2\n", Severity.WARNING),
        ("ms-swift>=3.0,<3.4\n", Severity.WARNING),
        ("ms-swift>=3.0,<3.3.1\n", Severity.ERROR),
        ("ms-swift>=3.4\n", None),
        ("ms-swift!=3.3.0,>=3.1,<3.3\n", Severity.ERROR),
        ("ms-swift[llm]==3.2.2\n", Severity.ERROR),
        (
            "# pip-compile --generate-hashes\nms-swift==3.2.2 \\\n    --hash=sha256:00ff \\\n"
            "    --hash=sha256:11ee\n    # via -r requirements.in\n",
            Severity.ERROR,
        ),
        ('ms-swift==3.3.1 ; python_version < "3"\nms-swift==3.2.2 ; python_version >= "3"\n', Severity.ERROR),
    ],
)
def test_requirements_as_pip_reads_them(tmp_path: Path, requirements: str, expected: Severity | None) -> None:
    found = _pc201(tmp_path, requirements)
    assert [s for s, _ in found] == ([expected] if expected is not None else [])
    if expected is not None:
        assert "requirements.txt:" in found[0][1]
    if expected == Severity.WARNING:
        assert "pin the exact release" in found[0][1]


def test_constraints_file_pins(tmp_path: Path) -> None:
    found = _pc201(tmp_path, "-c constraints.txt\nms-swift[llm]\n", constraints_txt="ms-swift==3.2.2\n")
    assert [s for s, _ in found] == [Severity.ERROR]
    assert "constraints.txt:1" in found[0][1]
