"""Check that a change leaves every report as it was: record the JSON reports, then compare.

    python benchmarks/same_reports.py record BEFORE_DIR     # on the code before the change
    python benchmarks/same_reports.py record AFTER_DIR      # on the code after it
    python benchmarks/same_reports.py compare BEFORE_DIR AFTER_DIR

``record`` runs ``precheck --gpu GPU --format json`` on ``examples/``, ``../shared/corpus``
and ``../shared/projects`` for an A100, a V100 and 8xH100 (bf16 and no bf16, one GPU and
several), and keeps each report, its standard error and its exit code. ``compare`` says
which differ, byte for byte once the checkout each was recorded in is taken out of the
paths (reports recorded in two worktrees name their files under each), and exits 1 when
any does. A speed change must leave all of them the same.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = [ROOT / "examples", ROOT.parent / "shared" / "corpus", ROOT.parent / "shared" / "projects"]
GPUS = ["A100", "V100", "8xH100"]


def record(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for gpu in GPUS:
        for target in TARGETS:
            if not target.is_dir():
                print(f"{target}: not found, skipped")
                continue
            name = f"{target.name}-{gpu}"
            done = subprocess.run(
                [sys.executable, "-m", "precheck", "--gpu", gpu, "--format", "json", str(target)],
                capture_output=True,
                cwd=ROOT,
                timeout=900,
            )
            (out / f"{name}.json").write_bytes(done.stdout)
            (out / f"{name}.err").write_bytes(done.stderr)
            (out / f"{name}.rc").write_text(f"{done.returncode}\n")
            print(f"{name}: exit {done.returncode}, {len(done.stdout):,} bytes")


def _checkout(folder: Path) -> bytes | None:
    """The checkout a recording was made in: the folder above ``examples/`` in its paths."""
    for report in sorted(folder.glob("examples-*.json")):
        found = re.search(rb'"path": "([^"]*?)/examples/', report.read_bytes())
        if found:
            return found.group(1)
    return None


def _placeless(data: bytes, checkout: bytes | None) -> bytes:
    """``data`` with the checkout's path (and that of its ``../shared``, also as the link
    resolves on this machine) written as ``<checkout>``."""
    if not checkout:
        return data
    shared = checkout.rsplit(b"/", 1)[0] + b"/shared"
    real = os.path.realpath(shared)
    data = data.replace(checkout + b"/", b"<checkout>/").replace(shared + b"/", b"<checkout>/../shared/")
    return data.replace(real + b"/", b"<checkout>/../shared/") if real != shared else data


def compare(before: Path, after: Path) -> int:
    names = sorted({p.name for p in before.iterdir()} | {p.name for p in after.iterdir()})
    differ = 0
    places = _checkout(before), _checkout(after)
    for name in names:
        old, new = before / name, after / name
        same = (
            old.is_file()
            and new.is_file()
            and _placeless(old.read_bytes(), places[0]) == _placeless(new.read_bytes(), places[1])
        )
        differ += not same
        size = f"{old.stat().st_size:,} bytes" if old.is_file() else "missing before"
        print(f"{'same   ' if same else 'DIFFERS'}  {name} ({size})")
    print(f"{len(names) - differ} of {len(names)} the same")
    return 1 if differ else 0


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        raise SystemExit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
