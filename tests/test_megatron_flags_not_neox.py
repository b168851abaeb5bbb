"""A launch's flags that look like NeoXArgs (``--num-layers``, ``--seq-length``, ``--train-iters``)
belong to another program: gpt-neox's ``deepy.py`` reads config files only
(``NeoXArgs.consume_deepy_args``, ``megatron/neox_arguments/arguments.py:298``@ea7aefd), and its
launches name their dialect themselves. Megatron-LM's ``pretrain_gpt.py``, whose arguments gpt-neox
inherited, was read as a gpt-neox run in fp32 whatever its ``--fp16`` (fresh audit F,
awsome-distributed-training's Megatron-LM Slurm scripts, tests/fixtures/fresh/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

SLURM = Path(__file__).parent / "fixtures" / "fresh" / "awsome-distributed-training" / "3.test_cases" / "megatron"
SLURM = SLURM / "megatron-lm" / "slurm"


@pytest.mark.parametrize("name", ["llama2/pretrain-llama2.sbatch", "gpt3/2.distributed-training.sbatch"])
def test_megatron_lm_launch_is_not_a_gpt_neox_run(name: str) -> None:
    text = (SLURM / name).read_text(encoding="utf-8")
    assert "pretrain_gpt.py" in text and "--fp16" in text
    report = api.check(str(SLURM / name), "V100", use_project=False)
    assert not [r.path for r in report.files if r.dialect == "gpt-neox"]
    assert not [f for f in report.findings if f.severity.name == "ERROR"]


def test_a_deepy_launch_is_still_gpt_neox(tmp_path: Path) -> None:
    (tmp_path / "conf.yml").write_text(
        '{"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 128,\n'
        ' "precision": "bfloat16", "bf16": {"enabled": true}}\n',
        encoding="utf-8",
    )
    launch = tmp_path / "run.sh"
    launch.write_text("python ./deepy.py train.py conf.yml\n", encoding="utf-8")
    report = api.check(str(launch), "V100", use_project=False)
    assert [r.dialect for r in report.files if r.path.endswith("run.sh") and r.dialect] == ["gpt-neox"]
    assert "PC101" in {f.rule for f in report.findings if f.severity.name == "ERROR"}
