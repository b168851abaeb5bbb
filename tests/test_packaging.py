"""The distribution: an sdist from which the tests run, a wheel with its typing marker,
the licence it declares."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_the_license_is_the_apache_text_pyproject_declares() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()
    assert (ROOT / "src" / "precheck" / "py.typed").is_file()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build``: the sdist, then the wheel built from that sdist."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def test_the_sdist_carries_what_the_tests_need(built: Path) -> None:
    (sdist,) = built.glob("precheck_ml-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    for needed in (
        "LICENSE",
        "README.md",
        "pyproject.toml",
        "src/precheck/py.typed",
        "tests/conftest.py",
        "tests/fixtures/golden/project/.precheck.toml",
        "examples/configs/ms-swift-v100/fp16-false-ignored.yaml",
        "examples/project/pyproject.toml",
        "docs/rules/PC201.md",
        "schema/precheck-config.schema.json",
        "scripts/generate_docs.py",
        ".pre-commit-hooks.yaml",
    ):
        assert needed in names, needed
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_the_wheel_has_the_typing_marker_and_the_data(built: Path) -> None:
    (wheel,) = built.glob("precheck_ml-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"precheck/py.typed", "precheck/data/gpus.json", "precheck/rule_pages.py"} <= names
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Name: precheck-ml" in text and "Project-URL: Repository, " in text and "License-File: LICENSE" in text


def test_the_tests_run_from_the_unpacked_sdist(built: Path, tmp_path: Path) -> None:
    """A sample that reads the fixtures, the examples, the generated docs and the README."""
    (sdist,) = built.glob("precheck_ml-*.tar.gz")
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(tmp_path, filter="data")
        else:  # pragma: no cover - Python before 3.10.12: our own archive
            archive.extractall(tmp_path)
    (unpacked,) = tmp_path.iterdir()
    env = {**os.environ, "PYTHONPATH": str(unpacked / "src")}  # the sdist's own code, not this checkout's
    where = subprocess.run(
        [sys.executable, "-c", "import precheck; print(precheck.__file__)"], env=env, capture_output=True, text=True
    )
    assert where.stdout.startswith(str(unpacked)), where.stdout + where.stderr
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "tests/test_output_formats.py",
            "tests/test_docs_and_schema.py",
            "tests/test_cli.py",
            "tests/test_api.py",
        ],
        cwd=unpacked,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout.splitlines()[-1] and "failed" not in result.stdout
