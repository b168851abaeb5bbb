"""``declare -a NAME=(...)`` assigns an array as ``NAME=(...)`` does (bash(1) "declare"): a launch
that expands ``"${NAME[@]}"`` takes its flags (fresh audit F, issue 28: awsome-distributed-training's
ESM-2 DDP scripts' ``--bf16 True`` went unread). Tested on the repository's own files
(``tests/fixtures/fresh/README.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

ESM2 = Path(__file__).parent / "fixtures" / "fresh" / "awsome-distributed-training" / "3.test_cases" / "23.SMHP-esm2"


@pytest.mark.parametrize("name", ["2.train_ddp.sh", "4.train_docker_dpp.sh"])
def test_declared_array_flags_reach_the_launch(name: str) -> None:
    report = api.check(str(ESM2 / name), "V100", use_project=False)
    found = [(f.rule, f.origin.line or 0) for f in report.findings if f.severity.name == "ERROR"]
    assert [rule for rule, _ in found] == ["PC101"], found
    assert (ESM2 / name).read_text(encoding="utf-8").splitlines()[found[0][1] - 1].strip().startswith("--bf16 True")


def test_other_declared_words_stay_with_declare(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(
        "declare -x -a ARGS=(--bf16 True --output_dir o)\ndeclare MODEL=gpt2\n"
        'torchrun train.py --model_name_or_path "$MODEL" "${ARGS[@]}"\n',
        encoding="utf-8",
    )
    report = api.check(str(script), "V100", use_project=False)
    assert [f.rule for f in report.findings if f.severity.name == "ERROR"] == ["PC101"]
