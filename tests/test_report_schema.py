"""The JSON report against its pydantic model and the JSON Schema generated from it
(``schema/precheck-report.schema.json``): real reports of examples/, the shared corpus and
projects, fixes, assumptions, errors, a lone file found through the config that names it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest

from precheck import report_model
from precheck.report import json_report

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SCHEMA = json.loads((ROOT / report_model.SCHEMA_FILE).read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _report(*args: str, cwd: Path = ROOT) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "precheck", "--format", "json", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""},
    )
    assert done.returncode in (0, 1, 2), done.stderr
    model = report_model.Report.model_validate_json(done.stdout)  # strict: types as written
    document: dict[str, Any] = json.loads(done.stdout)
    VALIDATOR.validate(document)
    assert model.model_dump(exclude_unset=True) == document  # the model holds every key, nothing more
    return document


def _project(tmp_path: Path) -> Path:
    """A config that names a DeepSpeed file, a helm template that does not parse, a file
    that is missing."""
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true}, "bf16": {"enabled": true}}')
    (tmp_path / "train.yaml").write_text(
        "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nbf16: yes\ndeepspeed: ds.json\n"
    )
    (tmp_path / "chart.yaml").write_text("kind: {{ .Values.kind }\n")
    return tmp_path


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    project = _project(tmp_path_factory.mktemp("project"))
    out = [
        _report("--gpu", "A100", "examples"),
        _report("--gpu", "V100", "examples"),
        _report("examples/configs/clean"),  # no GPU known: no devices, with a note
        _report("--gpu", "A100", "ds.json", "chart.yaml", "missing.yaml", cwd=project),
        _report("--gpu", "A100", "--", "swift", "sft", "--fp16", "true", "--torch_dtype", "bfloat16"),
    ]
    for folder, gpu in (("projects", "A100"), ("corpus", "8xH100")):
        if (SHARED / folder).is_dir():
            out.append(_report("--gpu", gpu, str(SHARED / folder)))
    return out


@pytest.mark.shared  # its sample is too small without ../shared
def test_real_reports_match_the_model_and_the_schema(reports: list[dict[str, Any]]) -> None:
    findings = [f for r in reports for f in r["findings"]]
    files = [f for r in reports for f in r["files"]]
    assert len(findings) > 100
    assert any(f["fixable"] and f["fix"] for f in findings), "no fix --fix makes"
    assert any(f["fix"] and not f["fixable"] for f in findings)
    assert any(f["assumptions"] for f in findings), "no finding that rests on an assumption"
    assert {f["severity"] for f in findings} == {"error", "warning", "info"}
    assert any("reads" in f for f in files) and any("part_of" in f for f in files)
    assert any("names" in f for f in files) and any("skipped" in f for f in files)
    assert any(r["errors"] for r in reports) and any(r["hardware"].get("note") for r in reports)
    assert {r["hardware"]["source"] for r in reports} == {"profile", "probe"}  # no GPU here: probed, none
    assert any(r["versions"] for r in reports)


def test_the_version_is_the_models(reports: list[dict[str, Any]]) -> None:
    assert json_report.SCHEMA_VERSION == report_model.VERSION == SCHEMA["properties"]["version"]["const"]
    assert {r["version"] for r in reports} == {report_model.VERSION}


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(extra=1),
        lambda d: d["findings"][0].update(severity="fatal"),
        lambda d: d["findings"][0].update(line="4"),
        lambda d: d["findings"][0].pop("headline"),
        lambda d: d["files"][0].update(reads=None),
        lambda d: d.update(version=2),
    ],
    ids=["unknown key", "severity", "line as text", "missing key", "null optional key", "version"],
)
def test_a_report_that_differs_is_refused_by_both(reports: list[dict[str, Any]], change: Any) -> None:
    document = json.loads(json.dumps(next(r for r in reports if r["findings"] and r["files"])))
    change(document)
    with pytest.raises(pydantic.ValidationError):
        report_model.Report.model_validate_json(json.dumps(document))
    assert not VALIDATOR.is_valid(document)


def test_writing_the_report_never_imports_pydantic() -> None:
    code = (
        "import sys\nfrom precheck.entry import main\n"
        "try:\n    main(['--format', 'json', '--gpu', 'V100', 'examples/configs/ms-swift-v100'])\n"
        "except SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('pydantic', 'precheck.report_model') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "LOADED []" in result.stdout, result.stdout[-500:] + result.stderr
