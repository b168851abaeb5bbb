"""A pull request must not be able to hang, exhaust or subvert the check (issue 22).

Each test puts a hostile file next to a good config and runs precheck in its own process
under a 1.5 GB address-space cap and a 20 s bound: the hostile file gets a clear outcome
and the good config's findings still appear.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEMORY = 1536 * 1024 * 1024
#: the installed command (``python -m precheck`` would put the repository's folder first on
#: ``sys.path``, so a ``json.py`` there would be imported by Python itself)
PRECHECK = str(Path(sys.executable).with_name("precheck"))
SECONDS = 20
#: a good config: PC205 at 4:1 on any GPU
GOOD = "model_name_or_path: m\nlearning_rate: 1.0e-5\nfp16: true\nbf16: true\n"
GOOD_FINDING = "good.yaml:4:1: PC205"


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, seconds: float = SECONDS
) -> subprocess.CompletedProcess[str]:
    """``precheck ARGS`` in its own process: at most 1.5 GB of address space and ``seconds``."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    started = time.monotonic()
    result = subprocess.run(
        [PRECHECK, "--gpu", "A100", *args],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=cwd,
        timeout=seconds + 10,
        preexec_fn=limit,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )
    assert time.monotonic() - started < seconds, f"took {time.monotonic() - started:.1f} s"
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr[-3000:]
    assert "MemoryError" not in result.stdout + result.stderr
    return result


def good(folder: Path) -> Path:
    (folder / "good.yaml").write_text(GOOD)
    return folder


# --- evaluation budgets -------------------------------------------------------------------------


