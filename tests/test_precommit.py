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
    assert hook["id"] == "precheck" and hook["entry"] == "precheck" and hook["language"] == "python"
    assert hook["types_or"] == ["yaml", "json", "toml", "shell", "makefile", "python", "jupyter"]
    assert hook["pass_filenames"] is True and hook["require_serial"] is True


def test_pre_commit_try_repo_fails_the_bad_config_and_passes_the_good(tmp_path: Path) -> None:
    hook_repo = tmp_path / "precheck"
    shutil.copytree(
        ROOT,
        hook_repo,
        ignore=shutil.ignore_patterns(".git", ".venv", "tests", "benchmarks", "*.egg-info", "__pycache__", "build"),
    )
    git("init", "-q", cwd=hook_repo)
    git("add", "-A", cwd=hook_repo)
    git("commit", "-q", "-m", "precheck", cwd=hook_repo)

    work = tmp_path / "runs"
    work.mkdir()
    (work / ".precheck.toml").write_text('gpus = ["V100"]\n')
    (work / "bad.yaml").write_text(BAD)
    (work / "good.yaml").write_text(GOOD)
    (work / "launch.sh").write_text(LAUNCH)
    (work / "notes.py").write_text("print('no training here')\n")
    git("init", "-q", cwd=work)
    git("add", "-A", cwd=work)

    env = _git_env()
    env["PRE_COMMIT_HOME"] = str(tmp_path / "cache")

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "precheck", "--color", "never"]
        return subprocess.run(
            [*command, "--verbose", "--files", *files], cwd=work, env=env, capture_output=True, text=True, timeout=540
        )

    bad = try_repo("bad.yaml", "good.yaml", "launch.sh", "notes.py")
    print(bad.stdout, bad.stderr)  # shown with pytest -s: the run's own output
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout
    assert "bad.yaml:4:1: PC101 error" in bad.stdout
    assert "launch.sh:2:36: PC101 error" in bad.stdout  # the launch command's `--bf16` flag
    assert "good.yaml" not in bad.stdout.split("- hook id: precheck", 1)[1].split("hardware:")[0]

    good = try_repo("good.yaml")
    print(good.stdout, good.stderr)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout
