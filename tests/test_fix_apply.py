"""``--fix`` / ``--diff`` / ``--unsafe-fixes``: edits in the user's file, nothing else changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import Case, findings_for, run_case
from precheck import fix
from precheck.errors import InputError
from precheck.fix import FixError, Replacement, apply_replacements, plan, plan_fixes
from precheck.fix import write as fix_write
from precheck.provenance import Origin
from precheck.rules.base import Edit, Finding, Fix
from test_registry import _cases


def edited(text: str, fmt: str, *edits: Edit) -> str:
    replacements = [r for edit in edits for r in plan(text, fmt, edit)]
    return apply_replacements(text, replacements)


def only_value_changed(before: str, after: str, old: str, new: str) -> None:
    """``after`` is ``before`` with one occurrence of ``old`` replaced by ``new``, byte for byte."""
    start = before.index(old)
    assert after[:start] == before[:start]
    assert after[start : start + len(new)] == new
    assert after[start + len(new) :] == before[start + len(old) :]


# ----------------------------------------------------------------------------- YAML

YAML = """\
# a training config
model_name_or_path: m   # the model
fsdp_config:
    fsdp_offload_params: false    # keep
    fsdp_version: 2
torch_dtype: "float16"
optimizer: 'adamw_torch'
bf16: true   # on purpose
empty:
half_precision_backend: apex  # old
tail: 1
"""


@pytest.mark.parametrize(
    ("edit", "old", "new"),
    [
        (Edit("c.yaml", "bf16", False, 8), "true", "false"),
        (Edit("c.yaml", "torch_dtype", "float32", 6), '"float16"', '"float32"'),
        (Edit("c.yaml", "optimizer", "adamw_8bit"), "'adamw_torch'", "'adamw_8bit'"),
        (Edit("c.yaml", "fsdp_config.fsdp_version", 1), "2", "1"),
        (Edit("c.yaml", "fsdp_offload_params", True, 4), "false", "true"),
        (Edit("c.yaml", "tail", 1.0e-5), "1\n", "1.0e-05\n"),
    ],
)
def test_yaml_set_changes_only_the_value(edit: Edit, old: str, new: str) -> None:
    after = edited(YAML, "yaml", edit)
    only_value_changed(YAML, after, old if old != "2" else "2\n", new if new != "1" else "1\n")


def test_yaml_set_an_empty_value_and_add_keys() -> None:
    after = edited(YAML, "yaml", Edit("c.yaml", "empty", "x"))
    assert after == YAML.replace("empty:\n", "empty: x\n")
    added = edited(
        YAML, "yaml", Edit("c.yaml", "fp16", True), Edit("c.yaml", "fsdp_config.fsdp_cpu_ram_efficient_loading", True)
    )
    assert (
        added
        == YAML.replace("    fsdp_version: 2\n", "    fsdp_version: 2\n    fsdp_cpu_ram_efficient_loading: true\n")
        + "fp16: true\n"
    )
    nested = edited(YAML, "yaml", Edit("c.yaml", "deepspeed_config.zero_stage", 3))
    assert nested == YAML + "deepspeed_config:\n    zero_stage: 3\n"


def test_yaml_keeps_crlf_and_a_missing_final_newline() -> None:
    text = "bf16: true\r\nseed: 1"
    assert edited(text, "yaml", Edit("c.yaml", "bf16", False, 1)) == "bf16: false\r\nseed: 1"
    assert edited(text, "yaml", Edit("c.yaml", "fp16", True)) == "bf16: true\r\nseed: 1\r\nfp16: true\r\n"


def test_yaml_remove_takes_the_key_lines_only() -> None:
    after = edited(YAML, "yaml", Edit("c.yaml", "half_precision_backend", None, 10, remove=True))
    assert after == YAML.replace("half_precision_backend: apex  # old\n", "")
    block = edited(YAML, "yaml", Edit("c.yaml", "fsdp_config", None, 3, remove=True))
    assert block == YAML.replace("fsdp_config:\n    fsdp_offload_params: false    # keep\n    fsdp_version: 2\n", "")
    assert edited(YAML, "yaml", Edit("c.yaml", "not_there", None, remove=True)) == YAML


@pytest.mark.parametrize(
    ("text", "edit", "why"),
    [
        ("base: &b bf16\nx: *b\n", Edit("c.yaml", "x", "fp16", 2), "alias"),
        ("a: &b bf16\n", Edit("c.yaml", "a", "fp16", 1), "anchor"),
        ("a: |\n  text\n", Edit("c.yaml", "a", "x", 1), "block scalar"),
        ("a: {b: 1, c: 2}\n", Edit("c.yaml", "a.b", None, 1, remove=True), "one-line mapping"),
        ("a:\n  b: 1\n", Edit("c.yaml", "a.b", None, 2, remove=True), "empty"),
        ("- a: 1\n  b: 2\n", Edit("c.yaml", "a", 2), "not a mapping"),
        ("a: 1\n---\nb: 2\n", Edit("c.yaml", "c", 2), "more than one YAML document"),
    ],
)
def test_yaml_edits_that_need_a_person(text: str, edit: Edit, why: str) -> None:
    with pytest.raises(FixError, match=why):
        plan(text, "yaml", edit)


# ----------------------------------------------------------------------------- JSON

JSON4 = '{\n    "a": 1,\n    "bf16": {\n        "enabled": true\n    },\n    "z": "last"\n}\n'


def test_json_set_remove_add_keep_the_indentation() -> None:
    only_value_changed(JSON4, edited(JSON4, "json", Edit("d.json", "bf16.enabled", False, 4)), "true", "false")
    assert edited(JSON4, "json", Edit("d.json", "a", None, 2, remove=True)) == JSON4.replace('    "a": 1,\n', "")
    assert edited(JSON4, "json", Edit("d.json", "z", None, 6, remove=True)) == JSON4.replace(',\n    "z": "last"', "")
    assert edited(JSON4, "json", Edit("d.json", "fp16", False)) == JSON4.replace(
        '"last"\n', '"last",\n    "fp16": false\n'
    )
    nested = edited(JSON4, "json", Edit("d.json", "bf16.immediate_grad_update", True))
    assert nested == JSON4.replace("true\n", 'true,\n        "immediate_grad_update": true\n')
    made = edited(JSON4, "json", Edit("d.json", "zero_optimization.stage", 2))
    assert json.loads(made)["zero_optimization"] == {"stage": 2}
    assert '    "zero_optimization": {\n        "stage": 2\n    }\n}' in made


def test_json_tabs_one_line_and_the_only_member() -> None:
    tabs = '{\n\t"a": 1,\n\t"b": 2\n}'
    assert edited(tabs, "json", Edit("d.json", "c", "x")) == '{\n\t"a": 1,\n\t"b": 2,\n\t"c": "x"\n}'
    assert edited(tabs, "json", Edit("d.json", "a", None, remove=True)) == '{\n\t"b": 2\n}'
    one = '{"a": 1, "b": {"c": true}}'
    assert edited(one, "json", Edit("d.json", "b.c", False)) == '{"a": 1, "b": {"c": false}}'
    assert edited(one, "json", Edit("d.json", "d", 3)) == '{"a": 1, "b": {"c": true}, "d": 3}'
    assert edited(one, "json", Edit("d.json", "a", None, remove=True)) == '{"b": {"c": true}}'
    assert edited('{"x": {"y": 1}}', "json", Edit("d.json", "x.y", None, remove=True)) == '{"x": {}}'


# ----------------------------------------------------------------------------- TOML and env

TOML = """\
# SimpleTuner
model_family = "flux"
mixed_precision = 'bf16'   # comment
layers = [
  1, 2,  # two
]

