"""Hostile pull requests, third round (issue 30): no secrets in CI logs, no workflow commands,
bounded everywhere.

As tests/test_hostile_repo.py: each case runs precheck in its own process under a 1.5 GB
address-space cap and 20 s, and the good config's findings still appear.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
from pathlib import Path

import pytest

from test_hostile_repo import GOOD, GOOD_FINDING, LIGHTNING, MEMORY, PRECHECK, ROOT, SECONDS, good, run

#: a name with a control character, a newline and a workflow command
HOSTILE = "x\x1b]0;t\x07\n::warning::pwn"


def precheck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``precheck ARGS`` (a subcommand first) in its own process, bounded as :func:`run`."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    result = subprocess.run(
        [PRECHECK, *args],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=cwd,
        timeout=SECONDS,
        preexec_fn=limit,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr[-3000:]
    return result


def assert_clean(*outputs: str) -> None:
    """No line a CI runner reads as a workflow command (but ``--format github``'s annotations),
    no control character but newline and tab."""
    for output in outputs:
        for line in output.splitlines():
            allowed = re.match(r"::(error|warning|notice) (file=[^:]*|title=precheck)::", line)
            assert not re.match(r"\s*(::|##\[)", line) or allowed, line
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", output), output


# --- 2. one escaping function at the output boundary ----------------------------------------


def test_the_output_boundary_neutralises_workflow_commands_and_controls() -> None:
    from precheck.escape import safe_output, workflow_commands

    text = "a\n  ::warning::x\n\x1b[1mb\x1b[0m\x1b]0;t\x07\r##[group]\n"
    assert safe_output(text) == "a\n  \\x3a:warning::x\n\x1b[1mb\x1b[0m\\x1b]0;t\\x07\\x0d##[group]\n"
    assert safe_output("##[set-env x]") == "\\x23#[set-env x]"
    with workflow_commands():
        assert safe_output("::error file=a::m\n") == "::error file=a::m\n"


def test_a_hostile_folder_name_reaches_no_output_raw(tmp_path: Path) -> None:
    folder = tmp_path / HOSTILE
    folder.mkdir()
    (folder / "c.yaml").write_text(GOOD)
    (folder / "l.yaml").write_text(LIGHTNING)
    (folder / ".gitignore").write_text("bad\\\n")  # warned about, naming its folder
    # a fix --fix refuses (a shared YAML node): a `not fixed:` line naming the folder
    (folder / "anchored.yaml").write_text("defaults: &d\n  fp16: true\nmodel_name_or_path: m\n<<: *d\nbf16: true\n")
    (tmp_path / "::stop-commands::pwn.yaml").write_text(GOOD)
    good(tmp_path)
    for args in (
        ["--format", "concise"],
        ["--format", "text"],
        ["--format", "github"],
        ["--format", "json"],
        ["--format", "sarif"],
        ["--diff"],
        ["--statistics"],
    ):
        result = run(".", *args, cwd=tmp_path)
        assert_clean(result.stdout, result.stderr)
        if args[-1] in ("concise", "text"):
            assert GOOD_FINDING in result.stdout and "\\x3a:stop-commands::pwn.yaml:4:1: PC205" in result.stdout
            assert "x\\x1b]0;t\\x07\\x0a::warning::pwn/c.yaml:4:1: PC205" in result.stdout
    result = run(".", "--diff", "--unsafe-fixes", cwd=tmp_path)
    assert_clean(result.stdout, result.stderr)
    assert "+++ b/x\\x1b]0;t\\x07\\x0a::warning::pwn/c.yaml" in result.stdout
    assert "warning::pwn/.gitignore: pattern" in result.stderr
    assert "precheck: not fixed: x\\x1b]0;t\\x07\\x0a::warning::pwn/anchored.yaml:5:1: PC205" in result.stderr
    explained = precheck("explain", "--gpu", "A100", str(folder / "c.yaml"), cwd=tmp_path)
    assert_clean(explained.stdout, explained.stderr)
    assert "x\\x1b]0;t\\x07\\x0a::warning::pwn/c.yaml" in explained.stdout


def test_explain_shows_a_referenced_path_escaped(tmp_path: Path) -> None:
    name = "ds\x1b]0;title\x07\x1b[2J\n::error::x.json"
    (tmp_path / name).write_text('{"fp16": {"enabled": true}}\n')
    (tmp_path / "train.yaml").write_text(GOOD + f"deepspeed: {json.dumps(name)}\n")
    result = precheck("explain", "--gpu", "A100", "train.yaml", cwd=tmp_path)
    assert_clean(result.stdout, result.stderr)
    assert "reads    ds\\x1b]0;title\\x07\\x1b[2J\\x0a::error::x.json" in result.stdout


def test_a_hostile_project_configuration_key_is_escaped(tmp_path: Path) -> None:
    for block in ("", "versions", "per-file-ignores", "severity"):
        table = "[tool.precheck" + (f".{block}" if block else "") + "]"
        (tmp_path / "pyproject.toml").write_text(f'{table}\n"a\\n::warning::pwn\\u001b]0;t\\u0007" = 1\n')
        result = run(".", cwd=good(tmp_path))
        assert_clean(result.stdout, result.stderr)
        assert "pyproject.toml:2:1:" in result.stdout and GOOD_FINDING in result.stdout, result.stdout


# --- 1. disclosure: no file outside the repository is read for what can be printed -------------

SECRET = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"


def secret(tmp_path: Path) -> tuple[Path, Path]:
    """A repository (``repo``, with ``.git``) and a token file beside it."""
    token = tmp_path / "credentials"
    token.write_text('{"fp16": {"enabled": "' + SECRET.strip() + '"}}\n' + SECRET)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo, token


@pytest.mark.parametrize("how", ["home", "relative", "symlink", "script"])
def test_a_reference_out_of_the_repository_is_reported_without_its_content(tmp_path: Path, how: str) -> None:
    repo, token = secret(tmp_path)
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(token.read_text())
    named = {"home": "~/.aws/credentials", "relative": "../credentials", "symlink": "ds.json", "script": ""}[how]
    if how == "symlink":
        (repo / "ds.json").symlink_to(token)
    if how == "script":
        (repo / "run.sh").write_text("deepspeed --deepspeed_config ../credentials train.py --fp16\n")
    else:
        (repo / "train.yaml").write_text(GOOD + f"deepspeed: {named}\n")
    for fmt in ("text", "json", "concise"):
        result = run(".", "--format", fmt, cwd=good(repo), env={"HOME": str(home)})
        assert "AKIA" not in result.stdout + result.stderr, result.stdout
        assert GOOD_FINDING in result.stdout or fmt == "json"
    if how != "script":
        result = run(".", "--format", "concise", cwd=repo, env={"HOME": str(home)})
        assert f"train.yaml:5:1: PC904 warning `deepspeed` names `{named}`, which is outside the repository" in (
            result.stdout
        )
    explained = precheck("explain", "--gpu", "A100", ".", cwd=repo)
    assert "AKIA" not in explained.stdout + explained.stderr


def test_a_code_frame_never_shows_a_file_outside_the_repository(tmp_path: Path) -> None:
    repo, token = secret(tmp_path)
    (repo / "train.yaml").write_text(GOOD + "model_name_or_path: ../model\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").symlink_to(token)
    result = run(".", cwd=good(repo))
    assert "AKIA" not in result.stdout + result.stderr and GOOD_FINDING in result.stdout


def test_without_git_the_folder_checked_is_the_boundary(tmp_path: Path) -> None:
    secret(tmp_path)
    folder = tmp_path / "checked"
    folder.mkdir()
    (folder / "train.yaml").write_text(GOOD + "deepspeed: ../credentials\n")
    (folder / "inside.json").write_text('{"fp16": {"enabled": true}}\n')
    (folder / "other.yaml").write_text(GOOD + "deepspeed: inside.json\n")
    for cwd, name in ((folder, "."), (tmp_path / "repo", str(folder))):
        result = run(name, "--format", "concise", cwd=cwd)
        assert "AKIA" not in result.stdout + result.stderr
        assert "train.yaml:5:1: PC904" in result.stdout and "outside the repository" in result.stdout
        assert "other.yaml:4:1: PC205" in result.stdout and "other.yaml:5:1: PC904" not in result.stdout


# --- 3. bounded everywhere --------------------------------------------------------------------

SWIFT = (ROOT / "examples/configs/ms-swift-v100/fp16-false-ignored.yaml").read_text()


def test_a_long_dotted_toml_key_is_refused_before_tomllib(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("fp16 = true\n" + ".".join(["a"] * 20_000) + " = 1\n")
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert (
        "config.toml:2:1: nesting deeper than 200 levels (a dotted key of more than 200 parts)" in result.stdout
        and GOOD_FINDING in result.stdout
    )


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[tool.x]\na = " + "[" * 600 + "]" * 600 + "\n", "pyproject.toml:2:205: nesting deeper than 200"),
        ("[tool.x]\na = " + "7" * 5000 + "\n", "pyproject.toml:2:5: an integer of 5000 digits"),
        ("[tool.x]\n" + ".".join(["a"] * 20_000) + " = 1\n", "pyproject.toml:2:1: nesting deeper than 200 levels"),
    ],
)
def test_a_hostile_pyproject_is_an_error_about_that_file(tmp_path: Path, text: str, where: str) -> None:
    (tmp_path / ".git").mkdir()
    for table in ("[tool.precheck]\n", ""):
        (tmp_path / "pyproject.toml").write_text(text + table)
        for isolated in ((), ("--isolated",)):
            result = run(".", "--format", "concise", *isolated, cwd=good(tmp_path))
            assert GOOD_FINDING in result.stdout, result.stdout + result.stderr
            if table and not isolated:  # precheck's own table: its settings would be lost
                assert where in result.stdout and result.returncode == 2


def test_project_versions_of_a_pull_request_are_not_used_isolated_or_with_config(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "swift.yaml").write_text(SWIFT)
    (tmp_path / "pyproject.toml").write_text('[tool.precheck.versions]\nms-swift = "3.5.0"\n')
    (tmp_path / "ci.toml").write_text('fail-on = "error"\n')
    assert "PC201" not in run(".", "--format", "concise", cwd=tmp_path).stdout  # the project's own say
    for args in (("--isolated",), ("--config", "ci.toml")):
        result = run(".", "--format", "concise", *args, cwd=tmp_path)
        assert "swift.yaml:5:1: PC201" in result.stdout, args


def test_followed_scripts_share_one_budget(tmp_path: Path) -> None:
    for level in range(5):
        body = "".join(f"bash s{level + 1}.sh\n" for _ in range(30))
        (tmp_path / f"s{level}.sh").write_text("#!/bin/bash\n" + body)
    (tmp_path / "s5.sh").write_text("#!/bin/bash\naccelerate launch --mixed_precision fp16 train.py\n")
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout


#: launch arguments with PC205 (fp16 and bf16 both true)
LAUNCH = "train.py --model_name_or_path m --output_dir o --learning_rate 1e-4 --bf16 True --fp16 True"


@pytest.mark.parametrize("count", ["100000000", "3000000", "²", "7" * 5000])
def test_a_device_count_past_any_machine_is_bounded(tmp_path: Path, count: str) -> None:
    (tmp_path / "ds.sh").write_text(f"deepspeed --num_gpus {count} {LAUNCH}\n")
    (tmp_path / "tr.sh").write_text(f"torchrun --nproc_per_node {count} {LAUNCH}\n")
    (tmp_path / "env.sh").write_text(f"export LOCAL_WORLD_SIZE={count}\ntorchrun {LAUNCH}\n")
    (tmp_path / "cvd.sh").write_text(f"export CUDA_VISIBLE_DEVICES=0,{count}\ndeepspeed {LAUNCH}\n")
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and len(result.stdout) < 20_000, len(result.stdout)
    for script in ("ds.sh", "tr.sh", "env.sh", "cvd.sh"):
        assert f"{script}:" in result.stdout and "PC205" in result.stdout, script


@pytest.mark.parametrize("number", ["²", "7" * 5000])
def test_numbers_int_refuses_keep_the_file_findings(tmp_path: Path, number: str) -> None:
    (tmp_path / "stage.sh").write_text(
        f"export ACCELERATE_USE_DEEPSPEED=true ACCELERATE_DEEPSPEED_ZERO_STAGE={number}\n"
        f"a=(x y)\necho ${{a[{number}]}}\n"
        f"accelerate launch {LAUNCH}\n"
    )
    (tmp_path / "fsdp.yaml").write_text(
        f"compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nmixed_precision: fp16\n"
        f"fsdp_config:\n  fsdp_sharding_strategy: '{number}'\n"
    )
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and "stage.sh:" in result.stdout


def test_an_absurd_model_size_keeps_the_config_findings(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    dims = {"model_type": "llama", "hidden_size": 10**300, "num_hidden_layers": 32, "num_attention_heads": 32}
    (model / "config.json").write_text(json.dumps({**dims, "vocab_size": 32000, "intermediate_size": 11008}))
    (tmp_path / "train.yaml").write_text(GOOD.replace("model_name_or_path: m", "model_name_or_path: ./model"))
    result = run(".", "--format", "concise", cwd=tmp_path)
    assert "train.yaml:4:1: PC205" in result.stdout


@pytest.mark.hf
def test_deep_does_not_build_fifty_thousand_layers(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    dims = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64, "vocab_size": 100}
    dims |= {"num_hidden_layers": 50_000, "num_attention_heads": 4, "intermediate_size": 128}
    (model / "config.json").write_text(json.dumps(dims))
    (tmp_path / "train.yaml").write_text(GOOD.replace("model_name_or_path: m", "model_name_or_path: ./model"))
    result = run(".", "--deep", "--format", "concise", cwd=tmp_path)
    assert "train.yaml:4:1: PC205" in result.stdout


# --- 4. findings lost, or the wrong file changed ----------------------------------------------


@pytest.mark.parametrize(
    "hiding",
    [
        "cat > notes.txt <<EOF\n# precheck: ignore-file\nEOF\n",
        "cat > notes.txt <<-'EOF'\n\t# precheck: ignore-file\n\tEOF\n",
        "x=$(( 1 + 2 # precheck: ignore-file\n))\n",
    ],
)
def test_a_suppression_is_a_comment_only_where_bash_reads_one(tmp_path: Path, hiding: str) -> None:
    (tmp_path / "run.sh").write_text(hiding + f"torchrun {LAUNCH}\n")
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert "run.sh:" in result.stdout and "PC205" in result.stdout and GOOD_FINDING in result.stdout
    (tmp_path / "run.sh").write_text(hiding + f"torchrun {LAUNCH}\n# precheck: ignore-file\n")
    assert "run.sh:" not in run(".", "--format", "concise", cwd=tmp_path).stdout  # a real comment still counts


def test_fix_writes_nothing_outside_the_repository_or_read_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sibling = tmp_path / "sibling"
    (sibling / ".git").mkdir(parents=True)
    (sibling / "a.yaml").write_text(LIGHTNING)
    (repo / "linked").symlink_to(sibling)  # a folder link to a sibling checkout
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "ds.json").write_text('{"fp16": {"enabled": true}, "bf16": {"enabled": true}}\n')
    (repo / "train.yaml").write_text(GOOD.replace("fp16: true\nbf16: true\n", "") + "deepspeed: ../shared/ds.json\n")
    (repo / "locked.yaml").write_text(LIGHTNING)
    (repo / "locked.yaml").chmod(0o444)
    result = run(".", "linked/a.yaml", "--fix", "--unsafe-fixes", cwd=good(repo))
    assert (sibling / "a.yaml").read_text() == LIGHTNING
    assert (shared / "ds.json").read_text().startswith('{"fp16": {"enabled": true}, "bf16"')
    assert (repo / "locked.yaml").read_text() == LIGHTNING and (repo / "locked.yaml").stat().st_mode & 0o777 == 0o444
    assert "locked.yaml" in result.stdout and "read-only" in result.stdout, result.stdout
    assert "fp16: false" in (repo / "good.yaml").read_text()  # the repository's own file is fixed


def test_fix_edits_no_shared_yaml_node_and_no_key_inside_a_toml_string(tmp_path: Path) -> None:
    anchored = "defaults: &d\n  fp16: true\n  learning_rate: 1.0e-5\nmodel_name_or_path: m\n<<: *d\nbf16: true\n"
    (tmp_path / "anchored.yaml").write_text(anchored)
    toml = 'model_name_or_path = "m"\nlearning_rate = 1e-5\nnote = """a \\"""\nfp16 = true\n"""\n'
    toml += "fp16 = true\nbf16 = true\n"
    (tmp_path / "train.toml").write_text(toml)
    (tmp_path / "cr.yaml").write_bytes(GOOD.replace("\n", "\r").encode())
    result = run(".", "--fix", "--unsafe-fixes", "--format", "concise", cwd=good(tmp_path))
    assert (tmp_path / "anchored.yaml").read_text() == anchored
    assert "anchored.yaml:6:1: PC205" in result.stdout and "other keys share it" in result.stderr
    assert (tmp_path / "train.toml").read_text() == toml.replace("fp16 = true\nbf16", "fp16 = false\nbf16")
    assert (tmp_path / "cr.yaml").read_bytes() == GOOD.replace("fp16: true", "fp16: false").replace("\n", "\r").encode()
    assert "fp16: false" in (tmp_path / "good.yaml").read_text()


def test_a_committed_file_named_dash_after_double_dash_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "-").write_text("#!/bin/sh\necho hi\n")
    (tmp_path / "-").chmod(0o755)
    result = precheck("check", "--gpu", "A100", "--format", "concise", "--", "-", "good.yaml", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and "usage" not in result.stderr.lower() and result.returncode == 1, (
        result.stdout + result.stderr
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("comment.yaml", "# " + "x" * (17 * 1024 * 1024) + "\n" + GOOD),
        ("many.yaml", GOOD + "values: [" + ",".join(["1"] * 1_600_000) + "]\n"),
        ("words.sh", "torchrun train.py --fp16 True " + "a " * 110_000 + "\n"),
    ],
)
def test_a_config_refused_for_its_size_is_reported_in_a_folder_search(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert f"{name}:" in result.stdout and GOOD_FINDING in result.stdout and result.returncode == 2, result.stdout


def _script(lines: list[str], call: str = "TrainingArguments(output_dir='o', fp16=True, bf16=True)") -> str:
    return "\n".join(["from transformers import TrainingArguments", *lines, f"args = {call}", ""])


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("fstring.py", _script(["a = 'xy'", *["a = f'{a}{a}'"] * 30]), 33),
        ("fstuple.py", _script(["t = (1, 2)", *["t = (t, t)"] * 40, "s = f'{t}'"], ""), 0),
        (
            "shared.py",
            _script(
                ["t = (1, 2)", "d = {'a': 1}", *["t = (t, t)"] * 40, *["d = {'a': d, 'b': d}"] * 40],
                "TrainingArguments(output_dir='o', fp16=True, bf16=True, report_to=t, fsdp_config=d)",
            ),
            84,
        ),
    ],
)
def test_python_folding_budget_covers_every_way_a_value_grows(tmp_path: Path, name: str, text: str, line: int) -> None:
    if not line:  # the call after the f-string
        text = text.replace("args = \n", "args = TrainingArguments(output_dir='o', fp16=True, bf16=True)\n")
        line = text.count("\n")
    (tmp_path / name).write_text(text)
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert f"{name}:{line}:" in result.stdout and "PC205" in result.stdout and GOOD_FINDING in result.stdout


