"""``[tool.precheck]`` / ``.precheck.toml``: found upward from the files, beaten by flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from precheck.errors import InputError
from precheck.project import _MAX_PARENTS, ProjectConfig, clear_caches, for_folder, load

HF_BF16 = """\
model_name_or_path: m
output_dir: out
learning_rate: 1.0e-5
bf16: true
gradient_checkpointing: yes
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def findings(result: subprocess.CompletedProcess[str]) -> list[tuple[str, str, int, str]]:
    document = json.loads(result.stdout)
    return [(f["rule"], f["path"], f["line"], f["severity"]) for f in document["findings"]]


def project(tmp_path: Path, config: str, name: str = ".precheck.toml", files: dict[str, str] | None = None) -> Path:
    (tmp_path / ".git").mkdir()  # the search for a project configuration stops at the repository root
    (tmp_path / name).write_text(textwrap.dedent(config), encoding="utf-8")
    for path, text in (files or {"configs/train.yaml": HF_BF16}).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_project_gpus_are_the_target_hardware(tmp_path: Path) -> None:
    folder = project(tmp_path, 'gpus = ["8xV100"]\n')
    result = run("configs", "--format", "json", cwd=folder)
    document = json.loads(result.stdout)
    assert [d["name"] for d in document["hardware"]["devices"]] == ["Tesla V100-SXM2-32GB"] * 8
    assert ("PC101", "configs/train.yaml", 4, "error") in findings(result)
    assert result.returncode == 1
    text = run("configs", cwd=folder).stdout
    assert "hardware: 8x Tesla V100-SXM2-32GB, from .precheck.toml gpus" in text


def test_explain_uses_the_project_gpus_too(tmp_path: Path) -> None:
    folder = project(tmp_path, 'gpus = ["V100"]\n')
    result = run("explain", "configs/train.yaml", "--format", "json", cwd=folder)
    assert json.loads(result.stdout)["hardware"]["devices"][0]["name"] == "Tesla V100-SXM2-32GB"


def test_a_gpu_flag_beats_the_project_gpus(tmp_path: Path) -> None:
    folder = project(tmp_path, 'gpus = ["V100"]\n')
    result = run("configs", "--gpu", "A100", "--format", "json", cwd=folder)
    assert "PC101" not in {f[0] for f in findings(result)}


def test_pyproject_tool_table_and_upward_search(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        """\
        [project]
        name = "runs"

        [tool.precheck]
        gpus = ["V100"]
        ignore = ["PC902"]
        """,
        name="pyproject.toml",
        files={"deep/er/train.yaml": HF_BF16},
    )
    result = run("train.yaml", "--format", "json", cwd=folder / "deep" / "er")
    assert {f[0] for f in findings(result)} == {"PC101"}


def test_select_extend_select_ignore_and_flags_over_config(tmp_path: Path) -> None:
    folder = project(tmp_path, 'gpus = ["V100"]\nselect = ["PC9"]\n')
    assert {f[0] for f in findings(run("configs", "--format", "json", cwd=folder))} == {"PC902"}
    # --extend-select adds to the project's selection; --ignore takes from it
    extended = run("configs", "--format", "json", "--extend-select", "PC101", cwd=folder)
    assert {f[0] for f in findings(extended)} == {"PC902", "PC101"}
    ignored = run("configs", "--format", "json", "--extend-select", "PC101", "--ignore", "yaml11-boolean", cwd=folder)
    assert {f[0] for f in findings(ignored)} == {"PC101"}
    # --select replaces the project's selection
    assert {f[0] for f in findings(run("configs", "--format", "json", "--select", "PC1", cwd=folder))} == {"PC101"}
    # --isolated reads no project configuration: no GPU, so no PC101
    isolated = run("configs", "--format", "json", "--isolated", cwd=folder)
    assert {f[0] for f in findings(isolated)} == {"PC902"}