[table]
x = 1
"""


def test_toml_edits() -> None:
    only_value_changed(TOML, edited(TOML, "toml", Edit("c.toml", "mixed_precision", "no", 3)), "'bf16'", "'no'")
    assert edited(TOML, "toml", Edit("c.toml", "layers", None, 4, remove=True)) == TOML.replace(
        "layers = [\n  1, 2,  # two\n]\n", ""
    )
    assert edited(TOML, "toml", Edit("c.toml", "fp16", False)) == TOML.replace(
        "]\n\n[table]", "]\nfp16 = false\n\n[table]"
    )
    assert edited(TOML, "toml", Edit("c.toml", "table.y", 1.5)) == TOML + "y = 1.5\n"
    assert edited(TOML, "toml", Edit("c.toml", "table.x", 2, 9)) == TOML.replace("x = 1", "x = 2")


def test_env_edits() -> None:
    text = 'export MODEL_TYPE=lora\nexport MIXED_PRECISION="bf16"  # on\nexport OPTIMIZER=adamw_bf16\n'
    only_value_changed(text, edited(text, "env", Edit("c.env", "MIXED_PRECISION", "no", 2)), '"bf16"', '"no"')
    assert edited(text, "env", Edit("c.env", "OPTIMIZER", None, 3, remove=True)) == text.replace(
        "export OPTIMIZER=adamw_bf16\n", ""
    )
    assert edited(text, "env", Edit("c.env", "GRADIENT_PRECISION", "fp32")) == text + "export GRADIENT_PRECISION=fp32\n"


def test_replacements_that_overlap_are_told_apart() -> None:
    assert Replacement(0, 4, "x").overlaps(Replacement(2, 6, "y"))
    assert not Replacement(0, 4, "x").overlaps(Replacement(4, 6, "y"))
    assert not Replacement(3, 3, "a").overlaps(Replacement(3, 3, "b"))
    assert Replacement(3, 3, "a").overlaps(Replacement(2, 5, "b"))
    assert apply_replacements("abcdef", [Replacement(1, 2, "X"), Replacement(4, 4, "+"), Replacement(4, 4, "!")]) == (
        "aXcd+!ef"
    )


# ----------------------------------------------------------------------------- files

TORCHTUNE = """\
# tune run --nproc_per_node 8 full_finetune_distributed --config llama3_1/8B_full
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b   # the model
optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
dtype:   "bfloat16"    # keep this comment
"""
LIGHTNING = """\
trainer:
  accelerator: gpu
  devices: 8
  precision: 16   # legacy
  max_epochs: 3
