"""Target hardware is explicit (issue 32): with no GPU known the skipped hardware rules are a
warning on stderr; `precheck init` writes `gpus`; with `gpus` set, the result depends neither
on the machine nor on the current folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import precheck
from precheck import probe
from precheck.errors import UsageError
from precheck.hardware import from_specs
from precheck.init_command import gpus_line, run_init, specs_for, updated

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "examples" / "configs" / "ms-swift-v100" / "fp16-false-ignored.yaml"
BF16 = "model_name_or_path: Qwen/Qwen2.5-0.5B\noutput_dir: out\nbf16: true\n"


def _precheck(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    full["PATH"] = "/nonexistent"  # no nvidia-smi: the probe finds no GPU
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=60
    )


def test_no_gpu_and_no_gpus_is_a_warning_on_stderr_with_the_count(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(BF16)
    for fmt in ("text", "json", "concise"):
        done = _precheck("--isolated", "--format", fmt, "train.yaml", cwd=tmp_path)
        assert "precheck: warning: no GPU found and no target hardware configured" in done.stderr, fmt
        assert "rules that need the target hardware were skipped" in done.stderr
        assert "precheck init --gpu" in done.stderr
        assert "warning: no GPU" not in done.stdout
    counted = int(done.stderr.split("configured: ")[1].split(" rule")[0])
    import precheck.frameworks  # noqa: F401  (the registry fills the rules)
    from precheck.rules import RULES

    assert counted == sum(1 for r in RULES.values() if r.hardware and r.status.value == "stable")


def test_a_named_gpu_or_configured_gpus_give_no_warning(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(BF16)
    assert "warning: no GPU" not in _precheck("--gpu", "V100", "train.yaml", cwd=tmp_path).stderr
    (tmp_path / ".precheck.toml").write_text('gpus = ["V100"]\n')
    done = _precheck("train.yaml", cwd=tmp_path)
    assert "warning: no GPU" not in done.stderr and "PC101 error" in done.stdout


def test_with_gpus_set_the_result_depends_neither_on_the_machine_nor_on_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.precheck]\ngpus = ["V100"]\n')
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "train.yaml").write_text(BF16)

    def probed(env: object) -> object:
        raise AssertionError("probed the machine although gpus is set")

    monkeypatch.setattr(probe, "probe_hardware", probed)
    seen = set()
    for cwd, path in ((tmp_path, "configs/train.yaml"), (tmp_path / "configs", "train.yaml"), (ROOT, None)):
        monkeypatch.chdir(cwd)
        report = precheck.check([path or str(tmp_path / "configs" / "train.yaml")])
        seen.add(tuple((f.rule, f.origin.line) for f in report.findings))
        assert report.hardware.describe() == "Tesla V100-SXM2-32GB"
    assert len(seen) == 1 and ("PC101", 3) in next(iter(seen))


def test_init_writes_gpus_into_pyproject_and_keeps_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = '[project]\nname = "x"\n\n[tool.precheck]\nfail-on = "warning"\n\n[tool.ruff]\nline-length = 100\n'
    (tmp_path / "pyproject.toml").write_text(text)
    assert run_init(["8xA100-80GB"], None, tmp_path) == 0
    written = (tmp_path / "pyproject.toml").read_text()
    assert written == text.replace("[tool.precheck]\n", '[tool.precheck]\ngpus = ["8xA100-80GB"]\n')
    assert run_init(["H100"], None, tmp_path) == 0  # replaced, not added twice
    assert (tmp_path / "pyproject.toml").read_text() == written.replace("8xA100-80GB", "H100")
    assert "gpus" in capsys.readouterr().out
    report = precheck.check([str(tmp_path)])
    assert report.hardware.describe() == "NVIDIA H100 80GB HBM3"


def test_init_without_a_pyproject_writes_precheck_toml_and_a_check_reads_it(tmp_path: Path) -> None:
    assert run_init(["2xV100"], None, tmp_path) == 0
    assert (tmp_path / ".precheck.toml").read_text() == 'gpus = ["2xV100"]\n'
    (tmp_path / "train.yaml").write_text(BF16)
    report = precheck.check([str(tmp_path / "train.yaml")])
    assert report.hardware.describe() == "2x Tesla V100-SXM2-32GB"
    assert [f.rule for f in report.findings] == ["PC101"]


def test_init_with_no_gpu_here_and_none_named_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe, "probe_hardware", lambda env: from_specs([], env))
    with pytest.raises(UsageError, match="precheck init --gpu"):
        run_init(None, None, tmp_path)
    assert not (tmp_path / ".precheck.toml").exists()
    with pytest.raises(UsageError, match="unknown GPU"):
        run_init(["V1OO"], None, tmp_path)


def test_init_from_the_probe_names_the_machine_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = from_specs(["4xH100", "A100"], {})
    monkeypatch.setattr(probe, "probe_hardware", lambda env: machine)
    assert specs_for(machine) == ["4xNVIDIA H100 80GB HBM3", "1xNVIDIA A100-SXM4-80GB"]
    run_init(None, None, tmp_path)
    table = (tmp_path / ".precheck.toml").read_text()
    assert table == gpus_line(specs_for(machine)) + "\n"
    assert precheck.check([str(tmp_path)]).hardware.describe() == machine.describe()


def test_updated_adds_the_table_where_there_is_none() -> None:
    assert updated('[project]\nname = "x"\n', 'gpus = ["V100"]', True) == (
        '[project]\nname = "x"\n\n[tool.precheck]\ngpus = ["V100"]\n'
    )
    assert updated("", 'gpus = ["V100"]', True) == '[tool.precheck]\ngpus = ["V100"]\n'
    assert updated('fail-on = "info"\n', 'gpus = ["V100"]', False) == 'gpus = ["V100"]\nfail-on = "info"\n'


def test_version_answers_without_loading_the_check() -> None:
    code = (
        "import sys, runpy; sys.argv = ['precheck', '--version']\n"
        "from precheck import entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('precheck')))\n"
        "print('typer' in sys.modules, 'yaml' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("precheck ")
    assert set(json.loads(lines[1].replace("'", '"'))) <= {
        "precheck",
        "precheck.entry",
        "precheck.errors",
        "precheck.escape",
    }
    assert lines[2] == "False False"
