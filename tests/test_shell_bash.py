"""Shell as bash runs it (issue 27 item 3): a command held in a here-document, a here-string
or a variable, an unknown value kept to the words it falls in, wrappers that start the real
launch after ``--``, ``sbatch --wrap``. Each construct on a small script, and on a real
repository's script where ``../shared/projects`` has one."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from precheck.sources import Document
from precheck.sources.shell_source import parse_script

PROJECTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "projects"
needs_projects = pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not present")


def runs(text: str, path: str = "train.sh") -> list[Document]:
    return parse_script(path, textwrap.dedent(text).lstrip("\n"), "shell")


def run(text: str) -> Document:
    found = runs(text)
    assert len(found) == 1, [d.label for d in found]
    return found[0]


def values(document: Document) -> dict[str, Any]:
    return document.root.plain()


def real(path: str) -> list[Document]:
    file = PROJECTS / path
    return parse_script(str(file), file.read_text(), "shell")


# -- here-documents and here-strings ------------------------------------------------------------


def test_a_command_read_from_a_heredoc_is_launched_where_it_is_expanded() -> None:
    doc = run(
        """
        LR=2e-5
        read -r -d '' cmd <<EOF
        train.py \\
           --bf16 True \\
           --learning_rate $LR
        EOF
        deepspeed --num_gpus 2 $cmd
        """
    )
    assert values(doc)["bf16"] is True and values(doc)["learning_rate"] == 2e-5
    node = doc.mapping()["bf16"]
    assert (node.key_line, node.key_column) == (4, 4)  # the flag where it is written, in the body
    assert doc.env["CUDA_VISIBLE_DEVICES"].value == "0,1"


def test_a_quoted_heredoc_delimiter_keeps_the_body_as_written() -> None:
    doc = run(
        """
        read -r -d '' cmd <<'EOF'
        train.py --bf16 True --learning_rate 1e-5 --output_dir $OUT
        EOF
        LAUNCH="torchrun --nproc_per_node 2"
        eval "$LAUNCH $cmd"
        """
    )
    assert values(doc)["bf16"] is True
    assert "output_dir" not in values(doc)  # `$OUT` is expanded by eval, and is not set


def test_read_without_d_takes_the_first_line_only() -> None:
    doc = run(
        """
        read -r cmd <<EOF
        train.py --fp16 True --learning_rate 1e-5
        --bf16 True
        EOF
        torchrun $cmd
        """
    )
    assert values(doc)["fp16"] is True and "bf16" not in values(doc)


def test_a_here_string_read_into_an_array() -> None:
    doc = run(
        """
        OPTIONAL_ARGS="--bf16 True --gradient_checkpointing True"
        IFS=' ' read -ra ARGS <<< "$OPTIONAL_ARGS"
        torchrun train.py --output_dir out "${ARGS[@]}"
        """
    )
    assert values(doc)["bf16"] is True and values(doc)["gradient_checkpointing"] is True


def test_cat_heredoc_in_a_command_substitution() -> None:
    doc = run(
        """
        ARGS=$(cat <<EOF
        --bf16 True
        --tf32 True
        EOF
        )
        torchrun train.py $ARGS
        """
    )
    assert values(doc)["bf16"] is True and values(doc)["tf32"] is True


def test_a_read_with_no_input_from_the_script_leaves_the_command_unknown() -> None:
    assert (
        runs("read -r cmd\ntorchrun train.py --bf16 True --learning_rate 1e-5 $cmd\n")[0].root.plain()["bf16"] is True
    )
    assert not runs("read -r cmd\n$cmd --bf16 True\n")


@needs_projects
def test_openrlhf_heredoc_scripts_are_launched() -> None:
    """OpenRLHF's examples: ``read -r -d '' training_commands <<EOF`` then
    ``deepspeed --module $training_commands``."""
    (doc,) = real("OpenRLHF__OpenRLHF/examples/scripts/train_sft.sh")
    assert doc.dialect == "openrlhf"
    assert values(doc)["ds"]["param_dtype"] == "bf16"
    (rm,) = real("OpenRLHF__OpenRLHF/examples/scripts/train_rm.sh")
    assert rm.dialect == "openrlhf"


# -- an unknown value stays where it is -----------------------------------------------------------


@pytest.mark.parametrize("where", ["first", "middle"])
def test_an_unknown_value_marks_only_the_word_it_falls_in(where: str) -> None:
    args = "--learning_rate $LR --bf16 True" if where == "first" else "--bf16 True --learning_rate $LR --tf32 True"
    doc = run(f'ARGS="{args} --output_dir out"\ntorchrun train.py $ARGS\n')
    assert values(doc)["bf16"] is True and values(doc)["output_dir"] == "out"
    assert "learning_rate" not in values(doc)
    assert any("$LR" in n.message for n in doc.notes if n.kind == "unresolved")


# -- wrappers -------------------------------------------------------------------------------------


def walked(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every launch the shell walk finds in a script (before detection keeps the known ones)."""
    from precheck.sources.launch_args import Builder
    from precheck.sources.shell_lexer import Src, lex
    from precheck.sources.shell_source import Shell

    text = path.read_text()
    found: list[Any] = []
    Shell(Builder(str(path), text), [path.parent], found).run(lex(str(path), Src.of(text), text))
    return [(where, {k: n.plain() for k, n in run.root.items()}) for run, where, _ in found]


