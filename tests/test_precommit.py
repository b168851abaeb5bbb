"""The pre-commit hook, run by the real ``pre-commit try-repo`` on a throwaway repository.

The checkout is copied into a fresh git repository first (``try-repo`` installs what is
committed, plus uncommitted changes to tracked files), then pre-commit builds the hook's
own virtualenv from it, as a user's ``pre-commit install`` would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BAD = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nbf16: true\n"
GOOD = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nfp16: true\n"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=_git_env())


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CUDA_", "PRE_COMMIT"))}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return env


LAUNCH = "#!/bin/sh\ntorchrun train.py --output_dir out --bf16 true --learning_rate 2e-5\n"


def test_the_hook_definition() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "precheck" and hook["entry"] == "precheck check" and hook["language"] == "python"
    assert hook["args"] == ["--"]  # the file names after it are files, even `--fix.yaml`
    assert hook["types_or"] == ["yaml", "json", "toml", "shell", "makefile", "python", "jupyter"]
    assert hook["pass_filenames"] is True and hook["require_serial"] is True


@pytest.fixture(scope="module")
def try_repo(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``pre-commit try-repo`` of this checkout, with one hook environment for the module."""
    root = tmp_path_factory.mktemp("precommit")
    hook_repo = root / "precheck"
    shutil.copytree(
        ROOT,
        hook_repo,
        ignore=shutil.ignore_patterns(".git", ".venv", "tests", "benchmarks", "*.egg-info", "__pycache__", "build"),
    )
    git("init", "-q", cwd=hook_repo)
    git("add", "-A", cwd=hook_repo)
    git("commit", "-q", "-m", "precheck", cwd=hook_repo)
    env = _git_env()
    env["PRE_COMMIT_HOME"] = str(root / "cache")

    def run(work: Path, *files: str) -> subprocess.CompletedProcess[str]:
        """The hook on ``files`` (none: ``--all-files``)."""
        command = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "precheck", "--color", "never"]
        which = ["--files", *files] if files else ["--all-files"]
        result = subprocess.run(
            [*command, "--verbose", *which], cwd=work, env=env, capture_output=True, text=True, timeout=540
        )
        print(result.stdout, result.stderr)  # shown with pytest -s: the run's own output
        return result

    return run


def repository(path: Path, files: dict[str, str]) -> Path:
    """A git repository holding ``files``, all staged."""
    path.mkdir()
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git("init", "-q", cwd=path)
    git("add", "-A", cwd=path)
    return path


def hook_output(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout.split("- hook id: precheck", 1)[-1]


def test_pre_commit_try_repo_fails_the_bad_config_and_passes_the_good(
    tmp_path: Path, try_repo: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    work = repository(
        tmp_path / "runs",
        {
            ".precheck.toml": 'gpus = ["V100"]\n',
            "bad.yaml": BAD,
            "good.yaml": GOOD,
            "launch.sh": LAUNCH,
            "notes.py": "print('no training here')\n",
        },
    )
    bad = try_repo(work, "bad.yaml", "good.yaml", "launch.sh", "notes.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout
    assert "bad.yaml:4:1: PC101 error" in bad.stdout
    assert "launch.sh:2:36: PC101 error" in bad.stdout  # the launch command's `--bf16` flag
    assert "good.yaml" not in hook_output(bad).split("hardware:")[0]
    assert hook_output(bad).count("hardware:") == 1, "require_serial: one process, one summary"

    good = try_repo(work, "good.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout


HELM = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {{- include "chart.labels" . | nindent 4 }}
"""
#: a Helm chart's template for a training job: Go template text that holds a training config's words
HELM_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-train
spec:
  template:
    spec:
      containers:
        - name: trainer
          args: ["--fp16", "{{ .Values.fp16 }}", "--learning_rate", "{{ .Values.learningRate }}"]
          env: {{- toYaml .Values.env | nindent 12 }}
"""
TSCONFIG = '{\n  // the compiler\'s options\n  "compilerOptions": {"strict": true}\n}\n'


def test_files_that_are_no_training_config_never_block_a_commit(
    tmp_path: Path, try_repo: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    """A Helm template and a tsconfig.json with comments do not parse: skipped with a note.
    A training config that does not parse still blocks (exit 2)."""
    work = repository(
        tmp_path / "web",
        {
            "charts/templates/deploy.yaml": HELM,
            "charts/trainer/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
            "charts/trainer/templates/job.yaml": HELM_JOB,
            "tsconfig.json": TSCONFIG,
            "configs/train.yaml": GOOD,
            "configs/broken.yaml": "fp16: true\nlearning_rate: [1e-5\n",
        },
    )
    passed = try_repo(
        work, "charts/templates/deploy.yaml", "charts/trainer/templates/job.yaml", "tsconfig.json", "configs/train.yaml"
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
    out = hook_output(passed)
    assert "charts/templates/deploy.yaml: note: skipped, a template (Go/Jinja markers such as" in out
    assert "tsconfig.json: note: skipped, not parsable and not a training config (2:3: invalid JSON: comments" in out
    assert "charts/trainer/templates/job.yaml: note: skipped, a Helm chart template" in out

    broken = try_repo(work, "charts/templates/deploy.yaml", "charts/trainer/templates/job.yaml", "configs/broken.yaml")
    assert broken.returncode == 1 and "- exit code: 2" in broken.stdout, broken.stdout + broken.stderr
    assert "configs/broken.yaml:3:1:" in hook_output(broken)


DS_FP16 = """{
  "fp16": {"enabled": true},
  "zero_optimization": {"stage": 2},
  "train_micro_batch_size_per_gpu": "auto"
}
"""
TRAIN_BF16 = GOOD.replace("fp16: true", "bf16: true") + "deepspeed: configs/ds.json\n"


def test_a_deepspeed_file_staged_alone_is_checked_with_the_config_that_names_it(
    tmp_path: Path, try_repo: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    work = repository(
        tmp_path / "ds",
        {
            ".precheck.toml": 'gpus = ["A100"]\n',
            "configs/train.yaml": TRAIN_BF16,
            "configs/ds.json": DS_FP16,
            "configs/other.yaml": GOOD,  # names no DeepSpeed file: not checked
        },
    )
    git("commit", "-q", "-m", "runs", cwd=work)
    (work / "configs" / "ds.json").write_text(DS_FP16.replace('"stage": 2', '"stage": 3'))
    git("add", "configs/ds.json", cwd=work)
    result = try_repo(work, "configs/ds.json")
    out = hook_output(result)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "configs/ds.json:2:12: PC605 error" in out  # fp16 in ds.json against bf16 in train.yaml
    assert "configs/train.yaml: note: checked too, it names configs/ds.json" in out
    assert "PC604" not in out and "other.yaml" not in out


def test_file_names_that_look_like_options_are_files(
    tmp_path: Path, try_repo: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    """pre-commit passes file names as git lists them, after the manifest's ``args: [--]``
    (its own ``--files`` cannot take such names, so ``--all-files`` here)."""
    dashes = repository(
        tmp_path / "dashes", {".precheck.toml": 'gpus = ["V100"]\n', "--fix.yaml": BAD, "--exclude=*.yaml": BAD}
    )
    named = try_repo(dashes)
    assert named.returncode == 1, named.stdout + named.stderr
    assert "--fix.yaml:4:1: PC101 error" in named.stdout and "--exclude=*.yaml:4:1: PC101 error" in named.stdout
    assert (dashes / "--fix.yaml").read_text() == BAD  # a file, not the --fix option
