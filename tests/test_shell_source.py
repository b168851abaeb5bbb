"""Shell scripts and Makefiles: launch commands read into documents, never run."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from precheck import engine
from precheck.errors import InputError
from precheck.hardware import from_specs
from precheck.sources import Document, Node, load_runs
from precheck.sources.launch_args import typed
from precheck.sources.shell_source import parse_command, parse_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "scripts"


def runs(text: str, kind: str = "shell", path: str = "train.sh") -> list[Document]:
    return parse_script(path, textwrap.dedent(text).lstrip("\n"), kind)


def run(text: str, kind: str = "shell") -> Document:
    found = runs(text, kind)
    assert len(found) == 1, [d.label for d in found]
    return found[0]


def values(document: Document) -> dict[str, Any]:
    return document.root.plain()


def at(document: Document, key: str) -> tuple[int, int, int | None, int | None]:
    """(value line, value column, flag line, flag column) of a top-level key."""
    node = document.mapping()[key]
    return node.line, node.column, node.key_line, node.key_column


def env(document: Document) -> dict[str, str]:
    return {name: str(node.value) for name, node in document.env.items()}


def notes(document: Document, kind: str) -> list[str]:
    return [n.message for n in document.notes if n.kind == kind]


def findings(path: Path | str, *gpus: str) -> set[tuple[str, int, int]]:
    report = engine.run([str(path)], from_specs(list(gpus), {}), env={})
    assert not report.errors, report.errors
    return {(f.rule, f.origin.line or 0, f.origin.column or 0) for f in report.findings}


# -- tokenising ----------------------------------------------------------------------------------


def test_quotes_escapes_and_continuations() -> None:
    doc = run(
        r"""
        swift sft --model "Qwen/Qwen2.5-7B-Instruct" \
            --system 'You are "helpful", really' \
            --output_dir out\ dir \
            --dataset "a \"quoted\" name" $'tab\there'
        """
    )
    assert values(doc)["system"] == 'You are "helpful", really'
    assert values(doc)["output_dir"] == "out dir"
    assert values(doc)["dataset"] == ['a "quoted" name', "tab\there"]
    # the value points at its first character (after the opening quote), the key at the flag
    assert at(doc, "model") == (1, 20, 1, 11)
    assert doc.mapping()["model"].raw == '"Qwen/Qwen2.5-7B-Instruct"'
    assert doc.mapping()["model"].quoted


def test_a_backslash_before_trailing_spaces_or_a_comment_ends_the_command() -> None:
    # `\ ` escapes the space: the newline then ends the command, and the next line is a
    # command of its own (bash tries to run `--fp16`): its flags are not the launch's
    found = runs(
        "swift sft --model m --torch_dtype float16 \\   \n    --fp16 false\n"
        "swift sft --model n \\ # a comment after the backslash\n    --bf16 true\n"
        "swift sft --model o \\\n    --bf16 true\n"
    )
    assert [sorted(values(d)) for d in found] == [["model", "torch_dtype"], ["model"], ["bf16", "model"]]
    assert values(found[2]) == {"model": "o", "bf16": True}


def test_comments_redirections_and_separators() -> None:
    found = runs(
        """
        # swift sft --fp16 true   (a comment: not a run)
        cd work && swift sft --model a --fp16 true > log 2>&1 &
        swift sft --model b --bf16 true 2> err.txt; echo done | tee -a log
        swift sft --model c &>> all.log || exit 1
        """
    )
    assert [values(d) for d in found] == [
        {"model": "a", "fp16": True},
        {"model": "b", "bf16": True},
        {"model": "c"},
    ]
    assert [d.label for d in found] == ["`swift sft` at line 2", "`swift sft` at line 3", "`swift sft` at line 4"]


def test_variables_defaults_arrays_and_word_splitting() -> None:
    doc = run(
        """
        MODEL=Qwen/Qwen2.5-7B-Instruct
        COMMON="--per_device_train_batch_size 2 --gradient_accumulation_steps 8"
        EMPTY=
        ARGS=(--torch_dtype float16
              --fp16 false)
        ARGS+=(--learning_rate 1e-4)
        swift sft --model ${MODEL} $COMMON "${ARGS[@]}" \\
            --output_dir "${OUT:-output}" --max_length ${EMPTY:-1024} --seed "${EMPTY-7}" --bf16 ${EMPTY}
        """
    )
    assert values(doc) == {
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "per_device_train_batch_size": 2,
        "gradient_accumulation_steps": 8,
        "torch_dtype": "float16",
        "fp16": False,
        "learning_rate": 1e-4,
        "output_dir": "output",
        "max_length": 1024,  # `:-` also replaces an empty value
        "seed": "",  # `-` only an unset one: EMPTY is set, to ""
        "bf16": True,  # an unquoted empty expansion is no word at all: `--bf16` alone
    }
    # a value from a variable points where it is written, the key at the flag
    assert at(doc, "model") == (1, 7, 7, 11)
    assert at(doc, "fp16") == (5, 14, 5, 7)
    assert at(doc, "gradient_accumulation_steps") == (2, 71, 2, 41)


def test_what_needs_running_is_left_out_with_a_note() -> None:
    doc = run(
        """
        STAMP=$(date +%s)
        swift sft --model m --output_dir "out/$STAMP" --learning_rate $1 --max_length $((512 * 2)) \\
            --seed `date +%N` --fp16 true --bf16 ${UNSET_IN_SCRIPT}
        """
    )
    # $((512 * 2)) is arithmetic on numbers: evaluated (shell_arithmetic)
    assert values(doc) == {"model": "m", "fp16": True, "max_length": 1024}
    unresolved = notes(doc, "unresolved")
    assert len(unresolved) == 4
    assert any("$(date +%s)" in n and "command substitution, not run" in n for n in unresolved)
    assert any("`$1` (an argument of the script)" in n for n in unresolved)
    assert any("`UNSET_IN_SCRIPT`, not set in the script" in n for n in unresolved)


def test_heredocs_are_skipped() -> None:
    found = runs(
        """
        cat > ds.json <<EOF
        swift sft --model in-a-heredoc --fp16 true
        EOF
        cat <<'QUOTED' | tee x
        swift sft --model quoted-delimiter
        QUOTED
        \tcat <<-TABS
        \t\tswift sft --model tab-stripped
        \tTABS
        swift sft --model after
        """.replace("\\t", "\t")
    )
    assert [values(d)["model"] for d in found] == ["after"]
    assert found[0].mapping()["model"].line == 10


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("swift sft --model m \\\n  --system 'unterminated\n", "unterminated single quote", 2, 12),
        ('echo ok\nswift sft --model "m\n', "unterminated double quote", 2, 19),
        ("swift sft --model $(date\n", "unterminated command substitution", 1, 19),
        ("ARGS=(--fp16 true\n", "unterminated array assignment", 1, 6),
    ],
)
def test_broken_quoting_is_an_input_error_at_its_place(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(InputError) as raised:
        parse_script("train.sh", text, "shell")
    assert message in raised.value.message
    assert (raised.value.line, raised.value.column) == (line, column)
    assert str(raised.value).startswith(f"train.sh:{line}:{column}: ")


# -- the environment -------------------------------------------------------------------------------


def test_exports_prefixes_and_env_apply_to_the_commands_after_them() -> None:
    found = runs(
        """
        swift sft --model before
        export CUDA_VISIBLE_DEVICES=1
        export CUDA_DEVICE_ORDER="PCI_BUS_ID"
        swift sft --model exported
        CUDA_VISIBLE_DEVICES=0,1 nohup swift sft --model prefix &
        env ACCELERATE_MIXED_PRECISION=fp16 -u CUDA_DEVICE_ORDER time swift sft --model env
        unset CUDA_VISIBLE_DEVICES
        ACCELERATE_USE_DEEPSPEED=true
        exec swift sft --model unexported
        """
    )
    assert [env(d) for d in found] == [
        {},
        {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
        {"CUDA_VISIBLE_DEVICES": "0,1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
        {"CUDA_VISIBLE_DEVICES": "1", "ACCELERATE_MIXED_PRECISION": "fp16"},
        {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
    ]
    node = found[1].env["CUDA_VISIBLE_DEVICES"]
    assert (node.key_line, node.key_column, node.line, node.column) == (2, 8, 2, 29)
    assert any("ACCELERATE_USE_DEEPSPEED` is set but not exported" in n for n in notes(found[4], "not-exported"))


def test_set_a_exports_every_assignment_and_sh_c_is_a_script() -> None:
    doc = run(
        """
        set -a
        CUDA_VISIBLE_DEVICES=2
        set +a
        bash -c 'swift sft --model inner --fp16 true'
        """
    )
    assert env(doc) == {"CUDA_VISIBLE_DEVICES": "2"}
    assert values(doc) == {"model": "inner", "fp16": True}
    assert at(doc, "fp16") == (4, 41, 4, 34)  # inside the quoted string, as written


def test_a_script_without_a_launch_command_has_no_runs() -> None:
    assert runs("#!/bin/sh\npip install -r requirements.txt\npython prepare_data.py --out data\n") == []


# -- launchers ----------------------------------------------------------------------------------


def test_swift_flags_follow_hf_argparser() -> None:
    doc = run("NPROC_PER_NODE=2 swift sft --model m --fp16 --bf16 no --gradient_checkpointing True --lora_rank 8\n")
    assert doc.dialect == "ms-swift" and doc.format == "shell"
    assert values(doc) == {"model": "m", "fp16": True, "bf16": False, "gradient_checkpointing": True, "lora_rank": 8}
    assert doc.label == "`swift sft` at line 1"


def test_accelerate_launch_exports_its_settings_and_reads_the_script_flags(tmp_path: Path) -> None:
    (tmp_path / "acc.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\n"
        "gpu_ids: 0,1\ndeepspeed_config:\n  zero_stage: 3\n  deepspeed_config_file: ds.json\n"
    )
    script = tmp_path / "train.sh"
    script.write_text(
        "accelerate launch --config_file acc.yaml --mixed-precision fp16 train.py \\\n"
        "  --model_name_or_path gpt2 --output_dir out --per-device-train-batch-size 2 --bf16 True\n"
    )
    [doc] = load_runs(script, str(script))
    assert doc.dialect is None  # the script's flags: key detection decides (hf-trainer)
    assert values(doc)["per_device_train_batch_size"] == 2 and values(doc)["bf16"] is True
    assert env(doc) == {
        "ACCELERATE_MIXED_PRECISION": "fp16",  # the launch flag beats the config file
        "ACCELERATE_USE_DEEPSPEED": "true",
        "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3",
        "CUDA_VISIBLE_DEVICES": "0,1",
    }
    assert doc.env["ACCELERATE_MIXED_PRECISION"].key == "--mixed-precision"
    stage = doc.env["ACCELERATE_DEEPSPEED_ZERO_STAGE"]
    assert (stage.path, stage.line) == (str(tmp_path / "acc.yaml"), 6)
    # the DeepSpeed file accelerate names is the HF run's `deepspeed` file
    named = doc.mapping()["deepspeed"]
    assert (named.value, named.key, named.path) == ("ds.json", "deepspeed_config_file", str(tmp_path / "acc.yaml"))


def test_accelerate_launch_of_a_plain_loop_is_checked_as_its_accelerate_config() -> None:
    doc = run("accelerate launch --mixed_precision bf16 --use_deepspeed --zero_stage 2 loop.py --lr 1e-4\n")
    assert doc.dialect == "accelerate"
    assert values(doc) == {
        "mixed_precision": "bf16",
        "distributed_type": "DEEPSPEED",
        "deepspeed_config": {"zero_stage": 2},
    }
    assert any("default_config.yaml" in n for n in notes(doc, "not-followed"))


def test_accelerate_launch_without_mixed_precision_exports_no() -> None:
    doc = run("accelerate launch train.py --model_name_or_path gpt2 --output_dir o --learning_rate 1e-4 --fp16\n")
    assert env(doc) == {"ACCELERATE_MIXED_PRECISION": "no"}


@pytest.mark.parametrize(
    "launcher",
    [
        "torchrun --nnodes 1 --nproc-per-node=2 --master_port 29501",
        "python -m torch.distributed.run --nproc_per_node 2",
        "python3 -u -m torch.distributed.launch --use_env --nproc_per_node 2",
        "deepspeed --num_gpus 2",
        "python",
    ],
)
def test_distributed_launchers_pass_the_script_flags_through(launcher: str) -> None:
    doc = run(f"{launcher} train.py --model_name_or_path gpt2 --output_dir o --learning_rate 1e-4 --bf16 True\n")
    assert doc.dialect is None
    assert values(doc) == {"model_name_or_path": "gpt2", "output_dir": "o", "learning_rate": 1e-4, "bf16": True}


def test_deepspeed_include_and_num_gpus_set_the_visible_devices() -> None:
    found = runs(
        """
        deepspeed --include localhost:1,3 train.py --deepspeed ds.json --output_dir o --learning_rate 1e-4
        deepspeed --num_gpus 2 train.py --deepspeed ds.json --output_dir o --learning_rate 1e-4
        CUDA_VISIBLE_DEVICES=5 deepspeed train.py --deepspeed ds.json --output_dir o --learning_rate 1e-4
        """
    )
    assert [env(d) for d in found] == [
        {"CUDA_VISIBLE_DEVICES": "1,3"},
        {"CUDA_VISIBLE_DEVICES": "0,1"},
        {"CUDA_VISIBLE_DEVICES": "5"},
    ]
    assert found[0].env["CUDA_VISIBLE_DEVICES"].key == "--include"


def test_an_unknown_script_with_too_few_training_flags_is_not_a_run() -> None:
    assert runs("python train.py --bf16 True --deepspeed ds.json\n") == []


def test_llamafactory_merges_the_file_and_its_overrides(tmp_path: Path) -> None:
    (tmp_path / "sft.yaml").write_text("model_name_or_path: m\nstage: sft\nfinetuning_type: full\nbf16: true\n")
    script = tmp_path / "train.sh"
    script.write_text("FORCE_TORCHRUN=1 llamafactory-cli train sft.yaml bf16=false fp16=yes optim.lr=1e-4\n")
    [doc] = load_runs(script, str(script))
    assert doc.dialect == "llama-factory"
    assert values(doc) == {
        "model_name_or_path": "m",
        "stage": "sft",
        "finetuning_type": "full",
        "bf16": False,
        "fp16": True,  # OmegaConf reads `yes` as YAML 1.1 does
        "optim": {"lr": 1e-4},
    }
    shown = str(tmp_path / "sft.yaml")
    assert doc.mapping()["stage"].path == shown and doc.mapping()["stage"].line == 2
    assert doc.mapping()["bf16"].path is None and at(doc, "bf16") == (1, 55, 1, 50)


def test_llamafactory_flags_without_a_file() -> None:
    doc = run("llamafactory-cli train --stage sft --model_name_or_path m --pure_bf16 --fp16 False\n")
    assert (doc.dialect, values(doc)) == (
        "llama-factory",
        {"stage": "sft", "model_name_or_path": "m", "pure_bf16": True, "fp16": False},
    )


def test_axolotl_cli_and_module_forms(tmp_path: Path) -> None:
    (tmp_path / "ax.yml").write_text("base_model: m\nadapter: lora\nbf16: auto\nmicro_batch_size: 1\n")
    script = tmp_path / "train.sh"
    script.write_text(
        "axolotl train ax.yml --fp16 --no-bf16 --learning-rate 2e-4 --launcher accelerate\n"
        "python -m axolotl.cli.train ax.yml --bf16=False --fp16=True\n"
        "accelerate launch --mixed_precision fp16 -m axolotl.cli.train ax.yml --fp16 yes\n"
    )
    found = load_runs(script, str(script))
    assert [d.dialect for d in found] == ["axolotl", "axolotl", "axolotl"]
    assert values(found[0]) == {
        "base_model": "m",
        "adapter": "lora",
        "bf16": False,
        "micro_batch_size": 1,
        "fp16": True,
        "learning_rate": 2e-4,
    }
    assert values(found[1])["bf16"] is False and values(found[1])["fp16"] is True
    assert values(found[2])["fp16"] is True and env(found[2])["ACCELERATE_MIXED_PRECISION"] == "fp16"
    assert found[1].label == "`python -m axolotl.cli.train` at line 2"


def test_tune_run_with_a_file_and_with_a_built_in_config(tmp_path: Path) -> None:
    (tmp_path / "lora.yaml").write_text(
        "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\noptimizer:\n"
        "  _component_: torch.optim.AdamW\n  lr: 3e-4\n  weight_decay: 0.01\ndtype: bf16\n"
    )
    script = tmp_path / "tune.sh"
    script.write_text(
        "tune run --nproc_per_node 2 lora_finetune_distributed --config lora.yaml dtype=fp16 optimizer.lr=1e-4 "
        "model=torchtune.models.llama3_2.lora_llama3_2_3b ~optimizer.weight_decay\n"
        "tune run lora_finetune_single_device --config llama3_2/1B_lora_single_device dtype=None\n"
        "tune run full_finetune_single_device --config llama3_2/1B_full_single_device\n"
    )
    found = load_runs(script, str(script))
    assert [d.dialect for d in found] == ["torchtune", "torchtune"]
    assert values(found[0]) == {
        "model": {"_component_": "torchtune.models.llama3_2.lora_llama3_2_3b"},
        "optimizer": {"_component_": "torch.optim.AdamW", "lr": 1e-4},
        "dtype": "fp16",
    }
    assert values(found[1]) == {"dtype": None}
    assert any("built-in config" in n for n in notes(found[1], "not-followed"))


def test_litgpt_config_file_and_flags_in_order(tmp_path: Path) -> None:
    (tmp_path / "lora.yaml").write_text("precision: bf16-true\ndevices: 1\ntrain:\n  micro_batch_size: 2\n")
    script = tmp_path / "ft.sh"
    script.write_text(
        "litgpt finetune_lora checkpoints/m --devices 4 --config lora.yaml --precision 16-true --train.max_norm 1\n"
        "litgpt finetune qlora checkpoints/m\n"
    )
    first, second = load_runs(script, str(script))
    assert first.dialect == "lightning"
    assert values(first) == {
        "checkpoint_dir": "checkpoints/m",
        "devices": 1,  # the file, given after --devices 4, replaces it (jsonargparse)
        "precision": "16-true",
        "train": {"micro_batch_size": 2, "max_norm": 1},
    }
    assert values(second) == {"quantize": "bnb.nf4-dq", "precision": "bf16-true", "checkpoint_dir": "checkpoints/m"}


def test_llama_recipes_flags_are_read_as_fire_reads_them() -> None:
    doc = run(
        "torchrun --nproc_per_node 2 -m llama_recipes.finetuning --enable_fsdp --use_fp16 --lr 1e-4 "
        "--model_name m --pure_bf16 true\n"
    )
    assert doc.dialect == "llama-cookbook"
    # fire: a bare `true` is the string "true", not the boolean
    assert values(doc) == {"enable_fsdp": True, "use_fp16": True, "lr": 1e-4, "model_name": "m", "pure_bf16": "true"}


def test_trl_cli_with_a_config_file(tmp_path: Path) -> None:
    (tmp_path / "sft.yaml").write_text("model_name_or_path: m\nbf16: true\nlearning_rate: 2.0e-5\n")
    script = tmp_path / "t.sh"
    script.write_text("trl sft --config sft.yaml --bf16 false --fp16\n")
    [doc] = load_runs(script, str(script))
    assert (doc.dialect, values(doc)) == (
        "trl",
        {"model_name_or_path": "m", "bf16": False, "learning_rate": 2e-5, "fp16": True},
    )


def test_a_named_config_file_that_is_missing_is_a_reference_note(tmp_path: Path) -> None:
    script = tmp_path / "t.sh"
    script.write_text("llamafactory-cli train missing.yaml fp16=true\n")
    [doc] = load_runs(script, str(script))
    assert values(doc) == {"fp16": True}
    assert notes(doc, "missing-reference")


def test_cd_changes_where_config_files_are_found(tmp_path: Path) -> None:
    (tmp_path / "LLaMA-Factory" / "examples").mkdir(parents=True)
    (tmp_path / "LLaMA-Factory" / "examples" / "x.yaml").write_text("stage: sft\nfp16: true\n")
    script = tmp_path / "scripts" / "run.sh"
    script.parent.mkdir()
    script.write_text('cd "$(dirname "$0")/../LLaMA-Factory"\nllamafactory-cli train examples/x.yaml\n')
    [doc] = load_runs(script, str(script))
    assert values(doc) == {"stage": "sft", "fp16": True}


def test_makefile_recipes_with_make_variables() -> None:
    doc = run(
        """
        MODEL ?= Qwen/Qwen2.5-7B-Instruct
        export CUDA_VISIBLE_DEVICES = 1

        train: data
        \t@echo training $(MODEL)
        \tswift sft --model $(MODEL) \\
        \t  --torch_dtype $(DTYPE) --fp16 false --output_dir out_$$(date +%s)

        DTYPE := float16
        """.replace("\\t", "\t"),
        kind="makefile",
    )
    assert values(doc) == {"model": "Qwen/Qwen2.5-7B-Instruct", "torch_dtype": "float16", "fp16": False}
    assert at(doc, "torch_dtype") == (9, 10, 7, 4)  # DTYPE is set after the rule: make expands late
    assert env(doc) == {"CUDA_VISIBLE_DEVICES": "1"}
    assert at(doc, "fp16")[2:] == (7, 27)


def test_command_line_positions_are_columns_of_the_joined_words() -> None:
    [doc] = parse_command(["swift", "sft", "--model", "Qwen/Qwen2.5-7B", "--system", "a b", "--fp16", "false"])
    assert doc.path == "<command line>"
    assert doc.text == "swift sft --model Qwen/Qwen2.5-7B --system 'a b' --fp16 false"
    assert at(doc, "fp16") == (1, 57, 1, 50)
    assert values(doc)["system"] == "a b"


@pytest.mark.parametrize(
    ("text", "style", "expected"),
    [
        ("true", "hf", True),
        ("Y", "hf", True),
        ("no", "hf", False),
        ("None", "hf", "None"),
        ("1e-4", "hf", 1e-4),
        ("yes", "yaml12", "yes"),
        ("null", "yaml12", None),
        ("on", "omegaconf", True),
        ("1e-4", "omegaconf", 1e-4),
        ("None", "omegaconf-none", None),
        ("true", "python", "true"),
        ("True", "python", True),
        ("off", "pydantic", False),
        ("bf16-true", "yaml", "bf16-true"),
        ("0x10", "yaml12", 16),
    ],
)
def test_values_are_typed_as_the_framework_parser_types_them(text: str, style: str, expected: object) -> None:
    value = typed(text, style)
    assert value == expected and type(value) is type(expected)


# -- findings at the flag, on the seeds --------------------------------------------------------------


def test_ms_swift_on_a_v100_reports_pc201_at_the_flag() -> None:
    seed = SCRIPTS / "ms-swift-v100"
    assert ("PC201", 13, 5) in findings(seed / "train.sh", "V100")  # `--torch_dtype float16`
    assert not {f for f in findings(seed / "train-fixed.sh", "V100") if f[0] in ("PC201", "PC101", "PC401")}


def test_accelerate_fp16_launch_with_a_bf16_script_reports_the_conflict() -> None:
    seed = SCRIPTS / "accelerate-fp16-launch-bf16-script"
    assert findings(seed / "train.sh", "2xA100") == {("PC210", 11, 5)}  # `--bf16 True`
    assert findings(seed / "train-fixed.sh", "2xA100") == set()


def test_llama_recipes_on_the_1080_ti_through_cuda_visible_devices() -> None:
    seed = SCRIPTS / "llama-recipes-titan-rtx-1080ti"
    broken = findings(seed / "finetune.sh", "TITAN RTX", "GTX 1080 Ti")
    assert ("PC102", 10, 5) in broken  # `--use_fp16`, computing on the 1080 Ti (CUDA_VISIBLE_DEVICES=1)
    assert ("PC501", 1, 1) in broken
    fixed = findings(seed / "finetune-fixed.sh", "TITAN RTX", "GTX 1080 Ti")
    assert not {f for f in fixed if f[0] in ("PC102", "PC501")}


def test_a_findings_file_label_names_the_run(tmp_path: Path) -> None:
    script = tmp_path / "two.sh"
    script.write_text("swift sft --model a --fp16 true\nswift sft --model b --bf16 true\n")
    report = engine.run([str(script)], from_specs(["V100"], {}), env={})
    assert [r.label for r in report.files] == ["`swift sft` at line 1", "`swift sft` at line 2"]
    assert ("PC101", 2, 21) in {(f.rule, f.origin.line, f.origin.column) for f in report.findings}


def test_nodes_are_plain_nodes() -> None:
    doc = run("swift sft --model a --fp16\n")
    assert isinstance(doc.root, Node) and doc.root.value["fp16"].raw is None


def test_a_config_file_a_script_merges_is_part_of_that_run(tmp_path: Path) -> None:
    (tmp_path / "sft.yaml").write_text("model_name_or_path: m\nstage: sft\nfinetuning_type: lora\nbf16: true\n")
    (tmp_path / "train.sh").write_text("llamafactory-cli train sft.yaml bf16=false fp16=true\n")
    alone = engine.run([str(tmp_path / "sft.yaml")], from_specs(["V100"], {}), env={})
    assert "PC101" in {f.rule for f in alone.findings}  # bf16 on a V100, the file on its own
    both = engine.run([str(tmp_path)], from_specs(["V100"], {}), env={})
    script = next(r for r in both.files if r.path.endswith("train.sh"))
    assert str(tmp_path / "sft.yaml") in script.attached
    assert "PC101" not in {f.rule for f in both.findings}  # the run the script starts overrides bf16


def test_python_fire_keeps_a_bare_false_as_a_truthy_string(tmp_path: Path) -> None:
    """llama-cookbook's finetuning goes through python-fire: `--use_fp16 false` is the string
    'false' (PC906), while `--use_fp16 False` is the boolean."""
    bare = tmp_path / "bare.sh"
    bare.write_text("torchrun getting-started/finetuning/finetuning.py --model_name m --use_fp16 false\n")
    assert ("PC906", 1, 66) in findings(bare, "A100")  # at `--use_fp16`
    doc = run("torchrun getting-started/finetuning/finetuning.py --model_name m --use_fp16 False\n")
    assert doc.dialect == "llama-cookbook" and values(doc)["use_fp16"] is False
    assert notes(doc, "quoted-boolean") == []
