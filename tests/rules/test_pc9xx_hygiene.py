import pytest

from helpers import Case, check_case

BASE = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"

CASES = [
    Case("a key written twice", "PC901", BASE + "fp16: false\nfp16: true\n", [], {(5, 1)}),
    Case("fixed: one key", "PC901", BASE + "fp16: true\n"),
    Case(
        "duplicate JSON key",
        "PC901",
        '{"output_dir": "o", "learning_rate": 1, "bf16": true, "bf16": false}',
        [],
        {(1, 55)},
        fmt="json",
    ),
    Case("YAML 1.1 boolean", "PC902", BASE + "bf16: yes\n", [], {(4, 7)}),
    Case("fixed: true", "PC902", BASE + "bf16: true\n"),
    Case("quoted yes is a string", "PC902", BASE + 'report_to: "yes"\n'),
]


DOC_CASES = [
    Case("a second YAML document", "PC903", BASE + "---\nfp16: true\n", [], {(5, 1)}),
    Case("fixed: one document", "PC903", BASE + "fp16: true\n"),
]
CASES += DOC_CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)