def test_python_constant_folding_stops_at_its_budget(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "from transformers import TrainingArguments\n"
        "x = 'a' * 5 * 10**9\n"
        "a = 10**64\nb = a**64\nc = b**64\nd = c**64\n"
        "e = '%02000000000d' % 1\n"
        "f = 'ab' * 3\n"
        "args = TrainingArguments(output_dir='o' + f, fp16=True, bf16=True)\n"
    )
    result = run(".", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout
    assert "train.py:9:" in result.stdout and "PC205" in result.stdout  # the script is still read


def test_shell_variables_doubling_stop_at_the_expansion_budget(tmp_path: Path) -> None:
    lines = ['A0="0123456789abcdef$UNSET"', *(f'A{i}="$A{i - 1}$A{i - 1}"' for i in range(1, 41))]
    script = "\n".join(["#!/bin/bash", *lines, "accelerate launch --mixed_precision fp16 train.py $A40", ""])
    (tmp_path / "bomb.sh").write_text(script)
    workflow = tmp_path / ".github" / "workflows"
    workflow.mkdir(parents=True)
    steps = "\n".join(f"          {line}" for line in lines)
    (workflow / "ci.yml").write_text(
        "on: push\njobs:\n  train:\n    runs-on: gpu\n    steps:\n      - run: |\n"
        + steps
        + "\n          accelerate launch --mixed_precision fp16 train.py $A40\n"
    )
    result = run(".", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout


def test_nested_default_expansions_are_an_input_error_with_a_position(tmp_path: Path) -> None:
    (tmp_path / "nest.sh").write_text('X=1\necho "' + "${X:-" * 500 + "a" + "}" * 500 + '"\n')
    result = run("nest.sh", "good.yaml", cwd=good(tmp_path))
    assert "nest.sh:2:257: parameter expansions nested deeper than 50 levels" in result.stdout
    assert GOOD_FINDING in result.stdout


def test_duplicate_keys_quote_a_huge_anchored_key_cut_to_a_bound(tmp_path: Path) -> None:
    key = "k" * 500_000
    text = f"{GOOD}? &k {key}\n: 0\n" + "? *k\n: 1\n" * 20_000  # a simple key is at most 1024 characters
    (tmp_path / "dup.yaml").write_text(text)
    result = run("dup.yaml", "good.yaml", "--format", "json", cwd=good(tmp_path))
    document = json.loads(result.stdout)
    duplicates = [f for f in document["findings"] if f["rule"] == "PC901"]
    assert duplicates and all(len(f["message"]) < 300 for f in duplicates)
    assert any(f["path"] == "good.yaml" and f["rule"] == "PC205" for f in document["findings"])


def test_complex_keys_are_not_duplicate_question_marks(tmp_path: Path) -> None:
    (tmp_path / "complex.yaml").write_text(GOOD + "? [a, b]\n: 1\n? [c, d]\n: 2\n")
    result = run("complex.yaml", "--format", "concise", cwd=tmp_path)
    assert "PC901" not in result.stdout and "complex.yaml:4:1: PC205" in result.stdout


# --- one bounded reader for every file -------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["requirements.txt", "uv.lock", "environment.yml", ".gitignore", "pyproject.toml", "poetry.lock"]
)
def test_side_files_linked_to_dev_zero_are_not_read(tmp_path: Path, name: str) -> None:
    (tmp_path / name).symlink_to("/dev/zero")
    result = run(".", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout


def test_a_requirements_include_of_dev_zero_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("-r /dev/zero\ntransformers==4.44.0\n")
    result = run(".", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout


@pytest.mark.parametrize("name", ["pyproject.toml", ".gitignore", "requirements-dev.txt", "uv.lock", "x.yaml"])
def test_side_files_that_are_fifos_are_never_waited_on(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    result = run(".", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and result.returncode == 1  # a folder search passes a FIFO over


def test_a_config_naming_a_kernel_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(GOOD + "deepspeed: /proc/kmsg\n")
    result = run("train.yaml", "good.yaml", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and "train.yaml:4:1: PC205" in result.stdout


def test_a_hardware_file_that_is_dev_zero_is_an_input_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [PRECHECK, "--hardware", "/dev/zero", "good.yaml"],
        capture_output=True,
        text=True,
        cwd=good(tmp_path),
        timeout=SECONDS,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY)),
    )
    assert result.returncode == 2 and "/dev/zero" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_installed_metadata_that_is_not_a_regular_file_is_no_answer(tmp_path: Path, kind: str) -> None:
    """A dist-info ``METADATA`` is read as every other file (in a capped process)."""
    info = tmp_path / "site" / "evil-1.0.dist-info"
    info.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(info / "METADATA")
    else:
        (info / "METADATA").symlink_to("/dev/zero")
    code = "import sys\nfrom precheck.versions import installed_in\nprint(installed_in(None, ('evil',)))\n"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=SECONDS,
        env={**os.environ, "PYTHONPATH": f"{tmp_path / 'site'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY)),
    )
    assert result.returncode == 0 and result.stdout.strip() == "{}", result.stderr[-2000:]


def test_a_file_just_over_the_limit_is_reported_with_its_real_size(tmp_path: Path) -> None:
    with (tmp_path / "big.yaml").open("wb") as sparse:
        sparse.truncate(int(16.95 * 1024 * 1024))
    result = run("big.yaml", "good.yaml", cwd=good(tmp_path))
    assert "big.yaml: file is 16.95 MiB, over the 16 MiB limit" in result.stdout
    assert GOOD_FINDING in result.stdout


# --- gitignore patterns -------------------------------------------------------------------------


def test_backtracking_gitignore_patterns_are_matched_in_linear_time(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*ab\n" + "**/" * 25 + "x\n")
    (tmp_path / ("a" * 60 + ".yaml")).write_text(GOOD)
    deep = tmp_path.joinpath(*["d"] * 40)
    deep.mkdir(parents=True)
    (deep / "c.yaml").write_text(GOOD)
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and ("a" * 60 + ".yaml:4:1: PC205") in result.stdout


@pytest.mark.parametrize("pattern", ["\\[abc\\].yaml", "[]]x.yaml", "[z-a].yaml", "[abc", "bad\\"])
def test_gitignore_patterns_re_rejects_do_not_stop_the_run(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text(pattern + "\n")
    (tmp_path / "sub" / "inner.yaml").write_text(GOOD)
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert GOOD_FINDING in result.stdout and "inner.yaml:4:1: PC205" in result.stdout
    if pattern in ("[abc", "bad\\"):  # unusable in git too: said once, about that file
        assert result.stderr.count("sub/.gitignore: pattern") == 1, result.stderr


GIT_PATTERNS = [
    "*.yaml", "/top.yaml", "a/b.yaml", "a/**/c.yaml", "**/d", "e/**", "!keep.yaml", "f*", "?x.yaml", "[abc].json",
    "[!abc].toml", "[a-c]z", "\\[abc\\].yaml", "[]]x.yaml", "[z-a].yaml", "build/", "doc/*.md", "*a*a*a*ab",
    "x/**/y/**/z", "**/", "\\#hash", "trail\\ ", "[[:digit:]]n", "g**h", "**", "*.y?ml", "[a-]q", "m/", "[abc",
    "bad\\", "a\\*b", "**/build/**", "d/", "*/x.yaml",
]  # fmt: skip
GIT_PATHS = [
    "top.yaml", "x/top.yaml", "a/b.yaml", "q/a/b.yaml", "a/c.yaml", "a/1/2/c.yaml", "d", "q/d", "d/x", "e/x", "e/x/y",
    "keep.yaml", "fo", "q/fa", "ax.yaml", "aax.yaml", "a.json", "d.json", "a.toml", "d.toml", "bz", "dz",
    "[abc].yaml", "a.yaml", "]x.yaml", "z.yaml", "build/q", "q/build/r", "doc/a.md", "doc/x/a.md", "aaaab", "aab",
    "ab", "x/y/z", "x/1/y/2/z", "#hash", "trail ", "trail", "5n", "gxh", "g/h", "q.yml", "aq", "-q", "m/k",
    "[abc", "bad\\", "a*b", "axb", "q/x.yaml",
]  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_gitignore_matcher_agrees_with_git_check_ignore(tmp_path: Path) -> None:
    from precheck.ignore_patterns import compile_pattern, ignored

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    folders = {p for p in GIT_PATHS for q in GIT_PATHS if q.startswith(p + "/")}
    folders |= {str(PurePosixPath(p).parent) for p in GIT_PATHS} - {"."}
    for path in GIT_PATHS:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        if path not in folders:
            (tmp_path / path).touch()
    disagree = []
    for pattern in GIT_PATTERNS:
        (tmp_path / ".gitignore").write_text(pattern + "\n")
        listed = sorted(folders | set(GIT_PATHS))
        done = subprocess.run(
            ["git", "check-ignore", "--no-index", "-z", "--stdin"],
            input="\0".join(listed),
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        by_git = {p for p in done.stdout.split("\0") if p}
        compiled = compile_pattern(pattern, PurePosixPath("."), "test")
        for path in listed:
            mine = compiled is not None and ignored([compiled], PurePosixPath(path), is_dir=path in folders)
            if mine != (path in by_git):
                disagree.append((pattern, path, path in by_git))
    assert disagree == []


def test_the_regular_expression_shortcut_agrees_with_the_linear_matcher() -> None:
    """Simple patterns (one ``*`` at most) use a regular expression; it answers as the
    position-set matcher does."""
    from precheck.ignore_patterns import _run, compile_pattern

    paths = [*GIT_PATHS, "a/b/c/d.yaml", "x.yaml/y", "deep/" * 30 + "f.yaml", "new\nline.yaml"]
    checked = 0
    for pattern in GIT_PATTERNS:
        compiled = compile_pattern(pattern, PurePosixPath("."), "test")
        if compiled is None or compiled.fast is None:
            continue
        checked += 1
        for path in paths:
            assert (compiled.fast.fullmatch(path) is not None) == _run(compiled.tokens, path), (pattern, path)
    assert checked > 15


def test_exclude_and_per_file_ignores_use_the_same_linear_matcher(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.precheck]\nexclude = ["*a*a*a*a*a*a*a*ab"]\nper-file-ignores = {"*a*a*a*a*a*a*a*a*ac" = ["PC205"]}\n'
    )
    (tmp_path / ("a" * 60 + ".yaml")).write_text(GOOD)
    result = run(".", "--exclude", "*a*a*a*a*a*a*a*a*ad", "--format", "concise", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and ("a" * 60 + ".yaml:4:1: PC205") in result.stdout


# --- folder walking --------------------------------------------------------------------------


def test_a_thousand_nested_folders_do_not_lose_the_run(tmp_path: Path) -> None:
    handles = [os.open(tmp_path, os.O_RDONLY)]
    for _ in range(1000):  # os.makedirs recurses: make them one level at a time
        os.mkdir("d", dir_fd=handles[-1])
        handles.append(os.open("d", os.O_RDONLY, dir_fd=handles[-1]))
    try:
        result = run(".", cwd=good(tmp_path))
        assert GOOD_FINDING in result.stdout and result.returncode == 1
    finally:  # shutil.rmtree (pytest's clean-up) recurses too
        for inner, outer in zip(reversed(handles[1:]), reversed(handles[:-1]), strict=True):
            os.close(inner)
            os.rmdir("d", dir_fd=outer)
        os.close(handles[0])


def test_a_folder_search_follows_no_file_symlink_out_of_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(GOOD)
    repo = tmp_path / "repo"
    repo.mkdir()
    good(repo)
    (repo / "link.yaml").symlink_to(outside / "secret.yaml")
    (repo / "inside.yaml").symlink_to(repo / "good.yaml")
    (repo / "dangling.yaml").symlink_to(repo / "nothing.yaml")
    result = run(".", "--format", "concise", cwd=repo)
    assert result.returncode == 1, result.stdout  # the dangling link is no error
    assert GOOD_FINDING in result.stdout and "inside.yaml:4:1: PC205" in result.stdout
    assert "link.yaml" not in result.stdout and "dangling" not in result.stdout


# --- suppressions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("string.yaml", GOOD + "note: 'text # precheck: ignore-file'\n"),
        ("block.yaml", GOOD + "note: |\n  text\n  # precheck: ignore-file\n"),
        ("string.toml", 'model_name_or_path = "m"\nfp16 = true\nbf16 = true\nnote = "a # precheck: ignore-file"\n'),
        ("multi.toml", 'model_name_or_path = "m"\nfp16 = true\nbf16 = true\nnote = """\n# precheck: ignore-file\n"""'),
        ("string.py", "from transformers import TrainingArguments\nx = '# precheck: ignore-file'\n"
         "args = TrainingArguments(output_dir='o', fp16=True, bf16=True)\n"),
        ("run.sh", "echo '# precheck: ignore-file'\naccelerate launch --mixed_precision fp16 train.py --bf16\n"),
    ],
)  # fmt: skip
def test_suppressions_in_strings_silence_nothing(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    if name == "run.sh":
        (tmp_path / "train.py").write_text("from transformers import TrainingArguments\n")
    result = run(name, "good.yaml", "--format", "json", cwd=good(tmp_path))
    rules = {(f["path"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("good.yaml", "PC205") in rules
    if name != "run.sh":
        assert (name, "PC205") in rules


@pytest.mark.parametrize("comment", ["# precheck: ignore-file[", "# precheck: ignore[PC205"])
def test_a_malformed_suppression_silences_nothing_and_is_reported(tmp_path: Path, comment: str) -> None:
    (tmp_path / "c.yaml").write_text(GOOD.replace("bf16: true", f"bf16: true  {comment}"))
    result = run("c.yaml", "--show-unused-suppressions", "--format", "concise", cwd=tmp_path)
    assert "c.yaml:4:1: PC205" in result.stdout
    assert "c.yaml:4:13: PC907" in result.stdout and "silences nothing" in result.stdout


# --- output -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_lone_surrogates_and_non_utf8_names_survive_every_format(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "sur.json").write_text(
        '{"\\udc00": 1, "\\udc00": 2, "model_name_or_path": "m", "learning_rate": 1, "fp16": true, "bf16": true}\n'
    )
    (tmp_path / os.fsdecode(b"bad\xff.yaml")).write_text(GOOD)
    result = run(".", "--format", fmt, cwd=good(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "good.yaml" in result.stdout
    if fmt in ("json", "sarif"):
        json.loads(result.stdout)
    if fmt == "sarif":
        assert "bad%FF.yaml" in result.stdout


@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_control_characters_in_keys_are_escaped(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "esc.yaml").write_text(
        GOOD + '"\\e]0;pwned\\a\\e[2J": 1\n"\\rgood.yaml:9:9: PC101 forged": 1\n"\\rgood.yaml:9:9: PC101 forged": 2\n'
    )
    result = run(".", "--format", fmt, cwd=good(tmp_path))
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\r" not in result.stdout
    assert not any(line.startswith("good.yaml:9:9") for line in result.stdout.splitlines())
    assert GOOD_FINDING in result.stdout or "good.yaml,line=4,col=1" in result.stdout


def test_gpu_names_from_a_probe_file_are_escaped(tmp_path: Path) -> None:
    probe = {"version": 1, "devices": [{"pci_index": 0, "name": "A100\x1b]0;x\x07", "memory_mib": 81920}]}
    (tmp_path / "hw.json").write_text(json.dumps(probe))
    result = subprocess.run(
        [PRECHECK, "--hardware", "hw.json", "good.yaml"],
        capture_output=True,
        text=True,
        cwd=good(tmp_path),
        timeout=SECONDS,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "\x1b" not in result.stdout and "\\x1b" in result.stdout
    assert "good.yaml:4:1: PC205" in result.stdout


# --- --python ---------------------------------------------------------------------------------


def test_python_runs_isolated_so_a_json_py_in_the_repository_is_not_imported(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    result = run("good.yaml", "--python", sys.executable, cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and not marker.exists()


def test_a_bad_python_is_one_error_before_any_file(tmp_path: Path) -> None:
    (tmp_path / "other.yaml").write_text(GOOD)
    result = subprocess.run(
        [PRECHECK, "--gpu", "A100", "--python", "/nonexistent", "good.yaml", "other.yaml"],
        capture_output=True,
        text=True,
        cwd=good(tmp_path),
        timeout=SECONDS,
    )
    assert result.returncode == 2 and "internal error" not in result.stderr
    assert result.stderr.count("--python /nonexistent") == 1, result.stderr


def test_a_slow_python_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    fake.chmod(0o755)
    result = subprocess.run(
        [PRECHECK, "--gpu", "A100", "--python", str(fake), "good.yaml"],
        capture_output=True,
        text=True,
        cwd=good(tmp_path),
        timeout=SECONDS + 10,
    )
    assert result.returncode == 2 and "no answer in" in result.stderr, result.stderr
    child = int(pidfile.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/stat")
    assert not status.exists() or status.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")


# --- --fix ------------------------------------------------------------------------------------

LIGHTNING = "trainer:\n  accelerator: gpu\n  devices: 8\n  precision: 16\n"


def test_fix_on_a_folder_reports_the_file_it_cannot_write_and_checks_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(LIGHTNING)
    (tmp_path / "b.yaml").write_text(LIGHTNING)
    os.link(tmp_path / "b.yaml", tmp_path / "b-twin.txt")  # a hard link: not rewritten
    result = run(".", "--fix", "--format", "json", cwd=good(tmp_path))
    document = json.loads(result.stdout)
    (error,) = document["errors"]
    assert error["path"] == "b.yaml" and error["line"] and error["column"] and "hard links" in error["message"]
    assert "16-mixed" in (tmp_path / "a.yaml").read_text() and (tmp_path / "b.yaml").read_text() == LIGHTNING
    assert any(f["path"] == "good.yaml" and f["rule"] == "PC205" for f in document["findings"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes whatever the mode")
def test_fix_on_a_folder_with_an_unwritable_folder_reports_it(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.yaml").write_text(LIGHTNING)
    locked.chmod(0o555)
    try:
        result = run(".", "--fix", "--format", "json", cwd=good(tmp_path))
    finally:
        locked.chmod(0o755)
    (error,) = json.loads(result.stdout)["errors"]
    assert error["path"].endswith("a.yaml") and error["line"] and error["column"]


def test_fix_never_writes_outside_the_repository(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(LIGHTNING)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "link.yaml").symlink_to(outside)
    result = run("link.yaml", "good.yaml", "--fix", cwd=good(repo))
    assert outside.read_text() == LIGHTNING
    assert "link.yaml:4:3: cannot write the fix: is " in result.stdout and GOOD_FINDING in result.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_fix_keeps_the_owner_of_a_file(tmp_path: Path) -> None:
    target = tmp_path / "a.yaml"
    target.write_text(LIGHTNING)
    os.chown(target, 12345, 23456)
    run("a.yaml", "--fix", cwd=tmp_path)
    info = target.stat()
    assert "16-mixed" in target.read_text() and (info.st_uid, info.st_gid) == (12345, 23456)
    assert stat.S_IMODE(info.st_mode) == 0o644


def test_a_broken_file_named_by_a_config_keeps_the_config_findings(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(GOOD + "deepspeed: ds.json\n")
    (tmp_path / "ds.json").write_text('{"fp16": {"enabled": true},\n')
    result = run(".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.count("ds.json:2:1: invalid JSON") == 1, result.stdout
    assert "train.yaml:4:1: PC205" in result.stdout and "-1" not in result.stdout


def test_a_broken_model_config_json_keeps_the_config_findings(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"torch_dtype": "bfloat16",\n')
    (tmp_path / "train.yaml").write_text(GOOD.replace("model_name_or_path: m", "model_name_or_path: model"))
    result = run("train.yaml", cwd=tmp_path)
    assert result.returncode == 2 and "config.json:2:1: invalid JSON" in result.stdout
    assert "train.yaml:4:1: PC205" in result.stdout


# --- large files ------------------------------------------------------------------------------


def test_a_four_megabyte_one_command_script(tmp_path: Path) -> None:
    flags = " ".join(f"--a{i} 1" for i in range(400_000))
    (tmp_path / "one.sh").write_text(f"#!/bin/bash\naccelerate launch --mixed_precision fp16 train.py {flags}\n")
    result = run("one.sh", "good.yaml", cwd=good(tmp_path))
    assert "one.sh:2:" in result.stdout and GOOD_FINDING in result.stdout


#: a file of 16 MiB less a little: under the size limit, so only the value budget bounds it
SIZE = 16 * 1024 * 1024 - 64
TOO_MANY = "more than 1,500,000 values (keys, values and collections) in one file; not read"


def _flat(opening: str, item: str, closing: str) -> str:
    count = (SIZE - len(opening) - len(closing)) // (len(item) + 1)
    return opening + ",".join([item] * count) + closing


def test_a_sixteen_mib_yaml_sequence_of_scalars_is_refused_at_the_budget(tmp_path: Path) -> None:
    (tmp_path / "ones.yaml").write_text(_flat("[", "1", "]\n"))  # 8 million values
    result = run("ones.yaml", "good.yaml", cwd=good(tmp_path))
    # the sequence is value 1, so value 1,500,001 is the 1,500,000th ``1``, at column 3,000,000
    assert f"ones.yaml:1:3000000: {TOO_MANY}" in result.stdout
    assert result.returncode == 2 and GOOD_FINDING in result.stdout


def test_sixteen_mib_of_nested_flow_mappings_is_refused_at_the_budget(tmp_path: Path) -> None:
    nested = "{a: " * 100 + "1" + "}" * 100  # 201 values, 100 levels (under the depth bound)
    (tmp_path / "flow.yaml").write_text(_flat("[", nested, "]\n"))
    result = run("flow.yaml", "good.yaml", cwd=good(tmp_path))
    assert re.search(rf"^flow\.yaml:1:\d+: {re.escape(TOO_MANY)}$", result.stdout, re.MULTILINE), result.stdout[:2000]
    assert result.returncode == 2 and GOOD_FINDING in result.stdout


def test_a_sixteen_mib_flat_json_array_is_refused_at_the_budget(tmp_path: Path) -> None:
    (tmp_path / "ones.json").write_text(_flat("[", "1", "]"))
    result = run("ones.json", "good.yaml", cwd=good(tmp_path))
    assert f"ones.json:1:3000000: {TOO_MANY}" in result.stdout
    assert result.returncode == 2 and GOOD_FINDING in result.stdout


def test_a_sixteen_mib_json_object_of_many_keys_is_refused_at_the_budget(tmp_path: Path) -> None:
    entries, size, index = [], 2, 0
    while size < SIZE - 32:
        entries.append(f'"k{index}":{index}')
        size += len(entries[-1]) + 1
        index += 1
    text = "{" + ",".join(entries) + "}"
    (tmp_path / "keys.json").write_text(text)
    # value 1 is the object; key k and its value are values 2k+2 and 2k+3: 1,500,001 is k749999's value
    column = text.index('"k749999":') + len('"k749999":') + 1
    result = run("keys.json", "good.yaml", cwd=good(tmp_path))
    assert f"keys.json:1:{column}: {TOO_MANY}" in result.stdout
    assert result.returncode == 2 and GOOD_FINDING in result.stdout


def test_a_sixteen_mib_toml_array_is_refused_before_tomllib_reads_it(tmp_path: Path) -> None:
    (tmp_path / "ones.toml").write_text(_flat("a = [", "1", "]\n"))
    result = run("ones.toml", "good.yaml", cwd=good(tmp_path))
    # tokens: ``a``, ``[``, then the ones from column 6: token 1,500,001 is at 6 + 2 * 1,499,998
    assert f"ones.toml:1:3000002: {TOO_MANY}" in result.stdout
    assert result.returncode == 2 and GOOD_FINDING in result.stdout


def test_a_folder_search_reports_a_config_past_the_value_budget(tmp_path: Path) -> None:
    """A training config refused for its size is reported, not skipped (issue 30); a data
    file without a config's words is passed over."""
    (tmp_path / "ones.yaml").write_text("fp16: true\nvalues: " + _flat("[", "1", "]\n")[:-30] + "]\n")
    (tmp_path / "data.yaml").write_text("values: " + _flat("[", "1", "]\n")[:-30] + "]\n")
    result = run(".", "--format", "concise", cwd=good(tmp_path))
    assert GOOD_FINDING in result.stdout and "ones.yaml:2:" in result.stdout and TOO_MANY in result.stdout
    assert "data.yaml" not in result.stdout and result.returncode == 2


@pytest.mark.parametrize(
    ("name", "within", "over", "where"),
    [
        ("c.yaml", "a: [1, 2]\nb: {c: 3}\n", "a: [1, 2]\nb: {c: 3, d: 4}\n", "2:11"),
        ("c.json", '{"a": [1, 2], "b": {"c": 3}}', '{"a": [1, 2], "b": {"c": 3, "d": 4}}', "1:29"),
        ("c.json", '{"a": [1, 2], "b": {"c": 3}}', '{"a": [1, 2], "b": {"c": 3, "d": 4}, }', "1:29"),
        ("c.toml", "# a, b, c\na = [1, 2] # 3, 4\n[b]\nc = 3\n", "a = [1, 2]\n[b]\nc = 3\nd = 4\n", "4:5"),
    ],
)
def test_the_value_budget_counts_keys_values_and_collections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, within: str, over: str, where: str
) -> None:
    """9 values (the root, 3 keys, 2 collections, 3 leaves) are read under a budget of 9; a
    10th (the key ``d``) is refused where it starts, even when the file is broken after it.
    TOML counts tokens (``[b]`` is two, comments none): the 10th is ``4``."""
    from precheck.errors import FileTooLarge
    from precheck.sources import json_source, load, nodes, toml_source, yaml_source

    for module in (nodes, json_source, yaml_source, toml_source):
        monkeypatch.setattr(module, "MAX_VALUES", 9)
    path = tmp_path / name
    path.write_text(within)
    assert load(path).root.plain() == {"a": [1, 2], "b": {"c": 3}}
    path.write_text(over)
    with pytest.raises(FileTooLarge) as refused:
        load(path)
    assert refused.value.location() == f"{path}:{where}" and "more than 9 values" in refused.value.message


def test_positions_cost_no_scan_from_the_start() -> None:
    from precheck.sources.nodes import position

    text = "x\n" * 2_000_000
    started = time.monotonic()
    for offset in range(0, len(text), 100):
        position(text, offset)
    assert position(text, len(text) - 1) == (2_000_000, 2)
    assert time.monotonic() - started < 5


# --- hardware ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [('"compute_capability": 80', "'compute_capability' must be a string"), ('"memory_mib": NaN', "finite number")],
)
def test_bad_probe_file_entries_are_input_errors_with_a_position(tmp_path: Path, entry: str, message: str) -> None:
    device = '{"pci_index": 0, "name": "A100", "memory_mib": 81920, ' + entry + "}"
    (tmp_path / "hw.json").write_text('{"version": 1, "devices": [\n  ' + device + "\n]}\n")
    result = subprocess.run(
        [PRECHECK, "--hardware", "hw.json", "good.yaml"],
        capture_output=True,
        text=True,
        cwd=good(tmp_path),
        timeout=SECONDS,
    )
    assert result.returncode == 2 and "hw.json:2:" in result.stderr and message in result.stderr, result.stderr
    assert "internal error" not in result.stderr


def test_full_width_digits_and_repeats_in_cuda_visible_devices() -> None:
    from precheck.hardware import from_specs, with_visibility

    two = from_specs(["A100", "A100"], {})
    wide = with_visibility(two, {"CUDA_VISIBLE_DEVICES": "０"})
    assert wide.devices == [] and "names no device" in wide.notes[-1]
    twice = with_visibility(two, {"CUDA_VISIBLE_DEVICES": "0,0"})
    assert len(twice.devices) == 1 and "'0' repeats a device listed before it" in twice.notes[-1]


def test_megabytes_of_python_code_are_refused_not_evaluated(tmp_path: Path) -> None:
    """A 15 MiB notebook of 110,000 training cells, or a 16 MiB script, is no training script:
    refused with its size (a named file: exit 2; the good config still reported), never read
    into gigabytes of syntax trees."""
    cell = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [],
        "source": ["args = TrainingArguments(output_dir='o', fp16=True, bf16=True)\n"],
    }
    notebook = {"cells": [cell] * 110_000, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "many.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "big.py").write_text("from transformers import TrainingArguments\n" + "x = [1, 2, 3]\n" * 1_100_000)
    result = run("many.ipynb", "big.py", "good.yaml", cwd=good(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert GOOD_FINDING in result.stdout
    assert "many.ipynb: " in result.stdout and "MiB of Python code, over the 2 MiB" in result.stdout
    assert "big.py: " in result.stdout and "nested too deeply" not in result.stdout
    folder = run(".", cwd=tmp_path)  # a folder search passes both over
    assert GOOD_FINDING in folder.stdout and "many.ipynb" not in folder.stdout
