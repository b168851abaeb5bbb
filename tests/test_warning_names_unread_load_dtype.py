"""A warning that rests on the load dtype of a script precheck did not read names that
assumption, as an error would (DESIGN.md, "Findings rest on facts"). open-instruct's
``configs/train_configs/sft/tulu2_*.yaml`` are read by its own ``open_instruct/finetune.py``
(which loads ``dtype=torch.bfloat16``, finetune.py:589-597@e6c3044), not by the HF Trainer:
PC405 "gradients are float16 and nothing scales the loss" said the checkpoint's float16 as a
fact, while PC303 of the same file named the assumption. A stated ``torch_dtype`` is a fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

SFT = Path(__file__).parent / "fixtures" / "fresh" / "open-instruct" / "configs" / "train_configs" / "sft"


def _pc405(path: Path) -> list[list[str]]:
    report = api.check(str(path), "8xA100-80GB", use_project=False)
    return [list(f.assumptions) for f in report.findings if f.rule == "PC405"]


@pytest.mark.parametrize("name", ["tulu2_7b.yaml", "tulu2_13b.yaml"])
def test_float16_gradients_name_the_unread_scripts_load_dtype(name: str) -> None:
    found = _pc405(SFT / name)
    assert found
    assert all(any("load dtype float16" in a and "not read" in a for a in said) for said in found)


def test_a_stated_float16_load_is_a_fact(tmp_path: Path) -> None:
    stated = tmp_path / "tulu2_7b.yaml"
    text = (SFT / "tulu2_7b.yaml").read_text(encoding="utf-8")
    stated.write_text(text + "torch_dtype: float16\n", encoding="utf-8")
    assert [said for said in _pc405(stated) if any("load dtype" in a for a in said)] == []
