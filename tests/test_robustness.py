"""Odd inputs found in review: each gets a clear outcome and never stops the other files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import write
from precheck import engine
from precheck.hardware import from_specs
from precheck.rules import select_rules
from precheck.rules.base import Edit
from precheck.sources import parse

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "examples/configs/ms-swift-v100/fp16-false-ignored.yaml").read_text()
V100 = from_specs(["V100"], {})


def codes(report: engine.Report) -> set[str]:
    return {f.rule for f in report.findings}


def test_deep_yaml_is_an_input_error_and_other_files_are_still_checked(tmp_path: Path) -> None:
    write(tmp_path, "deep.yaml", "fp16: true\na: " + "[" * 600 + "]" * 600 + "\n")
    write(tmp_path, "zz.yaml", SEED)
    report = engine.check([str(tmp_path)], V100, env={})
    assert [e.message for e in report.errors] == ["nesting deeper than 200 levels"]
    assert "PC201" in codes(report) and report.exit_code() == 2


def test_an_internal_error_in_one_file_keeps_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.yaml", SEED)
    write(tmp_path, "b.yaml", SEED.replace("train_type: lora", "train_type: full"))
    real = engine.resolve.resolve

    def flaky(config, hardware, versions):  # type: ignore[no-untyped-def]
        if config.path.endswith("a.yaml"):
            raise RuntimeError("boom")
        return real(config, hardware, versions)

    monkeypatch.setattr(engine.resolve, "resolve", flaky)
    report = engine.check([str(tmp_path)], V100, env={})
    assert [e.path for e in report.internal_errors] == [str(tmp_path / "a.yaml")]
    assert "PC201" in codes(report) and report.exit_code() == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_unreadable_folder_is_reported(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    write(locked, "x.yaml", SEED)
    locked.chmod(0)
    try:
        report = engine.check([str(tmp_path)], V100, env={})
    finally:
        locked.chmod(0o755)
    assert [e.message for e in report.errors] == ["this folder cannot be read"]


def test_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    report = engine.check([str(tmp_path / "pipe.yaml")], V100, env={})
    assert "not a regular file" in report.errors[0].message


def test_unparsable_non_configs_in_a_folder_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "chart/templates/deploy.yaml", "metadata:\n  name: {{ .Release.Name }\n  x: [\n")
    write(tmp_path, "tsconfig.json", '{ // comment\n "compilerOptions": {} }\n')
    write(tmp_path, "broken-train.yaml", "fp16: true\nbf16: [\n")
    report = engine.check([str(tmp_path)], V100, env={})
    assert [Path(e.path).name for e in report.errors] == ["broken-train.yaml"]
    assert sum(1 for f in report.files if f.skipped) == 2


def test_ms_swift_env_block_steers_the_devices(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s.yaml",
        "ENV:\n  CUDA_DEVICE_ORDER: PCI_BUS_ID\n  CUDA_VISIBLE_DEVICES: '5'\nmodel: m\ntrain_type: lora\n",
    )
    report = engine.check([str(tmp_path / "s.yaml")], from_specs(["TITAN RTX", "GTX 1080 Ti"], {}), env={})
    assert {(f.rule, f.origin.line) for f in report.findings} == {("PC502", 3)}


def test_select_takes_commas() -> None:
    assert [r.code for r in select_rules(["PC101,PC102"], ["PC102"])] == ["PC101"]


def test_toml_positions_skip_multiline_strings() -> None:
    text = 'validation_prompt = """\nmixed_precision = "no"\n"""\nmixed_precision = "bf16"\n'
    node = parse("c.toml", text, "toml").mapping()["mixed_precision"]
    assert node.key_line == 4


def test_fix_text_in_the_file_s_own_syntax() -> None:
    assert Edit("c.toml", "mixed_precision", "fp16").assignment() == 'mixed_precision = "fp16"'
    assert Edit("c.json", "--mixed_precision", "fp16").assignment() == '"--mixed_precision": "fp16"'
    assert Edit("c.yaml", "environment.mixed_precision", False).assignment() == "environment.mixed_precision: false"


def test_torch_dtype_auto_loads_the_checkpoint_dtype(tmp_path: Path) -> None:
    write(
        tmp_path,
        "t.yaml",
        "model_name_or_path: meta-llama/Llama-2-7b-hf\ntorch_dtype: auto\n"
        "output_dir: o\nlearning_rate: 1.0e-5\nfp16: true\n",
    )
    report = engine.check([str(tmp_path / "t.yaml")], V100, env={})
    assert "PC401" in codes(report)
    assert report.files[0].plan is not None and report.files[0].plan.load_dtype.value == "float16"