def test_a_wrapper_that_runs_the_command_after_a_double_dash() -> None:
    doc = run(
        """
        python submit.py --cluster x --gpus 8 -- \\
            accelerate launch --mixed_precision bf16 train.py --bf16 True --learning_rate 1e-5
        """
    )
    assert doc.label == "`accelerate launch` at line 2"
    assert doc.env["ACCELERATE_MIXED_PRECISION"].value == "bf16" and values(doc)["bf16"] is True


def test_a_double_dash_before_script_arguments_is_not_a_wrapper() -> None:
    doc = run("python train.py --bf16 True --learning_rate 1e-5 -- --seed 1\n")
    assert doc.label == "`python train.py` at line 1"


@needs_projects
def test_ray_job_submit_runs_the_command_after_its_double_dash() -> None:
    (launch,) = walked(PROJECTS / "OpenRLHF__OpenRLHF/examples/scripts/train_ppo_with_reward_fn.sh")
    where, flags = launch
    assert where == "`python3 -m openrlhf.cli.train_ppo_ray` at line 14"
    assert flags["actor"]["model_name_or_path"] == "OpenRLHF/Llama-3-8b-sft-mixture"


def test_sbatch_wrap_is_a_script_with_the_options_gpus() -> None:
    doc = run(
        """
        sbatch --gres=gpu:4 -J x --wrap "torchrun --nproc_per_node 4 train.py --bf16 True --learning_rate 1e-5"
        """
    )
    assert values(doc)["bf16"] is True and doc.env["SLURM_GPUS_ON_NODE"].value == "4"


def test_sbatch_follows_its_batch_script(tmp_path: Path) -> None:
    (tmp_path / "job.sh").write_text(
        "#!/bin/bash\n#SBATCH --gres=gpu:2\ntorchrun train.py --fp16 True --learning_rate 1e-5\n"
    )
    (tmp_path / "submit.sh").write_text("sbatch --gres=gpu:8 job.sh\n")
    (doc,) = parse_script(str(tmp_path / "submit.sh"), (tmp_path / "submit.sh").read_text(), "shell")
    assert values(doc)["fp16"] is True and doc.env["SLURM_GPUS_ON_NODE"].value == "8"


# -- a script precheck cannot read, given its settings file ---------------------------------------


