"""A Composer-style YAML that llm-foundry's ``TrainConfig`` could not build (no ``tokenizer``,
``scheduler`` or ``train_loader`` section: ``MissingMandatoryValue`` in ``train_from_yaml``) is
read by the repository's own script, which decides the precision: TrainConfig's default
``amp_bf16`` is not the run's (fresh audit F, issue 28: mosaicml/examples' resnet_cifar
``main.py:131`` passes ``'amp_fp16'`` itself; 6 false V100 PC101 errors). Tested on that
repository's own files (``tests/fixtures/fresh/README.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

EXAMPLES = Path(__file__).parent / "fixtures" / "fresh" / "mosaicml_examples" / "examples" / "benchmarks"
FOUNDRY = Path(__file__).parent / "fixtures" / "llm_foundry" / "mpt-125m.yaml"


def _rules(path: Path) -> list[tuple[str, str]]:
    report = api.check(str(path), "V100", use_project=False)
    return [(f.rule, f.message) for f in report.findings if f.severity.name == "ERROR"]


@pytest.mark.parametrize("name", ["resnet_cifar/yamls/resnet56.yaml", "deeplab/yamls/deeplabv3.yaml"])
def test_no_trainconfig_default_for_a_yaml_trainconfig_refuses(name: str) -> None:
    assert _rules(EXAMPLES / name) == []


def test_a_written_precision_still_counts() -> None:
    found = _rules(EXAMPLES / "bert/yamls/main/hf-bert-base-uncased.yaml")
    assert [r for r, _ in found] == ["PC101"], found


def test_a_complete_trainconfig_takes_the_default(tmp_path: Path) -> None:
    text = FOUNDRY.read_text(encoding="utf-8").replace("precision: amp_bf16\n", "")
    run = tmp_path / "mpt-125m.yaml"
    run.write_text(text, encoding="utf-8")
    found = [f for f in _rules(run) if f[0] == "PC101"]
    assert len(found) == 1, found
    assert "TrainConfig.precision default 'amp_bf16'" in found[0][1]
