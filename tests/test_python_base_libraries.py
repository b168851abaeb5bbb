"""The base libraries read wherever a script calls them (issue 27): torch casts and AMP in a
plain loop, ``Accelerator(mixed_precision=...)`` with no loop in sight and the launch that
starts it, and a script's own options carried into ``TrainingArguments`` through a click
command's parameters. Each class is tested on a small script and on a real file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources import load_runs

PROJECTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "projects"
needs_projects = pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not present")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def findings(paths: list[Path], gpu: str) -> set[tuple[str, str, str, int]]:
    report = engine.run([str(p) for p in paths], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return {(f.rule, str(f.severity), Path(f.origin.path or "").name, f.origin.line or 0) for f in report.findings}


PLAIN_LOOP = """
import torch
import torch.nn as nn

model = nn.Linear(1024, 1024).cuda().to(torch.bfloat16)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")

for step in range(10):
    x = torch.randn(8, 1024, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""


@pytest.mark.parametrize("gpu", ["A100", "V100", "H100"])
def test_chained_positional_cast_under_a_grad_scaler_is_an_error_on_any_gpu(tmp_path: Path, gpu: str) -> None:
    script = write(tmp_path, "train.py", PLAIN_LOOP)
    (run,) = load_runs(script)
    assert run.mapping()["torch_dtype"].value == "bfloat16"
    assert run.mapping()["torch_dtype"].line == 4  # the `.to(torch.bfloat16)` of the chain
    assert ("PC404", "error", "train.py", 6) in findings([script], gpu)


def test_to_with_a_device_and_a_dtype_is_a_cast_and_to_a_device_is_not(tmp_path: Path) -> None:
    both = write(tmp_path, "both.py", PLAIN_LOOP.replace(".cuda().to(torch.bfloat16)", '.to("cuda", torch.float16)'))
    (run,) = load_runs(both)
    assert run.mapping()["torch_dtype"].value == "float16"
    device = write(tmp_path, "device.py", PLAIN_LOOP.replace(".cuda().to(torch.bfloat16)", '.to("cuda")'))
    (run,) = load_runs(device)
    assert "torch_dtype" not in run.mapping()


ACCELERATOR_ONLY = """
from accelerate import Accelerator
from accelerate.utils.imports import is_bf16_available

accelerator = Accelerator(mixed_precision="{precision}")
print(accelerator.native_amp, accelerator.state.mixed_precision, is_bf16_available())
"""


def test_accelerator_alone_is_a_run_and_so_is_its_accelerate_launch(tmp_path: Path) -> None:
    script = write(tmp_path, "test.py", ACCELERATOR_ONLY.format(precision="bf16"))
    launch = write(tmp_path, "launch.sh", "#!/bin/bash\naccelerate launch test.py\n")
    assert ("PC101", "error", "test.py", 4) in findings([script], "V100")
    assert ("PC101", "error", "test.py", 4) in findings([launch], "V100")  # the launch alone finds it
    assert not any(s == "error" for _, s, _, _ in findings([launch, script], "A100"))
    fp16 = write(tmp_path, "fp16/test.py", ACCELERATOR_ONLY.format(precision="fp16"))
    assert not any(s == "error" for _, s, _, _ in findings([fp16], "V100"))


def test_an_accelerate_config_still_rules_a_script_whose_code_sets_no_precision(tmp_path: Path) -> None:
    write(
        tmp_path,
        "train.py",
        """
        import torch
        from accelerate import Accelerator
        accelerator = Accelerator()
        model = torch.nn.Linear(4, 4)
        optimizer = torch.optim.AdamW(model.parameters())
        model, optimizer = accelerator.prepare(model, optimizer)
        for batch in loader:
            accelerator.backward(model(batch).sum())
        """,
    )
    launch = write(tmp_path, "launch.sh", "accelerate launch --mixed_precision bf16 train.py\n")
    (run,) = load_runs(launch)
    assert run.dialect == "accelerate"
    assert ("PC101", "error", "launch.sh", 1) in {
        (rule, severity, name, line) for rule, severity, name, line in findings([launch], "V100")
    }


CLICK = """
import click
from transformers import Trainer, TrainingArguments


def train(local_output_dir, deepspeed, bf16):
    fp16 = not bf16
    args = TrainingArguments(output_dir=local_output_dir, fp16=fp16, bf16=bf16, deepspeed=deepspeed)
    Trainer(args=args).train()


@click.command()
@click.option("--local-output-dir", type=str, required=True)
@click.option("--deepspeed", type=str, default=None)
@click.option("--bf16", type=bool, default={default})
def main(**kwargs):
    train(**kwargs)


if __name__ == "__main__":
    main()
"""


def test_click_options_reach_training_arguments_through_the_commands_parameters(tmp_path: Path) -> None:
    write(tmp_path, "training/trainer.py", CLICK.format(default="True"))
    launch = write(tmp_path, "train.sh", "deepspeed --module training.trainer --local-output-dir /tmp/out\n")
    (run,) = load_runs(launch)
    assert run.mapping()["bf16"].value is True and run.mapping()["fp16"].value is False
    assert ("PC101", "error", "trainer.py", 7) in findings([launch], "8xV100")  # the script's default, at its use
    flag = write(tmp_path, "flag.sh", "deepspeed --module training.trainer --local-output-dir /tmp/out --bf16 false\n")
    (run,) = load_runs(flag)
    assert run.mapping()["fp16"].value is True
    assert not any(s == "error" for _, s, _, _ in findings([flag], "8xV100"))


def test_a_parameter_a_call_sets_otherwise_is_not_the_option(tmp_path: Path) -> None:
    write(
        tmp_path,
        "training/trainer.py",
        CLICK.format(default="True").replace(
            "    train(**kwargs)", "    train(kwargs['local_output_dir'], None, False)"
        ),
    )
    launch = write(tmp_path, "train.sh", "deepspeed --module training.trainer --local-output-dir /tmp/out\n")
    runs = load_runs(launch)
    assert all(run.mapping().get("bf16") is None for run in runs)


@needs_projects
def test_dollys_click_command_on_the_real_trainer(tmp_path: Path) -> None:
    """databrickslabs/dolly ``training/trainer.py``: ``--bf16`` (default None) reaches
    ``train(**kwargs)``, whose ``fp16 = not bf16`` and ``bf16=bf16`` go into TrainingArguments.
    (Copied beside the launch: a check reads no file outside the tree it is given.)"""
    import shutil

    dolly = (PROJECTS / "databrickslabs__dolly").resolve()
    shutil.copytree(dolly / "training", tmp_path / "training")
    shutil.copytree(dolly / "config", tmp_path / "config")
    plain = write(tmp_path, "a.sh", "deepspeed --module training.trainer --local-output-dir /tmp/o\n")
    (run,) = load_runs(plain)
    assert run.dialect == "hf-trainer"
    fp16 = run.mapping()["fp16"]
    assert fp16.value is True and fp16.path is not None and fp16.path.endswith("training/trainer.py")
    assert fp16.line == 245
    bf16 = write(tmp_path, "b.sh", "deepspeed --module training.trainer --local-output-dir /tmp/o --bf16 true\n")
    assert ("PC101", "error", "b.sh", 1) in findings([bf16], "V100")
    assert not any(s == "error" for _, s, _, _ in findings([plain], "V100"))


def test_a_lightning_trainer_in_code_gets_the_pinned_releases_precision_names(tmp_path: Path) -> None:
    """``pl.Trainer(precision="bf16-mixed")`` with ``pytorch-lightning==1.9.5`` pinned: 1.9 takes
    64/32/16/"bf16" only (the "-mixed"/"-true" names came with 2.0), so the Trainer refuses it."""
    write(tmp_path, "requirements.txt", "pytorch-lightning==1.9.5\n")
    script = write(
        tmp_path,
        "train.py",
        'import pytorch_lightning as pl\ntrainer = pl.Trainer(devices=1, precision="bf16-mixed")\ntrainer.fit(model)\n',
    )
    (run,) = load_runs(script)
    assert run.dialect == "lightning"
    assert ("PC703", "error", "train.py", 2) in findings([script], "A100")
    legacy = write(tmp_path, "legacy/train.py", script.read_text().replace("bf16-mixed", "bf16"))
    write(tmp_path, "legacy/requirements.txt", "pytorch-lightning==1.9.5\n")
    assert not any(s == "error" for _, s, _, _ in findings([legacy], "A100"))


def test_a_launched_lightning_script_gets_the_model_its_flag_names(tmp_path: Path) -> None:
    """flan-alpaca's ``training.py`` (``pl.Trainer(precision="16-mixed")``) launched with
    ``--model_name_or_path google/flan-t5-xl``: fp16 on a T5 checkpoint."""
    write(
        tmp_path,
        "training.py",
        """
        import argparse
        import pytorch_lightning as pl
        parser = argparse.ArgumentParser()
        parser.add_argument("--model_name_or_path", type=str, default="google/flan-t5-base")
        args, _ = parser.parse_known_args()
        trainer = pl.Trainer(precision="16-mixed", accelerator="gpu")
        """,
    )
    launch = write(tmp_path, "run.sh", 'python training.py --model_name_or_path "google/flan-t5-xl"\n')
    assert ("PC209", "warning", "training.py", 6) in findings([launch], "V100")


@needs_projects
def test_lightnings_own_example_trainer_bf16_true(tmp_path: Path) -> None:
    """Lightning's ``examples/pytorch/fp8_distributed_transformer/train.py``:
    ``L.Trainer(strategy=mp_strategy, ..., precision="bf16-true")``."""
    script = PROJECTS / "Lightning-AI__pytorch-lightning/examples/pytorch/fp8_distributed_transformer/train.py"
    (run,) = load_runs(script)
    assert run.dialect == "lightning" and run.root.plain()["trainer"]["precision"] == "bf16-true"
    assert ("PC101", "error", "train.py", 76) in findings([script], "V100")
    assert not any(s == "error" for _, s, _, _ in findings([script], "A100"))


def test_a_function_the_module_calls_once_gets_its_defaults(tmp_path: Path) -> None:
    """lit-gpt ``finetune/lora.py`` (2023-06): ``setup(precision=None)`` called as ``setup()``:
    ``precision = "32-true" if tpu else "bf16-mixed"`` decides, at that line."""
    script = write(
        tmp_path,
        "lora.py",
        """
        import lightning as L


        def setup(precision=None, tpu=False):
            if precision is None:
                precision = "32-true" if tpu else "bf16-mixed"
            fabric = L.Fabric(devices=1, precision=precision)
            fabric.launch()


        if __name__ == "__main__":
            setup()
        """,
    )
    assert ("PC101", "error", "lora.py", 6) in findings([script], "T4")
    twice = write(tmp_path, "twice.py", script.read_text().replace("    setup()", "    setup()\n    setup(tpu=x)"))
    assert not any(s == "error" for _, s, _, _ in findings([twice], "T4"))  # which call trains is not known
    handed = write(tmp_path, "handed.py", script.read_text().replace("    setup()", "    CLI(setup)"))
    assert not any(s == "error" for _, s, _, _ in findings([handed], "T4"))  # flags may set it


def test_findings_point_where_the_value_is_decided(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments

        dtype = torch.bfloat16
        kwargs_dtype = dtype
        model = AutoModelForCausalLM.from_pretrained("facebook/opt-125m", torch_dtype=kwargs_dtype)
        args = TrainingArguments(output_dir="o", bf16=True)
        """,
    )
    (run,) = load_runs(script)
    node = run.mapping()["torch_dtype"]
    assert (node.value, node.key_line, node.raw) == ("bfloat16", 4, "torch.bfloat16")


@needs_projects
def test_nanogpt_dtype_is_reported_where_it_is_decided() -> None:
    """nanoGPT ``train.py``: ``dtype = 'bfloat16' if ... is_bf16_supported() else 'float16'``
    (line 73), translated by ``ptdtype = {...}[dtype]`` (line 111), passed at line 112."""
    script = PROJECTS / "karpathy__nanoGPT/train.py"
    (run,) = load_runs(script, hardware=from_specs(["V100"], {}))
    assert run.mapping()["autocast_dtype"].key_line == 73
    assert ("PC101", "error", "train.py", 73) in findings([script], "V100")


def test_settings_read_but_not_used_are_listed_per_run(tmp_path: Path) -> None:
    """Issue 27 item 5: what precheck read and could not use, per run, in explain and the JSON
    report, apart from what it cites (``file``, not ``path``; no ``FILE:LINE`` in ``why``)."""
    import json
    import re

    from precheck import explain
    from precheck.report import json_report

    script = write(
        tmp_path,
        "train.py",
        """
        import argparse
        from transformers import TrainingArguments
        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        TrainingArguments(output_dir="o", bf16=args.bf16, fp16=False)
        """,
    )
    report = engine.run([str(script)], from_specs(["A100"], {}), env={})
    (result,) = report.files
    assert [(u.line, u.key) for u in result.unused] == [(5, "bf16")]
    (run,) = json.loads(explain.render_json(report))["runs"]
    assert run["unused"] == [
        {"file": str(script), "line": 5, "key": "bf16", "why": result.unused[0].why},
    ]
    (entry,) = json.loads(json_report.render(report))["files"]
    assert entry["unused"] == run["unused"]
    effect = write(
        tmp_path,
        "effects/train.py",
        """
        import argparse, os
        from transformers import AutoModelForCausalLM
        parser = argparse.ArgumentParser()
        parser.add_argument("--model", default="m")
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=os.environ["DTYPE"])
        """,
    )
    launch = write(tmp_path, "effects/run.sh", "python train.py --model m --bf16 True --output_dir o\n")
    report = engine.run([str(launch)], from_specs(["A100"], {}), env={})
    left = [u for r in report.files for u in r.unused]
    assert [(Path(u.path).name, u.line, u.key) for u in left] == [("train.py", 6, "torch_dtype")]
    assert effect.name in left[0].why and not re.search(r"\.py:\d", left[0].as_json()["why"])


def test_subclasses_of_the_training_arguments_get_their_inherited_fields(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        """
        from dataclasses import dataclass, field
        import transformers
        from sentence_transformers import SentenceTransformerTrainingArguments


        @dataclass
        class TrainingArguments(transformers.TrainingArguments):
            cache_dir: str = field(default=None)


        class LongerArguments(TrainingArguments):
            pass


        args = LongerArguments(output_dir="o", bf16=True)
        st = SentenceTransformerTrainingArguments(output_dir="x", tf32=True)
        """,
    )
    first, second = load_runs(script)
    assert (first.dialect, first.mapping()["bf16"].value) == ("hf-trainer", True)
    assert (second.dialect, second.mapping()["tf32"].value) == ("hf-trainer", True)
    found = findings([script], "V100")
    assert ("PC101", "error", "train.py", 15) in found  # bf16 on Volta
    assert ("PC103", "error", "train.py", 16) in found  # tf32=True on Volta: transformers raises


def test_attention_chosen_through_a_function_argument(tmp_path: Path) -> None:
    """``load_model(path, attn_implementation="flash_attention_2")`` from ``main()``: the one
    call decides the parameter, and the finding points at it."""
    script = write(
        tmp_path,
        "train.py",
        """
        import torch
        from transformers import AutoModelForCausalLM, TrainingArguments, Trainer


        def load_model(path, attn_implementation="eager"):
            return AutoModelForCausalLM.from_pretrained(path, attn_implementation=attn_implementation)


        def main():
            model = load_model("facebook/opt-125m", attn_implementation="flash_attention_2")
            Trainer(model=model, args=TrainingArguments(output_dir="o", fp16=True)).train()


        if __name__ == "__main__":
            main()
        """,
    )
    assert ("PC105", "error", "train.py", 10) in findings([script], "V100")
    default = write(tmp_path, "default.py", script.read_text().replace(', attn_implementation="flash_attention_2"', ""))
    assert not any(rule == "PC105" for rule, _, _, _ in findings([default], "V100"))  # its default, eager
    twice = write(tmp_path, "twice.py", script.read_text().replace("    main()", "    main()\n    load_model(p)"))
    assert not any(rule == "PC105" for rule, _, _, _ in findings([twice], "V100"))  # which call trains: not known


def test_attention_set_on_the_config_the_model_is_loaded_with(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        """
        from transformers import AutoConfig, AutoModelForCausalLM, TrainingArguments
        config = AutoConfig.from_pretrained("facebook/opt-125m")
        config._attn_implementation = "flash_attention_2"
        model = AutoModelForCausalLM.from_pretrained("facebook/opt-125m", config=config)
        args = TrainingArguments(output_dir="o", fp16=True)
        """,
    )
    assert ("PC105", "error", "train.py", 3) in findings([script], "V100")
    assert not any(rule == "PC105" for rule, _, _, _ in findings([script], "A100"))
    after = write(
        tmp_path,
        "after.py",
        script.read_text().replace(", config=config)", ")").replace("config._attn", "model.config._attn"),
    )
    assert not any(rule == "PC105" for rule, _, _, _ in findings([after], "V100"))  # only transformers >= 4.48


def test_a_flash_attention_monkey_patch_is_the_models_attention(tmp_path: Path) -> None:
    """FastChat's ``train_mem.py``: ``replace_llama_attn_with_flash_attn()`` at module level
    before ``train()`` (the patch module imports ``flash_attn``), launched with torchrun;
    checked on lm-sys/FastChat's own ``scripts/train_vicuna_7b.sh`` as well (PC105 at
    ``fastchat/train/train_mem.py:8`` on 8xV100, nothing on 8xA100). A warning: the patch
    replaces one model family's attention, and which attention the model uses is not read."""
    write(
        tmp_path,
        "fastchat/train/train_mem.py",
        """
        from fastchat.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

        replace_llama_attn_with_flash_attn()

        from fastchat.train.train import train

        if __name__ == "__main__":
            train()
        """,
    )
    write(
        tmp_path,
        "fastchat/train/train.py",
        """
        from dataclasses import dataclass, field
        import transformers


        @dataclass
        class ModelArguments:
            model_name_or_path: str = field(default="facebook/opt-125m")


        def train():
            parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
            model_args, training_args = parser.parse_args_into_dataclasses()
        """,
    )
    launch = write(
        tmp_path, "train.sh", "torchrun --nproc_per_node=4 fastchat/train/train_mem.py --fp16 True --output_dir out\n"
    )
    # which attention the model uses is its code, not read: the flash attention is an assumption
    assert ("PC105", "warning", "train_mem.py", 3) in findings([launch], "4xV100")
    assert not any(s == "error" for _, s, _, _ in findings([launch], "4xA100"))
    checked = write(
        tmp_path, "check.py", "if is_flash_attn_2_available():\n    pass\nTrainingArguments(output_dir='o')\n"
    )
    assert not any(rule == "PC105" for rule, _, _, _ in findings([checked], "V100"))
    conditional = write(
        tmp_path,
        "conditional.py",
        """
        import sys
        from transformers import TrainingArguments
        from patches import replace_llama_attn_with_flash_attn
        if sys.argv[1] == "flash":
            replace_llama_attn_with_flash_attn()
        TrainingArguments(output_dir="o", fp16=True)
        """,
    )
    assert not any(rule == "PC105" for rule, _, _, _ in findings([conditional], "V100"))  # not on every path


