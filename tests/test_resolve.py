from helpers import hardware_for
from precheck import dialects, resolve
from precheck.sources import parse
from precheck.versions import VersionInfo, Versions


def plan_of(text: str, fmt: str = "yaml", gpus: list[str] | None = None, versions: dict[str, str] | None = None):
    doc = parse(f"c.{fmt}", text, fmt)
    dialect = dialects.detect(doc)
    assert dialect is not None
    config = dialect.read(doc, {})
    known = Versions({n: VersionInfo(n, v, "flag") for n, v in (versions or {}).items()})
    return resolve.resolve(config, hardware_for(gpus or [], {}), known)


SWIFT = "model: m\ntrain_type: lora\ntorch_dtype: float16\nfp16: false\n"


def test_ms_swift_old_releases_override_explicit_fp16() -> None:
    plan = plan_of(SWIFT, versions={"ms-swift": "3.2.2"})
    assert plan.autocast_dtype.value == "float16" and plan.grad_scaler.value
    override = plan.override_of("fp16")
    assert override is not None and override.loser.origin.line == 4


def test_ms_swift_new_releases_keep_explicit_fp16() -> None:
    plan = plan_of(SWIFT, versions={"ms-swift": "3.3.1"})
    assert plan.autocast_dtype.value is None and not plan.overrides
    assert plan.load_dtype.value == "float16" and plan.param_dtype.value == "float32"


def test_ms_swift_unset_flags_follow_torch_dtype_and_hardware() -> None:
    assert plan_of("model: m\ntemplate: t\ntorch_dtype: float32\n").autocast_dtype.value == "float16"
    old_torch = plan_of("model: m\ntemplate: t\ntrain_type: full\n", gpus=["V100"], versions={"torch": "2.2.2"})
    assert old_torch.load_dtype.value == "float16" and old_torch.param_dtype.value == "float16"
    new_torch = plan_of("model: m\ntemplate: t\ntrain_type: full\n", gpus=["V100"], versions={"torch": "2.3.0"})
    assert new_torch.load_dtype.value == "bfloat16" and "counts bf16 emulation" in str(new_torch.load_dtype.origin)
    llama2 = plan_of("model: meta-llama/Llama-2-7b-hf\ntemplate: t\ntrain_type: lora\n", gpus=["V100"])
    assert llama2.load_dtype.value == "float16"
    a100 = plan_of("model: m\ntemplate: t\ntrain_type: lora\n", gpus=["A100"])
    assert a100.autocast_dtype.value == "bfloat16"


def test_simpletuner_gradient_precision_by_version() -> None:
    text = '{"--model_family": "flux", "--optimizer": "adamw_bf16", "--gradient_precision": "fp32"}'
    old = plan_of(text, "json", versions={"simpletuner": "1.0.0"})
    assert old.grad_dtype.value == "float32" and old.optimizer_state_dtype.value == "bfloat16"
    new = plan_of(text, "json", versions={"simpletuner": "3.1.6"})
    assert new.grad_dtype.value == "bfloat16" and new.override_of("grad_dtype") is not None


def test_h2o_full_finetune_turns_mixed_precision_off() -> None:
    text = (
        "architecture:\n  backbone_dtype: bfloat16\nenvironment:\n  mixed_precision: true\n  gpus: ['1']\n"
        "experiment_name: e\nllm_backbone: b\nproblem_type: p\ntraining:\n  lora: false\n"
    )
    plan = plan_of(text)
    assert plan.autocast_dtype.value is None and plan.override_of("autocast_dtype") is not None
    assert plan.devices.value == "1" and plan.param_dtype.value == "bfloat16"


def test_h2o_defaults() -> None:
    plan = plan_of("experiment_name: e\nllm_backbone: b\nproblem_type: p\ntraining:\n  lora: true\narchitecture: {}\n")
    assert plan.load_dtype.value == "int4" and plan.autocast_dtype.value == "bfloat16" and not plan.grad_scaler.value


def test_llama_recipes_load_dtype_and_devices() -> None:
    fp16 = plan_of("model_name: meta-llama/Llama-3.2-3B\nuse_fp16: true\nuse_peft: true\n")
    assert (fp16.load_dtype.value, fp16.param_dtype.value, fp16.grad_scaler.value, fp16.devices.value) == (
        "float16",
        "float32",
        True,
        "first",
    )
    auto = plan_of("model_name: meta-llama/Llama-3.2-3B\nuse_peft: true\nquantization: 8bit\n")
    assert auto.load_dtype.value == "bfloat16" and auto.autocast_dtype.value is None and auto.devices.value == "all"


def test_ms_swift_upcasts_fp16_adapters_itself_but_bf16_ones_follow_peft() -> None:
    fp16 = plan_of("model: m\ntemplate: t\ntorch_dtype: float16\n", versions={"peft": "0.11.1"})
    assert fp16.param_dtype.value == "float32" and "tuner.py" in str(fp16.param_dtype.origin)
    bf16 = plan_of("model: m\ntemplate: t\ntorch_dtype: bfloat16\n", versions={"peft": "0.11.1"})
    assert bf16.param_dtype.value == "bfloat16"


def test_hf_fsdp_options_string() -> None:
    from precheck import dialects
    from precheck.sources import parse

    doc = parse("c.yaml", "output_dir: o\nlearning_rate: 1\nfsdp: full_shard auto_wrap offload\nbf16: true\n", "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None
    config = dialect.read(doc, {})
    assert config.fsdp is not None and config.fsdp.value is True and config.fsdp.origin.line == 3
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "full_shard"
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    off = dialect.read(parse("c.yaml", "output_dir: o\nlearning_rate: 1\nfsdp: ''\n", "yaml"), {})
    assert off.fsdp is not None and off.fsdp.value is False
