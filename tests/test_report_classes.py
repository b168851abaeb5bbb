"""Classes behind the real-report cases of issue 27 (``../shared/reports``), each tested on the
case that showed it and on a second, different real file (``../shared/projects``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import engine
from precheck.hardware import from_specs
from precheck.models import family_of
from precheck.sources.script_path import clear
from precheck.versions import parse_assumptions

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
PROJECTS = SHARED / "projects"
REPORTS = SHARED / "reports" / "cases"


def findings(path: Path, gpu: str | None) -> list[engine.Finding]:
    clear()
    result = engine.run([str(path)], from_specs([gpu] if gpu else [], {}), env={})
    return list(result.findings)


def test_baichuan2_13b_is_a_bf16_released_family_and_baichuan_v1_is_not() -> None:
    """Baichuan2-13B-Chat's config.json says bfloat16 (models.py cites it); Baichuan-13B (v1) and
    Baichuan2-7B are not in the table (their config.json was not confirmed)."""
    for name in ("baichuan-inc/Baichuan2-13B-Chat", "/data/base_model/Baichuan2-13B-Chat", "baichuan2-13b-base"):
        family = family_of(name)
        assert family is not None and family.native_dtype == "bfloat16", name
    for name in ("baichuan-inc/Baichuan-13B-Chat", "baichuan-inc/Baichuan2-7B-Base"):
        assert family_of(name) is None, name


@pytest.mark.shared
def test_fp16_on_baichuan2_13b_warns_in_a_llama_factory_script() -> None:
    """Report case 121 (LlamaFactory#950): train_bash.py --fp16 on a local Baichuan2-13B-Chat; the
    thread's fix (--bf16, case 122) has no finding."""
    bad = findings(REPORTS / "121-llamafactory-baichuan2-13b-fp16-loss-zero" / "train.sh", None)
    assert [(f.origin.line, f.severity.name) for f in bad if f.rule == "PC202"] == [(18, "WARNING")]
    good = findings(REPORTS / "122-clean-llamafactory-baichuan2-13b-bf16" / "train.sh", None)
    assert not [f for f in good if f.rule == "PC202"]


@pytest.mark.shared
def test_fp16_on_baichuan2_13b_warns_in_a_firefly_training_json() -> None:
    """Firefly's train_args/sft/qlora/baichuan2-13b-sft-qlora.json: `"fp16": true` on
    baichuan-inc/Baichuan2-13B-Chat, a warning at the fp16 line (not an error: overflow is a risk)."""
    path = PROJECTS / "yangjianxin1__Firefly" / "train_args" / "sft" / "qlora" / "baichuan2-13b-sft-qlora.json"
    found = [f for f in findings(path, "A100") if f.rule == "PC202"]
    assert [(f.origin.line, f.severity.name) for f in found] == [(24, "WARNING")]
    assert "Baichuan2-13B" in found[0].message


# --- torch.cuda.is_bf16_supported() per torch version (issue 27 item 2) -----------------------

BF16_CHECK = """
import torch
from transformers import Trainer, TrainingArguments
args = TrainingArguments(output_dir="o", bf16=torch.cuda.is_bf16_supported())
Trainer(model=None, args=args).train()
"""


def _pc101(path: Path, gpu: str, torch: str | None = None) -> list[engine.Finding]:
    clear()
    assumed = parse_assumptions([f"torch=={torch}"]) if torch else None
    result = engine.run([str(path)], from_specs([gpu], {}), env={}, assumed_versions=assumed)
    return [f for f in result.findings if f.rule == "PC101"]


@pytest.mark.parametrize(
    ("torch", "expected"),
    [(None, "under torch>=2.3"), ("2.4.1", "under torch 2.4.1"), ("2.3.0", "under torch 2.3.0"), ("2.2.2", None)],
)
def test_is_bf16_supported_is_answered_for_the_gpu_and_the_torch_version(
    tmp_path: Path, torch: str | None, expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch 2.3.0 counts emulated bf16 (torch/cuda/__init__.py:141@2.3.0); 2.2.2 does not: on a
    V100 the script's `bf16=torch.cuda.is_bf16_supported()` is bf16 (an error that says why) from
    2.3 on, and False (no bf16, no PC101) before. (No version known: this environment's installed
    torch, where the [hf] extra put one, is hidden.)"""
    monkeypatch.setattr("precheck.versions.installed_in", lambda python, names: {})
    script = tmp_path / "train.py"
    script.write_text(BF16_CHECK)
    found = _pc101(script, "V100", torch)
    if expected is None:
        assert not found
        return
    assert [f.severity.name for f in found] == ["ERROR"]
    assert found[0].message.startswith("`torch.cuda.is_bf16_supported()` is True on Tesla V100")
    assert expected in found[0].message
    assert not _pc101(script, "A100", torch)


def test_a_check_that_leaves_emulation_out_is_not_a_torch_version_question() -> None:
    from precheck.bf16_support import emulation_counted_check

    assert emulation_counted_check("torch.cuda.is_bf16_supported()")
    assert emulation_counted_check(
        "'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'x'"
    )
    assert not emulation_counted_check("torch.cuda.is_bf16_supported(including_emulation=False)")
    assert not emulation_counted_check("is_bfloat16_supported()")  # unsloth's: a compute-capability test
    assert not emulation_counted_check(None)


@pytest.mark.shared
def test_nanogpts_bf16_check_says_why_and_follows_the_torch_version() -> None:
    """karpathy/nanoGPT train.py:73: `dtype = 'bfloat16' if torch.cuda.is_available() and
    torch.cuda.is_bf16_supported() else 'float16'`: on a V100 an error naming the check under torch
    >= 2.3, none under torch 2.2 (the script then picks float16)."""
    script = PROJECTS / "karpathy__nanoGPT" / "train.py"
    found = _pc101(script, "V100")
    assert [(f.origin.line, f.severity.name) for f in found] == [(73, "ERROR")]
    assert "`torch.cuda.is_bf16_supported()` is True on Tesla V100" in found[0].message
    assert not _pc101(script, "V100", "2.2.2")


# --- weights cast before accelerator.prepare; FSDP's upcast by accelerate release ------------

CASE_134 = REPORTS / "134-fsdp-llama2-7b-bf16-weights-pure-bf16"
CASE_135 = REPORTS / "135-accelerate-fsdp-plugin-model-to-bf16"


def _run(paths: list[Path], gpu: str, assumed: list[str] | None = None) -> list[engine.Finding]:
    clear()
    versions = parse_assumptions(assumed) if assumed else None
    result = engine.run([str(p) for p in paths], from_specs([gpu], {}), env={}, assumed_versions=versions)
    return list(result.findings)


def _pure_bf16(found: list[engine.Finding]) -> list[tuple[str, int, str]]:
    return [(Path(f.origin.path or "").name, f.origin.line, f.severity.name) for f in found if f.rule == "PC207"]


@pytest.mark.shared
def test_a_model_cast_before_accelerator_prepare_is_the_trained_model() -> None:
    """Report case 135 (accelerate#3139): `self.model = model.to(torch.bfloat16)` in a class, then
    `accelerator.prepare(self.model)`, no optimizer in sight: the prepared object is the trained
    model, its weights bf16 (accelerate does not cast a model in prepare_model)."""
    assert _pure_bf16(_run([CASE_135 / "train.py"], "A100")) == [("train.py", 28, "WARNING")]


@pytest.mark.shared
def test_a_prepared_model_moved_to_a_device_keeps_its_float32_weights() -> None:
    """diffusers examples/text_to_image/train_text_to_image.py: `accelerator.prepare(unet, ...)`;
    only the frozen text_encoder and vae are cast (`.to(accelerator.device, dtype=weight_dtype)`):
    the trained unet stays float32."""
    from precheck.sources.python_prepared import prepared_names

    path = PROJECTS / "huggingface__diffusers" / "examples" / "text_to_image" / "train_text_to_image.py"
    import ast

    code = path.read_text(encoding="utf-8")
    assert "unet" in prepared_names(ast.parse(code), code)
    assert not _pure_bf16(_run([path], "A100", ["accelerate==0.29.3"]))


def _case_134(tmp_path: Path, accelerate: str | None, fsdp_version: int = 1) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("accelerate_launch.sh", "accelerate_config.yaml", "train.py"):
        text = (CASE_134 / name).read_text(encoding="utf-8")
        if name == "accelerate_config.yaml" and fsdp_version == 2:
            text = text.replace("fsdp_config:\n", "fsdp_config:\n  fsdp_version: 2\n")
        (tmp_path / name).write_text(text, encoding="utf-8")
    if accelerate is not None:
        (tmp_path / "requirements.txt").write_text(f"accelerate=={accelerate}\n", encoding="utf-8")
    return tmp_path / "accelerate_launch.sh"


@pytest.mark.shared
def test_fsdp_keeps_a_bf16_model_before_accelerate_030(tmp_path: Path) -> None:
    """Report case 134 (accelerate#2127): `accelerate launch --num_processes=$(( 8 * $SLURM_JOB_NUM_NODES ))
    --mixed_precision=bf16 --config_file <FSDP>` of a script that loads `torch_dtype=torch.bfloat16`:
    the launch is read (an option whose value only is unknown is still the option), the script's
    weights are the run's, and with accelerate 0.21.0 (its requirements.txt) FSDP keeps them bf16: pure
    bf16 (PC207 at the torch_dtype line). From 0.30.0 accelerate upcasts them (accelerator.py:1486@0.30.0)."""
    assert _pure_bf16(_run([CASE_134 / "accelerate_launch.sh"], "8xA100-80GB")) == [("train.py", 12, "WARNING")]
    assert not _pure_bf16(_run([_case_134(tmp_path / "new", "0.30.0")], "8xA100-80GB"))
    assert not _pure_bf16(_run([_case_134(tmp_path / "unknown", None)], "8xA100-80GB"))  # newest: upcast


@pytest.mark.shared
@pytest.mark.parametrize(("release", "pure"), [("1.13.0", True), ("1.14.0", False), ("1.12.0", False)])
def test_fsdp2_upcast_was_a_no_op_in_accelerate_1_13(tmp_path: Path, release: str, pure: bool) -> None:
    """accelerate 1.13.x fsdp2_prepare_model rebinds its loop variable (utils/fsdp_utils.py:740@1.13.0,
    accelerate#3979): nothing is upcast, the optimizer updates the bf16 weights."""
    launch = _case_134(tmp_path, release, fsdp_version=2)
    assert bool(_pure_bf16(_run([launch], "8xA100-80GB"))) is pure


def test_an_option_whose_value_only_is_unknown_is_still_the_launchers_option(tmp_path: Path) -> None:
    """`accelerate launch --main_process_port=$PORT --mixed_precision=bf16 train.py`: bash passes one
    word `--main_process_port=...`; the launch was skipped ("holds no training launch command")."""
    (tmp_path / "train.py").write_text(
        "from accelerate import Accelerator\naccelerator = Accelerator()\n", encoding="utf-8"
    )
    launch = tmp_path / "run.sh"
    launch.write_text("accelerate launch --main_process_port=$PORT --mixed_precision=bf16 train.py\n")
    found = _run([launch], "V100")
    assert [(f.rule, f.severity.name) for f in found if f.rule == "PC101"] == [("PC101", "ERROR")]
