"""``first_pins_in`` (what version lookup reads) agrees with ``pins_in`` on the first pin of
every name, and evaluates environment markers only where they can decide it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from precheck.pins import first_pins_in, pins_in

SHARED = Path(__file__).resolve().parents[2] / "shared"


def _firsts(pins: object) -> dict[str, tuple[str, str, int]]:
    out: dict[str, tuple[str, str, int]] = {}
    for source, name, version, line in pins:  # type: ignore[attr-defined]
        out.setdefault(name, (source.name, version, line))
    return out


CASES = {
    "plain": "torch==2.3.0\ntransformers>=4.40,<5\n",
    "marker once": 'torch==2.3.0 ; sys_platform == "win32"\npeft==0.10.0\n',
    "marker decides": 'trl==0.8.0 ; python_version < "3"\ntrl==0.9.0 ; python_version >= "3"\n',
    "false marker first, then plain": 'trl==0.8.0 ; python_version < "3"\ntrl==0.9.0\n',
    "include after a false marker": 'trl==0.8.0 ; python_version < "3"\n-r more.txt\n',
    "twice, no marker": "trl==0.8.0\ntrl==0.9.0\n",
    "unreadable marker": "trl==0.8.0 ; nonsense here\ntrl==0.9.0\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_first_pin_of_each_name_as_pins_in(tmp_path: Path, text: str) -> None:
    (tmp_path / "more.txt").write_text('trl==0.7.0\ntorch==2.1.0 ; python_version < "3"\n', encoding="utf-8")
    path = tmp_path / "requirements.txt"
    path.write_text(text, encoding="utf-8")
    assert _firsts(first_pins_in(path)) == _firsts(pins_in(path))


def test_first_pins_on_real_pin_files() -> None:
    files = [
        p
        for root in (SHARED / "projects", SHARED / "corpus")
        for pattern in ("requirements*.txt", "pyproject.toml", "environment.y*ml")
        for p in root.rglob(pattern)
    ]
    if not files:
        pytest.skip("shared projects not found")
    for path in files:
        assert _firsts(first_pins_in(path)) == _firsts(pins_in(path)), path


def test_markers_evaluated_only_where_they_decide(tmp_path: Path) -> None:
    path = tmp_path / "requirements.txt"
    path.write_text('colorama==0.4.6 ; platform_system == "Windows"\ntorch==2.3.0\n', encoding="utf-8")
    code = (
        "import sys; from pathlib import Path; from precheck.pins import first_pins_in; "
        f"pins = list(first_pins_in(Path({str(path)!r}))); "
        "print(len(pins), 'packaging.markers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", "False"]
    path.write_text('torch==2.2.0 ; python_version < "3"\ntorch==2.3.0\n', encoding="utf-8")
    code = code.replace("print(len(pins)", "print(pins[0][2]")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2.3.0", "True"]
