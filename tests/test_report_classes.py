"""Classes behind the real-report cases of issue 27 (``../shared/reports``), each tested on the
case that showed it and on a second, different real file (``../shared/projects``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.models import family_of
from precheck.sources.script_path import clear

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
PROJECTS = SHARED / "projects"
REPORTS = SHARED / "reports" / "cases"


def findings(path: Path, gpu: str | None) -> list[engine.Finding]:
    clear()
    result = engine.run([str(path)], from_specs([gpu] if gpu else [], {}), env={})
    return list(result.findings)


def test_baichuan2_13b_is_a_bf16_released_family_and_baichuan_v1_is_not() -> None:
    """Baichuan2-13B-Chat's config.json says bfloat16 (models.py cites it); Baichuan-13B (v1) and
    Baichuan2-7B are not in the table (their config.json was not confirmed)."""
    for name in ("baichuan-inc/Baichuan2-13B-Chat", "/data/base_model/Baichuan2-13B-Chat", "baichuan2-13b-base"):
        family = family_of(name)
        assert family is not None and family.native_dtype == "bfloat16", name
    for name in ("baichuan-inc/Baichuan-13B-Chat", "baichuan-inc/Baichuan2-7B-Base"):
        assert family_of(name) is None, name


@pytest.mark.shared
def test_fp16_on_baichuan2_13b_warns_in_a_llama_factory_script() -> None:
    """Report case 121 (LlamaFactory#950): train_bash.py --fp16 on a local Baichuan2-13B-Chat; the
    thread's fix (--bf16, case 122) has no finding."""
    bad = findings(REPORTS / "121-llamafactory-baichuan2-13b-fp16-loss-zero" / "train.sh", None)
    assert [(f.origin.line, f.severity.name) for f in bad if f.rule == "PC202"] == [(18, "WARNING")]
    good = findings(REPORTS / "122-clean-llamafactory-baichuan2-13b-bf16" / "train.sh", None)
    assert not [f for f in good if f.rule == "PC202"]


@pytest.mark.shared
def test_fp16_on_baichuan2_13b_warns_in_a_firefly_training_json() -> None:
    """Firefly's train_args/sft/qlora/baichuan2-13b-sft-qlora.json: `"fp16": true` on
    baichuan-inc/Baichuan2-13B-Chat, a warning at the fp16 line (not an error: overflow is a risk)."""
    path = PROJECTS / "yangjianxin1__Firefly" / "train_args" / "sft" / "qlora" / "baichuan2-13b-sft-qlora.json"
    found = [f for f in findings(path, "A100") if f.rule == "PC202"]
    assert [(f.origin.line, f.severity.name) for f in found] == [(24, "WARNING")]
    assert "Baichuan2-13B" in found[0].message
