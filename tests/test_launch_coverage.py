"""Launch lines precheck follows: Slurm batch scripts and ``srun``, ``$(( ))``, ``eval``,
notebook shell commands, the script a launch starts; and what rests on a script it did not read."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import write
from precheck import engine
from precheck.hardware import from_specs
from precheck.rules.base import Severity
from precheck.sources import load_runs
from precheck.sources.script_path import resolve_script
from precheck.sources.shell_arithmetic import evaluate

LAUNCH = "train.py --model_name_or_path meta-llama/Llama-2-7b-hf --output_dir o --bf16 true"


def _env(document: object) -> dict[str, object]:
    return {k: v.value for k, v in document.env.items()}  # type: ignore[attr-defined]


def test_a_slurm_batch_script_is_bash_with_its_sbatch_allocation(tmp_path: Path) -> None:
    job = write(
        tmp_path,
        "train.slurm",
        "#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:4  # four cards\n"
        f"srun --ntasks 1 -N 1 torchrun {LAUNCH}\n",
    )
    (document,) = load_runs(job)
    assert document.format == "shell"
    assert _env(document)["SLURM_GPUS_ON_NODE"] == "4"
    assert (document.env["SLURM_GPUS_ON_NODE"].line, document.env["SLURM_GPUS_ON_NODE"].column) == (4, 9)
    report = engine.run([str(job)], from_specs(["V100"], {}), env={})
    assert report.files[0].devices_asked == 4
    assert [(f.rule, f.origin.line, f.severity) for f in report.findings if f.rule == "PC101"] == [
        ("PC101", 5, Severity.ERROR)  # `--bf16 true` on the srun line: a fact
    ]


def test_srun_options_with_values_are_passed_over_and_its_gpus_counted(tmp_path: Path) -> None:
    script = write(tmp_path, "run.sbatch", f"srun --nodes 1 --gpus-per-node=8 -J job python {LAUNCH}\n")
    (document,) = load_runs(script)
    assert _env(document)["SLURM_GPUS_ON_NODE"] == "8"
    assert document.script == "train.py"


def test_arithmetic_over_numbers_the_script_sets() -> None:
    values = {"N": "4", "M": "N * 2", "ARG": None}
    lookup = values.get
    assert evaluate(" N * 2 ", lookup) == 8
    assert evaluate("$M / 3", lookup) == 2
    assert evaluate("-7 / 2", lookup) == -3 and evaluate("-7 % 2", lookup) == -1  # C: toward zero
    assert evaluate("${N} ** 2 + (1 - 2)", lookup) == 15
    assert evaluate("ARG + 1", lookup) is None  # set at run time
    assert evaluate("N > 2 ? 1 : 0", lookup) is None  # not evaluated: left out
    assert evaluate("010 + 1", lookup) is None  # octal in bash: left out


def test_eval_of_a_command_the_script_assigns(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "run.sh",
        f'N=2\ncmd="torchrun --nproc_per_node $((N * 2)) {LAUNCH}"\neval "$cmd"\neval $NOT_SET\n',
    )
    (document,) = load_runs(script)
    assert _env(document)["LOCAL_WORLD_SIZE"] == "4"
    assert document.root.value["bf16"].line == 2  # where the characters were written
    assert any(n.kind == "unresolved" and "eval" in n.message for n in document.notes)


def _notebook(cells: list[tuple[str, list[str]]]) -> str:
    return json.dumps(
        {
            "cells": [{"cell_type": kind, "metadata": {}, "source": source} for kind, source in cells],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def test_notebook_shell_commands_bash_cells_and_run(tmp_path: Path) -> None:
    text = _notebook(
        [
            ("code", ["!pip install trl\n", f"!torchrun --nproc_per_node 2 {LAUNCH} \\\n", "    --fp16 false\n"]),
            ("markdown", [f"!torchrun {LAUNCH}\n"]),
            ("code", ["%%bash\n", "export CUDA_VISIBLE_DEVICES=0,1,2\n", f"deepspeed {LAUNCH}\n"]),
            ("code", [f"%run -i {LAUNCH}\n"]),
        ]
    )
    notebook = write(tmp_path, "nb.ipynb", text)
    documents = [d for d in load_runs(notebook) if d.format == "shell"]
    assert [d.label for d in documents] == [
        "`torchrun` in cell 1, line 2",
        "`deepspeed` in cell 3, line 3",
        "`python train.py` in cell 4, line 1",
    ]
    first = documents[0].root.value
    lines = text.split("\n")
    for key in ("bf16", "fp16"):  # positions in the .ipynb file itself
        node = first[key]
        assert lines[node.key_line - 1][node.key_column - 1 :].startswith(f"--{key}")
    assert _env(documents[1])["CUDA_VISIBLE_DEVICES"] == "0,1,2"


def test_the_script_a_launch_starts_is_found_as_the_launcher_would(tmp_path: Path) -> None:
    write(tmp_path, "repo/pyproject.toml", "")
    write(tmp_path, "repo/train.py", "")
    write(tmp_path, "repo/pkg/sft/__main__.py", "")
    write(tmp_path, "repo/scripts/local.py", "")
    scripts = tmp_path / "repo" / "scripts"
    assert resolve_script("train.py", False, [scripts]) == tmp_path / "repo" / "train.py"  # the repository root
    assert resolve_script("local.py", False, [scripts]) == scripts / "local.py"  # the script's folder
    assert resolve_script("pkg.sft", True, [scripts]) == tmp_path / "repo" / "pkg" / "sft" / "__main__.py"
    assert resolve_script("../train.py", False, [scripts]) == scripts / ".." / "train.py"
    assert resolve_script("missing.py", False, [scripts]) is None
    launch = write(tmp_path, "repo/scripts/run.sh", f"cd ..\npython {LAUNCH}\n")
    (document,) = load_runs(launch)
    assert document.script == "train.py" and document.script_path == str(scripts / ".." / "train.py")


def test_a_default_of_a_script_precheck_did_not_read_is_an_assumption(tmp_path: Path) -> None:
    # Llama 2's checkpoint is float16: a script that leaves the dtype to from_pretrained would
    # train fp16 weights with AdamW (PC303), but the script is not read: it may load float32
    script = write(
        tmp_path,
        "run.sh",
        "torchrun train.py --model_name_or_path meta-llama/Llama-2-7b-hf --output_dir o --learning_rate 1e-5\n",
    )
    report = engine.run([str(script)], from_specs(["A100"], {}), env={})
    (finding,) = [f for f in report.findings if f.rule == "PC303"]
    assert finding.severity is Severity.WARNING
    assert any("`train.py` (not found) is not read" in a and "torch_dtype" in a for a in finding.assumptions)
    # stated on the command line, the same error rests on facts
    stated = write(
        tmp_path,
        "stated.sh",
        script.read_text().replace(
            "--output_dir o", "--output_dir o --torch_dtype float16 --use_peft false --fp16 false --bf16 false"
        ),
    )
    report = engine.run([str(stated)], from_specs(["A100"], {}), env={})
    assert [f.severity for f in report.findings if f.rule == "PC303"] == [Severity.ERROR]


def test_a_finding_from_a_default_points_at_the_key_that_changes_it(tmp_path: Path) -> None:
    # a notebook's TRL config that leaves bf16 to TRL's default (bf16 = not fp16, trl >= 0.19)
    code = [
        "from trl import SFTConfig, SFTTrainer\n",
        "args = SFTConfig(output_dir='o', learning_rate=2e-4)\n",
        "SFTTrainer(model='m', args=args).train()\n",
    ]
    notebook = write(tmp_path, "nb.ipynb", _notebook([("code", code)]))
    report = engine.run([str(notebook)], from_specs(["1xV100"], {}), env={})
    (finding,) = [f for f in report.findings if f.rule == "PC101"]
    assert finding.origin.key == "bf16" and finding.origin.line > 1  # the SFTConfig call, not line 1
    assert "`bf16` is not set: the value is a default" in finding.message


def test_bash_other_script_is_followed_and_its_settings_point_into_it(tmp_path: Path) -> None:
    write(tmp_path, "run.sh", "export CUDA_VISIBLE_DEVICES=0,1\nbash scripts/inner.sh\n")
    write(tmp_path, "scripts/inner.sh", f"torchrun --nproc_per_node 2 {LAUNCH}\n")
    (document,) = load_runs(tmp_path / "run.sh")
    assert document.label == f"{tmp_path / 'scripts' / 'inner.sh'}: `torchrun` at line 1"
    assert _env(document) == {"CUDA_VISIBLE_DEVICES": "0,1", "LOCAL_WORLD_SIZE": "2"}
    assert document.root.value["bf16"].path == str(tmp_path / "scripts" / "inner.sh")
    report = engine.run([str(tmp_path)], from_specs(["V100"], {}), env={})
    (finding,) = [f for f in report.findings if f.rule == "PC101"]
    assert (Path(finding.origin.path or "").name, finding.origin.line, finding.severity) == (
        "inner.sh",
        1,
        Severity.ERROR,
    )
    inner = next(r for r in report.files if r.path.endswith("inner.sh"))
    assert inner.part_of is not None and inner.part_of.endswith("run.sh")  # checked as part of run.sh's run


def test_a_missing_config_file_makes_its_settings_assumptions_a_missing_deepspeed_json_does_not(
    tmp_path: Path,
) -> None:
    launch = write(tmp_path, "run.sh", "llamafactory-cli train configs/missing.yaml\n")
    report = engine.run([str(launch)], from_specs(["1xV100"], {}), env={})
    (finding,) = [f for f in report.findings if f.rule == "PC101"]  # LLaMA-Factory's bf16 where "supported"
    assert finding.severity is Severity.WARNING
    assert any("`configs/missing.yaml` (not found)" in a for a in finding.assumptions)
    axolotl = write(
        tmp_path,
        "axolotl.yaml",
        "base_model: meta-llama/Llama-3.2-1B\nadapter: lora\ndatasets:\n  - path: x\n    type: alpaca\n"
        "micro_batch_size: 1\nbf16: true\ndeepspeed: deepspeed_configs/zero2.json\n",
    )
    report = engine.run([str(axolotl)], from_specs(["1xV100"], {}), env={})
    assert [(f.severity, f.assumptions) for f in report.findings if f.rule == "PC101"] == [(Severity.ERROR, ())]


def test_unsloth_chooses_the_precision_flags_trl_s_defaults_do_not_apply(tmp_path: Path) -> None:
    """Unsloth's patched SFTConfig sets ``fp16``/``bf16`` from the model's dtype when neither
    is given (unsloth ``rl.py``: ``args.fp16 = float16; args.bf16 = not float16``): TRL's
    ``bf16 = not fp16`` default is not the run's, so no bf16 error on a V100."""
    code = [
        "from unsloth import FastLanguageModel\n",
        "from trl import SFTConfig, SFTTrainer\n",
        "args = SFTConfig(output_dir='o', learning_rate=2e-4)\n",
        "SFTTrainer(model='m', args=args).train()\n",
    ]
    notebook = write(tmp_path, "nb.ipynb", _notebook([("code", code)]))
    report = engine.run([str(notebook)], from_specs(["1xV100"], {}), env={})
    assert [f for f in report.findings if f.rule == "PC101" and f.severity is Severity.ERROR] == []
    stated = write(
        tmp_path,
        "stated.ipynb",
        _notebook([("code", [*code[:2], code[2].replace("2e-4", "2e-4, bf16=True"), code[3]])]),
    )
    report = engine.run([str(stated)], from_specs(["1xV100"], {}), env={})
    assert [f.severity for f in report.findings if f.rule == "PC101"] == [Severity.ERROR]
