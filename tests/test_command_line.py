"""``precheck -- CMD ARGS...`` and ``precheck run -- CMD ARGS...``, run as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from precheck import api

ROOT = Path(__file__).resolve().parents[1]

#: the mission's ms-swift command line (modelscope/ms-swift#3896), on a V100
SWIFT = ["swift", "sft", "--model", "Qwen/Qwen2.5-7B-Instruct", "--train_type", "lora"]
BROKEN = [*SWIFT, "--torch_dtype", "float16", "--fp16", "false"]
FIXED = [*SWIFT, "--torch_dtype", "float32", "--fp16", "true"]


def precheck(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_", "ACCELERATE_"))}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=60
    )


def fake_swift(tmp_path: Path) -> dict[str, str]:
    """A `swift` on PATH that leaves a marker file: proof that it ran."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "swift"
    program.write_text(f'#!/bin/sh\ntouch "{tmp_path / "ran"}"\necho "swift ran: $*"\n')
    program.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_check_a_command_line_reports_at_the_flag() -> None:
    result = precheck("--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--format", "json", "--", *BROKEN)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["files"] == [{"path": "<command line>", "dialect": "ms-swift"}]
    pc201 = [f for f in document["findings"] if f["rule"] == "PC201"]
    # `swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --torch_dtype float16 --fp16 false`
    assert [(f["path"], f["line"], f["column"], f["key"]) for f in pc201] == [
        ("<command line>", 1, 62, "--torch_dtype")
    ]


def test_text_output_shows_the_line_the_columns_count_in() -> None:
    result = precheck("--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--", *BROKEN)
    first, second = result.stdout.splitlines()[:2]
    assert first == "<command line>: " + " ".join(BROKEN)
    assert second.startswith("<command line>:1:62: PC201 error")


def test_check_options_before_the_separator_apply() -> None:
    fixed = precheck("--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--", *FIXED)
    assert fixed.returncode == 0, fixed.stdout
    assert "PC202 warning" in fixed.stdout
    strict = precheck("--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--fail-on", "warning", "--", *FIXED)
    assert strict.returncode == 1


def test_a_command_that_is_not_a_training_launch_passes() -> None:
    result = precheck("--gpu", "V100", "--format", "json", "--", "echo", "hello")
    assert result.returncode == 0
    assert json.loads(result.stdout)["findings"] == []


def test_run_passes_the_exit_code_through() -> None:
    result = precheck("run", "--gpu", "V100", "--", "sh", "-c", "exit 3")
    assert result.returncode == 3


def test_run_becomes_the_command_so_signals_are_its_own() -> None:
    # exec: the shell is the very process precheck was started as (same pid), and a signal
    # that kills it is the exit status the caller sees
    process = subprocess.Popen(
        [sys.executable, "-m", "precheck", "run", "--gpu", "V100", "--", "sh", "-c", "echo $$; kill -TERM $$"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, _ = process.communicate(timeout=60)
    assert out.strip() == str(process.pid)
    assert process.returncode == -signal.SIGTERM


def test_run_refuses_a_bad_command_and_does_not_start_it(tmp_path: Path) -> None:
    env = fake_swift(tmp_path)
    result = precheck("run", "--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--", *BROKEN, env=env)
    assert result.returncode == 1
    assert not (tmp_path / "ran").exists()
    assert result.stdout == ""  # the report goes to stderr: stdout is the command's
    assert "PC201 error" in result.stderr
    assert "precheck: not running `swift sft" in result.stderr


def test_run_starts_a_command_that_passes(tmp_path: Path) -> None:
    env = fake_swift(tmp_path)
    result = precheck("run", "--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--", *FIXED, env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ran").exists()
    assert result.stdout == f"swift ran: {' '.join(FIXED[1:])}\n"
    assert "PC202 warning" in result.stderr


def test_run_a_missing_program_exits_127() -> None:
    result = precheck("run", "--gpu", "V100", "--", "no-such-program-for-precheck")
    assert result.returncode == 127
    assert "command not found" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--"], "nothing after `--`"),
        (["run", "--gpu", "V100", "--"], "nothing after `--`"),
        (["examples/configs", "--", "swift", "sft"], "not both"),
        (["--fix", "--", "swift", "sft"], "a command line has none"),
        (["--gpu", "V100", "--no-such-option", "--", "swift", "sft"], "cannot read the options"),
        (["run", "swift", "sft"], "needs `--`"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    result = precheck(*args)
    assert result.returncode == 2
    assert message in result.stderr


def test_broken_quoting_in_a_command_word_is_still_read() -> None:
    # the words come already split by the caller's shell: a quote inside one is a character
    result = precheck("--gpu", "V100", "--format", "json", "--", "swift", "sft", "--system", 'say "hi', "--fp16")
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert document["files"] == [{"path": "<command line>", "dialect": "ms-swift"}] and document["errors"] == []


def test_api_checks_a_command() -> None:
    report = api.check(hardware="V100", command=BROKEN, assume_versions={"ms-swift": "3.2.2"}, use_project=False)
    assert [(f.rule, f.origin.path, f.origin.line, f.origin.column) for f in report.findings if f.rule == "PC201"] == [
        ("PC201", "<command line>", 1, 62)
    ]
    assert report.exit_code() == 1
