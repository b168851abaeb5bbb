"""The GitHub Actions example: a workflow that annotates with --format github, no GPU flags."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-actions" / "precheck.yml"


def test_the_example_workflow_annotates_and_uploads_sarif() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["precheck"]["steps"]
    commands = [step.get("run", "") for step in steps]
    assert any(c.startswith("precheck --format github ") for c in commands)
    assert any(c.startswith("precheck --format sarif ") for c in commands)
    assert not any("--gpu" in c or "--hardware" in c for c in commands)  # the project's gpus decide
    assert any(step.get("uses", "").startswith("github/codeql-action/upload-sarif") for step in steps)
    assert workflow["permissions"]["security-events"] == "write"


def test_the_ci_docs_show_the_same_workflow_steps() -> None:
    readme = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    for line in ("precheck --format github configs/", "precheck --format sarif --exit-zero configs/ > precheck.sarif"):
        assert line in readme and line in WORKFLOW.read_text(encoding="utf-8")
    assert "- id: precheck" in readme  # the .pre-commit-config.yaml snippet
