"""A top-level key that holds a section (a mapping) is no TrainingArguments field: every key
the hf-trainer dialect detects by is a scalar there (``optim: OptimizerNames | str``,
``training_args.py:812@5.24.0``). mistral-finetune's ``example/7B.yaml`` (its own ``TrainArgs``,
``finetune/args.py:55``, with ``optim: {lr, weight_decay, pct_start}``; a repository run as a
user) was read as an HF file from ``optim`` and ``max_steps``, and its ``model_id_or_path`` got a
false PC905 "did you mean model_name_or_path". A file of TrainingArguments keys is still one."""

from __future__ import annotations

from pathlib import Path

from precheck import api

SEVEN_B = Path(__file__).parent / "fixtures" / "fresh" / "mistral-finetune" / "example" / "7B.yaml"


def _findings(path: Path) -> list[str]:
    report = api.check(str(path), "8xA100-80GB", use_project=False)
    return [f"{f.rule} {f.message}" for f in report.findings]


def test_another_parsers_optim_section_is_not_training_arguments() -> None:
    assert _findings(SEVEN_B) == []


def test_training_arguments_keys_with_a_typo_are_still_read(tmp_path: Path) -> None:
    hf = tmp_path / "train.yaml"
    hf.write_text(
        "optim: adamw_torch\nmax_steps: 300\nmodel_id_or_path: x\nbf16: true\nwandb:\n  project: p\n",
        encoding="utf-8",
    )
    assert [m for m in _findings(hf) if m.startswith("PC905") and "model_id_or_path" in m]