def test_severity_overrides_and_fail_on(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        """\
        gpus = ["V100"]
        fail-on = "warning"
        [severity]
        bf16-unsupported-gpu = "warning"
        PC902 = "info"
        """,
    )
    result = run("configs", "--format", "json", cwd=folder)
    assert sorted(findings(result)) == [
        ("PC101", "configs/train.yaml", 4, "warning"),
        ("PC902", "configs/train.yaml", 5, "info"),
    ]
    assert result.returncode == 1  # fail-on = "warning"
    assert run("configs", "--fail-on", "error", cwd=folder).returncode == 0  # the flag beats the config


def test_per_file_ignores_silence_json_files(tmp_path: Path) -> None:
    ds = '{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}, "fp16": {"enabled": true}}\n'
    folder = project(
        tmp_path,
        """\
        gpus = ["A100"]
        [per-file-ignores]
        "legacy/*.json" = ["PC601"]
        """,
        files={"legacy/ds.json": ds, "new/ds.json": ds},
    )
    result = run(".", "--format", "json", "--select", "PC601", cwd=folder)
    assert [(f[0], f[1]) for f in findings(result)] == [("PC601", "new/ds.json")]


def test_exclude_applies_to_folder_searches_and_named_files(tmp_path: Path) -> None:
    folder = project(
        tmp_path,
        'gpus = ["V100"]\nexclude = ["vendored/", "*.tmp.yaml"]\n',
        files={"a/train.yaml": HF_BF16, "vendored/x/train.yaml": HF_BF16, "a/scratch.tmp.yaml": HF_BF16},
    )
    result = run(".", "--format", "json", cwd=folder)
    assert {f[1] for f in findings(result)} == {"a/train.yaml"}
    # pre-commit passes file names: an excluded file stays excluded
    named = run("vendored/x/train.yaml", "a/scratch.tmp.yaml", "--format", "json", cwd=folder)
    assert json.loads(named.stdout)["findings"] == [] and named.returncode == 0


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ('gpus = ["V100"]\nselect = ["PC999"]\n', ":2:1: `select`: unknown rule selector 'PC999'"),
        ('gpus = ["Voodoo 5"]\n', ":1:1: `gpus`: unknown GPU 'Voodoo 5'"),
        ('fail-on = "fatal"\n', ":1:1: `fail-on`: expected one of error, warning, info"),
        ('[severity]\nPC101 = "loud"\n', ":2:1: `severity.PC101`: expected one of error, warning, info"),
        ('[per-file-ignores]\n"a/*.json" = "PC101"\n', ":2:1: `per-file-ignores.a/*.json` must be a list"),
        ('selcet = ["PC1"]\n', ":1:1: unknown key `selcet`"),
        ("exclude = 3\n", ":1:1: `exclude` must be a list of globs"),
    ],
)
def test_invalid_configuration_exits_2_with_file_line_and_key(tmp_path: Path, config: str, where: str) -> None:
    """An error about that file, not the run's end (issue 30): the configs are still checked."""
    folder = project(tmp_path, config)
    result = run("configs", "--gpu", "V100", "--format", "concise", cwd=folder)
    assert result.returncode == 2
    # relative to the current folder, as findings are (issue 20)
    assert f".precheck.toml{where}" in result.stdout, result.stdout
    assert "configs/train.yaml:" in result.stdout and "PC101" in result.stdout
    assert "Traceback" not in result.stderr


def test_invalid_pyproject_table_names_its_line(tmp_path: Path) -> None:
    config = '[project]\nname = "x"\n\n[tool.precheck]\nignore = ["nope-rule"]\n'
    folder = project(tmp_path, config, name="pyproject.toml")
    result = run("configs", cwd=folder)
    assert result.returncode == 2
    assert "pyproject.toml:5:1: `ignore`: unknown rule selector 'nope-rule'" in result.stdout


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ('[tool.precheck]\ngpus = ["V100"\n', ":2:15: invalid TOML: Unclosed array at the end of the file"),
        ('[project]\nname = \n[tool.precheck]\ngpus = ["V100"]\n', ":2:8: invalid TOML: Invalid value"),
    ],
)
def test_a_broken_pyproject_with_precheck_table_is_an_error(tmp_path: Path, config: str, where: str) -> None:
    """The settings CI relies on (gpus, fail-on) must not be dropped without a word."""
    folder = project(tmp_path, config, name="pyproject.toml")
    result = run("configs", cwd=folder)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"pyproject.toml{where}" in result.stdout, result.stdout


