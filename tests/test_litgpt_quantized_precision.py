"""LitGPT's quantized path (`quantize: bnb.*`) takes `16-true`, `bf16-true` or `32-true` and raises
on a mixed precision ("Quantization and mixed precision is not supported.",
litgpt/finetune/lora.py:142-149@0.5.13): a finding about such a run is keyed by the precision
setting (it decides the plugin's dtype), and its fix names only a mode LitGPT takes, bf16-true
where every GPU has bf16, else 32-true (`Traits.quantized_precisions`). Real files: litgpt
0.5.13's `config_hub/finetune/llama-2-7b/qlora.yaml` (tests/fixtures/fresh/litgpt)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs

QLORA = (
    Path(__file__).parent / "fixtures" / "fresh" / "litgpt" / "config_hub" / "finetune" / "llama-2-7b" / "qlora.yaml"
)


def findings(tmp_path: Path, command: str, gpu: str) -> list[tuple[str, str | None, str]]:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    shutil.copy(QLORA, tmp_path / "qlora.yaml")
    launch = tmp_path / "finetune.sh"
    launch.write_text(f"#!/bin/bash\n{command}\n", encoding="utf-8")
    report = engine.run([str(launch)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return [(f.rule, f.origin.shown_key, f.fix.text() if f.fix else "") for f in report.findings]


@pytest.mark.parametrize(("gpu", "mode"), [("T4", "32-true"), ("A100", "bf16-true")])
def test_16_true_with_quantize_is_keyed_by_precision_and_fixed_with_a_mode_litgpt_takes(
    tmp_path: Path, gpu: str, mode: str
) -> None:
    (rule, key, fix), *_ = findings(tmp_path, "litgpt finetune lora --config qlora.yaml --precision 16-true", gpu)
    assert (rule, key) == ("PC405", "--precision")
    assert f"set `--precision {mode}`" in fix and "16-mixed" not in fix


def test_the_hub_qlora_bf16_true_on_a_v100_is_fixed_with_32_true(tmp_path: Path) -> None:
    found = findings(tmp_path, "litgpt finetune lora --config qlora.yaml", "V100")
    (fix,) = [fix for rule, _, fix in found if rule == "PC101"]
    assert "set `precision: 32-true`" in fix and "16-mixed" not in fix


def test_an_unset_precision_the_default_makes_bf16_is_keyed_and_fixed_with_32_true(tmp_path: Path) -> None:
    """No `precision` anywhere: LitGPT's get_default_supported_precision picks bf16 (emulation counted
    on a T4): PC101 points at the launch with key `precision`, its fix adds `--precision 32-true`, which
    every LitGPT command takes (`pretrain` refuses 16-bit ones). The hub's phi-2/lora.yaml (litgpt
    0.5.13) with its `precision:` line taken out, launched as `litgpt finetune lora --config`."""
    hub = QLORA.parent.parent / "phi-2" / "lora.yaml"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    text = "".join(
        line for line in hub.read_text(encoding="utf-8").splitlines(True) if not line.startswith("precision:")
    )
    (tmp_path / "lora.yaml").write_text(text, encoding="utf-8")
    launch = tmp_path / "finetune.sh"
    launch.write_text("#!/bin/bash\nlitgpt finetune lora --config lora.yaml\n", encoding="utf-8")
    report = engine.run([str(launch)], from_specs(["T4"], {}), env={})
    (found,) = [f for f in report.findings if f.rule == "PC101"]
    assert found.origin.shown_key == "precision" and found.origin.path == str(launch)
    assert found.fix is not None and "set `--precision 32-true`" in found.fix.text()
