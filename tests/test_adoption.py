"""Adopting precheck on a repository with findings today (issue 32): ``--write-baseline`` /
``--baseline`` report only new findings, robust to lines moving and to the current folder;
``--add-noqa`` silences today's findings where they are (a per-file-ignores entry where no
comment can hold one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from precheck.fix.noqa import with_per_file_ignore

TRAIN = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nbf16: true  # on\nbf_16: true\n"
DS = '{"fp16": {"enabled": true}, "bf16": {"enabled": true}}\n'
LAUNCH = (
    "#!/bin/sh\ntorchrun train.py --output_dir out \\\n  --bf16 true --learning_rate 2e-5\n"
    "swift sft --model Qwen/Qwen2.5-7B-Instruct --torch_dtype float16 --fp16 false\n"
)
SCRIPT = 'from transformers import TrainingArguments\nargs = TrainingArguments(\n    "out",\n    bf16=True,\n)\n'


def _repo(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".precheck.toml").write_text('gpus = ["V100"]\n')
    (root / "configs").mkdir()
    (root / "configs" / "train.yaml").write_text(TRAIN)
    (root / "configs" / "ds.json").write_text(DS)
    (root / "launch.sh").write_text(LAUNCH)
    (root / "train.py").write_text(SCRIPT)
    return root


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _findings(result: subprocess.CompletedProcess[str]) -> list[tuple[str, str, int]]:
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(result.stdout)["findings"]]


def test_a_baseline_hides_todays_findings_and_shows_new_ones(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    today = _findings(_run("--format", "json", ".", cwd=repo))
    assert len(today) >= 5
    wrote = _run("--write-baseline", "baseline.json", ".", cwd=repo)
    assert wrote.returncode == 0 and f"wrote {len(today)} findings to baseline.json" in wrote.stderr
    document = json.loads((repo / "baseline.json").read_text())
    assert document["version"] == 1 and len({f["fingerprint"] for f in document["findings"]}) == len(today)

    clean = _run("--baseline", "baseline.json", ".", cwd=repo)
    assert clean.returncode == 0, clean.stdout
    assert f"{len(today)} findings in the baseline baseline.json not shown" in clean.stderr

    # lines added above every finding, a key moved: still today's findings
    (repo / "configs" / "train.yaml").write_text("# the run\n\n" + TRAIN.replace("bf_16: true\n", "") + "bf_16: true\n")
    (repo / "launch.sh").write_text("#!/bin/sh\nset -e\n\n" + LAUNCH.split("\n", 1)[1])
    moved = _run("--format", "json", "--baseline", "baseline.json", ".", cwd=repo)
    assert _findings(moved) == [], moved.stdout

    # a new finding: reported, and only it
    (repo / "configs" / "train.yaml").write_text((repo / "configs" / "train.yaml").read_text() + "fp16: true\n")
    new = _run("--format", "json", "--baseline", "baseline.json", ".", cwd=repo)
    assert [r for r, _, _ in _findings(new)] == ["PC205"] and new.returncode == 1


def test_a_baseline_holds_from_another_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    assert _run("--write-baseline", "baseline.json", ".", cwd=repo).returncode == 0
    inside = _run("--format", "json", "--baseline", "../baseline.json", ".", cwd=repo / "configs")
    assert _findings(inside) == [] and "in the baseline" in inside.stderr


def test_a_bad_baseline_is_an_input_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    missing = _run("--baseline", "nope.json", ".", cwd=repo)
    assert missing.returncode == 2 and "nope.json: no such baseline" in missing.stderr
    (repo / "bad.json").write_text('{"version": 1, "findings": [')
    broken = _run("--baseline", "bad.json", ".", cwd=repo)
    assert broken.returncode == 2 and "bad.json:1:" in broken.stderr and "Traceback" not in broken.stderr
    both = _run("--baseline", "a", "--write-baseline", "b", ".", cwd=repo)
    assert both.returncode == 2


def test_add_noqa_silences_every_finding_where_it_is(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    before = _findings(_run("--format", "json", ".", cwd=repo))
    added = _run("--add-noqa", ".", cwd=repo)
    assert added.returncode == 0, added.stdout + added.stderr
    assert "precheck: added " in added.stderr and "1 per-file-ignores entry" in added.stderr
    assert _findings(_run("--format", "json", ".", cwd=repo)) == []
    train = (repo / "configs" / "train.yaml").read_text()
    assert "bf16: true  # on  # precheck: ignore[PC101]\n" in train
    assert "bf_16: true  # precheck: ignore[PC905]\n" in train
    assert "    bf16=True,  # precheck: ignore[PC101]\n" in (repo / "train.py").read_text()
    assert '"configs/ds.json" = ["PC601"]' in (repo / ".precheck.toml").read_text()  # JSON has no comments
    launch = (repo / "launch.sh").read_text()
    assert "out \\\n" in launch  # the continuation kept
    assert "--fp16 false  # precheck: ignore[PC201, PC202]\n" in launch
    again = _run("--add-noqa", ".", cwd=repo)
    assert "added 0 comments in 0 files" in again.stderr
    assert len(before) >= 6


def test_add_noqa_on_a_continued_shell_line_uses_per_file_ignores(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.precheck]\ngpus = ["V100"]\n')
    (repo / "run.sh").write_text(
        "#!/bin/sh\ntorchrun train.py --bf16 true \\\n  --output_dir out --learning_rate 2e-5\n"
    )
    assert _run("--add-noqa", ".", cwd=repo).returncode == 0
    assert (repo / "run.sh").read_text().count("precheck") == 0
    assert '[tool.precheck.per-file-ignores]\n"run.sh" = ["PC101"]\n' in (repo / "pyproject.toml").read_text()
    assert _findings(_run("--format", "json", ".", cwd=repo)) == []


@pytest.mark.parametrize(
    ("text", "pyproject", "expected"),
    [
        ("", False, '[per-file-ignores]\n"a.json" = ["PC601"]\n'),
        ('[per-file-ignores]\n"a.json" = ["PC602"]\n', False, '[per-file-ignores]\n"a.json" = ["PC601", "PC602"]\n'),
        ('per-file-ignores = {"b.json" = ["PC1"]}\n', False, None),
        ("[tool.precheck]\n", True, '[tool.precheck]\n\n[tool.precheck.per-file-ignores]\n"a.json" = ["PC601"]\n'),
    ],
)
def test_per_file_ignores_are_added_by_one_line(text: str, pyproject: bool, expected: str | None) -> None:
    assert with_per_file_ignore(text, "a.json", {"PC601"}, pyproject) == expected
