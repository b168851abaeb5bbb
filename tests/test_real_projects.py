"""Issue 17's yardstick: real repositories (../shared/projects) on capable hardware.

On 8×A100-80GB and 8×H100 an error must be one the repository's own code confirms. Every
error precheck still reports there is listed in EVIDENCE with the file:line of that code;
an error not listed (a guess) fails the test, and so does a listed one that went away (keep
the list true). Skipped where the projects are not checked out next to the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.rules.base import Severity

PROJECTS = Path(__file__).resolve().parents[1].parent / "shared" / "projects"

#: (rule, file under projects/, line) → the repository's code that proves the error
EVIDENCE: dict[tuple[str, str, int], str] = {}


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not checked out")
@pytest.mark.parametrize("gpu", ["8xA100-80GB", "8xH100"])
def test_errors_on_capable_hardware_are_confirmed_by_the_repository_s_code(gpu: str) -> None:
    report = engine.check([str(PROJECTS)], from_specs([gpu], {}), env={})
    assert not report.errors and not report.internal_errors
    errors = {
        (f.rule, Path(f.origin.path or "").resolve().relative_to(PROJECTS.resolve()).as_posix(), f.origin.line or 0): f
        for f in report.findings
        if f.severity is Severity.ERROR
    }
    unconfirmed = [
        f"{p}:{line}: {rule} {errors[rule, p, line].message}" for rule, p, line in errors.keys() - EVIDENCE.keys()
    ]
    assert not unconfirmed, "errors the repositories' code does not confirm:\n" + "\n".join(sorted(unconfirmed))
    gone = sorted(EVIDENCE.keys() - errors.keys())
    assert not gone, f"listed errors no longer reported (update EVIDENCE): {gone}"
    for key, proof in EVIDENCE.items():  # each listed error names the code that proves it
        assert ":" in proof and (PROJECTS / proof.split(":", 1)[0]).is_file(), (key, proof)


#: runs that really use bf16 or FlashAttention-2: on a V100, errors at the key that turns it on
V100_ERRORS = {
    ("PC101", "huggingface__open-r1/recipes/OpenR1-Distill-7B/sft/config_distill.yaml", 16, "bf16"),
    ("PC105", "huggingface__open-r1/recipes/OpenR1-Distill-7B/sft/config_distill.yaml", 6, "attn_implementation"),
    ("PC101", "huggingface__open-r1/recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml", 13, "bf16"),
    ("PC101", "THUDM__GLM-4/finetune/finetune.py", 333, "torch_dtype"),  # torch_dtype=torch.bfloat16
    ("PC101", "karpathy__nanoGPT/train.py", 112, "dtype"),  # 'bfloat16' if is_bf16_supported() else ...
    ("PC101", "huggingface__peft/examples/sft/run_peft_qlora_fsdp.sh", 19, "--bf16"),
}


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not checked out")
def test_bf16_and_flash_attention_on_a_v100_are_errors_at_the_key_that_turns_them_on() -> None:
    report = engine.check([str(PROJECTS)], from_specs(["V100"], {}), env={})
    errors = {
        (
            f.rule,
            Path(f.origin.path or "").resolve().relative_to(PROJECTS.resolve()).as_posix(),
            f.origin.line,
            f.origin.key,
        )
        for f in report.findings
        if f.severity is Severity.ERROR and not f.assumptions
    }
    assert errors >= V100_ERRORS, sorted(V100_ERRORS - errors)
