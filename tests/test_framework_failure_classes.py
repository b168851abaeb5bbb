"""Issue 28, "Done when": each framework's precision failure classes caught on a V100/T4/L40S/A100
as the framework itself would fail, and not on a card that runs them (one small run per class;
the frameworks' own files are in ``tests/test_maintained_examples.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck.engine import run
from precheck.hardware import from_specs

ROOT = Path(__file__).resolve().parents[1]
NEOX_BF16 = ROOT / "tests" / "fixtures" / "gpt_neox" / "configs" / "bf16_125M.yml"
PGBOOKS = ROOT / "tests" / "fixtures" / "maintained" / "xtuner" / "llama2_7b_full_pgbooks_400iters_sp1.py"

FOUNDRY = """\
model:
  name: mpt_causal_lm
  attn_config:
    attn_impl: torch
max_duration: 10ba
global_train_batch_size: 8
device_train_microbatch_size: 1
train_loader:
  name: text
precision: {precision}
"""
NEMO = """\
from nemo import lightning as nl
from nemo.collections import llm
from nemo.collections.llm.recipes.precision.mixed_precision import bf16_mixed

trainer = nl.Trainer(devices=1, strategy=nl.MegatronStrategy(), plugins=bf16_mixed())
llm.finetune(model=None, data=None, trainer=trainer)
"""
XTUNER_BF16 = """\
import torch
from mmengine.optim import AmpOptimWrapper
model = dict(type='SupervisedFinetune',
             llm=dict(pretrained_model_name_or_path='m', torch_dtype=torch.float32))
optim_wrapper = dict(type=AmpOptimWrapper, dtype='bfloat16')
"""


def errors(folder: Path, gpu: str) -> set[str]:
    report = run([str(folder)], from_specs([gpu], {}), env={})
    return {f.rule for f in report.findings if f.severity.name == "ERROR"}


def files(tmp_path: Path, **texts: str) -> Path:
    for name, text in texts.items():
        (tmp_path / name.replace("__", ".")).write_text(text, encoding="utf-8")
    return tmp_path


CASES = {
    # Composer amp_bf16 on a V100: bf16 autocast on a card without bf16
    "composer-amp-bf16": ({"run__yaml": FOUNDRY.format(precision="amp_bf16")}, "V100", "PC101", "A100"),
    # Composer amp_fp8: Transformer Engine fp8 needs sm_89+ (an L40S runs it, an A100 does not)
    "composer-amp-fp8": ({"run__yaml": FOUNDRY.format(precision="amp_fp8")}, "A100", "PC104", "L40S"),
    # litgpt --precision bf16-true on a T4: bf16 weights on a card without bf16
    "litgpt-bf16-true": (
        {"run__sh": "litgpt finetune lora checkpoints/x --precision bf16-true\n"},
        "T4",
        "PC101",
        "L40S",
    ),
    # NeMo 2 bf16_mixed() on a V100
    "nemo-bf16-mixed": ({"train__py": NEMO}, "V100", "PC101", "8xH100"),
    # xtuner AmpOptimWrapper(dtype='bfloat16') on a V100, launched without --deepspeed
    "xtuner-amp-bf16": ({"cfg__py": XTUNER_BF16, "run__sh": "xtuner train cfg.py\n"}, "V100", "PC101", "A100"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_failure_class(tmp_path: Path, case: str) -> None:
    texts, failing, rule, running = CASES[case]
    folder = files(tmp_path, **texts)
    assert rule in errors(folder, failing)
    assert errors(folder, running) == set()


def test_gpt_neox_bf16_section_in_deepspeed_semantics(tmp_path: Path) -> None:
    # gpt-neox hands `bf16: {enabled: true}` to DeepSpeed as its bf16 section: bf16 on a V100
    text = NEOX_BF16.read_text(encoding="utf-8").replace('"precision": "bfloat16",', '"bf16": {"enabled": true},')
    assert '"bf16": {"enabled": true}' in text
    folder = files(tmp_path, neox__yml=text)
    assert "PC101" in errors(folder, "V100")
    assert errors(folder, "A100") == set()


def test_xtuner_deepspeed_fills_fp16_on_a_v100_when_torch_says_no_bf16(tmp_path: Path) -> None:
    from precheck.versions import parse_assumptions

    texts = {"cfg__py": XTUNER_BF16, "run__sh": "xtuner train cfg.py --deepspeed deepspeed_zero2\n"}
    folder = files(tmp_path, **texts)
    old_torch = parse_assumptions(["torch==2.2.2"])
    report = run([str(folder)], from_specs(["V100"], {}), env={}, assumed_versions=old_torch)
    # the AmpOptimWrapper's bfloat16 is replaced: DeepSpeed fp16, filled as is_bf16_supported() says no
    assert not [f for f in report.findings if f.severity.name == "ERROR"]
