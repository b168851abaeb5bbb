"""PC725 (issue 28): a gpt-neox DeepSpeed ``bf16`` section with no ``precision``, version-gated
on EleutherAI/gpt-neox#1311. Real files: ``tests/test_gpt_neox.py`` (gpt-neox's
``configs/rwkv/170M.yml``) and fresh report case 208 (EleutherAI/gpt-neox#1305)."""

from __future__ import annotations

import pytest

from helpers import Case, check_case

NEOX = """
pipe_parallel_size: 1
model_parallel_size: 1
num_layers: 24
hidden_size: 2048
num_attention_heads: 16
{precision}bf16:
  enabled: true
"""

CASES = [
    Case(
        "bf16 section, no precision, before #1311",
        "PC725",
        NEOX.format(precision=""),
        expect={(7, 3)},
        versions={"gpt-neox": "2.0"},
    ),
    Case("bf16 section, no precision, version not known", "PC725", NEOX.format(precision=""), expect={(7, 3)}),
    Case(
        "fixed: bf16 section, no precision, after #1311",
        "PC725",
        NEOX.format(precision=""),
        versions={"gpt-neox": "2.1"},
    ),
    Case(
        "fixed: precision bfloat16 written",
        "PC725",
        NEOX.format(precision="precision: bfloat16\n"),
        versions={"gpt-neox": "2.0"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


FP16_TYPE = """
pipe_parallel_size: 1
model_parallel_size: 1
num_layers: 12
hidden_size: 768
num_attention_heads: 12
fp16:
  enabled: {enabled}
  type: {kind}
"""

CASES_PC726 = [
    Case(
        "fp16.type bfloat16, version not known",
        "PC726",
        FP16_TYPE.format(enabled="true", kind="bfloat16"),
        expect={(8, 3)},
    ),
    Case(
        "fp16.type bfloat16 on 2.0",
        "PC726",
        FP16_TYPE.format(enabled="true", kind="bfloat16"),
        expect={(8, 3)},
        versions={"gpt-neox": "2.0"},
    ),
    Case(
        "fixed: fp16.type bfloat16 on 1.0 (DeeperSpeed reads it)",
        "PC726",
        FP16_TYPE.format(enabled="true", kind="bfloat16"),
        versions={"gpt-neox": "1.0"},
    ),
    Case("fixed: fp16 section off", "PC726", FP16_TYPE.format(enabled="false", kind="bfloat16")),
    Case("fixed: fp16.type fp16", "PC726", FP16_TYPE.format(enabled="true", kind="fp16")),
]


@pytest.mark.parametrize("case", CASES_PC726, ids=lambda c: c.name)
def test_case_pc726(case: Case) -> None:
    check_case(case)


#: every case, for the registry and the snapshots (tests/test_registry.py reads ``CASES``)
CASES.extend(CASES_PC726)

PRECISION = """
pipe_parallel_size: 1
model_parallel_size: 1
num_layers: 12
hidden_size: 768
num_attention_heads: 12
precision: {precision}
"""

CASES_PC727 = [
    Case("precision bf16", "PC727", PRECISION.format(precision="bf16"), expect={(6, 1)}),
    Case("precision float16", "PC727", PRECISION.format(precision="float16"), expect={(6, 1)}),
    Case("fixed: precision bfloat16", "PC727", PRECISION.format(precision="bfloat16")),
    Case("fixed: precision FP16 (compared case-insensitively)", "PC727", PRECISION.format(precision="FP16")),
]


@pytest.mark.parametrize("case", CASES_PC727, ids=lambda c: c.name)
def test_case_pc727(case: Case) -> None:
    check_case(case)


CASES.extend(CASES_PC727)
