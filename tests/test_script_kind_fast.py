""":func:`script_kind` names a path's last part without building a ``Path``: the same kind
as pathlib's ``name`` and ``suffix`` give, on odd paths and on every real file."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck.script_files import SCRIPTS, script_kind

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"


def _reference(path: str | Path) -> str | None:
    file = Path(path)
    return SCRIPTS.get(file.name.lower()) or SCRIPTS.get(file.suffix.lower())


ODD = [
    "",
    ".",
    "..",
    "/",
    "//",
    "a/",
    "a/.",
    "a/./",
    "a/..",
    "./train.py",
    "train.py/",
    "train.py/.",
    "a//b.sh",
    ".py",
    "x.",
    "x.PY",
    "a.b.ipynb",
    "Makefile",
    "dir/MAKEFILE",
    "makefile/",
    "a\\b.py",
    "C:train.py",
    "c:makefile",
    "run.tar.sh",
    "..sh",
    "...",
    "a.sh.",
    "job.SBATCH",
    "x.slurm",
    "x.bash",
    "dir.sh/config.yaml",
    "<stdin>",
    "-",
]


@pytest.mark.parametrize("path", ODD)
def test_odd_paths_as_pathlib_names_them(path: str) -> None:
    assert script_kind(path) == _reference(path)
    assert script_kind(Path(path)) == _reference(path)


def test_every_kind_is_found() -> None:
    assert {script_kind(p) for p in ODD} >= {"shell", "makefile", "python", "notebook", None}


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_real_files_as_pathlib_names_them() -> None:
    files = [str(p) for p in PROJECTS.rglob("*")]
    assert len(files) > 400
    for path in files:
        assert script_kind(path) == _reference(path), path
        assert script_kind(path + "/") == _reference(path + "/"), path
