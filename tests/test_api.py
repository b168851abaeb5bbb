"""The Python API: ``precheck.check(paths, hardware=...) -> Report``, which the CLI runs too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import precheck
from precheck import api
from precheck.hardware import from_specs
from precheck.options import CheckOptions
from precheck.rules.base import Severity

ROOT = Path(__file__).resolve().parents[1]
SWIFT = str(ROOT / "examples" / "configs" / "ms-swift-v100" / "fp16-false-ignored.yaml")
HF = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nbf16: true\ngradient_checkpointing: yes\n"


def test_import_precheck_stays_light() -> None:
    heavy = "('precheck.engine', 'pydantic', 'typer', 'yaml')"
    code = f"import sys, precheck; print(sorted(m for m in {heavy} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_check_returns_a_report() -> None:
    report = precheck.check([SWIFT], hardware=["V100"])
    assert isinstance(report, precheck.Report)
    assert [(f.rule, f.origin.line, f.severity) for f in report.findings] == [("PC201", 5, Severity.ERROR)]
    assert report.exit_code() == 1
    assert report.files[0].dialect == "ms-swift"


def test_hardware_spellings_and_arguments(tmp_path: Path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text(HF)
    by_spec = precheck.check(str(config), hardware="V100", use_project=False)
    by_object = precheck.check([str(config)], hardware=from_specs(["V100"], {}), use_project=False)
    assert {f.rule for f in by_spec.findings} == {f.rule for f in by_object.findings} == {"PC101", "PC902"}
    only = precheck.check([str(config)], hardware=["V100"], select=["PC9"], use_project=False)
    assert {f.rule for f in only.findings} == {"PC902"}
    assert only.exit_code() == 0 and only.exit_code(Severity.WARNING) == 1
    strict = precheck.check([str(config)], hardware=["V100"], ignore=["PC1"], fail_on="warning", use_project=False)
    assert strict.exit_code() == 1
    versions = precheck.check([str(config)], hardware=["V100"], assume_versions={"torch": "2.2.2"}, use_project=False)
    (bf16,) = [f for f in versions.findings if f.rule == "PC101"]
    assert "2.2.2" in bf16.message


def test_the_cli_runs_the_api(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from precheck.cli import main

    calls: list[tuple[object, ...]] = []
    original = api.check

    def spy(*args: object, **kwargs: object) -> api.Report:
        calls.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "check", spy)
    with pytest.raises(SystemExit) as done:
        main(["--gpu", "V100", "--format", "concise", SWIFT])
    assert done.value.code == 1
    assert calls == [(CheckOptions(paths=(SWIFT,), gpu=("V100",), format="concise"),)]
    assert ": PC201 error " in capsys.readouterr().out


def test_the_keywords_are_the_options(tmp_path: Path) -> None:
    """``precheck.check(paths, hardware, **keywords)`` is ``precheck.check(CheckOptions(...))``."""
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: m\ntorch_dtype: float16\nfp16: false\nbf16: true\n")
    by_keywords = precheck.check(
        [str(config)], "V100", ignore=["PC1"], fail_on="warning", assume_versions={"torch": "2.2.2"}, use_project=False
    )
    options = CheckOptions(
        paths=(str(config),),
        gpu=("V100",),
        ignore=("PC1",),
        fail_on="warning",
        assume_version=("torch==2.2.2",),
        isolated=True,
    )
    by_options = precheck.check(options)
    assert by_keywords.findings == by_options.findings and by_keywords.findings
    assert by_keywords.fail_on == by_options.fail_on == Severity.WARNING
    assert [r.path for r in by_keywords.files] == [r.path for r in by_options.files]
    with pytest.raises(TypeError, match="not both"):
        precheck.check(options, select=["PC9"])
    with pytest.raises(TypeError, match="not both"):
        precheck.check(options, "A100")