DEEPSPEED_ENGINE = """
import deepspeed
import torch

ds_config = {
    "train_micro_batch_size_per_gpu": 4,
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 2},
}
model = torch.nn.Linear(8, 8)
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=CONFIG)
for batch in loader:
    engine.backward(engine(batch).sum())
    engine.step()
"""


def test_deepspeed_initialize_with_a_dict_the_script_writes(tmp_path: Path) -> None:
    script = write(tmp_path, "train.py", DEEPSPEED_ENGINE.replace("CONFIG", "ds_config"))
    (run,) = load_runs(script)
    assert run.dialect == "deepspeed"
    enabled = run.mapping()["bf16"].get("enabled")
    assert enabled is not None and (enabled.value, enabled.key_line) == (True, 6)  # where the script writes it
    assert ("PC101", "error", "train.py", 6) in findings([script], "V100")
    assert not any(s == "error" for _, s, _, _ in findings([script], "A100"))
    fp16 = write(tmp_path, "fp16.py", script.read_text().replace('"bf16"', '"fp16"'))
    report = engine.run([str(fp16)], from_specs(["V100"], {}), env={})
    plan = report.files[0].plan
    assert plan is not None and plan.loss_scaling.value == "dynamic" and plan.master_weights.value == "float32"


def test_deepspeed_initialize_with_a_path_and_with_a_dict_changed_later(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}')
    script = write(tmp_path, "train.py", DEEPSPEED_ENGINE.replace("CONFIG", '"ds.json"'))
    assert ("PC101", "error", "ds.json", 1) in findings([script], "V100")  # pointing into the file
    changed = write(
        tmp_path,
        "changed.py",
        DEEPSPEED_ENGINE.replace("CONFIG", "ds_config").replace(
            "model = torch", 'ds_config["bf16"]["enabled"] = False\nmodel = torch'
        ),
    )
    (run,) = load_runs(changed)
    assert run.mapping()["bf16"].get("enabled").value is False  # type: ignore[union-attr]
    updated = write(
        tmp_path,
        "updated.py",
        DEEPSPEED_ENGINE.replace("CONFIG", "ds_config").replace(
            "model = torch", "ds_config.update(extra)\nmodel = torch"
        ),
    )
    assert load_runs(updated) == []  # changed at run time: not known
    chosen = write(
        tmp_path,
        "chosen.py",
        DEEPSPEED_ENGINE.replace("CONFIG", "ds_config").replace(
            '{"enabled": True}', '{"enabled": sys.argv[1] == "bf16"}'
        ),
    )
    assert load_runs(chosen) == []  # its precision chosen at run time


