"""Odd inputs found in review: each gets a clear outcome and never stops the other files."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from helpers import write
from precheck import engine
from precheck.errors import InputError
from precheck.hardware import from_specs
from precheck.rules import select_rules
from precheck.rules.base import Edit
from precheck.sources import parse, yaml_source

ROOT = Path(__file__).resolve().parents[1]
SEED = (ROOT / "examples/configs/ms-swift-v100/fp16-false-ignored.yaml").read_text()
V100 = from_specs(["V100"], {})


def codes(report: engine.Report) -> set[str]:
    return {f.rule for f in report.findings}


def test_deep_yaml_is_an_input_error_and_other_files_are_still_checked(tmp_path: Path) -> None:
    write(tmp_path, "deep.yaml", "fp16: true\na: " + "[" * 600 + "]" * 600 + "\n")
    write(tmp_path, "zz.yaml", SEED)
    report = engine.run([str(tmp_path)], V100, env={})
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
    report = engine.run([str(tmp_path)], V100, env={})
    assert [e.path for e in report.internal_errors] == [str(tmp_path / "a.yaml")]
    assert "PC201" in codes(report) and report.exit_code() == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_unreadable_folder_is_reported(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    write(locked, "x.yaml", SEED)
    locked.chmod(0)
    try:
        report = engine.run([str(tmp_path)], V100, env={})
    finally:
        locked.chmod(0o755)
    assert [e.message for e in report.errors] == ["this folder cannot be read"]


def test_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    report = engine.run([str(tmp_path / "pipe.yaml")], V100, env={})
    assert "not a regular file" in report.errors[0].message


def test_unparsable_non_configs_in_a_folder_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "chart/templates/deploy.yaml", "metadata:\n  name: {{ .Release.Name }\n  x: [\n")
    write(tmp_path, "tsconfig.json", '{ // comment\n "compilerOptions": {} }\n')
    write(tmp_path, "broken-train.yaml", "fp16: true\nbf16: [\n")
    report = engine.run([str(tmp_path)], V100, env={})
    assert [Path(e.path).name for e in report.errors] == ["broken-train.yaml"]
    assert sum(1 for f in report.files if f.skipped) == 2


def test_ms_swift_env_block_steers_the_devices(tmp_path: Path) -> None:
    write(
        tmp_path,
        "s.yaml",
        "ENV:\n  CUDA_DEVICE_ORDER: PCI_BUS_ID\n  CUDA_VISIBLE_DEVICES: '5'\nmodel: m\ntrain_type: lora\n",
    )
    report = engine.run([str(tmp_path / "s.yaml")], from_specs(["TITAN RTX", "GTX 1080 Ti"], {}), env={})
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
    report = engine.run([str(tmp_path / "t.yaml")], V100, env={})
    assert "PC401" in codes(report)
    assert report.files[0].plan is not None and report.files[0].plan.load_dtype.value == "float16"


# --- hostile and broken inputs (issue 8) ---------------------------------------------------
#
# One mixed run through the real CLI, in its own process (a regression to libyaml's
# unbounded recursion would be a segmentation fault, not a failed assertion), under a
# memory limit: each bad file gets its position and message, the good file its findings.


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def merge_laughs(levels: int = 9) -> str:
    """The same bomb through merge keys and mappings."""
    lines = ["b0: &b0 {x: 1, y: 2}"]
    for i in range(1, levels + 1):
        lines.append(f"b{i}: &b{i}")
        lines.append(f"  <<: *b{i - 1}")
        lines += [f"  k{j}: *b{i - 1}" for j in range(9)]
    return "\n".join(lines) + "\n"


HF = "model_name_or_path: m\noutput_dir: o\nlearning_rate: 1.0e-5\n"
DEEP = 100_000
#: what precheck guarantees for nesting: a position and a message about depth. Whose message
#: wins depends on the PyYAML build (libyaml 0.2.5 with PyYAML 6.0.4 stops flow collections
#: at 1000 levels, "exceeded maximum nesting depth", before precheck's own 200-level limit)
NESTING = re.compile(r":\d+:\d+: (?:.*exceeded maximum nesting depth|(invalid JSON: )?nesting deeper than 200 levels)")
#: file name -> (content, the start of "line:col: message" expected (a pattern where the
#: message is not precheck's own), or None when it reads fine). Each file that does not
#: parse holds a training config's words (`fp16`): named files without them are skipped
HOSTILE: dict[str, tuple[bytes, str | re.Pattern[str] | None]] = {
    "laughs.yaml": ((HF + billion_laughs()).encode(), ":9:5: aliases expand this document by more than 100,000"),
    "laughs-merge.yaml": ((HF + merge_laughs()).encode(), ":49:5: aliases expand this document by more than"),
    "recursive.yaml": (b"fp16: true\na: &a\n  b: *a\n", ":2:4: an alias refers to a value that contains it"),
    "deep-flow.yaml": (b"fp16: true\na: " + b"[" * DEEP + b"]" * DEEP + b"\n", NESTING),
    "deep-maps.yaml": (b"fp16: true\nx: " + b"{a: " * DEEP + b"1" + b"}" * DEEP + b"\n", NESTING),
    "deep-block.yaml": (b"fp16: true\nx:\n" + b"- " * DEEP + b"x\n", NESTING),
    "deep.json": (b'{"fp16": ' + b"[" * DEEP + b"]" * DEEP + b"}", NESTING),
    "deep.toml": (b"fp16 = true\na = " + b"[" * DEEP + b"]" * DEEP + b"\n", NESTING),
    "long-line.yaml": (b"fp16: true\nnote: " + b"x" * 10_000_000 + b"\n", None),
    "binary.yaml": (b"fp16: true\nab\x00\x01\x02\x03", ":2:3: binary file (contains NUL bytes)"),
    "binary-bytes.yaml": (b"fp16: true\nab\x00\xff", ":2:4: not UTF-8 text (byte 0xff)"),
    "latin-1.yaml": ("fp16: true\nname: café\n".encode("latin-1"), ":2:10: not UTF-8 text (byte 0xe9)"),
    "utf-16.yaml": (("\ufeff" + HF + "fp16: true\nbf16: true\n").encode("utf-16-le"), None),
    "utf-16-no-bom.json": ('{"fp16": true}\n'.encode("utf-16-le") + b"fp16", ":1:2: binary file (contains NUL"),
    "utf-8-bom.json": (b'\xef\xbb\xbf{"fp16": true, "bf16": true, "output_dir": "o", "learning_rate": 1e-5}', None),
    "empty.yaml": (b"", None),
    "empty.json": (b"", None),
    "empty.toml": (b"", None),
    "blank.yaml": (b"\n  \n# nothing\n", None),
    "tabs.yaml": (b"fp16: true\nfsdp_config:\n\tmixed: 1\n", ":3:1: while scanning for the next token found character"),
    "big-int.yaml": (b"fp16: true\nseed: " + b"9" * 10_000 + b"\n", ":2:7: an integer of 10000 digits"),
    "big-int.json": (b'{"fp16": true,\n "seed": ' + b"9" * 10_000 + b"}", ":2:10: invalid JSON: an integer of 10000"),
    "big-int.toml": (b"fp16 = true\nseed = " + b"9" * 10_000 + b"\n", ":2:8: an integer of 10000 digits"),
    "floats.yaml": (
        (HF + "fp16: true\nmax_grad_norm: .nan\nwarmup_ratio: -.inf\nweight_decay: 1.0e+400\n").encode(),
        None,
    ),
    "floats.json": (b'{"fp16": true, "output_dir": "o", "max_grad_norm": NaN, "learning_rate": 1e400}', None),
    "comments.json": (b'{\n  // fp16\n  "fp16": true\n}\n', ":2:3: invalid JSON: comments are not allowed in JSON"),
    "trailing-comma.json": (b'{"fp16": true,\n}\n', ":2:1: invalid JSON: trailing comma before '}'"),
    "broken.toml": (b"fp16 = true\nbf16 =\n", ":2:7: invalid TOML"),
    "not-a-bool.yaml": (b"fp16: !!bool maybe\n", ":1:7: `maybe` is not a valid bool"),
    "bad-date.yaml": ((HF + "fp16: true\nstarted: 2023-02-30\n").encode(), None),
}

#: files that do not parse and hold none of a training config's words: skipped, named or found
NOT_CONFIGS = {
    "deep-data.json": b"[" * DEEP + b"]" * DEEP,
    "helm.yaml": b'metadata:\n  name: {{ .Release.Name }}\n  labels: {{- include "x" . | nindent 4 }}\n',
}


def run_cli(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``precheck ARGS`` in its own process, with at most 2 GiB of address space."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    return subprocess.run(
        [sys.executable, "-m", "precheck", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        preexec_fn=limit,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name, (data, _) in HOSTILE.items():
        (folder / name).write_bytes(data)
    for name, data in NOT_CONFIGS.items():
        (folder / name).write_bytes(data)
    with (folder / "huge.yaml").open("wb") as sparse:  # 100 MiB, no disk blocks
        sparse.truncate(100 * 1024 * 1024)
    (folder / "loop.yaml").symlink_to("loop.yaml")
    (folder / "zz-seed.yaml").write_text(SEED)
    return folder


def test_hostile_files_each_get_a_position_and_the_good_file_is_still_checked(hostile: Path) -> None:
    too_long = "n" * 5000 + ".yaml"
    names = [*HOSTILE, *NOT_CONFIGS, "huge.yaml", "loop.yaml", "missing.yaml", too_long, "zz-seed.yaml"]
    started = time.monotonic()
    result = run_cli("--gpu", "V100", *names, cwd=hostile)
    assert time.monotonic() - started < 60
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    for name, (_, expected) in HOSTILE.items():
        if isinstance(expected, re.Pattern):
            assert re.search(re.escape(name) + expected.pattern, result.stdout), (name, result.stdout[:3000])
        elif expected is not None:  # the files read fine have no error: see the JSON test
            assert f"{name}{expected}" in result.stdout, (name, result.stdout[:3000])
    assert "huge.yaml: file is 100 MiB, over the 16 MiB limit" in result.stdout
    assert "loop.yaml: cannot read: Too many levels of symbolic links" in result.stdout
    assert "missing.yaml: no such file" in result.stdout
    assert f"{too_long}: cannot read: File name too long" in result.stdout
    assert "zz-seed.yaml:5:1: PC201" in result.stdout, "the other files are still checked"
    for name in NOT_CONFIGS:  # named, but no training config: a note, not an error
        template = name == "helm.yaml"  # Go template markers: a template, whatever its words
        note = "a template (Go/Jinja markers" if template else "not parsable and not a training config ("
        assert f"{name}: note: skipped, {note}" in result.stdout
    assert "utf-16.yaml:5:1: PC205" in result.stdout, "UTF-16 with a BOM is read, at the right lines"
    assert "utf-8-bom.json:1:2: PC205" in result.stdout


def test_hostile_files_in_json_output(hostile: Path) -> None:
    result = run_cli("--gpu", "V100", "--format", "json", *HOSTILE, cwd=hostile)
    document = json.loads(result.stdout)
    errors = {e["path"]: e for e in document["errors"]}
    assert set(errors) == {name for name, (_, expected) in HOSTILE.items() if expected is not None}
    assert all(isinstance(e["line"], int) and isinstance(e["column"], int) for e in errors.values())


def test_a_folder_with_hostile_files_passes_over_what_is_not_a_config(hostile: Path) -> None:
    """A folder search reports the broken configs, skips the huge file, never follows the loop
    (in its own process too: libyaml's recursion would crash this one)."""
    code = (
        "import json, sys\n"
        "from precheck import engine\n"
        "from precheck.hardware import from_specs\n"
        "report = engine.run([sys.argv[1]], from_specs(['V100'], {}), env={})\n"
        "files = {f.path.rsplit('/', 1)[-1]: [f.error and f.error.message, f.skipped, f.internal and str(f.internal)]"
        " for f in report.files}\n"
        "print(json.dumps({'files': files, 'codes': sorted({x.rule for x in report.findings})}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(hostile)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    files = document["files"]
    assert files["huge.yaml"][0] is None and "over the 16 MiB limit" in files["huge.yaml"][1]
    assert "aliases expand" in files["laughs.yaml"][0] and "an integer of 10000 digits" in files["big-int.yaml"][0]
    assert "nesting" in files["deep.json"][0]  # `fp16`: a training config's word
    for name in NOT_CONFIGS:  # no word of a training config
        assert files[name][0] is None and files[name][1] is not None
    assert not any(internal for _, _, internal in files.values())
    assert "PC201" in document["codes"]


# --- alias bombs and deep nesting, read directly ------------------------------------------


@pytest.mark.parametrize("text", [billion_laughs(), merge_laughs(), billion_laughs(20)], ids=["list", "merge", "20"])
def test_alias_bombs_are_refused_in_bounded_time(text: str) -> None:
    started = time.monotonic()
    with pytest.raises(InputError, match="aliases expand this document by more than 100,000 values"):
        parse("bomb.yaml", HF + text, "yaml")
    assert time.monotonic() - started < 2


def test_shared_anchors_of_real_configs_are_read() -> None:
    text = "base: &base {fp16: true, lr: 1}\n" + "".join(f"run{i}:\n  <<: *base\n  seed: {i}\n" for i in range(500))
    document = parse("runs.yaml", text, "yaml")
    assert document.mapping()["run499"].plain() == {"seed": 499, "fp16": True, "lr": 1}


def test_aliases_cannot_nest_deeper_than_the_limit() -> None:
    """Each alias adds one level to a value defined above: 300 of them nest 300 deep."""
    text = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 300))
    with pytest.raises(InputError, match="nesting deeper than 200 levels"):
        parse("chain.yaml", text, "yaml")


