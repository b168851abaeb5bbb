"""Fabric/Trainer precision plugins given as ``plugins=`` decide the precision
(``python_source._precision_arg``): Lightning's ``HalfPrecision``/``MixedPrecision``/... by their
``precision`` (positional or keyword), ``BitsandbytesPrecision(mode, dtype)`` by its ``dtype``
(lightning ``fabric/plugins/precision/bitsandbytes.py:66-139``@2.1.3), with ``precision=None``
beside it (``fabric/connector.py:249-255``). Real code: lit-gpt's ``finetune/lora.py`` at
Lightning-AI/litgpt@ad65549 (Jan 2024; ``tests/fixtures/fresh/litgpt_ad65549``), a second file
after the one of fresh report case 201 (Lightning-AI/litgpt#693)."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources.python_literals import _type_name_text

HERE = Path(__file__).parent
LORA = HERE / "fixtures" / "fresh" / "litgpt_ad65549" / "lora.py"


def launch(tmp_path: Path, flags: str) -> Path:
    if not (tmp_path / ".git").exists():
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / "finetune").mkdir()
        shutil.copy(LORA, tmp_path / "finetune" / "lora.py")
    script = tmp_path / "finetune.sh"
    script.write_text(f"#!/bin/bash\npython finetune/lora.py {flags}\n", encoding="utf-8")
    return script


def found(path: Path, gpu: str) -> list[tuple[str, str, str | None]]:
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return [(f.rule, str(f.severity), f.origin.shown_key) for f in report.findings]


@pytest.mark.parametrize(
    ("precision", "gpu", "expected"),
    [
        ("16-true", "T4", ("PC405", "warning", "--precision")),  # fp16 compute, no GradScaler
        ("bf16-true", "T4", ("PC101", "error", "--precision")),  # bf16 on sm_75
    ],
)
def test_the_bitsandbytes_plugin_dtype_is_the_runs_precision(
    tmp_path: Path, precision: str, gpu: str, expected: tuple[str, str, str]
) -> None:
    assert expected in found(launch(tmp_path, f"--precision {precision} --quantize bnb.nf4"), gpu)


def test_the_plugin_in_fp32_or_on_a_bf16_gpu_is_clean(tmp_path: Path) -> None:
    assert found(launch(tmp_path, "--precision 32-true --quantize bnb.nf4"), "T4") == []
    assert not any(
        s == "error" for _, s, _ in found(launch(tmp_path, "--precision bf16-true --quantize bnb.nf4"), "A100")
    )


def test_a_trainer_plugin_given_its_precision_positionally(tmp_path: Path) -> None:
    """`Trainer(plugins=[HalfPrecision("bf16-true")])` (no `precision` word in the file): bf16 weights."""
    script = tmp_path / "train.py"
    script.write_text(
        "import lightning as L\nfrom lightning.pytorch.plugins import HalfPrecision\n\n\ndef main():\n"
        '    trainer = L.Trainer(devices=1, plugins=[HalfPrecision("bf16-true")])\n    trainer.fit(model)\n\n\n'
        'if __name__ == "__main__":\n    main()\n',
        encoding="utf-8",
    )
    assert ("PC101", "error", None) in found(script, "V100")


def test_string_tests_slices_and_literal_options_are_read() -> None:
    """What lit-gpt's `setup` reads its flags with: `quantize.startswith("bnb.")`, `quantize[4:]`,
    an option typed `Optional[Literal["bnb.nf4", ...]]` taking the flag's string."""
    assert _type_name_text('Optional[Literal["bnb.nf4", "bnb.fp4"]]') == "str"
    assert _type_name_text("Literal[1, 2]") == "other"
    tree = ast.parse(LORA.read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) for n in ast.walk(tree))
