"""GitHub Actions workflows: the launch commands of ``run:`` steps, at their own lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources import load_runs
from precheck.sources.workflow_source import is_workflow

WORKFLOW = """\
name: nightly fine-tune
on: workflow_dispatch
env:
  CUDA_VISIBLE_DEVICES: "1"
jobs:
  sft:
    runs-on: [self-hosted, v100]
    env:
      CUDA_VISIBLE_DEVICES: "0"
    steps:
      - uses: actions/checkout@v4
      - name: Train
        run: |
          swift sft \\
            --model Qwen/Qwen2.5-7B-Instruct \\
            --torch_dtype float16 \\
            --fp16 false \\
            --output_dir ${{ github.workspace }}/out
      - name: one line
        run: torchrun train.py --output_dir out --bf16 true --learning_rate 2e-5
        env:
          ACCELERATE_MIXED_PRECISION: fp16
      - name: not a launch
        run: nvidia-smi
"""


def write(tmp_path: Path, text: str = WORKFLOW) -> Path:
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    file = folder / "train.yml"
    file.write_text(text)
    return file


def test_only_workflow_files_are_read_as_workflows() -> None:
    assert is_workflow(".github/workflows/train.yml") and is_workflow("repo/.github/workflows/ci.yaml")
    assert not is_workflow("configs/workflows/train.yml") and not is_workflow(".github/dependabot.yml")


def test_each_step_is_a_run_at_its_own_lines_with_the_env_it_sees(tmp_path: Path) -> None:
    swift, torchrun = load_runs(write(tmp_path))
    assert swift.dialect == "ms-swift"
    fp16 = swift.mapping()["fp16"]
    assert (fp16.key_line, fp16.key_column, fp16.value) == (17, 13, False)
    assert "output_dir" not in swift.mapping()  # `${{ ... }}` is known only when the workflow runs
    assert swift.env["CUDA_VISIBLE_DEVICES"].value == "0"  # the job's env beats the workflow's
    assert "ACCELERATE_MIXED_PRECISION" not in swift.env  # another step's env does not leak
    mixed = torchrun.env["ACCELERATE_MIXED_PRECISION"]
    assert (mixed.value, mixed.key_line) == ("fp16", 22)  # a step's env after its run: still seen
    assert torchrun.mapping()["bf16"].key_line == 20


def test_the_check_finds_them_in_a_folder_search(tmp_path: Path) -> None:
    write(tmp_path)
    report = engine.run([str(tmp_path)], from_specs(["V100"], {}), env={})
    found = {(f.rule, f.origin.line, f.origin.column) for f in report.findings}
    assert ("PC101", 20, 49) in found  # --bf16 true on a V100
    assert ("PC210", 20, 49) in found  # the step's ACCELERATE_MIXED_PRECISION=fp16 is overridden
    assert ("PC201", 16, 13) in found  # --torch_dtype float16 with --fp16 false, at the flag


def test_a_workflow_without_launch_commands_is_skipped(tmp_path: Path) -> None:
    text = textwrap.dedent("""\
        on: push
        jobs:
          lint:
            runs-on: ubuntu-latest
            steps:
              - run: ruff check .
        """)
    file = write(tmp_path, text)
    assert load_runs(file) == []
    report = engine.run([str(tmp_path)], from_specs(["A100"], {}), env={})
    assert report.findings == [] and not report.errors