DREAMBOOTH = """
import argparse
import torch
from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
parser.add_argument("--learning_rate", type=float, default=5e-6)
args = parser.parse_args()
accelerator = Accelerator(mixed_precision=args.mixed_precision)
model = torch.nn.Linear(4, 4)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
model, optimizer = accelerator.prepare(model, optimizer)
for batch in loader:
    accelerator.backward(model(batch).sum())
"""


def test_a_launched_accelerate_loop_takes_its_mixed_precision_option_or_the_launchs(tmp_path: Path) -> None:
    """diffusers' and peft's example scripts: ``Accelerator(mixed_precision=args.mixed_precision)``
    in their own loop. The option's flag decides; without it, ``accelerate launch``'s own
    ``--mixed_precision`` (ACCELERATE_MIXED_PRECISION). Their other flags stay linted."""
    write(tmp_path, "train.py", DREAMBOOTH)
    flag = write(
        tmp_path, "flag.sh", "accelerate launch train.py --pretrained_model_name_or_path m --mixed_precision=bf16\n"
    )
    (run,) = load_runs(flag)
    assert (run.dialect, run.mapping()["autocast_dtype"].value) == ("pytorch", "bfloat16")
    assert ("PC101", "error", "flag.sh", 1) in findings([flag], "V100")
    launch = write(
        tmp_path, "launch.sh", "accelerate launch --mixed_precision fp16 train.py --pretrained_model_name_or_path m\n"
    )
    (run,) = load_runs(launch)
    assert (run.mapping()["autocast_dtype"].value, run.mapping()["grad_scaler"].value) == ("float16", True)
    assert not any(s == "error" for _, s, _, _ in findings([launch], "V100"))
    typo = write(tmp_path, "typo.sh", "python train.py --pretrained_model_name_or_path m --warmup_steps 10\n")
    assert any(rule == "PC905" for rule, _, _, _ in findings([typo], "A100"))  # argparse refuses it


