import pytest

from helpers import Case, check_case

SEED = """
{
    "--model_family": "flux",
    "--mixed_precision": "bf16",
    "--optimizer": "adamw_bf16",
    "--gradient_precision": "fp32",
    "--gradient_checkpointing": "true"
}
"""
FIXED = SEED.replace('    "--gradient_precision": "fp32",\n', "")
OLD = {"simpletuner": "1.0.0"}
NEW = {"simpletuner": "3.1.6"}

CASES = [
    Case(
        "seed: adamw_bf16 with fp32 gradients (2024 git)",
        "PC301",
        SEED,
        ["RTX 4090"],
        {(5, 5)},
        fmt="json",
        versions=OLD,
    ),
    Case(
        "legacy name adam_bfloat16",
        "PC301",
        SEED.replace("adamw_bf16", "adam_bfloat16"),
        ["RTX 4090"],
        {(5, 5)},
        fmt="json",
        versions=OLD,
    ),
    Case("fixed: no gradient_precision", "PC301", FIXED, ["RTX 4090"], fmt="json", versions=OLD),
    Case(
        "keys without the leading dashes",
        "PC301",
        SEED.replace('"--', '"'),
        ["RTX 4090"],
        {(5, 5)},
        fmt="json",
        versions=OLD,
    ),
    Case("PyPI releases rewrite the setting", "PC301", SEED, ["RTX 4090"], fmt="json", versions=NEW),
    Case(
        "an fp32-capable optimizer is fine",
        "PC301",
        SEED.replace("adamw_bf16", "optimi-adamw"),
        ["RTX 4090"],
        fmt="json",
        versions=OLD,
    ),
    Case(
        "silently dropped on PyPI releases",
        "PC302",
        SEED.replace("adamw_bf16", "optimi-adamw"),
        ["RTX 4090"],
        {(5, 5)},
        fmt="json",
        versions=NEW,
    ),
    Case("fixed: setting removed", "PC302", FIXED, ["RTX 4090"], fmt="json", versions=NEW),
    Case(
        "2024 git versions honour the setting",
        "PC302",
        SEED.replace("adamw_bf16", "optimi-adamw"),
        ["RTX 4090"],
        fmt="json",
        versions=OLD,
    ),
    Case("the crash rule owns the bf16-optimizer case", "PC302", SEED, ["RTX 4090"], fmt="json", versions=NEW),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)
