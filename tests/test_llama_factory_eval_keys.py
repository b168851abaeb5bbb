"""``llamafactory-cli eval`` parses ``ModelArguments, DataArguments, EvaluationArguments,
FinetuningArguments`` (``hparams/parser.py:54@0.9.3``), so an eval file's ``task``/``lang``/
``n_shot``/``save_dir``/``batch_size`` are keys the framework takes (``hparams/evaluation_args.py:
23-56@0.9.3``): the framework's own ``examples/train_lora/llama3_lora_eval.yaml`` (as vendored by
GAIR-NLP/LIMO, a repository run as a user) got five false PC905 "refuses it at launch" warnings.
A misspelt key is still named."""

from __future__ import annotations

from pathlib import Path

from precheck import api

EVAL = (
    Path(__file__).parent
    / "fixtures"
    / "fresh"
    / "LIMO"
    / "train"
    / "examples"
    / "train_lora"
    / "llama3_lora_eval.yaml"
)


def _unknown(path: Path) -> list[str]:
    report = api.check(str(path), "8xA100-80GB", use_project=False)
    return [f.message for f in report.findings if f.rule == "PC905"]


def test_evaluation_arguments_are_known() -> None:
    assert _unknown(EVAL) == []


def test_a_misspelt_evaluation_key_is_still_named(tmp_path: Path) -> None:
    typo = tmp_path / EVAL.name
    typo.write_text(EVAL.read_text(encoding="utf-8").replace("n_shot:", "n_shots:"), encoding="utf-8")
    assert [m for m in _unknown(typo) if "n_shots" in m]
