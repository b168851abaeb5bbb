"""Rules read an override's ``kind`` and data, never its prose (issue 19).

PC605, PC606 and PC609 once matched substrings and regexes of ``Override.reason``, so a
reworded sentence in a resolver dropped their findings without a word. Here every override's
reason is replaced by other text between the resolver and the rules: the findings must not
change.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from helpers import Case, run_case
from precheck import resolve
from precheck.plan import OverrideKind, PrecisionPlan


def ds(**sections: object) -> str:
    return json.dumps(sections, indent=2) + "\n"


ACCELERATE = "distributed_type: DEEPSPEED\nnum_processes: 8\nmixed_precision: bf16\ndeepspeed_config:\n"
HF = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\nper_device_train_batch_size: 4\n"

#: one case per kind a rule reads, with the kinds its plan must carry
CASES = [
    (
        Case(
            "accelerate: mixed_precision and zero_stage beside a file whose fp16 is on",
            "PC605",
            ACCELERATE + "  deepspeed_config_file: ds.json\n  zero_stage: 3\n",
            files={"ds.json": ds(fp16={"enabled": True}, zero_optimization={"stage": 3})},
        ),
        {OverrideKind.ACCELERATE_IGNORED, OverrideKind.ACCELERATE_OTHER_DTYPE},
    ),
    (
        Case(
            "accelerate keeps an explicit bf16 false",
            "PC605",
            ACCELERATE + "  deepspeed_config_file: ds.json\n",
            files={"ds.json": ds(bf16={"enabled": False}, zero_optimization={"stage": 2})},
        ),
        {OverrideKind.SILENT_KEEP, OverrideKind.ACCELERATE_IGNORED},
    ),
    (
        Case(
            "HF Trainer: fp16 on against bf16, batch and clipping differ",
            "PC605",
            HF + "bf16: true\ndeepspeed: ds.json\n",
            files={
                "ds.json": ds(
                    fp16={"enabled": True},
                    bf16={"enabled": False},
                    train_micro_batch_size_per_gpu=8,
                    gradient_clipping=0.5,
                    zero_optimization={"stage": 2},
                )
            },
        ),
        {OverrideKind.HF_MISMATCH},
    ),
    (
        Case(
            "HF Trainer: a bf16 section without enabled",
            "PC605",
            HF + "bf16: true\ndeepspeed: ds.json\n",
            files={"ds.json": ds(bf16={"immediate_grad_update": True}, zero_optimization={"stage": 2})},
        ),
        {OverrideKind.NOT_ENABLED},
    ),
    (
        Case(
            "apex amp with ZeRO-2",
            "PC606",
            ds(amp={"enabled": True}, zero_optimization={"stage": 2}, train_micro_batch_size_per_gpu=4),
            fmt="json",
        ),
        {OverrideKind.AMP_AND_ZERO},
    ),
    (
        Case(
            "apex amp with bf16 mode",
            "PC606",
            ds(amp={"enabled": True}, bf16={"enabled": True}, train_micro_batch_size_per_gpu=4),
            fmt="json",
        ),
        {OverrideKind.AMP_AND_HALF},
    ),
    (
        Case(
            "fp32 accumulation of a bf16 model without ZeRO",
            "PC609",
            ds(
                bf16={"enabled": True},
                data_types={"grad_accum_dtype": "fp32"},
                zero_optimization={"stage": 0},
                train_micro_batch_size_per_gpu=4,
            ),
            fmt="json",
            versions={"deepspeed": "0.18.5"},
        ),
        {OverrideKind.UNSUPPORTED_MIX},
    ),
]


def _shown(case: Case) -> list[tuple[str, int | None, int | None, str, str]]:
    return [(f.rule, f.origin.line, f.origin.column, f.message, f.fix.description) for f in run_case(case)]


def _wrap(monkeypatch: pytest.MonkeyPatch, change: Callable[[PrecisionPlan], None]) -> None:
    real = resolve.resolve

    def wrapped(*args: Any, **kwargs: Any) -> PrecisionPlan:
        plan = real(*args, **kwargs)
        change(plan)
        return plan

    monkeypatch.setattr(resolve, "resolve", wrapped)


@pytest.mark.parametrize(("case", "kinds"), [pytest.param(c, k, id=c.name) for c, k in CASES])
def test_rewording_the_reason_changes_no_finding(
    case: Case, kinds: set[OverrideKind], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[OverrideKind] = []
    _wrap(monkeypatch, lambda plan: seen.extend(o.kind for o in plan.overrides))
    before = _shown(case)
    assert before, f"{case.name}: {case.code} reports nothing, so the test would prove nothing"
    assert kinds <= set(seen), f"{case.name}: the resolver set {seen}"

    def reword(plan: PrecisionPlan) -> None:
        plan.overrides[:] = [dataclasses.replace(o, reason="said another way") for o in plan.overrides]

    monkeypatch.undo()
    _wrap(monkeypatch, reword)
    assert _shown(case) == before


def test_the_rules_read_the_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other way round: an override whose kind is taken away is no longer reported,
    although its prose still says everything."""
    case = CASES[-1][0]
    assert _shown(case)

    def generic(plan: PrecisionPlan) -> None:
        plan.overrides[:] = [dataclasses.replace(o, kind=OverrideKind.REPLACED) for o in plan.overrides]

    _wrap(monkeypatch, generic)
    assert _shown(case) == []