@needs_projects
def test_a_launched_diffusers_loop_on_a_real_script() -> None:
    """diffusers ``examples/research_projects/sana/train_sana_sprint_diffusers.sh`` runs
    ``python train_sana_sprint_diffusers.py --mixed_precision=bf16 ...``: read as that script's
    own loop (not a Trainer's arguments)."""
    launch = PROJECTS / "huggingface__diffusers/examples/research_projects/sana/train_sana_sprint_diffusers.sh"
    (run,) = load_runs(launch)
    assert run.dialect == "pytorch"
    assert not any(s == "error" for _, s, _, _ in findings([launch], "A100"))


def test_a_config_file_the_script_loads_by_a_literal_path(tmp_path: Path) -> None:
    """nano-world-model (PR #17): ``args = OmegaConf.load("src/configs/experiment/default.yaml")``,
    then ``Trainer(precision="bf16-mixed" if args.experiment.infra.mixed_precision else "32")``,
    with pytorch-lightning 1.9.5 pinned (no '-mixed' names before 2.0). In a repository (a git
    root), so the file loaded from the root's folder is inside the repository checked."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, "requirements.txt", "pytorch-lightning==1.9.5\n")
    write(tmp_path, "src/configs/experiment/default.yaml", "infra:\n  mixed_precision: true\n")
    script = write(
        tmp_path,
        "src/experiments/train_experiment.py",
        """
        from omegaconf import OmegaConf
        from pytorch_lightning import Trainer

        args = OmegaConf.load("src/configs/experiment/default.yaml")
        args = OmegaConf.create({"experiment": args})
        trainer = Trainer(
            devices=1,
            precision="bf16-mixed" if args.experiment.infra.mixed_precision else "32",
        )
        """,
    )
    assert ("PC703", "error", "train_experiment.py", 8) in findings([script], "A100")
    (tmp_path / "src/configs/experiment/default.yaml").write_text("infra:\n  mixed_precision: false\n")
    assert not any(s == "error" for _, s, _, _ in findings([script], "A100"))
    (tmp_path / "src/configs/experiment/default.yaml").unlink()
    (run,) = load_runs(script)
    assert "precision" not in run.root.plain()["trainer"]  # no such file: not known


@needs_projects
def test_a_launched_accelerator_script_without_a_loop_keyword_on_a_real_script() -> None:
    """peft ``examples/boft_controlnet/eval.sh`` runs ``accelerate launch eval.py``, whose
    ``Accelerator(mixed_precision=args.mixed_precision, ...)`` is its only precision call: the
    run is that script's own. Read on its own, ``args`` comes from ``parse_args`` imported from
    ``utils/args_loader.py``: ``--mixed_precision``'s default there (None: accelerate's "no") is
    the run's, cited where that module defines it."""
    launch = PROJECTS / "huggingface__peft/examples/boft_controlnet/eval.sh"
    (run,) = load_runs(launch)
    assert run.dialect == "pytorch"
    report = engine.run(
        [str(PROJECTS / "huggingface__peft/examples/boft_controlnet/eval.py")], from_specs(["A100"], {}), env={}
    )
    (result,) = [r for r in report.files if r.plan is not None]
    assert result.plan is not None
    assert result.plan.autocast_dtype.value is None  # no autocast
    assert "args_loader.py:249" in str(result.plan.autocast_dtype.origin)
    assert not any(u.key == "mixed_precision" for u in result.unused)