def test_a_broken_pyproject_without_precheck_table_is_not_precheck_business(tmp_path: Path) -> None:
    folder = project(tmp_path, "[project]\nname = \n", name="pyproject.toml")
    assert run("--gpu", "A100", "configs", cwd=folder).returncode in (0, 1)


def test_load_reads_every_key(tmp_path: Path) -> None:
    path = tmp_path / ".precheck.toml"
    path.write_text(
        textwrap.dedent(
            """\
            select = ["PC1", "PC2"]
            extend-select = ["PC907"]
            ignore = ["PC102"]
            exclude = ["build/"]
            fail-on = "info"
            gpus = ["8xA100-80GB"]
            versions = { trl = "0.19.0" }
            [per-file-ignores]
            "**/ds_*.json" = ["PC6"]
            [severity]
            PC2 = "warning"
            """
        )
    )
    config = load(path)
    assert config.select == ("PC1", "PC2") and config.extend_select == ("PC907",) and config.ignore == ("PC102",)
    assert config.fail_on == "info" and config.gpus == ("8xA100-80GB",) and config.versions == {"trl": "0.19.0"}
    assert config.severity["PC201"] == "warning"
    assert config.excludes(tmp_path / "build" / "x.yaml") and not config.excludes(tmp_path / "x.yaml")
    assert "PC601" in config.ignored_codes(tmp_path / "a" / "ds_z3.json")
    assert config.ignored_codes(tmp_path / "a" / "other.json") == frozenset()
    assert ProjectConfig().ignored_codes(tmp_path / "x.json") == frozenset()
    with pytest.raises(InputError):
        path.write_text('severity = "error"\n')
        load(path)


def _walk(folder: Path) -> ProjectConfig:
    """The upward search as written before folders' answers were shared (the reference)."""
    current = folder
    for _ in range(_MAX_PARENTS):
        for name in (".precheck.toml", "pyproject.toml"):
            candidate = current / name
            if candidate.is_file():
                config = load(candidate)
                if config.path is not None:
                    return config
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    return ProjectConfig()


def test_folders_share_their_parents_answers_and_each_keeps_its_own_reach(tmp_path: Path) -> None:
    """``for_folder`` caches each folder's own answer; a walk still stops after
    ``_MAX_PARENTS`` folders counted from where it started, at a repository root, and at
    the closest configuration, in whatever order the folders are asked."""
    (tmp_path / "top").mkdir()
    (tmp_path / "top" / ".precheck.toml").write_text('ignore = ["PC902"]\n', encoding="utf-8")
    deep = tmp_path / "top"
    chain = []
    for depth in range(_MAX_PARENTS + 2):
        deep = deep / f"d{depth}"
        chain.append(deep)
    deep.mkdir(parents=True)
    (tmp_path / "top" / "d0" / "d1" / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    (tmp_path / "nested" / "inner").mkdir(parents=True)
    (tmp_path / "nested" / "pyproject.toml").write_text("[tool.precheck]\nfail-on = 'info'\n", encoding="utf-8")
    (tmp_path / "nested" / "inner" / ".precheck.toml").write_text("fail-on = 'warning'\n", encoding="utf-8")
    folders = [*chain, tmp_path / "repo" / "a" / "b", tmp_path / "repo", tmp_path / "nested" / "inner", tmp_path]
    for order in (folders, folders[::-1]):
        clear_caches()
        for folder in order:
            assert for_folder(folder) == _walk(folder), folder
    clear_caches()
    assert for_folder(chain[-1]) == ProjectConfig()  # the configuration is 14 folders up: out of reach
    assert for_folder(chain[3]).ignore == ("PC902",)
    assert for_folder(tmp_path / "nested" / "inner").fail_on == "warning"