@pytest.mark.parametrize("depth", [600, DEEP])
def test_pure_python_yaml_reports_depth_not_recursion(monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    """PyYAML without libyaml raises RecursionError where libyaml's composer crashes."""
    monkeypatch.setattr(yaml_source, "_Loader", yaml.SafeLoader)
    with pytest.raises(InputError, match=r"^deep.yaml:1:\d+: nesting deeper than 200 levels$"):
        parse("deep.yaml", "a: " + "[" * depth + "]" * depth + "\n", "yaml")


@pytest.mark.parametrize(
    "text",
    ["a = " + "{b = " * 300 + "1" + "}" * 300, "a = " + "[" * 250 + "]" * 250, "[" + ".".join(["t"] * 300) + "]\nx=1"],
)
def test_deep_toml_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError, match="nesting deeper than 200 levels"):
        parse("deep.toml", text, "toml")


def test_custom_tags_never_construct_anything(tmp_path: Path) -> None:
    marker = tmp_path / "constructed"
    text = (
        f'fp16: !!python/object/apply:os.system ["touch {marker}"]\n'
        f'bf16: !!python/object/new:os.system ["touch {marker}"]\n'
        f"dtype: !!python/name:os.system\n"
        f"mod: !!python/module:os\n"
        f'? !!python/object/apply:os.system ["touch {marker}"]\n'
        f": key\n"
        f"run: !custom {{cmd: touch {marker}}}\n"
    )
    document = parse("tags.yaml", text, "yaml")
    assert not marker.exists()
    values = document.root.plain()
    assert (
        values["fp16"] == [f"touch {marker}"] and values["dtype"] == "" and values["run"] == {"cmd": f"touch {marker}"}
    )
    # and through the CLI, every output format
    config = write(tmp_path, "tags.yaml", text)
    for fmt in ("text", "json", "sarif"):
        assert run_cli("--gpu", "V100", "--format", fmt, str(config)).returncode in (0, 1)
    assert not marker.exists()


