"""Paths as the launch resolves them (issue 27 item 4): a relative path a run names is looked
for in the folder the script ``cd``-s to, the repository root, the naming file's folder, then
the folders between; never the current folder, so a report is the same from any folder, and
a file is missing (PC904) only when no candidate holds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources.script_path import clear, find_file

PROJECTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "projects"
needs_projects = pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not present")

BF16_ZERO2 = {"bf16": {"enabled": True}, "zero_optimization": {"stage": 2}, "gradient_accumulation_steps": 16}
FP16 = {"fp16": {"enabled": True}, "zero_optimization": {"stage": 2}}


def report(path: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch, gpu: str = "A100") -> list[tuple[str, str, int]]:
    monkeypatch.chdir(cwd)
    clear()
    result = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not result.errors
    return sorted((f.rule, str(Path(f.origin.path or "").resolve()), f.origin.line or 0) for f in result.findings)


def repository(tmp_path: Path, script: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "scripts").mkdir()
    (repo / "scripts" / "train.sh").write_text(script)
    return repo


def test_a_path_relative_to_the_repository_root_is_found_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repository(tmp_path, "torchrun train.py --bf16 True --deepspeed ./scripts/zero3.json --learning_rate 1e-5\n")
    (repo / "scripts" / "zero3.json").write_text(json.dumps(BF16_ZERO2))
    script = repo / "scripts" / "train.sh"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    reports = [report(script, folder, monkeypatch) for folder in (repo, repo / "scripts", outside, tmp_path)]
    assert all(r == reports[0] for r in reports)
    assert "PC904" not in {rule for rule, _, _ in reports[0]}
    assert find_file("./scripts/zero3.json", script.parent) == (
        repo / "scripts" / "zero3.json",
        f"relative to the repository root ({repo})",
    )


def test_the_folder_the_script_cds_to_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = repository(tmp_path, "cd ../train\ntorchrun train.py --fp16 True --deepspeed ds.json --learning_rate 1e-5\n")
    (repo / "train").mkdir()
    (repo / "train" / "ds.json").write_text(json.dumps(FP16))
    (repo / "ds.json").write_text(json.dumps(BF16_ZERO2))  # at the root: not the one the launch reads
    found = report(repo / "scripts" / "train.sh", tmp_path, monkeypatch, "V100")
    rules = {rule for rule, _, _ in found}
    assert "PC904" not in rules and "PC101" not in rules  # the fp16 file, not the root's bf16 one


def test_missing_only_when_no_candidate_holds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = repository(tmp_path, "torchrun train.py --bf16 True --deepspeed configs/ds.json --learning_rate 1e-5\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_text(json.dumps(FP16))  # outside the repository, in the current folder
    found = report(repo / "scripts" / "train.sh", tmp_path, monkeypatch)
    assert [rule for rule, _, _ in found] == ["PC904"]


@needs_projects
def test_qwen_finetune_script_reads_its_deepspeed_file_from_any_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Qwen's finetune/finetune_ds.sh passes `--deepspeed finetune/ds_config_zero3.json`, relative
    to the repository root its README runs it from: before, PC904 from one folder, PC607 from the root."""
    script = PROJECTS / "QwenLM__Qwen" / "finetune" / "finetune_ds.sh"
    reports = [report(script, folder, monkeypatch) for folder in (PROJECTS.parent, PROJECTS / "QwenLM__Qwen")]
    assert reports[0] == reports[1]
    assert {rule for rule, _, _ in reports[0]} >= {"PC607"} and "PC904" not in {rule for rule, _, _ in reports[0]}


@needs_projects
def test_belle_scripts_read_configs_from_the_folder_they_are_run_in() -> None:
    """BELLE's train/scripts/run_sft.sh names `configs/deepspeed_config_stage3.json`, which is
    train/configs/ (the README runs the scripts from train/): a folder above the script."""
    script = PROJECTS / "LianjiaTech__BELLE" / "train" / "scripts" / "run_sft.sh"
    clear()
    found = find_file("configs/deepspeed_config_stage3.json", script.parent)
    assert (
        found is not None
        and found[0].resolve() == (script.parent.parent / "configs" / "deepspeed_config_stage3.json").resolve()
    )
    assert found[1].startswith("relative to a folder above the naming file")


def test_a_followed_script_runs_where_its_caller_cds_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cd train && bash scripts/run.sh``: run.sh's relative paths are the train folder's."""
    repo = repository(tmp_path, "cd ../train\nbash scripts/run.sh\n")
    (repo / "train" / "scripts").mkdir(parents=True)
    (repo / "train" / "scripts" / "run.sh").write_text(
        "torchrun train.py --fp16 True --deepspeed configs/ds.json --learning_rate 1e-5\n"
    )
    (repo / "train" / "configs").mkdir()
    (repo / "train" / "configs" / "ds.json").write_text(json.dumps(FP16))
    (repo / "train" / "scripts" / "configs").mkdir()
    (repo / "train" / "scripts" / "configs" / "ds.json").write_text(json.dumps(BF16_ZERO2))  # not this one
    rules = {rule for rule, _, _ in report(repo / "scripts" / "train.sh", tmp_path, monkeypatch, "V100")}
    assert "PC904" not in rules and "PC101" not in rules
