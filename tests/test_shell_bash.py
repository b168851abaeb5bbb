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