def test_a_framework_trainer_run_keeps_the_checkpoint_its_module_loads(tmp_path: Path) -> None:
    """transformers#23918: ``pl.Trainer(precision="16")`` training a LightningModule that loads
    ``t5-large``: fp16 on a bf16-pretrained T5 (NaN), read with the framework's precision names."""
    script = write(
        tmp_path,
        "train.py",
        """
        import lightning.pytorch as pl
        from transformers import T5ForConditionalGeneration


        class T5Module(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.model = T5ForConditionalGeneration.from_pretrained("t5-large")


        trainer = pl.Trainer(precision="16", accelerator="gpu", devices=4)
        trainer.fit(T5Module())
        """,
    )
    (run,) = load_runs(script)
    assert run.root.plain()["model"] == {"init_args": {"model_name_or_path": "t5-large"}}
    assert ("PC209", "warning", "train.py", 11) in findings([script], "V100")


ACCELERATE_PREPARED = """
import torch
from accelerate import Accelerator
from transformers import LlamaForCausalLM

accelerator = Accelerator(gradient_accumulation_steps=1)
model = LlamaForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf", torch_dtype=torch.bfloat16, use_cache=False)
model = accelerator.prepare(model)
optim = accelerator.prepare(torch.optim.AdamW(model.parameters(), lr=2e-5))
"""


