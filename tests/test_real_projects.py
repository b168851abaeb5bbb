"""The real repositories in ``../shared/projects``: no guessed error on capable hardware,
the real bf16 / FlashAttention-2 runs caught on a V100 at the key or flag that turns them on,
and no unknown-key warning on a key the run's own consumer defines.

Skipped where the shared projects are not present (they are not part of the repository).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs

PROJECTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "projects"

pytestmark = pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not present")

#: every error that stays on capable hardware, with the repository line that proves it
#: (none today: each one before this change rested on a guessed method or device count)
CONFIRMED_ERRORS: dict[str, set[tuple[str, str, int]]] = {"8xA100-80GB": set(), "8xH100": set()}


@cache
def findings(gpu: str) -> tuple[tuple[str, str, str, int, str | None], ...]:
    report = engine.run([str(PROJECTS)], from_specs([gpu], {}), env={})
    assert not report.errors and not report.internal_errors  # every file read
    out = []
    for finding in report.findings:
        path = str(Path(finding.origin.path or "").resolve().relative_to(PROJECTS.resolve()))
        out.append((finding.rule, str(finding.severity), path, finding.origin.line or 0, finding.origin.key))
    return tuple(out)


@pytest.mark.parametrize("gpu", ["8xA100-80GB", "8xH100"])
def test_no_error_the_repository_does_not_confirm(gpu: str) -> None:
    errors = {(rule, path, line) for rule, severity, path, line, _ in findings(gpu) if severity == "error"}
    assert errors == CONFIRMED_ERRORS[gpu]


@pytest.mark.parametrize(
    ("rule", "path", "line", "key"),
    [
        # open-r1's recipes: `bf16: true` and `attn_implementation: flash_attention_2`
        ("PC101", "huggingface__open-r1/recipes/OpenR1-Distill-7B/sft/config_distill.yaml", 16, "bf16"),
        ("PC105", "huggingface__open-r1/recipes/OpenR1-Distill-7B/sft/config_distill.yaml", 6, "attn_implementation"),
        ("PC101", "huggingface__open-r1/recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml", 13, "bf16"),
        # GLM-4 hard-codes `torch_dtype=torch.bfloat16`
        ("PC101", "THUDM__GLM-4/finetune/finetune.py", 333, "torch_dtype"),
        # nanoGPT: `dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() ...`
        # (line 73, where it is decided; line 112 passes `ptdtype`, its translation, to autocast);
        # torch 2.13 answers True on a V100 (including_emulation defaults to True)
        ("PC101", "karpathy__nanoGPT/train.py", 73, "dtype"),
        # peft examples/sft: `--use_flash_attn True`, which utils.py turns into flash_attention_2
        ("PC105", "huggingface__peft/examples/sft/run_peft.sh", 41, None),
        ("PC105", "huggingface__peft/examples/sft/run_peft_qlora_fsdp.sh", 33, None),
        ("PC101", "huggingface__peft/examples/sft/run_peft.sh", 19, "--bf16"),
        ("PC101", "huggingface__peft/examples/sft/run_peft_qlora_fsdp.sh", 19, "--bf16"),
    ],
)
def test_real_bf16_and_flash_attention_runs_fail_on_a_v100(rule: str, path: str, line: int, key: str | None) -> None:
    assert (rule, "error", path, line, key) in findings("V100")


def test_unknown_keys_only_where_no_consumer_defines_them() -> None:
    unknown = {(path, key) for rule, _, path, _, key in findings("8xA100-80GB") if rule == "PC905"}
    # the newest LLaMA-Factory has no `kto_ftx` (RLHFArguments: `pref_ftx`)
    assert unknown == {("OpenBMB__MiniCPM/finetune/llama_factory_example/minicpm_kto.yaml", "kto_ftx")}


def test_peft_sft_scripts_are_read_as_their_own_flags_say() -> None:
    """run_peft_qlora_fsdp.sh: QLoRA (`--use_4bit_quantization True`, `--use_peft_lora True`)
    of Llama-2-70b over FSDP: no memory error on 8xA100-80GB (it was a full fp32 estimate)."""
    rules = {rule for rule, _, path, _, _ in findings("8xA100-80GB") if path.endswith("run_peft_qlora_fsdp.sh")}
    assert "PC801" not in rules