def test_yaml_streams_check_the_first_document_and_say_so(tmp_path: Path) -> None:
    write(tmp_path, "stream.yaml", SEED + "---\nfp16: true\n---\n")
    report = engine.run([str(tmp_path / "stream.yaml")], V100, env={})
    assert {"PC201", "PC903"} <= codes(report) and not report.errors


# --- files and folders that cannot be read ---------------------------------------------------


def test_an_unreadable_file_is_reported_and_the_others_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """chmod 000 does not stop root (CI often runs as root): the read itself is made to fail."""
    locked = write(tmp_path, "locked.yaml", SEED)
    write(tmp_path, "open.yaml", SEED)
    from precheck import sources

    real = sources.read_bytes

    def read_bytes(path: Path, limit: int = sources.MAX_BYTES) -> bytes:
        if Path(path).name == "locked.yaml":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, limit)

    monkeypatch.setattr(sources.reading, "read_bytes", read_bytes)
    report = engine.run([str(tmp_path)], V100, env={})
    assert [str(e) for e in report.errors] == [f"{locked}: cannot read: Permission denied"]
    assert [Path(f.origin.path or "").name for f in report.findings if f.rule == "PC201"] == ["open.yaml"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission_is_reported(tmp_path: Path) -> None:
    locked = write(tmp_path, "locked.yaml", SEED)
    locked.chmod(0)
    try:
        result = run_cli("--gpu", "V100", str(tmp_path))
    finally:
        locked.chmod(0o644)
    assert f"{locked}: cannot read: Permission denied" in result.stdout and result.returncode == 2


def test_symlink_loops_in_folders_are_not_followed(tmp_path: Path) -> None:
    write(tmp_path, "a/train.yaml", SEED)
    (tmp_path / "a" / "back").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "a" / "self").symlink_to(tmp_path / "a" / "self")
    started = time.monotonic()
    report = engine.run([str(tmp_path)], V100, env={})
    assert time.monotonic() - started < 10
    assert [Path(f.path).name for f in report.files if f.error is None] == ["train.yaml"]
    assert "PC201" in codes(report)


