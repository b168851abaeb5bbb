"""Every output format, through the real entry point, against golden files.

The golden files live in tests/fixtures/golden/expected/ and are compared byte for byte.
After an intended change of the output, regenerate them and review the diff:

    PRECHECK_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_output_formats.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from precheck.report.github import command, escape_data, escape_property

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
SCHEMA = ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json"
FORMATS = {
    "text": "txt",
    "concise": "txt",
    "json": "json",
    "sarif": "sarif",
    "github": "txt",
    "gitlab": "json",
    "junit": "xml",
}
REGENERATE = bool(os.environ.get("PRECHECK_REGENERATE_GOLDEN"))


def run(*args: str, cwd: Path = GOLDEN, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CUDA_", "NO_COLOR", "FORCE_COLOR", "ACCELERATE_"))
    }
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=120,
    )


def golden_run(fmt: str) -> subprocess.CompletedProcess[str]:
    # the project's .precheck.toml names the GPU and the versions; the stand-in interpreter
    # has nothing installed, so the output does not depend on this machine's packages
    return run("project", "--format", fmt, "--python", str(GOLDEN / "no-packages-python"))


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_golden_output(fmt: str) -> None:
    result = golden_run(fmt)
    assert result.returncode == 2, result.stderr  # broken.yaml cannot be parsed
    expected = GOLDEN / "expected" / f"{fmt}.{FORMATS[fmt]}"
    if REGENERATE:
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_bytes(result.stdout.encode("utf-8"))
    assert expected.is_file(), f"no golden file {expected}: run with PRECHECK_REGENERATE_GOLDEN=1"
    assert result.stdout.encode("utf-8") == expected.read_bytes()


#: output features beyond the format, each with its golden file (name: extra arguments)
VARIANTS = {
    "text-quiet.txt": ["--quiet"],
    "text-statistics.txt": ["--statistics"],
    "json-statistics.json": ["--format", "json", "--statistics"],
    "text-color.txt": ["--color", "always"],
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_golden_output_features(name: str) -> None:
    python = str(GOLDEN / "no-packages-python")
    result = run("project", *VARIANTS[name], "--python", python, env={"FORCE_COLOR": "", "NO_COLOR": ""})
    assert result.returncode == 2, result.stderr
    expected = GOLDEN / "expected" / name
    if REGENERATE:
        expected.write_bytes(result.stdout.encode("utf-8"))
    assert expected.is_file(), f"no golden file {expected}: run with PRECHECK_REGENERATE_GOLDEN=1"
    assert result.stdout.encode("utf-8") == expected.read_bytes()


#: ``precheck explain`` piped: the plain rendering (name: arguments, environment)
EXPLAIN = {
    "explain.txt": (["explain", "project"], {}),
    "explain-override.txt": (["explain", "explain"], {"ACCELERATE_MIXED_PRECISION": "fp16"}),
}


@pytest.mark.parametrize("name", list(EXPLAIN))
def test_golden_explain(name: str) -> None:
    args, env = EXPLAIN[name]
    result = run(*args, "--python", str(GOLDEN / "no-packages-python"), env=env)
    expected = GOLDEN / "expected" / name
    if REGENERATE:
        expected.write_bytes(result.stdout.encode("utf-8"))
    assert expected.is_file(), f"no golden file {expected}: run with PRECHECK_REGENERATE_GOLDEN=1"
    assert result.stdout.encode("utf-8") == expected.read_bytes()


def test_explain_lists_the_environment_setting_the_flags_overrode() -> None:
    """``ACCELERATE_MIXED_PRECISION=fp16`` in the environment of a run whose TrainingArguments
    say ``bf16: true`` and name a DeepSpeed file: the flag wins, and explain says so."""
    python = str(GOLDEN / "no-packages-python")
    env = {"ACCELERATE_MIXED_PRECISION": "fp16"}
    text = run("explain", "explain", "--python", python, env=env).stdout
    overridden = text.split("  overridden\n", 1)[1].splitlines()[0]
    assert overridden.startswith(
        "    env:ACCELERATE_MIXED_PRECISION = fp16, overridden by bfloat16 (explain/train.yaml:6:1"
    )
    document = json.loads(run("explain", "explain", "--format", "json", "--python", python, env=env).stdout)
    (entry,) = [o for o in document["runs"][0]["overridden"] if o["origin"]["kind"] == "env"]
    assert entry["value"] == "fp16" and entry["origin"]["key"] == "ACCELERATE_MIXED_PRECISION"
    quiet = run("explain", "explain", "--python", python).stdout  # no variable: nothing overridden
    assert "  overridden" not in quiet
    assert "  memory per device (NVIDIA A100-SXM4-80GB)\n    [" in quiet and "of 80.0 GiB" in quiet


def test_golden_stdin_reads_as_the_named_file() -> None:
    """``--stdin-filename NAME -``: the same findings, at the same places, as the file itself."""
    python = str(GOLDEN / "no-packages-python")
    text = (GOLDEN / "project" / "swift.yaml").read_text(encoding="utf-8")
    piped = subprocess.run(
        [sys.executable, "-m", "precheck", "--stdin-filename", "project/swift.yaml", "-", "--python", python],
        input=text,
        capture_output=True,
        text=True,
        cwd=GOLDEN,
        timeout=120,
    )
    direct = run("project/swift.yaml", "--python", python)
    assert piped.returncode == direct.returncode == 1, piped.stderr
    assert piped.stdout == direct.stdout
    assert "project/swift.yaml:5:1: PC201 error" in piped.stdout


def test_the_golden_run_covers_every_severity_and_an_input_error() -> None:
    document = json.loads(golden_run("json").stdout)
    assert {f["severity"] for f in document["findings"]} == {"error", "warning", "info"}
    assert [e["path"] for e in document["errors"]] == ["project/broken.yaml"]
    assert document["hardware"]["source"] == "profile"  # from the project's gpus, no --gpu


def test_concise_is_one_line_per_finding() -> None:
    lines = golden_run("concise").stdout.splitlines()
    document = json.loads(golden_run("json").stdout)
    assert len(lines) == len(document["findings"]) + len(document["errors"])
    first = document["findings"][0]
    assert f"{first['path']}:{first['line']}:{first['column']}: {first['rule']} {first['severity']} " in lines[1]


def test_sarif_is_valid_against_the_official_schema() -> None:
    """The vendored schema is OASIS's sarif-schema-2.1.0.json (errata01), unchanged."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    log = json.loads(golden_run("sarif").stdout)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    run_ = log["runs"][0]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run_["results"]} == set(rules)
    for rule in rules.values():
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert "## Why is this bad?" in rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert not run_["invocations"][0]["executionSuccessful"]  # broken.yaml
    fixed = [r for r in run_["results"] if "fixes" in r]
    assert fixed, "results whose fix precheck can make carry it"
    change = fixed[0]["fixes"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"].startswith("project/")
    assert change["replacements"][0]["deletedRegion"]["startLine"] >= 1


def test_a_whole_folder_of_examples_gives_valid_sarif() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    result = run("--gpu", "V100", "--format", "sarif", "examples/configs", cwd=ROOT)
    assert result.returncode in (0, 1), result.stderr
    jsonschema.validate(json.loads(result.stdout), schema, cls=jsonschema.Draft4Validator)


def test_github_escaping_follows_the_actions_toolkit() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = command(
        "error", "bad: x, y\nhelp: z", file="dir/a,b.yaml", line=3, col=1, title="PC101 bf16-unsupported-gpu"
    )
    assert line == ("::error file=dir/a%2Cb.yaml,line=3,col=1,title=PC101 bf16-unsupported-gpu::bad: x, y%0Ahelp: z")


def test_github_annotations_use_the_finding_levels() -> None:
    lines = golden_run("github").stdout.splitlines()
    assert any(line.startswith("::error file=project/hf.yaml,line=5,col=1,title=PC101 ") for line in lines)
    assert any(line.startswith("::warning file=project/hf.yaml,") for line in lines)
    assert any(line.startswith("::notice file=project/lightning.yaml,") for line in lines)
    assert any(line.startswith("::error file=project/broken.yaml,line=3,") for line in lines)


def test_text_is_plain_when_piped_or_no_color_and_rich_on_a_terminal() -> None:
    piped = golden_run("text").stdout
    assert "\x1b[" not in piped
    if sys.platform == "win32":  # pragma: no cover
        pytest.skip("no pseudo-terminal")
    import pty

    def on_terminal(env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        full_env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        full_env.update({"TERM": "xterm-256color", "COLUMNS": "200", **env})
        python = str(GOLDEN / "no-packages-python")
        process = subprocess.Popen(
            [sys.executable, "-m", "precheck", "project", "--python", python],
            stdout=follower,
            stderr=subprocess.DEVNULL,
            cwd=GOLDEN,
            env=full_env,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
        os.close(leader)
        return b"".join(chunks).decode("utf-8", errors="replace")

    assert "\x1b[" in on_terminal({})
    assert "\x1b[" not in on_terminal({"NO_COLOR": "1"})