model:
  class_path: my.Module
"""
HF_APEX = "model_name_or_path: m\r\noutput_dir: out\r\nbf16: true\r\nhalf_precision_backend: apex  # old\r\nseed: 1\r\n"
DS = """\
{
    "train_micro_batch_size_per_gpu": 1,
    "bf16": {
        "enabled": true
    },
    "fp16": {
        "enabled": true,
        "loss_scale": 0
    }
}
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    command = [sys.executable, "-m", "precheck", "--isolated", "--gpu", "8xA100", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    files = {"torchtune.yaml": TORCHTUNE, "lightning.yaml": LIGHTNING, "hf.yaml": HF_APEX, "ds.json": DS}
    for name, text in files.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + LIGHTNING.encode())
    return tmp_path


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


V5 = ("--assume-version", "transformers==5.0.0")


def test_without_fix_nothing_is_ever_written(configs: Path) -> None:
    before = snapshot(configs)
    for fmt in ("text", "json", "sarif", "github", "concise"):
        assert run(*V5, "--format", fmt, ".", cwd=configs).returncode == 1
    diff = run(*V5, "--diff", ".", cwd=configs)
    assert diff.returncode == 1
    assert '-dtype:   "bfloat16"    # keep this comment\n+dtype:   "bf16"    # keep this comment\n' in diff.stdout
    assert "would fix 4 findings in 4 files" in diff.stderr
    assert snapshot(configs) == before


def test_fix_changes_the_values_only_and_is_idempotent(configs: Path) -> None:
    first = run(*V5, "--fix", ".", cwd=configs)
    assert "fixed 4 findings in 4 files" in first.stderr, first.stderr
    assert (configs / "torchtune.yaml").read_text() == TORCHTUNE.replace('"bfloat16"', '"bf16"')
    assert (configs / "lightning.yaml").read_text() == LIGHTNING.replace("precision: 16 ", "precision: 16-mixed ")
    assert (configs / "bom.yaml").read_bytes() == b"\xef\xbb\xbf" + LIGHTNING.replace("16 ", "16-mixed ").encode()
    assert (configs / "hf.yaml").read_bytes() == HF_APEX.replace("half_precision_backend: apex  # old\r\n", "").encode()
    assert (configs / "ds.json").read_text() == DS  # PC601's fix is unsafe
    after = snapshot(configs)
    second = run(*V5, "--fix", ".", cwd=configs)
    assert "fixed 0 findings in 0 files" in second.stderr
    assert snapshot(configs) == after  # nothing written the second time
    assert [p.name for p in configs.iterdir() if p.name.startswith(".")] == []  # no temporary files


def test_unsafe_fixes_need_the_flag_and_keep_json_indentation(configs: Path) -> None:
    result = run(*V5, "--fix", "--unsafe-fixes", "--select", "PC601", "ds.json", cwd=configs)
    assert result.returncode == 0, result.stdout + result.stderr  # fixed: nothing left
    assert (configs / "ds.json").read_text() == DS.replace('"enabled": true,', '"enabled": false,')


