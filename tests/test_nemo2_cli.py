"""NeMo 2's CLI (issue 28): ``nemo llm pretrain|finetune --factory RECIPE [OVERRIDES]`` runs the
recipe the factory names, whose trainer takes ``plugins=bf16_mixed()`` (NVIDIA/NeMo@8cfedd7
``nemo/collections/llm/recipes/llama3_8b.py:138``, ``finetune_default.py:145``), changed by a
``trainer.plugins=fp16_mixed`` / ``trainer.plugins.precision=...`` override. Command lines from
NeMo's own docs (``docs/source/features/parallelisms.rst:168``,
``docs/source/nlp/nemo_megatron/batching.rst:42``@8cfedd7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck.engine import run
from precheck.hardware import from_specs

DOCS = (
    "nemo llm pretrain --factory llama3_8b trainer.strategy.tensor_model_parallel_size=2",
    "nemo llm pretrain --factory llama3_8b data.micro_batch_size=4 data.global_batch_size=16 "
    "trainer.accumulate_grad_batches=1",
)


def errors(tmp_path: Path, line: str, gpu: str) -> list[tuple[str, int | None, int | None]]:
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\n{line}\n", encoding="utf-8")
    report = run([str(script)], from_specs([gpu], {}), env={})
    return sorted((f.rule, f.origin.line, f.origin.column) for f in report.findings if f.severity.name == "ERROR")


@pytest.mark.parametrize("line", DOCS)
def test_the_docs_recipe_runs_in_bf16(tmp_path: Path, line: str) -> None:
    # cited at the factory that builds the trainer
    assert errors(tmp_path, line, "1xV100") == [("PC101", 2, line.index("--factory") + 1)]
    assert errors(tmp_path, line, "8xH100") == []


@pytest.mark.parametrize(
    ("overrides", "v100"),
    [
        ("trainer.plugins=fp16_mixed", []),
        ("trainer.plugins=bf16_mixed", ["PC101"]),
        ("trainer.plugins.precision=16-mixed", []),
        ("trainer.plugins=fp16_mixed trainer.plugins.precision=bf16-mixed", ["PC101"]),
        ("trainer.plugins=my_plugin", []),  # a plugin precheck does not know: the run is not read
    ],
)
def test_precision_overrides(tmp_path: Path, overrides: str, v100: list[str]) -> None:
    line = f'nemo llm finetune --factory "llama3_8b(num_nodes=1)" {overrides} -y'
    assert [rule for rule, _, _ in errors(tmp_path, line, "1xV100")] == v100
    assert errors(tmp_path, line, "8xH100") == []


@pytest.mark.parametrize(
    "line",
    [
        "nemo llm finetune --factory hf_auto_model_for_causal_lm",  # builds no precision plugin
        "nemo llm finetune model=llama3_8b",  # no factory: the run's parts given one by one
        "nemo llm import llama3_8b source=hf://meta-llama/Meta-Llama-3-8B",  # not a training command
    ],
)
def test_no_recipe_no_default(tmp_path: Path, line: str) -> None:
    assert errors(tmp_path, line, "1xV100") == []
