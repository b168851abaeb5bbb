"""Issue 12's yardstick: a TRL SFT config with no precision key, on a V100."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import write

ROOT = Path(__file__).resolve().parents[1]
SFT = """
model_name_or_path: Qwen/Qwen2.5-0.5B
dataset_name: trl-lib/Capybara
packing: true
output_dir: out
per_device_train_batch_size: 2
learning_rate: 2.0e-5
"""


#: the transformers of TRL 0.18/0.19's time: its from_pretrained loads float32 when no dtype
#: is named, so the only bf16 is TRL's own default (transformers 5 would load Qwen in bf16)
ERA = ("--assume-version", "transformers==4.52.4")


def check(folder: Path, *args: str, pythonpath: str | None = None) -> tuple[int, list[str], dict[str, object]]:
    env = {"PATH": "/usr/bin:/bin"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [sys.executable, "-m", "precheck", "--gpu", "V100", "--format", "json", *ERA, *args, str(folder / "sft.yaml")],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=60,
    )
    document = json.loads(done.stdout)
    return done.returncode, [f["rule"] for f in document["findings"]], document["versions"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    write(tmp_path, "sft.yaml", SFT)
    return tmp_path


def test_no_version_known_is_an_error_about_bf16(repo: Path) -> None:
    code, rules, versions = check(repo)
    assert (code, rules) == (1, ["PC101"]) and "trl" not in versions


def test_trl_0_19_assumed_is_an_error(repo: Path) -> None:
    assert check(repo, "--assume-version", "trl==0.19.0")[:2] == (1, ["PC101"])


def test_trl_0_18_2_assumed_is_clean(repo: Path) -> None:
    code, rules, versions = check(repo, "--assume-version", "trl==0.18.2")
    assert (code, rules) == (0, []) and versions["trl"] == {"version": "0.18.2", "source": "flag"}


def test_pinned_beside_the_config_is_clean_and_a_flag_beats_the_pin(repo: Path) -> None:
    write(repo, "requirements.txt", "transformers>=4.50\ntrl==0.18.2\n")
    code, rules, versions = check(repo)
    assert (code, rules) == (0, []) and versions["trl"] == {"version": "0.18.2", "source": "requirements.txt:2"}
    assert check(repo, "--assume-version", "trl==0.19.0")[:2] == (1, ["PC101"])


def test_installed_distribution_is_clean(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    site = tmp_path_factory.mktemp("site")
    write(site, "trl-0.18.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: trl\nVersion: 0.18.2\n")
    src = str(ROOT / "src")
    code, rules, versions = check(repo, pythonpath=f"{site}:{src}")
    assert (code, rules) == (0, []) and versions["trl"]["source"] == "installed"  # type: ignore[index]


def test_project_config_versions(repo: Path) -> None:
    write(repo, "pyproject.toml", '[project]\nname = "x"\n\n[tool.precheck]\nversions = { trl = "0.18.2" }\n')
    code, rules, versions = check(repo)
    assert (code, rules) == (0, []) and versions["trl"] == {"version": "0.18.2", "source": "project config"}


def test_python_flag_reads_another_environment(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    # a real virtual environment: --python runs it isolated (-I), so PYTHONPATH tricks do not count
    env = tmp_path_factory.mktemp("other-env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    other = env / "bin" / "python"
    site = subprocess.run(
        [str(other), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    write(Path(site), "trl-0.18.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: trl\nVersion: 0.18.2\n")
    code, rules, versions = check(repo, "--python", str(other))
    assert (code, rules) == (0, []) and versions["trl"] == {"version": "0.18.2", "source": "installed"}
    bad = subprocess.run(
        [sys.executable, "-m", "precheck", "--gpu", "V100", "--python", "/nonexistent/python", str(repo / "sft.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--python" in bad.stderr


def test_transformers_5_loads_the_checkpoint_dtype_whatever_trl_says(repo: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "precheck",
            "--gpu",
            "V100",
            "--format",
            "json",
            "--assume-version",
            "trl==0.18.2",
            "--assume-version",
            "transformers==5.0.0",
            str(repo / "sft.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and [f["rule"] for f in json.loads(done.stdout)["findings"]] == ["PC101"]
