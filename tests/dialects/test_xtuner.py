"""xtuner (issue 28): mmengine Python configs read statically (``sources/mmengine_config.py``)
and resolved with xtuner's and mmengine's semantics. Real files: xtuner's own ``configs``
(a copy in ``tests/fixtures/xtuner``; the rest in ``../shared/projects/InternLM__xtuner``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import frameworks, resolve
from precheck.engine import run
from precheck.hardware import from_specs
from precheck.sources import load_runs
from precheck.versions import Versions, parse_assumptions

from .samples import ROOT, at, read_file

QLORA = ROOT / "tests" / "fixtures" / "xtuner" / "llama2_7b_qlora_alpaca_e3.py"
CONFIGS = ROOT.parent / "shared" / "projects" / "InternLM__xtuner" / "xtuner" / "configs"
PGBOOKS = CONFIGS / "llama" / "llama2_7b" / "llama2_7b_full_pgbooks_400iters_sp1.py"
needs_projects = pytest.mark.skipif(not CONFIGS.is_dir(), reason="the shared real projects are not here")


def errors(path: Path, gpu: str) -> set[tuple[str, int | None]]:
    report = run([str(path)], from_specs([gpu], {}), env={})
    return {(f.rule, f.origin.line) for f in report.findings if f.severity.name == "ERROR"}


def test_registered() -> None:
    framework = frameworks.named("xtuner")
    assert framework is not None and framework.traits.launcher_shards


def test_qlora_config_maps_with_provenance() -> None:
    config = read_file(QLORA, "xtuner")  # the fixture's lines: upstream's plus its one header line
    assert at(config.model) == ("meta-llama/Llama-2-7b-hf", 35, "pretrained_model_name_or_path")
    assert at(config.torch_dtype) == ("float16", 86, "torch_dtype")
    assert at(config.quantization_bits) == (4, 89, "load_in_4bit")
    assert at(config.quant_compute_dtype) == ("float16", 93, "bnb_4bit_compute_dtype")
    assert at(config.train_type) == ("lora", 98, "lora")
    assert at(config.amp_dtype) == ("float16", 143, "dtype")
    plan = resolve.resolve(config, from_specs(["V100"], {}), Versions())
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.autocast_dtype.value) == (
        "float16",
        "float32",
        "float16",
    )
    assert plan.grad_scaler.value is True and plan.loss_scaling.value == "dynamic"
    assert errors(QLORA, "V100") == set() and errors(QLORA, "8xH100") == set()


def test_a_training_script_is_not_a_config(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("model = dict(type='X', llm=dict())\noptim_wrapper = dict()\n\ndef main():\n    pass\n")
    assert load_runs(script, str(script)) == []


def test_amp_wrapper_bf16_and_plain_wrapper(tmp_path: Path) -> None:
    base = (
        "import torch\nfrom mmengine.optim import AmpOptimWrapper, OptimWrapper\n"
        "model = dict(type='SupervisedFinetune',\n"
        "             llm=dict(pretrained_model_name_or_path='m', torch_dtype=torch.float32))\n"
    )
    path = tmp_path / "cfg.py"
    path.write_text(base + "optim_wrapper = dict(type=AmpOptimWrapper, dtype='bfloat16')\n")
    # alone, the config's AmpOptimWrapper runs only if the launch passes no --deepspeed; with it,
    # xtuner fills bf16 from is_bf16_supported(), true on a V100 from torch 2.3: bf16 either way
    assert errors(path, "V100") == {("PC101", 5)}
    old_torch = parse_assumptions(["torch==2.2.2"])  # there --deepspeed would fill fp16: an assumption
    report = run([str(path)], from_specs(["V100"], {}), env={}, assumed_versions=old_torch)
    pc101 = [f for f in report.findings if f.rule == "PC101"]
    assert pc101 and all(f.severity.name == "WARNING" and "--deepspeed" in " ".join(f.assumptions) for f in pc101)
    (tmp_path / "run.sh").write_text("xtuner train cfg.py\n")  # launched without --deepspeed: it runs
    assert errors(tmp_path, "V100") == {("PC101", 5)}
    assert errors(tmp_path, "A100") == set()
    path.write_text(base + "optim_wrapper = dict(type=OptimWrapper)\n")
    plan = resolve.resolve(read_file(path, "xtuner"), from_specs(["V100"], {}), Versions())
    assert plan.autocast_dtype.value is None and plan.grad_scaler.value is False


@needs_projects
def test_flash_attention_and_bf16_on_a_v100() -> None:
    assert errors(PGBOOKS, "V100") == {("PC101", 92), ("PC105", 92)}


@needs_projects
@pytest.mark.parametrize("path", sorted(CONFIGS.rglob("*.py")) if CONFIGS.is_dir() else [], ids=lambda p: p.name)
def test_maintained_configs_clean_on_h100(path: Path) -> None:
    assert errors(path, "8xH100") == set()


@pytest.mark.parametrize("depth", [50, 3000])
def test_deeply_nested_config_is_read_or_skipped_never_a_traceback(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.py"
    path.write_text("model = " + "dict(a=" * depth + "1" + ")" * depth + "\noptim_wrapper = dict()\n")
    documents = load_runs(path, str(path))
    assert len(documents) <= 1
    report = run([str(path)], from_specs(["A100"], {}), env={})
    assert not report.errors
