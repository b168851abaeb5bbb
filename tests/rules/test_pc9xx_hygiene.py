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

#: MiniCPM finetune/sft_finetune.sh's shape: a comment above each flag of the launch
CUT_OFF = (
    "accelerate launch --mixed_precision fp16 train.py \\\n"
    "    # the precision\n"
    "    --bf16 True \\\n"
    "    --output_dir out\n"
)
CUT_OFF_CASES = [
    Case("flags after a comment in a launch", "PC908", CUT_OFF, [], {(3, 5)}, fmt="sh"),
    Case(
        "flags after a blank line in a launch",
        "PC908",
        CUT_OFF.replace("    # the precision\n", "\n"),
        [],
        {(3, 5)},
        fmt="sh",
    ),
    Case("fixed: no comment inside the launch", "PC908", CUT_OFF.replace("    # the precision\n", ""), fmt="sh"),
]
CASES += CUT_OFF_CASES

DS = '{"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}'
REFERENCE_CASES = [
    Case("a DeepSpeed file that is not there", "PC904", BASE + "deepspeed: configs/ds.json\n", [], {(4, 1)}),
    Case("fixed: the file exists", "PC904", BASE + "deepspeed: configs/ds.json\n", files={"configs/ds.json": DS}),
    Case("a misspelt switch", "PC905", BASE + "bf_16: true\n", [], {(4, 1)}),
    Case("fixed: spelt right", "PC905", BASE + "bf16: true\n"),
    Case("a quoted boolean", "PC906", BASE + 'fp16: "false"\n', [], {(4, 1)}),
    Case("fixed: a boolean", "PC906", BASE + "fp16: false\n"),
    Case(
        "a quoted boolean in JSON",
        "PC906",
        '{"output_dir": "o", "learning_rate": 1, "bf16": "true"}',
        [],
        {(1, 41)},
        fmt="json",
    ),
]
CASES += REFERENCE_CASES

SUPPRESSION_CASES = [
    Case(
        "a suppression that silences nothing", "PC907", BASE + "bf16: true  # precheck: ignore[PC902]\n", [], {(4, 13)}
    ),
    Case("fixed: the suppression is used", "PC907", BASE + "bf16: yes  # precheck: ignore[PC902]\n"),
    Case("a code that is not a rule", "PC907", BASE + "bf16: yes  # precheck: ignore[PC902, PC999]\n", [], {(4, 12)}),
    Case("a file-level suppression of a quiet rule", "PC907", "# precheck: ignore-file[PC901]\n" + BASE, [], {(1, 1)}),
    Case("fixed: a file-level suppression in use", "PC907", "# precheck: ignore-file[PC902]\n" + BASE + "fp16: no\n"),
    Case(
        "a bare suppression with the GPU known", "PC907", BASE + "fp16: true  # precheck: ignore\n", ["A100"], {(4, 13)}
    ),
    Case("fixed: a bare suppression in use", "PC907", BASE + "bf16: true  # precheck: ignore\n", ["V100"]),
    Case("no GPU known: hardware rules cannot say", "PC907", BASE + "bf16: true  # precheck: ignore[PC101]\n"),
    Case(
        "an env file's comment",
        "PC907",
        "MODEL_TYPE=lora\nMIXED_PRECISION=bf16  # precheck: ignore[PC101]\n",
        ["A100"],
        {(2, 23)},
        fmt="env",
    ),
]
CASES += SUPPRESSION_CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)
