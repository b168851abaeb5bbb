"""The text output and the command line around it: headlines, code frames, colour, the
options ruff users expect (``-V``, ``--statistics``, ``--stdin-filename``, ``--config``,
did-you-mean, completion, ``--`` before file names). Golden files for each output feature
are in tests/test_output_formats.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from precheck import api
from precheck.report import use_color
from precheck.report.headline import LIMIT, headline
from precheck.report.text import caret

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, stdin: str | None = None):  # type: ignore[no-untyped-def]
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_", "NO_COLOR", "FORCE_COLOR", "_PRECHECK"))}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        input=stdin,
        timeout=120,
    )


# --- headlines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "`torch_dtype: float16` forces fp16 on and `fp16: false` (line 6) is ignored: the run trains in fp16; "
            "more [ms-swift 3.2.2 (requirements.txt:2)]",
            "`torch_dtype: float16` forces fp16 on and `fp16: false` (line 6) is ignored",
        ),
        ("`yes` is read as the boolean True (YAML 1.1); write true", "`yes` is read as the boolean True (YAML 1.1)"),
        # a short subject before `:` keeps the clause that says what is wrong
        (
            "CUDA_VISIBLE_DEVICES='1': entry '1' names no device (there are 1); CUDA ignores it",
            "CUDA_VISIBLE_DEVICES='1': entry '1' names no device (there are 1)",
        ),
        # `:` inside backticks, quotes or parentheses is not a cut; nor is `e.g. `
        (
            '`a: b` is wrong for sure (see: here) and "x: y" too, e.g. this: detail',
            '`a: b` is wrong for sure (see: here) and "x: y" too, e.g. this',
        ),
        # over the limit: the longest parenthesis goes
        (
            "the plan uses bf16 (from " + "x" * 150 + "), but cuda:0 V100 (sm_70) has no bf16; detail",
            "the plan uses bf16, but cuda:0 V100 (sm_70) has no bf16",
        ),
        ("one clause only", "one clause only"),
    ],
)
def test_headline_is_the_first_clause(message: str, expected: str) -> None:
    assert headline(message) == expected


#: framework internals: a dotted call, a private name, a source file
INTERNALS = re.compile(r"\b\w+\.\w+\(|(?<![\w`])_[a-z]\w+|\bfill_match\b|\w\.py\b")


def _findings(paths: list[str], gpu: str) -> list[tuple[str, str]]:
    report = api.check(paths, [gpu], select=["ALL"], use_project=False, details=False)
    return [(f.rule, f.message) for f in report.findings]


@pytest.mark.shared  # its sample is too small without ../shared
def test_headlines_are_short_and_in_the_users_terms() -> None:
    """Every finding on the examples (three GPUs) and the framework corpus: a headline of at
    most ~120 characters (a few long names or paths may take it further, never past 160),
    and no framework internals, which stay in the full message."""
    paths = ["examples/configs", *([str(CORPUS)] if CORPUS.is_dir() else [])]
    found = {pair for gpu in ("V100", "A100", "RTX 4090") for pair in _findings(paths, gpu)}
    assert len(found) > 50
    heads = {rule: [] for rule, _ in found}  # type: dict[str, list[str]]
    for rule, message in found:
        heads[rule].append(headline(message))
    every = [h for hs in heads.values() for h in hs]
    assert max(len(h) for h in every) <= 160, max(every, key=len)
    within = sum(1 for h in every if len(h) <= LIMIT)
    assert within >= 0.9 * len(every), sorted(every, key=len)[-5:]
    leaking = [h for h in every if INTERNALS.search(h)]
    assert not leaking, leaking[:5]
    assert all(len(h) >= 15 for h in every), min(every, key=len)


def test_internals_stay_in_the_message_and_out_of_the_headline() -> None:
    message = (
        "the plan uses bf16 (from the DeepSpeed config: accelerate DeepSpeedPlugin.set_mixed_precision adds "
        "`bf16: {enabled: true}`; DeepSpeed casts the model (_configure_distributed_model: module.bfloat16()), "
        "from train.yaml:3:1 (bf16)), but cuda:0 Tesla V100-SXM2-32GB (sm_70, 32 GB) has no native bf16 "
        "(needs sm_80+); more"
    )
    head = headline(message)
    assert (
        head == "the plan uses bf16, but cuda:0 Tesla V100-SXM2-32GB (sm_70, 32 GB) has no native bf16 (needs sm_80+)"
    )
    assert not INTERNALS.search(head)


# --- code frames --------------------------------------------------------------------------


def test_caret_sits_under_the_key_as_written() -> None:
    assert caret("  precision: 16", 3, "trainer.precision") == ("  precision: 16", 2, 9)
    assert caret('{"fp16": {"enabled": false}}', 11, "fp16.enabled") == ('{"fp16": {"enabled": false}}', 10, 9)
    assert caret("torchrun x --bf16 true", 12, "--bf16") == ("torchrun x --bf16 true", 11, 6)
    # a long line is cut around the caret, which still points at the key
    text, start, width = caret("x" * 300 + " fp16: true", 302, "fp16")
    assert len(text) <= 102 and text[start : start + width] == "fp16"


def test_text_finding_has_frame_help_and_fix_marker(tmp_path: Path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nbf16: true\n")
    result = run("--gpu", "V100", "--isolated", "train.yaml", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.yaml:4:1: PC101 error ")
    assert lines[1:5] == ["  |", "4 | bf16: true", "  | ^^^^", "  |"]
    assert lines[5].startswith("  = help: ")
    assert result.returncode == 1


def test_pc605_quotes_the_users_own_spelling(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "trl.yaml").write_text(
        "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\ndeepspeed: configs/ds.json\nfp16: yes\n"
    )
    (tmp_path / "configs" / "ds.json").write_text('{"fp16": {"enabled": false}, "zero_optimization": {"stage": 2}}\n')
    result = run("--gpu", "A100", "--isolated", "--format", "json", "configs/trl.yaml", cwd=tmp_path)
    pc605 = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "PC605"]
    assert pc605, result.stdout
    assert "`fp16: yes` (configs/trl.yaml:5:1)" in pc605[0]["message"], pc605[0]["message"]
    assert "`fp16: true`" not in pc605[0]["message"]


# --- colour -------------------------------------------------------------------------------


class _Tty:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("mode", "env", "tty", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False, False),
        ("auto", {"FORCE_COLOR": ""}, False, False),  # set but empty: not set
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_color_choice(
    mode: str, env: dict[str, str], tty: bool, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert use_color(mode, _Tty(tty)) is expected


def test_force_color_and_bad_color_on_the_command_line() -> None:
    path = "examples/configs/ms-swift-v100/fp16-false-ignored.yaml"
    forced = run("--gpu", "V100", path, env={"FORCE_COLOR": "1"})
    assert "\x1b[" in forced.stdout
    assert "\x1b[" not in run("--gpu", "V100", "--color", "never", path, env={"FORCE_COLOR": "1"}).stdout
    bad = run("--gpu", "V100", "--color", "sometimes", path)
    assert bad.returncode == 2 and "--color 'sometimes': choose one of auto, always, never" in bad.stderr


# --- the command line ---------------------------------------------------------------------


def test_version_short_and_long() -> None:
    short, long = run("-V"), run("--version")
    assert short.returncode == long.returncode == 0
    assert short.stdout == long.stdout and short.stdout.startswith("precheck ")


def test_help_shows_metavars_choices_and_whole_words() -> None:
    text = run("check", "--help", env={"COLUMNS": "80"}).stdout
    assert "<list[str]>" not in text and "<bool>" not in text and "<str>" not in text
    words = " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())
    assert "Output format: text, concise, json, sarif, github, gitlab or junit." in words
    assert "--color WHEN Colour the text output: auto" in words and "always or never." in words
    assert "--gpu SPEC" in words and "--hardware FILE" in words and "--quiet -q" in words
    assert "…" not in text  # nothing cut (rich cuts a word longer than its column)
    assert "exact parameter counts on the meta device (needs precheck-ml[hf])." in words


def test_unknown_selectors_get_a_suggestion() -> None:
    result = run("--select", "PC2O1", "--gpu", "V100", "examples/configs")
    assert result.returncode == 2 and "did you mean 'PC201'?" in result.stderr
    result = run("--ignore", "fp16-slow-gpus", "--gpu", "V100", "examples/configs")
    assert "did you mean 'fp16-slow-gpu'?" in result.stderr
    assert "did you mean 'PC922'?" in run("rule", "PC9022").stderr


def test_config_errors_show_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.precheck]\nbogus = 1\n")
    (tmp_path / "sub" / "train.yaml").write_text("output_dir: out\nfp16: true\n")
    result = run("--gpu", "V100", "sub/train.yaml", cwd=tmp_path)
    assert result.returncode == 2  # an error about that file, and the run goes on (issue 30)
    assert result.stdout.startswith("sub/pyproject.toml:2:1: unknown key `bogus`"), result.stdout


def test_explicit_config_file(tmp_path: Path) -> None:
    (tmp_path / "ci.toml").write_text('gpus = ["V100"]\nignore = ["PC902"]\n')
    (tmp_path / "train.yaml").write_text("output_dir: out\nlearning_rate: 1.0e-5\nbf16: yes\n")
    result = run("--config", "ci.toml", "--format", "json", "train.yaml", cwd=tmp_path)
    document = json.loads(result.stdout)
    assert {f["rule"] for f in document["findings"]} == {"PC101"}  # V100 from ci.toml; PC902 ignored
    assert run("--config", "nope.toml", "train.yaml", cwd=tmp_path).stderr.strip() == (
        "precheck: error: --config nope.toml: no such file"
    )
    both = run("--config", "ci.toml", "--isolated", "train.yaml", cwd=tmp_path)
    assert both.returncode == 2 and "exclusive" in both.stderr


def test_stdin_needs_a_name_and_reads_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "ds.json").write_text('{"fp16": {"enabled": true}, "bf16": {"enabled": true}}\n')
    text = "output_dir: out\nlearning_rate: 1.0e-5\ndeepspeed: conf/ds.json\nbf16: true\n"
    result = run(
        "--gpu",
        "A100",
        "--isolated",
        "--format",
        "json",
        "--stdin-filename",
        "conf/t.yaml",
        "-",
        cwd=tmp_path,
        stdin=text,
    )
    document = json.loads(result.stdout)
    assert document["files"][0]["path"] == "conf/t.yaml"
    assert "PC601" in {f["rule"] for f in document["findings"]}  # the DeepSpeed file it names was read
    unnamed = run("--gpu", "A100", "-", cwd=tmp_path, stdin=text)
    assert unnamed.returncode == 2 and "--stdin-filename" in unnamed.stderr


def test_double_dash_ends_the_options_before_file_names(tmp_path: Path) -> None:
    """pre-commit passes file names as they are: ``--fix.yaml`` is a file after ``--``."""
    for name in ("--fix.yaml", "--exclude=x.yaml"):
        (tmp_path / name).write_text("output_dir: out\nlearning_rate: 1.0e-5\nbf16: true\n")
    result = run(
        "check",
        "--gpu",
        "V100",
        "--isolated",
        "--format",
        "concise",
        "--",
        "--fix.yaml",
        "--exclude=x.yaml",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    assert {line.split(":")[0] for line in result.stdout.splitlines()} == {"--fix.yaml", "--exclude=x.yaml"}
    assert (tmp_path / "--fix.yaml").read_text().endswith("bf16: true\n")  # not taken as --fix
    for command in (["explain"], ["smoke", "--device", "cpu"]):
        named = run(*command, "--gpu", "V100", "--format", "json", "--", "--fix.yaml", cwd=tmp_path)
        assert "No such option" not in named.stderr, named.stderr
    explained = json.loads(run("explain", "--gpu", "V100", "--format", "json", "--", "--fix.yaml", cwd=tmp_path).stdout)
    assert [r["path"] for r in explained["runs"]] == ["--fix.yaml"]


def test_shell_completion_answers(tmp_path: Path) -> None:
    env = {"_PRECHECK_COMPLETE": "complete_bash", "COMP_WORDS": "precheck ex", "COMP_CWORD": "1"}
    result = run(env=env, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.split() == ["explain"]
    env = {"_PRECHECK_COMPLETE": "complete_bash", "COMP_WORDS": "precheck check --stat", "COMP_CWORD": "2"}
    assert run(env=env, cwd=tmp_path).stdout.split() == ["--statistics"]
    assert "_precheck_completion" in run("--show-completion", "bash", env={"SHELL": "/bin/bash"}).stdout


def test_a_finding_about_the_whole_file_shows_no_line() -> None:
    path = "examples/configs/llama-recipes-titan-rtx-1080ti/lora-fp16-one-card.yaml"
    lines = run("--gpu", "TITAN RTX", "--gpu", "GTX 1080 Ti", path).stdout.splitlines()
    assert lines[0].startswith(f"{path}:1:1: PC501 warning mixed GPUs")
    assert lines[1].startswith("  = help: export CUDA_DEVICE_ORDER=PCI_BUS_ID")


def test_explain_draws_with_rich_on_a_terminal() -> None:
    """FORCE_COLOR stands in for a terminal: arrows and a coloured bar; piped: ASCII."""
    path = "examples/configs/unsloth-tinyllama-rtx4090/tinyllama-bf16.yaml"
    drawn = run("explain", "--gpu", "RTX 4090", path, env={"FORCE_COLOR": "1", "COLUMNS": "120"}).stdout
    assert "\x1b[" in drawn and "↓" in drawn and "█" in drawn
    piped = run("explain", "--gpu", "RTX 4090", path).stdout
    assert "\x1b[" not in piped and "↓" not in piped
    assert "     -> autocast         bfloat16 " in piped
    bar = next(line for line in piped.splitlines() if line.startswith("    ["))
    # TRL's configs checkpoint activations by default (0.22) and load float32 (0.27): 54%, not 84%
    assert bar.endswith("of 24.0 GiB (54%)") and bar.count("a") >= 2  # activations drawn as `a`


def test_a_finding_that_rests_on_an_assumption_says_which() -> None:
    """A memory estimate on `--gpu V100` (a card, no count) assumes one device: the finding is
    a warning, and the text output says what was assumed and how to state it."""
    result = run("--gpu", "V100", "examples/configs/memory/llama2-70b-qlora-one-48gb.yaml")
    (head,) = [line for line in result.stdout.splitlines() if ": PC801 " in line]
    assert " PC801 warning " in head
    assert "   = assumed: 1 device(s): --gpu names a card without a count" in result.stdout
    assert "--gpu 1xV100" in result.stdout
    stated = run("--gpu", "1xV100", "examples/configs/memory/llama2-70b-qlora-one-48gb.yaml")
    assert ": PC801 error " in stated.stdout and "= assumed:" not in stated.stdout


def test_the_help_line_shows_the_did_you_mean(tmp_path: Path) -> None:
    """Issue 32: the suggestion was only in the JSON message."""
    import precheck
    from precheck.report import render

    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nbf_16: true\n")
    text = render(precheck.check([str(config)], hardware=["A100"], use_project=False), "text")
    assert "= help: did you mean bf16? rename `bf_16` to `bf16`, or remove it" in text
