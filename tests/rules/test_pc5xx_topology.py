import pytest

from helpers import Case, check_case

RECIPES = "model_name: meta-llama/Llama-3.2-3B-Instruct\nuse_fp16: true\nuse_peft: true\n"

CASES = [
    Case(
        "seed: TITAN RTX + GTX 1080 Ti in CUDA's default order",
        "PC501",
        RECIPES,
        ["TITAN RTX", "GTX 1080 Ti"],
        {(1, 1)},
    ),
    Case(
        "fixed: PCI_BUS_ID order",
        "PC501",
        RECIPES,
        ["TITAN RTX", "GTX 1080 Ti"],
        env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
    ),
    Case("identical cards cannot be confused", "PC501", RECIPES, ["8xA100"]),
    Case("an index past the end", "PC502", RECIPES, ["2xA100"], {(1, 1)}, env={"CUDA_VISIBLE_DEVICES": "0,4"}),
    Case("fixed: existing indices", "PC502", RECIPES, ["2xA100"], env={"CUDA_VISIBLE_DEVICES": "1,0"}),
    Case("-1 hides everything", "PC502", RECIPES, ["2xA100"], {(1, 1)}, env={"CUDA_VISIBLE_DEVICES": "-1"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)