@needs_projects
def test_an_unread_scripts_config_file_is_the_runs_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``accelerate launch ... src/x/grpo.py --config recipe.yaml`` where the script is not in
    the tree (installed elsewhere): the recipe open-r1 ships (``attn_implementation:
    flash_attention_2``, ``bf16: true``) is the run's settings, as TrlParser reads it."""
    from precheck import engine
    from precheck.hardware import from_specs

    recipes = PROJECTS / "huggingface__open-r1" / "recipes"
    (tmp_path / "recipes").mkdir()
    for name in ("Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml", "accelerate_configs/zero2.yaml"):
        (tmp_path / "recipes" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "recipes" / name).write_text((recipes / name).read_text())
    (tmp_path / "run.sh").write_text(
        "accelerate launch --config_file recipes/accelerate_configs/zero2.yaml src/x/grpo.py \\\n"
        "  --config recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml\n"
    )
    monkeypatch.chdir(tmp_path)
    report = engine.run(["run.sh"], from_specs(["4xV100"], {}), env={})
    found = {(f.rule, f.origin.path, f.origin.key) for f in report.findings if str(f.severity) == "error"}
    assert ("PC105", "recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml", "attn_implementation") in found


def test_an_unread_scripts_other_file_is_not_taken_for_settings(tmp_path: Path) -> None:
    (tmp_path / "labels.json").write_text('{"a": 1, "b": 2}')
    (tmp_path / "run.sh").write_text("torchrun src/x/train.py --config labels.json --bf16 True --learning_rate 1e-5\n")
    (doc,) = parse_script(str(tmp_path / "run.sh"), (tmp_path / "run.sh").read_text(), "shell")
    assert values(doc)["config"] == "labels.json" and "a" not in values(doc)


# -- the launcher's workers are the run's devices -------------------------------------------------


def plans(path: Path, gpu: str) -> list[Any]:
    from precheck import engine
    from precheck.hardware import from_specs

    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    return [result.plan for result in report.files if result.plan is not None]


def test_torchrun_workers_are_the_devices_on_a_larger_machine(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text(
        "torchrun --nproc_per_node=4 train.py --model_name_or_path x --bf16 True --learning_rate 2e-5 \\\n"
        "  --fsdp 'full_shard auto_wrap'\n"
    )
    (plan,) = plans(tmp_path / "train.sh", "8xA100-80GB")
    assert plan.devices.value == "0,1,2,3" and plan.device_indices(8) == [0, 1, 2, 3]


@needs_projects
def test_chinese_llama_alpaca_2_single_worker_uses_one_device() -> None:
    """scripts/training/run_sft.sh: `torchrun --nnodes 1 --nproc_per_node 1`: one worker, cuda:0."""
    (plan,) = plans(PROJECTS / "ymcui__Chinese-LLaMA-Alpaca-2/scripts/training/run_sft.sh", "8xA100-80GB")
    assert plan.devices.value == "0" and plan.devices.origin.line == 22


# -- eval of a command built from variables -------------------------------------------------------


def test_unquoted_eval_of_a_command_with_unknown_values_keeps_the_known_words() -> None:
    doc = run(
        """
        BASE="--bf16 True --learning_rate 1e-5 --model_name_or_path gpt2"
        cmd="torchrun --nproc_per_node $NGPU train.py $BASE --output_dir $OUT"
        eval $cmd
        """
    )
    assert values(doc) == {"bf16": True, "learning_rate": 1e-5, "model_name_or_path": "gpt2"}
    assert "LOCAL_WORLD_SIZE" not in doc.env  # `--nproc_per_node $NGPU` is not known
    unresolved = " ".join(n.message for n in doc.notes if n.kind == "unresolved")
    assert "$OUT" in unresolved and "__precheck" not in unresolved
    node = doc.mapping()["bf16"]
    assert (node.key_line, node.key_column) == (1, 7)  # where `--bf16` is written, in BASE


def test_eval_of_an_unknown_command_runs_nothing() -> None:
    assert not runs('eval "$LAUNCHER train.py --bf16 True --learning_rate 1e-5"\n')


def test_an_eval_that_evals_itself_ends() -> None:
    doc = run("cmd='eval $cmd'\neval $cmd\ntorchrun train.py --bf16 True --learning_rate 1e-5\n")
    assert values(doc)["bf16"] is True
    assert any("nested" in n.message for n in doc.notes if n.kind == "unresolved")