@pytest.mark.slow
def test_ten_thousand_files_in_a_folder(tmp_path: Path) -> None:
    for index in range(10_000):
        (tmp_path / f"c{index:05d}.yaml").write_text(f"name: run{index}\nsteps: {index}\n")
    write(tmp_path, "zz/train.yaml", SEED)
    started = time.monotonic()
    report = engine.run([str(tmp_path)], V100, env={})
    assert time.monotonic() - started < 60
    assert len(report.files) == 10_001 and not report.errors and "PC201" in codes(report)


# --- no network at run time -------------------------------------------------------------------

#: runs ``precheck ARGS`` with every way to the network replaced by one that records the
#: attempt and fails; the attempts are printed last, so a caught failure still shows
NO_NETWORK = """
import atexit, json, socket, sys

attempts = []

def refuse(name):
    def blocked(*args, **kwargs):
        attempts.append(name + repr(args[:2]))
        raise OSError("network blocked by the test: " + name)
    return blocked

for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
    setattr(socket, name, refuse(name))

class NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        attempts.append("socket" + repr(args[:2]))
        raise OSError("network blocked by the test: socket")

socket.socket = NoSocket
atexit.register(lambda: sys.stderr.write("NETWORK-ATTEMPTS " + json.dumps(attempts) + "\\n"))
from precheck.cli import main
main(sys.argv[1:])
"""


