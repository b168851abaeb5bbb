"""A TRL ``ModelConfig(...)`` sets the model's attention and dtype only where the script hands
those fields on: with ``GRPOTrainer(model=model_config.model_name_or_path,
peft_config=get_peft_config(model_config))`` the trainer loads the model with its own
``model_init_kwargs`` and ``attn_implementation="flash_attention_2"`` never reaches it (fresh
audit F, issue 28: a false V100 PC105). Tested on two repositories' own files
(``tests/fixtures/fresh/README.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

FRESH = Path(__file__).parent / "fixtures" / "fresh"
FILES = ["philschmid_dlph/training/mini-deepseek-r1-aha-grpo.ipynb", "uReasoningLLMs/rl/models/qwen2.5_3b_grpo.py"]


def _errors(path: Path) -> list[str]:
    report = api.check(str(path), "V100", use_project=False)
    return sorted(f.rule for f in report.findings if f.severity.name == "ERROR")


@pytest.mark.parametrize("name", FILES)
def test_fields_the_script_does_not_hand_on_are_not_the_runs(name: str) -> None:
    assert _errors(FRESH / name) == ["PC101"]  # GRPOConfig(bf16=True) stays


def test_a_field_handed_on_is_the_runs(tmp_path: Path) -> None:
    source = FRESH / FILES[1]
    text = source.read_text(encoding="utf-8").replace(
        "training_args = GRPOConfig(\n",
        "training_args = GRPOConfig(\n"
        '    model_init_kwargs={"attn_implementation": model_config.attn_implementation},\n',
    )
    run = tmp_path / source.name
    run.write_text(text, encoding="utf-8")
    assert _errors(run) == ["PC101", "PC105"]
