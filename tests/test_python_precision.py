"""Precision a Python script decides through a framework object: accelerate's
``Accelerator(mixed_precision=...)``, Lightning ``Trainer``/``Fabric(precision=...)``,
``from_pretrained(use_flash_attention_2=True)`` and Unsloth's patched TRL configs."""

from __future__ import annotations

import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources import load_runs


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def findings(path: Path, gpu: str) -> set[tuple[str, str, int]]:
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return {(f.rule, str(f.severity), f.origin.line or 0) for f in report.findings}


ACCELERATE = """
import torch
from accelerate import Accelerator
accelerator = Accelerator(mixed_precision="{precision}")
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = accelerator.prepare(model, optimizer)
for batch in loader:
    accelerator.backward(model(batch).sum())
"""


def test_accelerator_mixed_precision_is_the_loop_autocast(tmp_path: Path) -> None:
    bf16 = write(tmp_path, "bf16.py", ACCELERATE.format(precision="bf16"))
    fp16 = write(tmp_path, "fp16.py", ACCELERATE.format(precision="fp16"))
    (run,) = load_runs(bf16)
    assert run.dialect == "pytorch"
    assert run.root.plain() == {"autocast": True, "autocast_dtype": "bfloat16"}
    node = run.mapping()["autocast_dtype"]
    assert node.key is None and (node.key_line, node.key_column) == (3, 27)  # the argument; no fix names it
    assert ("PC101", "error", 3) in findings(bf16, "V100")
    assert not any(severity == "error" for _, severity, _ in findings(bf16, "A100"))
    (run,) = load_runs(fp16)
    assert run.root.plain() == {"autocast": True, "autocast_dtype": "float16", "grad_scaler": True}
    assert not any(severity == "error" for _, severity, _ in findings(fp16, "V100"))


def test_lightning_precision(tmp_path: Path) -> None:
    mixed = write(
        tmp_path,
        "mixed.py",
        """
        import lightning as L
        trainer = L.Trainer(precision="bf16-mixed", devices=8)
        trainer.fit(model)
        """,
    )
    true = write(tmp_path, "true.py", 'import lightning as L\nfabric = L.Fabric(precision="bf16-true")\n')
    (run,) = load_runs(mixed)
    # the Trainer's arguments, read as the framework's own `trainer:` config (its release's precision names)
    assert (run.dialect, run.root.plain()) == ("lightning", {"trainer": {"precision": "bf16-mixed", "devices": 8}})
    (run,) = load_runs(true)
    assert run.root.plain() == {"torch_dtype": "bfloat16"}  # Fabric: the script's own loop
    assert ("PC101", "error", 2) in findings(mixed, "V100")
    fp32 = write(tmp_path, "fp32.py", 'import lightning as L\nL.Trainer(precision="32-true").fit(m)\n')
    assert not any(severity == "error" for _, severity, _ in findings(fp32, "V100"))


def test_use_flash_attention_2(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        """
        from transformers import AutoModelForCausalLM, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("facebook/opt-125m", use_flash_attention_2=True)
        args = TrainingArguments(output_dir="o", fp16=True)
        """,
    )
    (run,) = load_runs(script)
    assert run.mapping()["attn_implementation"].value == "flash_attention_2"
    assert ("PC105", "error", 2) in findings(script, "V100")
    assert not any(rule == "PC105" for rule, _, _ in findings(script, "A100"))


UNSLOTH = """
from unsloth import FastLanguageModel
from trl import SFTConfig, SFTTrainer
model, tokenizer = FastLanguageModel.from_pretrained(model_name="unsloth/Qwen2.5-7B", dtype=None, load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r=16)
trainer = SFTTrainer(model=model, args=SFTConfig(output_dir="outputs", learning_rate=2e-4))
"""


def test_unsloth_trl_config_without_flags_follows_the_model_dtype(tmp_path: Path) -> None:
    script = write(tmp_path, "train.py", UNSLOTH)
    (run,) = load_runs(script, hardware=from_specs(["V100"], {}))
    assert run.dialect == "hf-trainer"  # UnslothSFTConfig: no TRL bf16 = not fp16 default
    assert (run.mapping()["fp16"].value, run.mapping()["bf16"].value) == (True, False)
    (run,) = load_runs(script, hardware=from_specs(["A100"], {}))
    assert (run.mapping()["fp16"].value, run.mapping()["bf16"].value) == (False, True)
    assert not any(rule == "PC101" for rule, _, _ in findings(script, "V100"))
    plain = write(tmp_path, "plain.py", UNSLOTH.replace("from unsloth import FastLanguageModel\n", ""))
    (run,) = load_runs(plain, hardware=from_specs(["V100"], {}))
    assert run.dialect == "trl"


def test_an_unknown_bf16_is_not_trl_default(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        """
        import sys
        from trl import SFTConfig
        config = SFTConfig(output_dir="o", bf16=sys.argv[1] == "bf16", learning_rate=1e-5)
        """,
    )
    (run,) = load_runs(script)
    assert run.dialect == "hf-trainer" and "bf16" not in run.mapping()
    assert any(n.kind == "unresolved-value" and n.key == "bf16" for n in run.notes)
    assert not any(severity == "error" for _, severity, _ in findings(script, "V100"))
