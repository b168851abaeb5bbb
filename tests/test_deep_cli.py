"""``precheck --deep`` on the command line: the only way into transformers and accelerate."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import write

ROOT = Path(__file__).resolve().parents[1]

TRAIN = """
output_dir: out
learning_rate: 2.0e-5
per_device_train_batch_size: 4
bf16: true
evaluation_strategy: steps
"""


def test_the_deep_modules_import_no_library_until_asked() -> None:
    """Every module of precheck.deep (and the rules that read its notes) imports without
    torch, transformers or accelerate: they are imported inside the functions --deep calls."""
    code = (
        "import sys, pkgutil, importlib\n"
        "import precheck.deep, precheck.rules\n"
        "for m in pkgutil.iter_modules(precheck.deep.__path__):\n"
        "    importlib.import_module('precheck.deep.' + m.name)\n"
        "print('HEAVY', sorted(m for m in ('torch', 'transformers', 'accelerate', 'trl') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "HEAVY []" in result.stdout, result.stdout + result.stderr


def test_without_the_hf_extra_deep_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from precheck import deep
    from precheck.cli import main

    real = importlib.util.find_spec

    def absent(name: str, *args: object) -> object:  # whether or not the hf extra is installed here
        return None if name in ("torch", "transformers", "accelerate") else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(deep.importlib.util, "find_spec", absent)
    path = write(tmp_path, "train.yaml", TRAIN)
    with pytest.raises(SystemExit) as done:
        main([str(path), "--deep", "--gpu", "A100"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        "precheck: error: --deep needs torch, transformers, accelerate, which are not installed in this environment: "
        "pip install 'precheck-ml[hf]'\n"
    )


@pytest.mark.hf
def test_deep_from_the_command_line(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from precheck.versions import version_key

    if version_key(importlib.metadata.version("transformers")) < version_key("4.51"):
        pytest.skip("evaluation_strategy was removed in transformers 4.51.0")
    path = write(tmp_path, "train.yaml", TRAIN)
    args = [sys.executable, "-m", "precheck", str(path), "--gpu", "A100", "--format", "json"]
    plain = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120)
    deep = subprocess.run([*args, "--deep"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    found = json.loads(deep.stdout)["findings"]
    assert deep.returncode == 1, deep.stdout + deep.stderr
    assert [(f["rule"], f["line"], f["key"]) for f in found] == [("PC920", 5, "evaluation_strategy")]
    assert found[0]["severity"] == "error" and "replace `evaluation_strategy` with `eval_strategy`" in found[0]["fix"]
