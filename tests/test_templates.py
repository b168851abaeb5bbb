"""Templates are not configs (issue 32): a Helm chart's templates and files with Go/Jinja
markers that do not parse are skipped with a note, named or found, whatever words they hold;
a config whose values hold markers (a chat template) is still checked, and a broken training
config is still an error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import precheck
from precheck.templates import HELM_NOTE, MARKERS_NOTE, has_markers, helm_template

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT.parent / "shared" / "projects"
JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-train\nspec:\n  template:\n"
    '    spec:\n      containers:\n        - args: ["--precision", "{{ .Values.precision }}", "--fp16"]\n'
    "          env: {{- toYaml .Values.env | nindent 12 }}\n"
)
JINJA = "fp16: true\nlearning_rate: 1.0e-5\n{% if bf16 %}\nbf16: true\n{% endif %}\n"
BROKEN = "fp16: true\nlearning_rate: [1e-5\n"


def _tree(root: Path) -> Path:
    (root / "charts" / "trainer" / "templates").mkdir(parents=True)
    (root / "charts" / "trainer" / "Chart.yaml").write_text("apiVersion: v2\nname: trainer\nversion: 0.1.0\n")
    (root / "charts" / "trainer" / "templates" / "job.yaml").write_text(JOB)
    # parses, and a dialect would read it: a chart template all the same
    (root / "charts" / "trainer" / "templates" / "args.yaml").write_text("fp16: true\nbf16: true\n")
    (root / "configs").mkdir()
    (root / "configs" / "train.yaml.j2").write_text(JINJA)
    (root / "configs" / "rendered.yaml").write_text(JINJA)
    return root


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    return subprocess.run(
        [sys.executable, "-m", "precheck", "--isolated", "--gpu", "A100", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_template_tests() -> None:
    assert has_markers("name: {{ .Release.Name }}\n") and has_markers("{%- if x %}\n") and has_markers("{# c #}")
    assert not has_markers('{"a": {"b": 1}}') and not has_markers("x: '{not a marker}'\n")


def test_a_helm_chart_template_is_known_by_the_chart_layout(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    assert helm_template(tree / "charts" / "trainer" / "templates" / "job.yaml")
    (tmp_path / "plain" / "templates").mkdir(parents=True)  # a folder named templates, no chart
    assert not helm_template(tmp_path / "plain" / "templates" / "job.yaml")


def test_named_templates_are_skipped_with_a_note_whatever_words_they_hold(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    named = ["charts/trainer/templates/job.yaml", "charts/trainer/templates/args.yaml", "configs/rendered.yaml"]
    done = _run(*named, cwd=tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"charts/trainer/templates/job.yaml: note: skipped, {HELM_NOTE}" in done.stdout
    assert f"charts/trainer/templates/args.yaml: note: skipped, {HELM_NOTE}" in done.stdout
    assert f"configs/rendered.yaml: note: skipped, {MARKERS_NOTE}" in done.stdout
    inside = _run("job.yaml", cwd=tree / "charts" / "trainer" / "templates")  # from inside the chart too
    assert inside.returncode == 0 and f"job.yaml: note: skipped, {HELM_NOTE}" in inside.stdout


def test_a_folder_search_notes_the_templates_and_still_fails_a_broken_config(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    clean = _run(".", cwd=tree)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert f"charts/trainer/templates/job.yaml: note: skipped, {HELM_NOTE}" in clean.stdout
    (tree / "configs" / "broken.yaml").write_text(BROKEN)
    broken = _run(".", cwd=tree)
    assert broken.returncode == 2 and "configs/broken.yaml:3:1:" in broken.stdout


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not beside this checkout")
def test_a_config_whose_values_hold_jinja_is_still_checked(tmp_path: Path) -> None:
    """open-r1's recipes set `chat_template: "{% for message in messages %}..."`: they parse, so
    they are configs, not templates."""
    recipe = PROJECTS / "huggingface__open-r1" / "recipes" / "OpenR1-Distill-7B" / "sft" / "config_distill.yaml"
    assert has_markers(recipe.read_text())
    report = precheck.check([str(recipe)], hardware=["A100"], use_project=False)
    assert [f.dialect for f in report.files] == ["trl"] and not report.files[0].skipped


def test_a_chat_template_value_keeps_the_config_a_config(tmp_path: Path) -> None:
    config = tmp_path / "sft.yaml"
    config.write_text(
        "model_name_or_path: Qwen/Qwen2.5-0.5B\noutput_dir: out\nbf16: true\n"
        'chat_template: "{% for m in messages %}{{ m.content }}{% endfor %}"\n'
    )
    report = precheck.check([str(config)], hardware=["V100"], use_project=False)
    assert [f.rule for f in report.findings] == ["PC101"]
