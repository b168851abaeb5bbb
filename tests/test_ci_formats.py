"""``--format gitlab`` (GitLab Code Quality) and ``--format junit`` (JUnit XML): valid against
the format's schema or structure, on real reports and on hostile text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
GITLAB_SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "gitlab-codequality.schema.json").read_text())
GOLDEN = ROOT / "tests" / "fixtures" / "golden"


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_", "NO_COLOR", "FORCE_COLOR"))}
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def examples() -> dict[str, subprocess.CompletedProcess[str]]:
    return {fmt: _run("--gpu", "V100", "--format", fmt, "examples/") for fmt in ("gitlab", "junit", "json")}


def test_gitlab_is_valid_code_quality_with_one_issue_per_finding(
    examples: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    issues = json.loads(examples["gitlab"].stdout)
    jsonschema.validate(issues, GITLAB_SCHEMA, cls=jsonschema.Draft202012Validator)
    findings = json.loads(examples["json"].stdout)["findings"]
    assert len(issues) == len(findings) > 10
    assert len({i["fingerprint"] for i in issues}) == len(issues)  # GitLab shows one issue per fingerprint
    assert {i["severity"] for i in issues} <= {"critical", "minor", "info"}
    first = next(i for i in issues if i["check_name"].startswith("PC201 "))
    assert first["location"]["path"].endswith("fp16-false-ignored.yaml") and first["location"]["lines"]["begin"] == 5


def test_gitlab_reports_an_unreadable_file_as_a_blocker() -> None:
    issues = json.loads(_run("project", "--format", "gitlab", cwd=GOLDEN).stdout)
    jsonschema.validate(issues, GITLAB_SCHEMA, cls=jsonschema.Draft202012Validator)
    (broken,) = [i for i in issues if i["check_name"] == "precheck/input-error"]
    assert broken["severity"] == "blocker" and broken["location"] == {
        "path": "project/broken.yaml",
        "lines": {"begin": 3},
    }


def test_the_schema_rejects_what_gitlab_rejects() -> None:
    good = {"description": "d", "check_name": "c", "fingerprint": "f", "severity": "minor",
            "location": {"path": "a.yaml", "lines": {"begin": 1}}}  # fmt: skip
    jsonschema.validate([good], GITLAB_SCHEMA)
    for bad in ({**good, "severity": "error"}, {k: v for k, v in good.items() if k != "fingerprint"},
                {**good, "location": {"path": "a.yaml"}}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([bad], GITLAB_SCHEMA)


def _check_junit(text: str) -> ET.Element:
    """The structure of the common JUnit schema (junit-10.xsd): counts that add up, required attributes."""
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root:
        assert suite.tag == "testsuite" and suite.get("name")
        cases = list(suite)
        assert all(c.tag == "testcase" and c.get("name") and c.get("classname") is not None for c in cases)
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases for x in c if x.tag == "failure"),
            "errors": sum(1 for c in cases for x in c if x.tag == "error"),
        }
        assert {k: int(suite.get(k, "-1")) for k in counts} == counts
        for case in cases:
            for outcome in case:
                assert outcome.tag in ("failure", "error") and outcome.get("message") and outcome.get("type")
        totals = {k: totals[k] + counts[k] for k in totals}
    assert {k: int(root.get(k, "-1")) for k in totals} == totals
    return root


def test_junit_has_the_common_structure_and_a_failure_per_finding(
    examples: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    root = _check_junit(examples["junit"].stdout)
    findings = json.loads(examples["json"].stdout)["findings"]
    assert int(root.get("failures", "0")) == len(findings)
    types = {f.get("type") for f in root.iter("failure")}
    assert types <= {"error", "warning", "info"} and "error" in types
    clean = [s for s in root if s.get("failures") == "0"]
    assert clean, "a file without findings is a passing testcase"


def test_hostile_text_stays_inside_its_string_and_its_element(tmp_path: Path) -> None:
    key = "bf_16\x1b[2J\r\n::error::forged\ufffe"
    (tmp_path / "train.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\n"
        f'num_processes: 2\n"{key.encode("unicode_escape").decode()}": true\n'
    )  # accelerate refuses every unknown key: PC905 on the hostile one
    junit = _run("--isolated", "--gpu", "A100", "--format", "junit", "train.yaml", cwd=tmp_path).stdout
    root = _check_junit(junit)
    assert "\x1b" not in junit and "\r" not in junit and "\ufffe" not in junit
    assert [f.get("type") for f in root.iter("failure")] == ["warning"]
    gitlab = _run("--isolated", "--gpu", "A100", "--format", "gitlab", "train.yaml", cwd=tmp_path).stdout
    issues = json.loads(gitlab)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert "\x1b" not in issues[0]["description"] and "\n" not in issues[0]["description"]


def test_a_fingerprint_survives_lines_added_above_the_finding(tmp_path: Path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: m\noutput_dir: out\nbf16: true\nfp16: true\n")
    before = json.loads(_run("--isolated", "--gpu", "A100", "--format", "gitlab", "train.yaml", cwd=tmp_path).stdout)
    config.write_text("# a comment\n\n" + config.read_text())
    after = json.loads(_run("--isolated", "--gpu", "A100", "--format", "gitlab", "train.yaml", cwd=tmp_path).stdout)
    assert [i["location"]["lines"]["begin"] for i in after] != [i["location"]["lines"]["begin"] for i in before]
    assert [i["fingerprint"] for i in after] == [i["fingerprint"] for i in before]