def test_twenty_five_thousand_training_calls_take_linear_work(tmp_path: Path) -> None:
    calls = [f"a{i} = TrainingArguments(output_dir='o', fp16=True, bf16=True)" for i in range(25_000)]
    (tmp_path / "many.py").write_text("from transformers import TrainingArguments\n" + "\n".join(calls) + "\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run(".", "--format", "concise", cwd=good(tmp_path), seconds=90)  # wall time: a loaded machine
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert cpu < SECONDS, f"{cpu:.1f} s of CPU (quadratic: over 60)"
    assert "many.py:25001:" in result.stdout and GOOD_FINDING in result.stdout


def test_internal_error_and_input_error_lines_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """The lines no hostile file reaches today (a bug's message) still pass :func:`printable`."""
    from precheck.check_command import report_internal
    from precheck.engine import FileResult, Report
    from precheck.errors import InternalError
    from precheck.hardware import Hardware

    report = Report(Hardware("profile", [], []))
    result = FileResult(HOSTILE + ".yaml")
    result.internal = InternalError(HOSTILE + ".yaml", ValueError(HOSTILE))
    report.files.append(result)
    report_internal(report)
    err = capsys.readouterr().err
    assert_clean(err)
    assert err.startswith("precheck: internal error while checking x\\x1b]0;t\\x07\\x0a::warning::pwn.yaml: ")
