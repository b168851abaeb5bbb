"""``# precheck: ignore[...]`` comments, file-level ignores and unused-suppression reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from precheck.sources import parse
from precheck.suppression import FILE, LINE, from_notes, scan

HF = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    return subprocess.run(
        [sys.executable, "-m", "precheck", "--isolated", "--format", "json", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def found(result: subprocess.CompletedProcess[str]) -> set[tuple[str, int]]:
    return {(f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]}


def write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_scan_reads_codes_kinds_and_columns() -> None:
    notes = scan(
        "a: 1  # precheck: ignore[pc101, PC202]\n# precheck: ignore-file\nb: '#x' # Precheck: IGNORE\n", "yaml"
    )
    assert [(n.kind, n.message, n.line, n.column) for n in notes] == [
        (LINE, "PC101,PC202", 1, 7),
        (FILE, "", 2, 1),
        (LINE, "", 3, 9),
    ]
    assert scan('{"a": "# precheck: ignore"}', "json") == []  # JSON has no comments
    assert scan("a: b#precheck: ignore\n", "yaml") == []  # not a comment: no space before '#'
    (item,) = from_notes(parse("c.yaml", "fp16: true # precheck: ignore[PC1x]\n", "yaml").notes)
    assert item.codes == ("PC1X",) and item.comment == "# precheck: ignore[PC1X]"


def test_an_inline_comment_silences_its_line_only(tmp_path: Path) -> None:
    text = HF + "bf16: true  # precheck: ignore[PC101]\ngradient_checkpointing: yes\n"
    folder = write(tmp_path, "train.yaml", text)
    result = run("--gpu", "V100", "train.yaml", cwd=folder)
    assert found(result) == {("PC902", 5)}
    assert result.returncode == 0  # the only error was silenced
    other = write(tmp_path, "train.yaml", HF + "bf16: true\ngradient_checkpointing: yes  # precheck: ignore[PC101]\n")
    assert ("PC101", 4) in found(run("--gpu", "V100", "train.yaml", cwd=other))


def test_a_bare_comment_silences_every_rule_on_its_line(tmp_path: Path) -> None:
    folder = write(tmp_path, "train.yaml", HF + "bf16: yes  # precheck: ignore\n")
    assert found(run("--gpu", "V100", "train.yaml", cwd=folder)) == set()


@pytest.mark.parametrize(
    ("comment", "left"), [("# precheck: ignore-file[PC101]", {("PC902", 5)}), ("# precheck: ignore-file", set())]
)
def test_a_file_level_comment_anywhere(tmp_path: Path, comment: str, left: set[tuple[str, int]]) -> None:
    folder = write(tmp_path, "train.yaml", HF + "bf16: true\ngradient_checkpointing: yes\n" + comment + "\n")
    assert found(run("--gpu", "V100", "train.yaml", cwd=folder)) == left


def test_toml_and_env_comments(tmp_path: Path) -> None:
    toml = 'model_family = "flux"\nmodel_type = "lora"\nmixed_precision = "bf16"  # precheck: ignore[PC101]\n'
    env = "MODEL_TYPE=lora\nMIXED_PRECISION=bf16  # precheck: ignore[PC101]\nOPTIMIZER=adamw_bf16\n"
    write(tmp_path, "config.toml", toml)
    folder = write(tmp_path, "config.env", env)
    assert "PC101" not in {rule for rule, _ in found(run("--gpu", "V100", ".", cwd=folder))}
    (tmp_path / "config.toml").write_text(toml.replace("  # precheck: ignore[PC101]", ""))
    assert ("PC101", 3) in found(run("--gpu", "V100", ".", cwd=folder))


def test_unused_suppressions_on_request(tmp_path: Path) -> None:
    folder = write(
        tmp_path, "train.yaml", HF + "bf16: true  # precheck: ignore[PC101]\nfp16: false  # precheck: ignore\n"
    )
    assert found(run("--gpu", "A100", "train.yaml", cwd=folder)) == set()  # off by default
    result = run("--gpu", "A100", "--show-unused-suppressions", "train.yaml", cwd=folder)
    # a bare comment never silences the report about itself
    assert found(result) == {("PC907", 4), ("PC907", 5)}
    assert result.returncode == 0  # info
    assert found(run("--gpu", "A100", "--extend-select", "unused-suppression", "train.yaml", cwd=folder)) == {
        ("PC907", 4),
        ("PC907", 5),
    }
    # on a V100 PC101 fires on line 4: that comment is used; line 5's still silences nothing
    used = run("--gpu", "V100", "--show-unused-suppressions", "train.yaml", cwd=folder)
    assert found(used) == {("PC907", 5)}