def finding_for(path: Path) -> Finding:
    edit = Edit(str(path), "precision", "16-mixed", 4)
    return Finding(Origin("file", str(path), 4, 3), "m", Fix("write 16-mixed", (edit,)), rule="PC704")


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_a_failed_write_leaves_the_original_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "lightning.yaml"
    target.write_text(LIGHTNING)
    fixes = plan_fixes([finding_for(target)])
    assert fixes.fixed == 1 and "16-mixed" in fixes.changes[0].after

    def boom(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(fix_write.os, failing, boom)
    (error,) = fix.apply(fixes)  # the file's own error; the run goes on
    assert isinstance(error, InputError) and str(error).endswith("lightning.yaml:4:3: cannot write the fix: disk full")
    assert target.read_text() == LIGHTNING
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lightning.yaml"]


def test_writes_keep_the_file_mode_and_follow_symlinks(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text(LIGHTNING)
    target.chmod(0o640)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    fix.apply(plan_fixes([finding_for(link)]))
    assert link.is_symlink() and "16-mixed" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o640


def test_values_are_quoted_as_yaml_needs() -> None:
    assert edited("a: 1\nb: 2\n", "yaml", Edit("c.yaml", "a", "x: [", 1)) == "a: 'x: ['\nb: 2\n"
    assert edited("a: 1\n", "yaml", Edit("c.yaml", "a", "true", 1)) == "a: 'true'\n"


def test_a_fix_that_would_break_the_file_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "lightning.yaml"
    target.write_text(LIGHTNING)

    class Breaking:  # an editor whose edit leaves the YAML unreadable
        format = "yaml"
        rewrites = True

        def plan(self, text: str, edit: Edit) -> list[Replacement]:
            return [Replacement(0, 0, "[\n")]

    monkeypatch.setitem(fix.EDITORS, "yaml", Breaking())
    fixes = plan_fixes([finding_for(target)])
    assert fixes.changes == []
    ((_, why),) = fixes.skipped
    assert why.startswith("the fixed file would not parse")


# ----------------------------------------------------------------------------- every rule's fix

FIXABLE = [c for c in _cases() if c.expect]


@pytest.mark.parametrize("case", FIXABLE, ids=lambda c: f"{c.code} {c.name}")
def test_the_real_editor_fixes_every_rule_case(case: Case) -> None:
    """Each rule case whose fix names edits in the file: the editor makes them and the rule goes quiet."""
    findings = run_case(case)
    edits = [edit for finding in findings if finding.fix for edit in finding.fix.edits]
    if not edits:
        pytest.skip("the fix is outside the file (environment, hardware) or a choice left to the user")
    if case.fmt in ("py", "ipynb"):
        pytest.skip("precheck does not rewrite Python scripts (test_python_source checks the refusal)")
    text = textwrap.dedent(case.text).lstrip("\n")
    if any(not edit.path.endswith(f"config.{case.fmt}") for edit in edits):
        pytest.skip("the fix edits another file of the run")
    fixed = apply_replacements(text, [r for edit in edits for r in plan(text, case.fmt, edit)])
    assert findings_for(replace(case, text=fixed, expect=set())) == set(), fixed


def test_tf32_on_a_gpu_without_it_is_a_safe_fix(tmp_path: Path) -> None:
    text = "model_name_or_path: m\noutput_dir: out\nbf16: false\ntf32: true   # faster matmuls\nseed: 1\n"
    (tmp_path / "train.yaml").write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    command = [sys.executable, "-m", "precheck", "--isolated", "--gpu", "V100", "--select", "PC103", "--fix", "."]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fixed 1 finding in 1 file" in result.stderr
    assert (tmp_path / "train.yaml").read_text() == text.replace("tf32: true", "tf32: false")


def test_the_edit_s_format_picks_the_editor_not_the_path(tmp_path: Path) -> None:
    """A TOML document under a name with no TOML suffix: the edit names its format."""
    target = tmp_path / "settings.cfg"
    target.write_text("# run\nmixed_precision = 'bf16'\n")
    edit = Edit(str(target), "mixed_precision", "no", 2, format="toml")
    finding = Finding(Origin("file", str(target), 2, 1), "m", Fix("no", (edit,)), rule="PC704")
    (change,) = plan_fixes([finding]).changes
    assert change.after == "# run\nmixed_precision = 'no'\n"
    # by its name alone it is read as YAML, where the line is no mapping: nothing is made
    guessed = replace(finding, fix=Fix("no", (replace(edit, format=None),)))
    assert fix.format_from_path(target) == "yaml"
    assert plan_fixes([guessed]).changes == []


def test_a_script_s_edit_is_refused_before_its_file_is_read(tmp_path: Path) -> None:
    for edit in (
        Edit(str(tmp_path / "gone.sh"), "--fp16", False, 3),
        Edit(str(tmp_path / "gone.cfg"), "x", 1, 1, format="shell"),
    ):
        finding = Finding(Origin("file", edit.path, 1, 1), "m", Fix("f", (edit,)), rule="PC704")
        ((_, why),) = plan_fixes([finding]).skipped
        assert why.startswith("precheck does not rewrite scripts"), why


def test_every_edit_carries_its_document_s_format() -> None:
    """The checks' own edits name the format their file was read in (no guess by path)."""
    from precheck import api
    from precheck.sources import load_runs

    root = Path(__file__).resolve().parents[1] / "examples"
    edits = [
        e
        for gpu in ("V100", "A100")
        for f in api.check(str(root), hardware=gpu, select=["ALL"], use_project=False).findings
        for e in (f.fix.edits if f.fix else ())
    ]
    assert len(edits) > 10
    assert {e.format for e in edits} >= {"yaml", "json"}
    for e in edits:
        assert e.format in {document.format for document in load_runs(e.path)}, e
