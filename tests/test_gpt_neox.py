"""gpt-neox (issue 28): NeoXArgs' config set, precision derivation and flash attention, on
gpt-neox's own configs (``tests/fixtures/gpt_neox``, from EleutherAI/gpt-neox@ea7aefd)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "gpt_neox"


def run(*args: str | Path, cwd: Path | None = None) -> tuple[int, list[dict[str, object]]]:
    done = subprocess.run(
        [sys.executable, "-m", "precheck", *map(str, args), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    report = json.loads(done.stdout)
    findings: list[dict[str, object]] = report["findings"]
    return done.returncode, findings


def codes(findings: list[dict[str, object]], severity: str = "error") -> list[str]:
    return sorted(str(f["rule"]) for f in findings if f["severity"] == severity)


@pytest.fixture
def neox(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "configs", tmp_path / "configs")
    return tmp_path


def test_precision_bfloat16_is_an_error_on_a_v100(neox: Path) -> None:
    _, findings = run(neox / "configs" / "bf16_125M.yml", "--gpu", "1xV100")
    assert codes(findings) == ["PC101"]


def test_fp16_section_is_fp16_mixed_precision_clean_on_a_v100(neox: Path) -> None:
    _, findings = run(neox / "configs" / "125M.yml", "--gpu", "1xV100")
    assert codes(findings) == []


def test_flash_in_attention_config_needs_sm80(neox: Path) -> None:
    _, findings = run(neox / "configs" / "pythia" / "160M.yml", "--gpu", "1xT4")
    assert codes(findings) == ["PC105"]


def test_own_configs_raise_no_error_on_h100(neox: Path) -> None:
    _, findings = run(neox / "configs", "--gpu", "8xH100")
    assert codes(findings) == []


def test_a_file_without_precision_is_one_of_a_set(neox: Path) -> None:
    """mistral/7B.yml sets flash but no precision: checked alone, another file may set it."""
    _, findings = run(neox / "configs" / "mistral-7B.yml", "--gpu", "8xH100")
    assert codes(findings) == []


def test_the_launch_reads_the_whole_set_in_order(neox: Path) -> None:
    """deepy.py with mistral + local_setup: no file sets a precision, so NeoXArgs trains in fp32,
    and flash-attn refuses fp32 inputs."""
    script = neox / "train.sh"
    script.write_text("#!/bin/bash\npython ./deepy.py train.py -d configs mistral-7B local_setup.yml\n")
    _, findings = run(script, "--gpu", "8xH100", cwd=neox)
    assert codes(findings) == ["PC106"]


def test_the_launch_takes_the_precision_from_another_file_of_the_set(neox: Path) -> None:
    (neox / "configs" / "bf16.yml").write_text('{"precision": "bfloat16"}\n')
    script = neox / "train.sh"
    script.write_text("#!/bin/bash\npython ./deepy.py train.py configs/mistral-7B.yml configs/bf16.yml\n")
    _, findings = run(script, "--gpu", "8xH100", cwd=neox)
    assert codes(findings) == []
    _, findings = run(script, "--gpu", "1xV100", cwd=neox)
    assert codes(findings) == ["PC101", "PC105"]


def test_bf16_section_without_precision_is_version_gated(neox: Path) -> None:
    """rwkv/170M.yml: a bf16 section, no precision (PC725). Before #1311 the model is built in
    fp32 (an error once the launch reads the whole set and the version is known before the fix);
    the version not known, or the file checked alone, a warning; a later checkout, nothing."""
    config = neox / "configs" / "rwkv" / "170M.yml"
    _, findings = run(config, "--gpu", "8xH100")
    assert codes(findings) == [] and codes(findings, "warning") == ["PC725"]
    _, findings = run(config, "--gpu", "8xH100", "--assume-version", "gpt-neox==2.0")
    assert codes(findings) == [] and codes(findings, "warning") == ["PC725"]
    script = neox / "train.sh"
    script.write_text("#!/bin/bash\npython ./deepy.py train.py -d configs rwkv/170M.yml local_setup.yml\n")
    _, findings = run(script, "--gpu", "8xH100", "--assume-version", "gpt-neox==2.0", cwd=neox)
    assert codes(findings) == ["PC725"]
    _, findings = run(script, "--gpu", "8xH100", "--assume-version", "gpt-neox==2.1", cwd=neox)
    assert "PC725" not in codes(findings) + codes(findings, "warning")
    (neox / "configs" / "bf16.yml").write_text('{"precision": "bfloat16"}\n')
    script.write_text("#!/bin/bash\npython ./deepy.py train.py -d configs rwkv/170M.yml bf16.yml\n")
    _, findings = run(script, "--gpu", "8xH100", "--assume-version", "gpt-neox==2.0", cwd=neox)
    assert "PC725" not in codes(findings) + codes(findings, "warning")


def test_fp16_type_bfloat16_is_read_by_version(tmp_path: Path) -> None:
    """v1.0's bf16_125M.yml asks bf16 as DeeperSpeed read it (fp16.type): fine on 1.0, an error on
    2.x (a crash at v2.0, fp16 training later; PC726), the version not known taken as the newest."""
    config = tmp_path / "bf16_125M.yml"
    shutil.copy(FIXTURES / "v1.0" / "bf16_125M.yml", config)
    _, findings = run(config, "--gpu", "8xA100-80GB")
    assert codes(findings) == ["PC726"]
    _, findings = run(config, "--gpu", "8xA100-80GB", "--assume-version", "gpt-neox==1.0")
    assert codes(findings) == []


@pytest.mark.parametrize(
    ("name", "v100"),
    [("stablelm-2-1_6b.yml", ["PC101", "PC105"]), ("pythia-70m.yml", ["PC105"])],
)
def test_gpt_neox_users_configs(name: str, v100: list[str]) -> None:
    """Repositories that train with gpt-neox (StableLM, Pythia): their bf16 and flash attention
    are reported on a V100, and nothing is an error on 8 A100s."""
    config = FIXTURES / "users" / name
    _, findings = run(config, "--gpu", "V100")
    assert codes(findings) == v100
    _, findings = run(config, "--gpu", "8xA100-80GB")
    assert codes(findings) == []


def test_a_fork_launch_names_yaml_files(tmp_path: Path) -> None:
    """Forks whose parser takes ``.yaml`` names (``deepy.py train.py -d configs 125M.yaml
    local_setup.yaml``): a named ``.yaml`` that exists, with no ``.yaml.yml`` beside it, is read."""
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(FIXTURES / "users" / "stablelm-2-1_6b.yml", configs / "model.yaml")
    shutil.copy(FIXTURES / "configs" / "local_setup.yml", configs / "local_setup.yaml")
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\npython ./deepy.py train.py -d configs model.yaml local_setup.yaml\n")
    _, findings = run(script, "--gpu", "V100", cwd=tmp_path)
    assert codes(findings) == ["PC101", "PC105"]
    assert not [f for f in findings if f["rule"] == "PC904"]


def test_a_precision_neoxargs_refuses(tmp_path: Path) -> None:
    """StableLM's config with `precision: bf16` instead of `bfloat16`: NeoXArgs.validate_types
    refuses it (PC727); as written it is not reported."""
    text = (FIXTURES / "users" / "stablelm-2-1_6b.yml").read_text(encoding="utf-8")
    assert '"precision": "bfloat16"' in text
    config = tmp_path / "stablelm.yml"
    config.write_text(text.replace('"precision": "bfloat16"', '"precision": "bf16"'), encoding="utf-8")
    _, findings = run(config, "--gpu", "8xA100-80GB")
    assert codes(findings) == ["PC727"]
    _, findings = run(FIXTURES / "users" / "stablelm-2-1_6b.yml", "--gpu", "8xA100-80GB")
    assert "PC727" not in codes(findings)
