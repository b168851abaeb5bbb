"""The command line, run as a user runs it: a separate process, real exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "configs"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], capture_output=True, text=True, cwd=ROOT, env=full_env, timeout=60
    )


def codes(result: subprocess.CompletedProcess[str]) -> set[tuple[str, int]]:
    document = json.loads(result.stdout)
    return {(f["rule"], f["line"]) for f in document["findings"]}


# (gpus, broken file, expected (rule, line) with severity error, fixed twin)
SEEDS = [
    (["V100"], "ms-swift-v100/fp16-false-ignored.yaml", {("PC201", 5)}, "ms-swift-v100/fp16-amp-fp32-weights.yaml"),
    (
        ["RTX 4090"],
        "simpletuner-rtx4090/adamw-bf16-fp32-gradients.json",
        {("PC301", 10)},
        "simpletuner-rtx4090/adamw-bf16-bf16-gradients.json",
    ),
    (
        ["A100"],
        "h2o-llmstudio-a100/bf16-backbone-with-grad-scaler.yaml",
        {("PC402", 10)},
        "h2o-llmstudio-a100/bf16-without-grad-scaler.yaml",
    ),
    (
        ["TITAN RTX", "GTX 1080 Ti"],
        "llama-recipes-titan-rtx-1080ti/full-finetune-fp16.yaml",
        # and 3.2B full fine-tune states (fp16 weights, gradients, Adam states) > 24 GiB
        {("PC401", 6), ("PC801", 5)},
        "llama-recipes-titan-rtx-1080ti/lora-fp16-one-card.yaml",
    ),
]


def gpu_args(gpus: list[str]) -> list[str]:
    return [arg for gpu in gpus for arg in ("--gpu", gpu)]


@pytest.mark.parametrize(("gpus", "broken", "errors", "fixed"), SEEDS, ids=[s[1].split("/")[0] for s in SEEDS])
def test_seed_broken_fails_and_fixed_passes(
    gpus: list[str], broken: str, errors: set[tuple[str, int]], fixed: str
) -> None:
    bad = run(*gpu_args(gpus), "--format", "json", f"examples/configs/{broken}")
    assert bad.returncode == 1, bad.stderr
    document = json.loads(bad.stdout)
    found = {(f["rule"], f["line"]) for f in document["findings"] if f["severity"] == "error"}
    assert found == errors
    good = run(*gpu_args(gpus), f"examples/configs/{fixed}")
    assert good.returncode == 0, good.stdout
    summary = next(line for line in good.stdout.splitlines() if "; hardware: " in line)
    assert summary.startswith("0 errors")


def test_seed_text_output_has_location_code_frame_and_help() -> None:
    result = run("--gpu", "V100", "examples/configs/ms-swift-v100/fp16-false-ignored.yaml")
    first, bar, source, caret, _bar, help_line = result.stdout.splitlines()[:6]
    assert first.startswith("examples/configs/ms-swift-v100/fp16-false-ignored.yaml:5:1: PC201 error ")
    assert len(first) < 200 and "[ms-swift" not in first  # the headline; the version note is in the detail
    assert (bar, source, caret) == ("  |", "5 | torch_dtype: float16", "  | ^^^^^^^^^^^")
    assert help_line.startswith("  = help: ") and "torch_dtype: float32" in help_line


def test_unsloth_seed_is_a_warning_that_can_fail_the_run() -> None:
    path = "examples/configs/unsloth-tinyllama-rtx4090/tinyllama-fp16.yaml"
    assert codes(run("--gpu", "RTX 4090", "--format", "json", path)) == {("PC202", 13)}
    assert run("--gpu", "RTX 4090", path).returncode == 0
    assert run("--gpu", "RTX 4090", "--fail-on", "warning", path).returncode == 1
    fixed = run(
        "--gpu", "RTX 4090", "--fail-on", "warning", "examples/configs/unsloth-tinyllama-rtx4090/tinyllama-bf16.yaml"
    )
    assert fixed.returncode == 0


def test_llama_recipes_seed_names_each_card_and_the_wrong_one() -> None:
    path = "examples/configs/llama-recipes-titan-rtx-1080ti/lora-fp16-one-card.yaml"
    result = run("--gpu", "TITAN RTX", "--gpu", "GTX 1080 Ti", "--format", "json", path)
    messages = " ".join(f["message"] for f in json.loads(result.stdout)["findings"])
    assert "CUDA index 0 = NVIDIA TITAN RTX (sm_75, 24 GB); CUDA index 1 = NVIDIA GeForce GTX 1080 Ti" in messages
    assert "this run computes on cuda:0 NVIDIA TITAN RTX" in messages
    wrong = run(
        "--gpu", "TITAN RTX", "--gpu", "GTX 1080 Ti", "--format", "json", path, env={"CUDA_VISIBLE_DEVICES": "1"}
    )
    assert ("PC102", 5) in codes(wrong)


def test_version_unknown_downgrades_old_only_rules_to_warnings(tmp_path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text((EXAMPLES / "ms-swift-v100" / "fp16-false-ignored.yaml").read_text())
    result = run("--gpu", "V100", "--format", "json", str(config))
    finding = json.loads(result.stdout)["findings"][0]
    assert (finding["rule"], finding["severity"], result.returncode) == ("PC201", "warning", 0)
    pinned = run("--gpu", "V100", "--assume-version", "ms-swift==3.2.2", "--format", "json", str(config))
    assert pinned.returncode == 1 and json.loads(pinned.stdout)["versions"]["ms-swift"]["source"] == "flag"
    fixed = run("--gpu", "V100", "--assume-version", "ms-swift==3.3.1", "--format", "json", str(config))
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["findings"] == []


def test_json_contract() -> None:
    result = run("--gpu", "V100", "--format", "json", "examples/configs/ms-swift-v100/fp16-false-ignored.yaml")
    document = json.loads(result.stdout)
    assert document["version"] == 1
    assert set(document) == {"version", "hardware", "files", "versions", "findings", "errors", "summary"}
    assert document["hardware"] == {
        "source": "profile",
        "devices": [
            {"index": 0, "name": "Tesla V100-SXM2-32GB", "compute_capability": "7.0", "memory_gib": 32.0, "bf16": False}
        ],
    }
    assert document["files"] == [
        {"path": "examples/configs/ms-swift-v100/fp16-false-ignored.yaml", "dialect": "ms-swift"}
    ]
    assert document["versions"]["ms-swift"] == {
        "version": "3.2.2",
        "source": "examples/configs/ms-swift-v100/requirements.txt:2",
    }
    finding = document["findings"][0]
    assert set(finding) == {
        "rule",
        "name",
        "severity",
        "path",
        "line",
        "column",
        "key",
        "message",
        "headline",
        "fix",
        "fixable",
        "assumptions",
    }
    assert finding["message"].startswith(finding["headline"]) and len(finding["headline"]) <= 120
    assert finding["assumptions"] == []  # a fact: the file sets the value
    assert (finding["name"], finding["column"], finding["key"]) == (
        "fp16-flag-overridden-by-torch-dtype",
        1,
        "torch_dtype",
    )
    assert document["summary"] == {"errors": 1, "warnings": 0, "info": 0}


def test_unparsable_input_exits_2_with_location_and_no_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("fp16: true\nbf16: [true\n")
    good = tmp_path / "good.yaml"
    good.write_text((EXAMPLES / "ms-swift-v100" / "fp16-false-ignored.yaml").read_text())
    result = run("--gpu", "V100", str(bad), str(good))
    assert result.returncode == 2
    assert f"{bad}:3:1: " in result.stdout
    assert "PC201" in result.stdout, "the other file is still checked"
    assert "Traceback" not in result.stdout + result.stderr


def test_missing_path_and_bad_usage_exit_2() -> None:
    missing = run("--gpu", "V100", "nope.yaml")
    assert missing.returncode == 2 and "nope.yaml: no such file" in missing.stdout
    unknown = run("--gpu", "A100-90GB", "examples/configs/clean")
    assert unknown.returncode == 2 and "did you mean" in unknown.stderr and "Traceback" not in unknown.stderr
    assert run("--select", "PC0", "--gpu", "V100", "examples/configs/clean").returncode == 2
    assert run("--format", "xml", "examples/configs/clean").returncode == 2


def test_selection() -> None:
    path = "examples/configs/llama-recipes-titan-rtx-1080ti/full-finetune-fp16.yaml"
    only = codes(run("--gpu", "TITAN RTX", "--gpu", "GTX 1080 Ti", "--select", "PC5", "--format", "json", path))
    assert {c for c, _ in only} == {"PC501"}
    rest = codes(run("--gpu", "TITAN RTX", "--gpu", "GTX 1080 Ti", "--ignore", "PC401", "--format", "json", path))
    assert "PC401" not in {c for c, _ in rest}


def test_no_gpu_skips_hardware_rules_with_one_warning_on_stderr() -> None:
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has a GPU")
    result = run("--isolated", "examples/configs/clean")
    assert result.returncode == 0
    assert "no GPU found" not in result.stdout
    assert sum("warning: no GPU found" in line for line in result.stderr.splitlines()) == 1


def test_rules_and_rule_docs() -> None:
    listing = json.loads(run("rules", "--format", "json").stdout)
    assert {"code", "name", "severity", "versions"} <= set(listing[0])
    pc201 = next(r for r in listing if r["code"] == "PC201")
    assert pc201["versions"] == ["ms-swift>=3.0.0,<3.3.1"]
    doc = run("rule", "PC201")
    assert doc.returncode == 0 and doc.stdout.startswith("# fp16-flag-overridden-by-torch-dtype (PC201)")
    assert "## Why is this bad?" in doc.stdout
    assert run("rule", "PC999").returncode == 2


def test_explain_shows_values_sources_and_overrides() -> None:
    path = "examples/configs/ms-swift-v100/fp16-false-ignored.yaml"
    text = run("explain", "--gpu", "V100", path).stdout
    assert "\n  precision flow\n    load " in text and "\n     -> autocast         float16 " in text
    overridden = text.split("\n  overridden\n", 1)[1].splitlines()[0]
    assert overridden.startswith("    examples/configs/ms-swift-v100/fp16-false-ignored.yaml:6:1 (fp16) = false")
    document = json.loads(run("explain", "--gpu", "V100", "--format", "json", path).stdout)
    plan = document["runs"][0]["plan"]
    assert plan["autocast_dtype"]["value"] == "float16"
    assert document["runs"][0]["overridden"][0]["field"] == "fp16"


def test_probe_without_gpu_is_quick_and_clear() -> None:
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has a GPU")
    result = run("probe")
    assert result.returncode == 0 and "no GPU found" in result.stdout
    document = json.loads(run("probe", "--json").stdout)
    assert document["version"] == 1 and document["devices"] == []


def _loaded_after_check(args: list[str], listed: str) -> str:
    """What ``print(..., listed)`` shows in a fresh process after ``precheck ARGS`` ran in it."""
    code = (
        "import sys\n"
        "from precheck.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('LOADED', {listed})\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    return result.stdout + result.stderr


def test_checking_a_config_never_imports_torch() -> None:
    # piped output: no rich; a plain command line is read without typer's pydantic coercion
    heavy = "sorted(m for m in ('torch', 'transformers', 'accelerate', 'rich', 'pydantic') if m in sys.modules)"
    out = _loaded_after_check(["--gpu", "V100", "examples/configs"], heavy)
    assert "LOADED []" in out, out


def test_checking_without_deep_imports_nothing_of_the_deep_pass() -> None:
    """The PC92x rules declare their note kinds and ask for the deep pass's note class only
    when a note of theirs is there: a run without ``--deep`` leaves ``precheck.deep`` unloaded."""
    deep = "sorted(m for m in sys.modules if m.startswith('precheck.deep'))"
    out = _loaded_after_check(["--gpu", "V100", "examples/configs", "examples/scripts"], deep)
    assert "LOADED []" in out, out


def test_an_internal_error_names_the_file_and_hides_the_traceback(tmp_path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text((EXAMPLES / "ms-swift-v100" / "fp16-false-ignored.yaml").read_text())
    code = (
        "import sys\n"
        "import precheck.resolve as r\n"
        "def boom(*a):\n"
        "    raise RuntimeError('injected')\n"
        "r.resolve = boom\n"
        "from precheck.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "--gpu", "V100", str(config)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 2
    assert f"internal error while checking {config}: RuntimeError: injected" in result.stderr
    assert "Traceback" not in result.stderr
    debug = subprocess.run(
        [sys.executable, "-c", code, "--gpu", "V100", "--debug", str(config)], capture_output=True, text=True, cwd=ROOT
    )
    assert "Traceback" in debug.stderr


def test_memory_examples_7b_full_does_not_fit_one_24gb_card_and_fits_zero3_on_8xa100() -> None:
    """Issue 6's done-when, through the real entry point."""
    one = run("--gpu", "1xRTX 4090", "--format", "json", "examples/configs/memory/llama2-7b-full-one-rtx4090.yaml")
    assert one.returncode == 1
    assert [f["rule"] for f in json.loads(one.stdout)["findings"]] == ["PC801"]
    zero3 = run("--gpu", "8xA100-80GB", "examples/configs/memory/llama2-7b-full-zero3-8xa100.yaml")
    assert zero3.returncode == 0 and zero3.stdout.startswith("0 errors, 0 warnings"), zero3.stdout
    qlora = run("--gpu", "RTX A6000", "examples/configs/memory/llama2-70b-qlora-one-48gb.yaml")
    assert qlora.returncode == 0 and qlora.stdout.startswith("0 errors, 0 warnings"), qlora.stdout


def test_the_rules_page_lists_every_rule_as_precheck_rules_does() -> None:
    listed = run("rules").stdout
    page = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "$ precheck rules\n" + listed in page, "docs/rules.md is stale: python scripts/generate_docs.py"