def run_offline(*args: str, cwd: Path = ROOT, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_", "HF_", "TRANSFORMERS_"))}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-c", NO_NETWORK, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_the_network_blocker_records_attempts() -> None:
    """The blocker itself works: a command that connects is caught and recorded."""
    code = NO_NETWORK.replace(
        "from precheck.cli import main\nmain(sys.argv[1:])",
        "import urllib.request\n"
        "try:\n    urllib.request.urlopen('https://huggingface.co', timeout=1)\nexcept OSError:\n    pass",
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert 'NETWORK-ATTEMPTS ["getaddrinfo' in result.stderr or 'NETWORK-ATTEMPTS ["create_connection' in result.stderr


CORPUS = ROOT.parent / "shared" / "corpus"
OFFLINE_COMMANDS = [
    ("--gpu", "V100", "examples/configs"),
    ("--gpu", "8xA100-80GB", "--format", "sarif", *([str(CORPUS)] if CORPUS.is_dir() else ["examples"])),
    ("--gpu", "RTX 4090", "--format", "json", "--diff", "examples/configs"),
    ("explain", "--gpu", "A100", "examples/configs"),
    ("explain", "--format", "json", "--gpu", "TITAN RTX", "--gpu", "GTX 1080 Ti", "examples/configs"),
    ("rules",),
    ("rule", "PC201"),
    ("gpus",),
]


@pytest.mark.parametrize("args", OFFLINE_COMMANDS, ids=lambda a: " ".join(a)[:40])
def test_commands_never_touch_the_network(args: tuple[str, ...]) -> None:
    result = run_offline(*args)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "NETWORK-ATTEMPTS []" in result.stderr, result.stderr[-2000:]


def test_probe_without_nvidia_smi_never_touches_the_network(tmp_path: Path) -> None:
    """No driver tool on PATH: the probe says so, quickly, and asks nobody over the network."""
    started = time.monotonic()
    result = run_offline("probe", path=str(tmp_path))
    assert time.monotonic() - started < 30
    assert result.returncode == 0 and "NETWORK-ATTEMPTS []" in result.stderr, result.stderr
    assert "nvidia-smi not found" in result.stdout + result.stderr


@pytest.mark.hf
def test_deep_checks_never_touch_the_network() -> None:
    """``--deep`` imports transformers and builds models on the meta device: from the
    installed code and the configs precheck ships, never from the Hub."""
    pytest.importorskip("transformers")
    result = run_offline("--deep", "--gpu", "A100", "examples/configs")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "NETWORK-ATTEMPTS []" in result.stderr, result.stderr[-2000:]


# --- --fix writes atomically, and nothing is written without it -----------------------------

LIGHTNING = "trainer:\n  accelerator: gpu\n  devices: 8\n  precision: 16   # legacy\nmodel:\n  class_path: my.Module\n"


def run_patched(patch: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``precheck ARGS`` with ``patch`` run first (to inject a failure)."""
    code = f"import os, signal, sys, tempfile\n{patch}\nfrom precheck.cli import main\nmain(sys.argv[1:])\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=120, env=os.environ
    )


def state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``folder``: its bytes and modification time, by relative path."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    ("patch", "code", "message"),
    [
        ("def stop(*a):\n    raise KeyboardInterrupt\nos.replace = stop", 130, ""),
        ("def full(*a):\n    raise OSError(28, 'No space left on device')\nos.replace = full", 2, "No space left"),
        ("def denied(*a, **k):\n    raise PermissionError(13, 'Permission denied')\ntempfile.mkstemp = denied", 2, ""),
    ],
    ids=["interrupted", "disk-full", "read-only-folder"],
)
def test_a_fix_that_fails_before_the_rename_leaves_the_file_whole(
    tmp_path: Path, patch: str, code: int, message: str
) -> None:
    (tmp_path / "lightning.yaml").write_text(LIGHTNING)
    before = state(tmp_path)
    result = run_patched(patch, "--fix", "lightning.yaml", cwd=tmp_path)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    if code == 2:  # the file's own error in the report, at the finding its fix was for
        assert re.search(r"lightning\.yaml:\d+:\d+: cannot write the fix: " + message, result.stdout), result.stdout
    assert state(tmp_path) == before  # the original, byte for byte, and no temporary file


def test_a_fix_killed_between_write_and_rename_leaves_the_original_and_a_hidden_spare(tmp_path: Path) -> None:
    """SIGKILL runs no clean-up: the original is whole, the temporary file beside it is hidden
    (a dot name with a .precheck suffix), so later checks never read it, and --fix works again."""
    (tmp_path / "lightning.yaml").write_text(LIGHTNING)
    result = run_patched("os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)", "--fix", ".", cwd=tmp_path)
    assert result.returncode == -signal.SIGKILL
    assert (tmp_path / "lightning.yaml").read_text() == LIGHTNING
    spare = [p for p in tmp_path.iterdir() if p.name != "lightning.yaml"]
    assert len(spare) == 1 and spare[0].name.startswith(".lightning.yaml.") and spare[0].suffix == ".precheck"
    assert "16-mixed" in spare[0].read_text()  # written and flushed in full before the rename
    again = run_cli("--format", "json", ".", cwd=tmp_path)
    assert [f["path"] for f in json.loads(again.stdout)["files"]] == ["lightning.yaml"]
    assert run_cli("--fix", ".", cwd=tmp_path).returncode == 0
    assert "precision: 16-mixed   # legacy" in (tmp_path / "lightning.yaml").read_text()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The examples, a few real configs and odd files: every format, scripts and pins."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    corpus = ROOT.parent / "shared" / "corpus"
    for source in sorted(corpus.rglob("*.*"))[:40] if corpus.is_dir() else []:
        (tmp_path / "corpus").mkdir(exist_ok=True)
        shutil.copy(source, tmp_path / "corpus" / source.name)
    write(tmp_path, "odd/lightning.yaml", LIGHTNING)
    write(tmp_path, "odd/bom.yaml", "\ufeff" + LIGHTNING)
    write(tmp_path, "odd/broken.yaml", "fp16: [\n")
    write(tmp_path, "odd/.precheck.toml", 'ignore = ["PC902"]\n')
    return tmp_path


def test_nothing_is_written_without_fix(tree: Path) -> None:
    before = state(tree)
    listing = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    commands = [
        *(("--gpu", "A100", "--format", fmt, ".") for fmt in ("text", "concise", "json", "sarif", "github")),
        ("--gpu", "V100", "--diff", "--unsafe-fixes", "."),
        ("--gpu", "V100", "--show-unused-suppressions", "--select", "ALL", "."),
        ("explain", "--gpu", "V100", "."),
        ("explain", "--format", "json", "--gpu", "RTX 4090", "."),
        ("probe", "--json"),
    ]
    for args in commands:
        result = run_cli(*args, cwd=tree)
        assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, (args, result.stderr)
        if args[0] == "probe":
            continue
        # each command really read the tree: the broken file is an error, the others are checked
        marker = "@@ " if "--diff" in args else "precision flow" if args[0] == "explain" else "PC201"
        marker = "load_dtype" if args[0] == "explain" and "json" in args else marker
        assert marker in result.stdout and result.returncode == 2, (args, result.stderr)  # 2: broken.yaml
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == listing  # no file added or removed
    assert state(tree) == before  # bytes and modification times


# --- an unexpected internal error ---------------------------------------------------------------

BREAK_A_RULE = """
from dataclasses import replace
import precheck.frameworks  # the registry: fills the rule registry's table of framework rules
import precheck.rules as rules

def boom(context):
    if context.config.path.endswith("a.yaml"):
        raise ZeroDivisionError("injected into PC201")
    yield from original(context)

original = rules.RULES["PC201"].check
rules.RULES["PC201"] = replace(rules.RULES["PC201"], check=boom)
"""

BREAK_RESOLVE = """
import precheck.resolve as resolve
original = resolve.resolve

def boom(config, hardware, versions):
    if config.path.endswith("a.yaml"):
        raise ZeroDivisionError("injected into resolve")
    return original(config, hardware, versions)

resolve.resolve = boom
"""


@pytest.mark.parametrize(
    ("patch", "args"),
    [
        (BREAK_A_RULE, ("--gpu", "V100", "a.yaml", "b.yaml")),
        (BREAK_A_RULE, ("--gpu", "V100", "--format", "json", ".")),
        (BREAK_RESOLVE, ("explain", "--gpu", "V100", "a.yaml", "b.yaml")),
    ],
    ids=["rule", "rule-json", "explain"],
)
def test_an_internal_error_names_the_file_and_the_others_are_still_reported(
    tmp_path: Path, patch: str, args: tuple[str, ...]
) -> None:
    write(tmp_path, "a.yaml", SEED)
    write(tmp_path, "b.yaml", SEED)
    result = run_patched(patch, *args, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr, result.stderr
    assert "internal error while checking a.yaml: ZeroDivisionError: injected" in result.stderr.replace("./", "")
    assert "This is a bug in precheck; please report it" in result.stderr and "--debug" in result.stderr
    assert "b.yaml" in result.stdout and "a.yaml:5:1" not in result.stdout  # b is reported, a has no findings
    if args[0] != "explain":
        assert "PC201" in result.stdout
    debug = run_patched(patch, *args, "--debug", cwd=tmp_path)
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "ZeroDivisionError: injected" in debug.stderr