def test_a_model_accelerate_prepares_in_weights_the_script_chose(tmp_path: Path) -> None:
    """tmabraham/hf_fsdp (accelerate#2127): ``from_pretrained(torch_dtype=torch.bfloat16)`` then
    ``accelerator.prepare(model)`` and AdamW: no loop in sight, the weights it trains are bf16."""
    script = write(tmp_path, "train.py", ACCELERATE_PREPARED)
    config = "compute_environment: LOCAL_MACHINE\ndistributed_type: {kind}\nmixed_precision: bf16\nnum_processes: 8\n"
    write(tmp_path, "multi.yaml", config.format(kind="MULTI_GPU"))
    write(tmp_path, "fsdp.yaml", config.format(kind="FSDP"))
    launch = write(tmp_path, "multi.sh", "accelerate launch --config_file multi.yaml train.py\n")
    sharded = write(tmp_path, "fsdp.sh", "accelerate launch --config_file fsdp.yaml train.py\n")
    assert ("PC207", "warning", "train.py", 6) in findings([script], "A100")
    (run,) = load_runs(launch)
    assert (run.dialect, run.mapping()["autocast_dtype"].value) == ("pytorch", "bfloat16")
    assert ("PC207", "warning", "train.py", 6) in findings([launch], "8xA100-80GB")
    (run,) = load_runs(sharded)
    assert run.dialect == "accelerate"  # FSDP shards the model: the launch's config is the run (as before)


