"""``precheck smoke``: one real step of a tiny model with each config's resolved plan (CPU, torch 2.13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from precheck.hardware import from_specs

pytestmark = pytest.mark.hf

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from precheck.smoke.optimizers import AdamWBF16  # noqa: E402  (needs torch)
from precheck.smoke.run import smoke  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "configs"


def run_smoke(path: Path | str, gpu: str = "A100") -> dict[str, object]:
    report = smoke([str(path)], from_specs([gpu], {}), device="cpu")
    return {"report": report, "runs": {Path(r.result.path).name: r for r in report.runs}}


def test_fp16_weights_with_grad_scaler_fail_at_unscale_on_the_use_fp16_key() -> None:
    found = run_smoke(EXAMPLES / "llama-recipes-titan-rtx-1080ti", "TITAN RTX")
    broken = found["runs"]["full-finetune-fp16.yaml"]  # type: ignore[index]
    assert not broken.passed
    assert broken.outcome.failure.phase == "unscale"
    assert broken.outcome.failure.exception == "ValueError"
    assert broken.outcome.failure.message == "Attempting to unscale FP16 gradients."
    (finding,) = broken.findings
    assert (finding.origin.line, finding.origin.column, finding.origin.key) == (6, 1, "use_fp16")
    assert [c.field for c in finding.causes][:1] == ["grad_scaler"]
    fixed = found["runs"]["lora-fp16-one-card.yaml"]  # type: ignore[index]
    assert fixed.passed and fixed.findings == []
    assert fixed.outcome.trainable_dtypes == ["float32"] and fixed.outcome.grad_dtypes == ["float32"]
    assert found["report"].exit_code() == 1  # type: ignore[attr-defined]


def test_bf16_grad_scaler_is_not_reproduced_on_cpu_and_says_so() -> None:
    found = run_smoke(EXAMPLES / "h2o-llmstudio-a100" / "bf16-backbone-with-grad-scaler.yaml")
    run = found["runs"]["bf16-backbone-with-grad-scaler.yaml"]  # type: ignore[index]
    # torch's CPU _amp_foreach_non_finite_check_and_unscale_ accepts bf16: the step really passes
    assert run.passed and run.outcome.grad_dtypes == ["bfloat16"]
    (note,) = run.findings
    assert note.kind == "not-reproduced" and str(note.severity) == "warning"
    assert "PC402" in note.message
    assert (note.origin.line, note.origin.key) == (10, "mixed_precision")
    assert found["report"].exit_code() == 0  # type: ignore[attr-defined]


def test_simpletuner_fp32_gradients_reach_the_bf16_optimizer() -> None:
    found = run_smoke(EXAMPLES / "simpletuner-rtx4090" / "adamw-bf16-fp32-gradients.json", "RTX 4090")
    run = found["runs"]["adamw-bf16-fp32-gradients.json"]  # type: ignore[index]
    assert run.setup.grad_cast == "float32" and run.outcome.optimizer == "AdamWBF16"
    assert run.outcome.trainable_dtypes == ["bfloat16"] and run.outcome.grad_dtypes == ["float32"]
    # AdamWBF16 asserts on the parameter's dtype, which a gradient cast leaves bf16
    assert run.passed


def test_bf16_only_optimizer_over_fp32_weights_fails_on_the_optimizer_key(tmp_path: Path) -> None:
    config = tmp_path / "st.json"
    config.write_text(
        '{\n  "--model_family": "flux",\n  "--model_type": "lora",\n  "--mixed_precision": "no",\n'
        '  "--optimizer": "adamw_bf16",\n  "--train_batch_size": 1\n}\n'
    )
    run = run_smoke(config, "RTX 4090")["runs"]["st.json"]  # type: ignore[index]
    assert run.outcome.failure.phase == "optimizer-step"
    assert f"{run.outcome.failure.exception}: {run.outcome.failure.message}" == (
        "AssertionError: only bfloat 16 is supported."
    )
    (finding,) = run.findings
    assert (finding.origin.line, finding.origin.key) == (5, "--optimizer")


def test_non_finite_weights_point_at_the_learning_rate(tmp_path: Path) -> None:
    config = tmp_path / "train.yaml"
    config.write_text(
        "model_name_or_path: meta-llama/Llama-2-7b-hf\noutput_dir: out\nper_device_train_batch_size: 2\n"
        "torch_dtype: float16\nlearning_rate: 1.0e+6\n"
    )
    run = run_smoke(config)["runs"]["train.yaml"]  # type: ignore[index]
    assert run.outcome.failure is None and [w for w, _ in run.outcome.non_finite] == ["weights"]
    (finding,) = run.findings
    assert finding.kind == "non-finite" and (finding.origin.line, finding.origin.key) == (5, "learning_rate")


def test_adamw_bf16_asserts_on_the_parameter_dtype_only() -> None:
    weight = torch.nn.Parameter(torch.randn(4))
    weight.grad = torch.randn(4)
    with pytest.raises(AssertionError, match=r"^only bfloat 16 is supported\.$"):
        AdamWBF16([weight]).step()
    bf16 = torch.nn.Parameter(torch.ones(64, dtype=torch.bfloat16))
    bf16.grad = torch.ones(64, dtype=torch.bfloat16)
    bf16.grad.data = bf16.grad.data.float()  # SimpleTuner's gradient_precision=fp32 cast
    AdamWBF16([bf16], lr=1e-2).step()
    # stochastic rounding: each weight moves down one bf16 step (1 - 2**-8) or stays, none moves up
    assert bf16.dtype == torch.bfloat16 and bool((bf16 < 1).any()) and bool((bf16 <= 1).all())


def test_architectures_from_name_table_and_stand_in(tmp_path: Path) -> None:
    config = tmp_path / "seq2seq.yaml"
    config.write_text("model_name_or_path: google-t5/t5-small\noutput_dir: o\nlearning_rate: 1e-4\nuse_peft: true\n")
    run = run_smoke(config)["runs"]["seq2seq.yaml"]  # type: ignore[index]
    assert run.outcome.arch.model_type == "t5" and not run.outcome.arch.stand_in and run.passed
    flux = run_smoke(EXAMPLES / "simpletuner-rtx4090" / "adamw-bf16-bf16-gradients.json", "RTX 4090")
    arch = flux["runs"]["adamw-bf16-bf16-gradients.json"].outcome.arch  # type: ignore[index]
    assert arch.stand_in and arch.model_type == "llama"


def test_local_config_json_picks_the_family(tmp_path: Path) -> None:
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "qwen2", "torch_dtype": "bfloat16", "hidden_size": 1536}')
    config = tmp_path / "train.yaml"
    config.write_text(f"model_name_or_path: {model}\noutput_dir: o\nbf16: true\ntorch_dtype: auto\n")
    run = run_smoke(config)["runs"]["train.yaml"]  # type: ignore[index]
    assert run.outcome.arch.model_type == "qwen2" and "config.json" in run.outcome.arch.source
    assert run.setup.load_dtype == "bfloat16" and run.passed


def cli(*args: str, env_extra: str = "") -> subprocess.CompletedProcess[str]:
    code = f"import sys\n{env_extra}\nfrom precheck.cli import main\nmain(sys.argv[1:])\n"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_cli_json_and_exit_code() -> None:
    result = cli("smoke", "examples/configs/llama-recipes-titan-rtx-1080ti", "--gpu", "TITAN RTX", "--format", "json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["version"] == 1 and document["environment"]["device"] == "cpu"
    assert document["summary"] == {"passed": 1, "failed": 1}
    (failed,) = [r for r in document["runs"] if not r["passed"]]
    (finding,) = failed["findings"]
    assert finding["exception"] == {"type": "ValueError", "message": "Attempting to unscale FP16 gradients."}
    assert (finding["line"], finding["column"], finding["key"]) == (6, 1, "use_fp16")
    assert "PC401" in {s["rule"] for s in failed["static"]}


def test_cli_bad_input_and_missing_torch_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "train.yaml"
    broken.write_text("fp16: true\nbf16: [\n")
    result = cli("smoke", str(broken), "--gpu", "A100")
    assert result.returncode == 2 and f"{broken}:3:1:" in result.stdout and "Traceback" not in result.stderr
    result = cli("smoke", "examples/configs/clean", "--gpu", "A100", "--device", "tpu")
    assert result.returncode == 2 and "--device 'tpu'" in result.stderr
    no_torch = cli("smoke", "examples/configs/clean", "--gpu", "A100", env_extra="sys.modules['torch'] = None")
    assert no_torch.returncode == 2 and "pip install 'precheck-ml[hf]'" in no_torch.stderr


def test_smoke_and_integration_packages_do_not_import_torch() -> None:
    code = (
        "import sys\n"
        "import precheck.smoke, precheck.smoke.run, precheck.smoke.setup, precheck.integrations\n"
        "print('HEAVY', sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "HEAVY []" in result.stdout, result.stdout + result.stderr