def test_a_config_file_the_script_loads_from_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    """Issue 30's disclosure boundary holds for a literal path a script loads (``OmegaConf.load``):
    a file outside the repository checked is never read, so none of its values can reach the output."""
    repo = tmp_path / "repo"
    write(tmp_path, "outside/cfg.yaml", "precision: AKIA-not-a-precision\n")
    script = write(
        repo,
        "train.py",
        """
        import lightning as L
        from omegaconf import OmegaConf
        cfg = OmegaConf.load("../outside/cfg.yaml")
        trainer = L.Trainer(precision=cfg.precision)
        trainer.fit(model)
        """,
    )
    report = engine.run([str(script)], from_specs(["V100"], {}), env={})
    shown = " ".join(f"{f.message} {f.fix}" for f in report.findings)
    assert "AKIA" not in shown
    notes = [n.message for r in report.files if r.config is not None for n in r.config.notes]
    assert not any("AKIA" in n for n in notes)


def test_a_monkey_patch_the_model_code_overrides_is_at_most_a_warning(tmp_path: Path) -> None:
    """mPLUG-Owl2 (X-PLUG/mPLUG-Owl@0f3068fd): ``train_mem.py`` calls FastChat's
    ``replace_llama_attn_with_flash_attn()``, and the model module then replaces transformers'
    ``LlamaAttention`` with its own class (``modeling_llama2.replace_llama_modality_adaptive``),
    so FlashAttention never runs: PC105 on a V100 must not be an error."""
    (tmp_path / ".git").mkdir()  # the repository root the launch script is run from
    write(
        tmp_path,
        "mplug_owl2/train/train_mem.py",
        """
        from mplug_owl2.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

        replace_llama_attn_with_flash_attn()

        from mplug_owl2.train.train import train

        if __name__ == "__main__":
            train()
        """,
    )
    write(
        tmp_path,
        "mplug_owl2/train/train.py",
        """
        from dataclasses import dataclass, field
        import transformers
        from mplug_owl2.model import MPLUGOwl2LlamaForCausalLM


        @dataclass
        class TrainingArguments(transformers.TrainingArguments):
            tune_visual_abstractor: bool = field(default=True)


        def train():
            parser = transformers.HfArgumentParser((TrainingArguments,))
            (training_args,) = parser.parse_args_into_dataclasses()
        """,
    )
    launch = write(
        tmp_path, "scripts/finetune.sh", "deepspeed mplug_owl2/train/train_mem.py --fp16 True --output_dir out\n"
    )
    found = findings([launch], "V100")
    assert any(rule == "PC105" and severity == "warning" for rule, severity, _, _ in found)
    assert not any(rule == "PC105" and severity == "error" for rule, severity, _, _ in found)
