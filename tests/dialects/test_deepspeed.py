"""The DeepSpeed dialect, its standalone resolution and its attachment to HF / accelerate runs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from precheck import dialects, engine, resolve
from precheck.config import TrainingConfig
from precheck.dialects.deepspeed import DeepSpeed
from precheck.frameworks.hf_trainer import resolve as hf
from precheck.hardware import from_specs
from precheck.provenance import Origin, Sourced
from precheck.resolve import deepspeed as ds_resolve
from precheck.resolve.deepspeed_hf_trainer import hf_switches
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse
from precheck.versions import VersionInfo, Versions

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
HW = from_specs(["A100"], {})


def versions(**known: str) -> Versions:
    return Versions({name.replace("_", "-"): VersionInfo(name, v, "flag") for name, v in known.items()})


def read(text: str, path: str = "ds.json", fmt: str = "json") -> TrainingConfig:
    doc = parse(path, textwrap.dedent(text).lstrip("\n"), fmt)
    dialect = dialects.detect(doc)
    assert dialect is not None, "no dialect recognises the snippet"
    assert dialect.name == "deepspeed", dialect.name
    return dialect.read(doc, {})


def ds_plan(text: str, **known: str) -> PrecisionPlan:
    return resolve.resolve(read(text), HW, versions(**known))


def hf_run(main_yaml: str, ds_json: str, env: dict[str, str] | None = None, **known: str) -> PrecisionPlan:
    doc = parse("train.yaml", textwrap.dedent(main_yaml).lstrip("\n"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name in ("hf-trainer", "trl"), dialect
    main = dialect.read(doc, env or {})
    main.attached["deepspeed"] = read(ds_json)
    return resolve.resolve(main, HW, versions(**known))


# --- recognition --------------------------------------------------------------------------


def _corpus(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).glob("*")) if (CORPUS / folder).is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", _corpus("deepspeed"), ids=lambda p: p.name[:60])
def test_every_corpus_deepspeed_file_is_recognised_and_resolves(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "json")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "deepspeed"
    config = dialect.read(doc, {})
    plan = resolve.resolve(config, HW, Versions())
    assert plan.grad_scaler.value is False  # DeepSpeed never uses a torch GradScaler outside torch_autocast
    raw = json.loads(path.read_text(encoding="utf-8"))
    fp16 = raw.get("fp16", {}).get("enabled")
    bf16 = raw.get("bf16", raw.get("bfloat16", {})).get("enabled")
    expected = "float16" if fp16 is True else "bfloat16" if bf16 is True else "float32"
    assert plan.param_dtype.value == expected


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
def test_no_other_corpus_file_is_read_as_deepspeed() -> None:
    stolen = []
    for path in sorted(CORPUS.rglob("*")):
        if path.parent.name == "deepspeed" or not path.is_file() or path.suffix not in (".json", ".yaml", ".yml"):
            continue
        try:
            doc = parse(str(path), path.read_text(encoding="utf-8"), "json" if path.suffix == ".json" else "yaml")
        except Exception:
            continue
        if DeepSpeed().score(doc):
            stolen.append(path.name)
    assert stolen == []


def test_gpt_neox_configs_are_not_deepspeed_files() -> None:
    neox = """
    {"pipe_parallel_size": 1, "num_layers": 12, "zero_optimization": {"stage": 0},
     "train_micro_batch_size_per_gpu": 4, "gradient_clipping": 1.0, "precision": "bfloat16"}
    """
    assert DeepSpeed().score(parse("neox.json", neox, "json")) == 0


def test_hf_trainer_does_not_claim_a_deepspeed_file_without_zero_section() -> None:
    text = (
        '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4, '
        '"fp16": {"enabled": true}, "bf16": {"enabled": false}}'
    )
    doc = parse("ds.json", text, "json")
    assert dialects.BY_NAME["hf-trainer"].score(doc) == 0
    detected = dialects.detect(doc)
    assert detected is not None and detected.name == "deepspeed"


def test_training_arguments_file_is_not_deepspeed() -> None:
    doc = parse(
        "t.yaml", "output_dir: o\nper_device_train_batch_size: 2\nbf16: true\ngradient_accumulation_steps: 2\n", "yaml"
    )
    assert DeepSpeed().score(doc) == 0


# --- mapping ------------------------------------------------------------------------------

FULL = """
{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": 1.0,
  "communication_data_type": "fp32",
  "data_types": {"grad_accum_dtype": "fp32"},
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": ["auto", 0.999]}},
  "fp16": {
    "enabled": "auto",
    "loss_scale": 0,
    "initial_scale_power": 12
  },
  "bf16": {"enabled": true},
  "zero_optimization": {
    "stage": 2,
    "offload_optimizer": {"device": "cpu"},
    "offload_param": {"device": "none"}
  }
}
"""


def test_mapping_values_origins_and_auto_keys() -> None:
    config = read(FULL)
    assert config.dialect == "deepspeed" and config.framework == "deepspeed"
    assert config.fp16 is None  # "auto": unset, listed
    assert config.bf16 is not None and config.bf16.value is True
    assert (config.bf16.origin.line, config.bf16.origin.key) == (13, "bf16.enabled")
    assert config.zero_stage is not None and config.zero_stage.value == 2
    assert (config.zero_stage.origin.line, config.zero_stage.origin.key) == (15, "zero_optimization.stage")
    assert config.offload_optimizer is not None and config.offload_optimizer.value == "cpu"
    assert config.offload_param is not None and config.offload_param.value == "none"
    assert config.loss_scale is not None and config.loss_scale.value == 0
    assert config.initial_scale_power is not None and config.initial_scale_power.value == 12
    assert config.communication_dtype is not None and config.communication_dtype.value == "float32"
    assert config.grad_accum_dtype is not None and config.grad_accum_dtype.value == "float32"
    assert config.optimizer is not None and config.optimizer.value == "AdamW"
    assert config.batch_size is not None and config.batch_size.value == 4
    assert config.grad_accum_steps is None
    assert config.max_grad_norm is not None and config.max_grad_norm.value == 1.0
    autos = {item.value: item.origin.line for item in config.auto_keys}
    assert autos == {
        "gradient_accumulation_steps": 3,
        "optimizer.params.lr": 7,
        "optimizer.params.betas.0": 7,
        "fp16.enabled": 9,
    }
    assert dict(config.flag_keys) == {"fp16": "fp16.enabled", "bf16": "bf16.enabled"}


def test_legacy_bfloat16_and_deprecated_cpu_offload() -> None:
    config = read('{"bfloat16": {"enabled": true}, "zero_optimization": {"stage": 3, "cpu_offload": true}}')
    assert config.bf16 is not None and config.bf16.value and config.bf16.origin.key == "bfloat16.enabled"
    assert config.offload_optimizer is not None and config.offload_optimizer.value == "cpu"
    both = read('{"bf16": {"enabled": false}, "bfloat16": {"enabled": true}, "zero_optimization": {"stage": 1}}')
    assert both.bf16 is not None and both.bf16.value is False  # bfloat16 is read only without bf16


def test_misspelt_top_level_key_is_noted() -> None:
    config = read('{"zero_optimization": {"stage": 2}, "train_batch_size": 8, "gradient_cliping": 1.0}')
    notes = [n for n in config.notes if n.kind == "unknown-key"]
    assert len(notes) == 1 and "gradient_clipping" in notes[0].message
    assert not read('{"zero_optimization": {"stage": 2}, "train_batch_size": 8, "comms_logger": {}}').notes


# --- standalone ---------------------------------------------------------------------------


def test_fp16_dynamic_loss_scale() -> None:
    plan = ds_plan(
        '{"train_batch_size": 8, "fp16": {"enabled": true, "initial_scale_power": 12}, '
        '"zero_optimization": {"stage": 1}}'
    )
    assert (plan.param_dtype.value, plan.grad_dtype.value, plan.autocast_dtype.value) == ("float16", "float16", None)
    assert (plan.loss_scaling.value, plan.grad_scaler.value, plan.initial_scale.value) == ("dynamic", False, 4096.0)
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.optimizer_state_dtype.value == "float32"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float16"
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-1"


def test_fp16_default_initial_scale_and_static_scale() -> None:
    dynamic = ds_plan('{"train_batch_size": 8, "fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}')
    assert dynamic.initial_scale is not None and dynamic.initial_scale.value == 65536.0
    assert "default" in str(dynamic.initial_scale.origin)
    static = ds_plan('{"train_batch_size": 8, "fp16": {"enabled": true, "loss_scale": 128}, "zero_optimization": {}}')
    assert (static.loss_scaling.value, static.initial_scale.value) == ("static", 128.0)  # type: ignore[union-attr]
    assert static.loss_scaling.origin.line == 1


def test_bf16_zero2_offload() -> None:
    plan = ds_plan(
        '{"train_batch_size": 8, "bf16": {"enabled": true}, '
        '"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}'
    )
    assert (plan.param_dtype.value, plan.loss_scaling.value, plan.initial_scale.value) == ("bfloat16", "none", None)  # type: ignore[union-attr]
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.grad_accum_dtype is not None and plan.grad_accum_dtype.value == "bfloat16"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-2, optimizer offloaded to cpu"


def test_bf16_without_zero_depends_on_the_deepspeed_version() -> None:
    text = '{"train_batch_size": 8, "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}'
    old = ds_plan(text, deepspeed="0.17.5")
    new = ds_plan(text, deepspeed="0.17.6")
    assert old.grad_accum_dtype is not None and old.grad_accum_dtype.value == "float32"
    assert new.grad_accum_dtype is not None and new.grad_accum_dtype.value == "bfloat16"
    assert old.master_weights is not None and old.master_weights.value == "float32"


def test_explicit_fp32_accumulation_without_zero_breaks_from_0_18_5() -> None:
    """BF16_Optimizer branch: engine.py:1476-1477@0.18.4, gone at 0.18.5 (engine.py:1498-1499)."""
    text = '{"train_batch_size": 8, "bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}}'
    for accepted in ("0.17.5", "0.17.6", "0.18.4"):
        assert ds_plan(text, deepspeed=accepted).override_of("grad_accum_dtype") is None, accepted
    new = ds_plan(text, deepspeed="0.18.5").override_of("grad_accum_dtype")
    assert (
        new is not None
        and "unsupported mix of model_dtype=torch.bfloat16 and grad_accum_dtype=torch.float32" in new.reason
    )


def test_both_fp16_and_bf16_enabled() -> None:
    plan = ds_plan('{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": true}}')
    override = plan.override_of("bf16")
    assert override is not None and "bfloat16 and fp16 modes cannot be simultaneously enabled" in override.reason
    assert plan.param_dtype.value == "float16"


def test_auto_without_integration_means_off() -> None:
    plan = ds_plan('{"train_batch_size": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": "auto"}}')
    assert plan.param_dtype.value == "float32" and plan.autocast_dtype.value is None
    assert "drops" in str(plan.param_dtype.origin) or plan.param_dtype.origin.kind == "default"
    assert plan.sharding is not None and plan.sharding.value == "none"


def test_fp32_mode_with_zero_keeps_an_fp32_partition() -> None:
    plan = ds_plan('{"train_batch_size": 8, "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}')
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-3, parameters offloaded to nvme"
    plain = ds_plan('{"train_batch_size": 8, "gradient_clipping": 1.0}')
    assert plain.master_weights is not None and plain.master_weights.value is None
    assert plain.sharding is not None and "Please specify the ZeRO optimization config" in str(plain.sharding.origin)


def test_apex_amp() -> None:
    o1 = ds_plan('{"train_batch_size": 8, "amp": {"enabled": true, "opt_level": "O1"}}')
    assert (o1.param_dtype.value, o1.autocast_dtype.value, o1.loss_scaling.value) == ("float32", "float16", "dynamic")
    o2 = ds_plan(
        '{"train_batch_size": 8, "amp": {"enabled": true, "opt_level": "O2"}, "zero_optimization": {"stage": 1}}'
    )
    assert o2.param_dtype.value == "float16" and o2.master_weights is not None and o2.master_weights.value == "float32"
    override = o2.override_of("amp")
    assert override is not None and "Amp and ZeRO are not currently compatible" in override.reason


def test_communication_data_type_wins() -> None:
    plan = ds_plan(
        '{"train_batch_size": 8, "bf16": {"enabled": true}, "communication_data_type": "fp32", '
        '"zero_optimization": {"stage": 2}}'
    )
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float32" and plan.reduce_dtype.origin.line == 1


def test_torch_autocast_fp16_without_zero_uses_a_grad_scaler() -> None:
    text = '{"train_batch_size": 8, "torch_autocast": {"enabled": true, "dtype": "float16"}}'
    plan = ds_plan(text, deepspeed="0.18.0")
    assert (plan.param_dtype.value, plan.autocast_dtype.value, plan.grad_scaler.value) == ("float32", "float16", True)
    old = ds_plan(text, deepspeed="0.17.1")  # the section did not exist: ignored
    assert old.autocast_dtype.value is None and old.grad_scaler.value is False


# --- with the HF Trainer ------------------------------------------------------------------

HF_BF16 = """
output_dir: out
per_device_train_batch_size: 4
learning_rate: 1.0e-5
bf16: true
deepspeed: ds.json
"""

DS_AUTO = """
{
  "train_micro_batch_size_per_gpu": "auto",
  "fp16": {"enabled": "auto", "loss_scale": 0},
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 3}
}
"""


def test_auto_filled_from_training_arguments_bf16() -> None:
    plan = hf_run(HF_BF16, DS_AUTO)
    assert (plan.param_dtype.value, plan.autocast_dtype.value, plan.grad_scaler.value) == ("bfloat16", None, False)
    assert plan.loss_scaling.value == "none" and not plan.overrides
    origin = plan.param_dtype.origin
    assert origin.kind == "derived" and origin.path == "train.yaml" and origin.line == 4 and origin.key == "bf16"
    assert "DeepSpeed `bf16.enabled: auto` filled from TrainingArguments bf16|bf16_full_eval" in str(origin)
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-3"
    assert plan.master_weights is not None and plan.master_weights.value == "float32"


def test_auto_filled_from_training_arguments_fp16_replaces_autocast_and_grad_scaler() -> None:
    plan = hf_run(HF_BF16.replace("bf16: true", "fp16: true"), DS_AUTO)
    assert (plan.param_dtype.value, plan.autocast_dtype.value) == ("float16", None)
    assert (plan.loss_scaling.value, plan.grad_scaler.value) == ("dynamic", False)
    assert plan.initial_scale is not None and plan.initial_scale.value == 65536.0


def test_auto_filled_with_the_training_arguments_default() -> None:
    plan = hf_run(HF_BF16.replace("bf16: true\n", "torch_dtype: float32\n"), DS_AUTO)
    assert plan.param_dtype.value == "float32" and plan.master_weights is not None
    assert "neither fp16 nor bf16 is enabled" in str(plan.param_dtype.origin)
    # transformers 5 loads the checkpoint's dtype: DeepSpeed's fp32 mode then trains bf16 weights
    llama = hf_run(HF_BF16.replace("bf16: true\n", "model_name_or_path: meta-llama/Llama-3.1-8B\n"), DS_AUTO)
    assert llama.param_dtype.value == "bfloat16" and llama.autocast_dtype.value is None
    assert llama.optimizer_state_dtype.value == "float32"  # ZeRO-3 steps an fp32 partition
    fp16 = plan.override_of("fp16")
    assert fp16 is None


def test_auto_fill_origin_names_the_default() -> None:
    main = HF_BF16.replace("bf16: true\n", "torch_dtype: float32\n")
    doc = parse("train.yaml", textwrap.dedent(main).lstrip("\n"), "yaml")
    config = dialects.BY_NAME["hf-trainer"].read(doc, {})
    base = hf.resolve(config, HW, Versions())
    switches, overrides = hf_switches(base, config, read(DS_AUTO), Versions())
    assert not overrides
    assert switches.bf16.value is False
    assert "DeepSpeed `bf16.enabled: auto` filled with TrainingArguments default False" in str(switches.bf16.origin)


def test_trl_bf16_default_fills_auto() -> None:
    main = "output_dir: out\nper_device_train_batch_size: 4\nlearning_rate: 1.0e-5\nmax_seq_length: 512\n"
    plan = hf_run(main, DS_AUTO, trl="0.19.0")
    assert plan.param_dtype.value == "bfloat16" and "trl" in str(plan.param_dtype.origin)


def test_explicit_agreement_points_at_the_deepspeed_file() -> None:
    ds = DS_AUTO.replace('"bf16": {"enabled": "auto"}', '"bf16": {"enabled": true}').replace(
        '"enabled": "auto", "loss', '"enabled": false, "loss'
    )
    plan = hf_run(HF_BF16, ds)
    assert plan.param_dtype.value == "bfloat16" and not plan.overrides
    assert plan.param_dtype.origin.path == "ds.json" and plan.param_dtype.origin.key == "bf16.enabled"


def test_mismatch_is_recorded_with_the_hf_error() -> None:
    ds = DS_AUTO.replace('"enabled": "auto", "loss', '"enabled": true, "loss')
    plan = hf_run(HF_BF16.replace("bf16: true\n", "gradient_accumulation_steps: 1\n"), ds)
    override = plan.override_of("fp16")
    assert override is not None
    assert override.winner.value is True and override.winner.origin.path == "ds.json"
    assert override.loser.value is False
    assert (
        "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:"
        in override.reason
    )
    assert "- ds fp16.enabled=True vs hf fp16|fp16_full_eval=False" in override.reason
    assert plan.param_dtype.value == "float16"  # the plan shows what the DeepSpeed file says
    old = hf_run(HF_BF16.replace("bf16: true\n", "gradient_accumulation_steps: 1\n"), ds, transformers="4.57.1")
    assert "hf fp16|fp16_full_eval+fp16_backend(amp)=False" in old.override_of("fp16").reason  # type: ignore[union-attr]


def test_other_dtype_enabled_raises_in_accelerate_first() -> None:
    ds = DS_AUTO.replace('"enabled": "auto", "loss', '"enabled": true, "loss')
    plan = hf_run(HF_BF16, ds)
    fp16 = plan.override_of("fp16")
    assert fp16 is not None and fp16.reason.startswith("accelerate raises ValueError")
    assert (
        "`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file."
        in fp16.reason
    )
    both = plan.override_of("bf16")
    assert both is not None and "cannot be simultaneously enabled" in both.reason


def test_missing_section_is_added_by_accelerate() -> None:
    plan = hf_run(HF_BF16, '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}')
    assert plan.param_dtype.value == "bfloat16"
    assert "accelerate DeepSpeedPlugin.set_mixed_precision adds" in str(plan.param_dtype.origin)


def test_legacy_bfloat16_is_switched_off_by_accelerate() -> None:
    ds = '{"train_micro_batch_size_per_gpu": "auto", "bfloat16": {"enabled": true}, "zero_optimization": {"stage": 2}}'
    plan = hf_run(HF_BF16.replace("bf16: true\n", "torch_dtype: float32\n"), ds)
    assert plan.param_dtype.value == "float32"
    override = plan.override_of("bf16")
    assert override is not None and "legacy `bfloat16`" in override.reason


def test_section_without_enabled_ignores_the_flag() -> None:
    plan = hf_run(
        HF_BF16.replace("bf16: true", "fp16: true\ntorch_dtype: float32"),
        '{"fp16": {"loss_scale": 0}, "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 1}}',
    )
    override = plan.override_of("fp16")
    assert override is not None and "no `enabled` key" in override.reason
    assert plan.param_dtype.value == "float32"


def test_batch_size_mismatch_against_the_default() -> None:
    ds = (
        '{"train_micro_batch_size_per_gpu": 4, "gradient_clipping": 1.0, "bf16": {"enabled": "auto"}, '
        '"zero_optimization": {"stage": 2}}'
    )
    plan = hf_run("output_dir: out\nlearning_rate: 1.0e-5\nbf16: true\n", ds)
    override = plan.override_of("batch_size")
    assert (
        override is not None
        and "- ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=8" in override.reason
    )
    assert plan.override_of("max_grad_norm") is None  # 1.0 matches the default


def test_attachment_through_the_engine(tmp_path: Path) -> None:
    (tmp_path / "train.yaml").write_text(textwrap.dedent(HF_BF16).lstrip("\n"), encoding="utf-8")
    (tmp_path / "ds.json").write_text(textwrap.dedent(DS_AUTO).lstrip("\n"), encoding="utf-8")
    report = engine.run([str(tmp_path)], from_specs(["8xH100"], {}), env={})
    runs = {Path(r.path).name: r for r in report.files}
    assert runs["train.yaml"].plan is not None and runs["train.yaml"].plan.param_dtype.value == "bfloat16"
    assert runs["ds.json"].part_of is not None


# --- with accelerate ----------------------------------------------------------------------


def _accelerate_main(mixed: str | None, in_file: bool = False) -> TrainingConfig:
    origin = (
        Origin("file", "acc.yaml", 3, 1, "mixed_precision") if in_file else Origin.env("ACCELERATE_MIXED_PRECISION")
    )
    item = Sourced(mixed, origin) if mixed is not None else None
    main = TrainingConfig(dialect="accelerate", framework="accelerate", path="acc.yaml", mixed_precision=item)
    main.references["deepspeed"] = Sourced("ds.json", Origin("file", "acc.yaml", 5, 3, "deepspeed_config_file"))
    return main


def _base_plan() -> PrecisionPlan:
    doc = parse("t.yaml", "output_dir: o\nper_device_train_batch_size: 1\ntorch_dtype: float32\n", "yaml")
    return hf.resolve(dialects.BY_NAME["hf-trainer"].read(doc, {}), HW, Versions())


def test_accelerate_fills_auto_from_mixed_precision() -> None:
    plan = ds_resolve.apply(_base_plan(), _accelerate_main("fp16"), read(DS_AUTO), Versions())
    assert plan.param_dtype.value == "float16" and plan.loss_scaling.value == "dynamic"
    assert "filled from accelerate mixed_precision fp16" in str(plan.param_dtype.origin)
    assert not plan.overrides


def test_accelerate_keeps_an_explicit_false() -> None:
    ds = read('{"fp16": {"enabled": false}, "zero_optimization": {"stage": 2}, "train_batch_size": 8}')
    plan = ds_resolve.apply(_base_plan(), _accelerate_main("fp16"), ds, Versions())
    assert plan.param_dtype.value == "float32"
    override = plan.override_of("fp16")
    assert override is not None and "must_match=False" in override.reason


def test_accelerate_config_mixed_precision_with_a_deepspeed_file_is_refused() -> None:
    plan = ds_resolve.apply(_base_plan(), _accelerate_main("bf16", in_file=True), read(DS_AUTO), Versions())
    override = plan.override_of("mixed_precision")
    assert override is not None and "When using `deepspeed_config_file`" in override.reason
    inline = _accelerate_main("bf16", in_file=True)
    inline.references.clear()  # an inline plugin (zero_stage: 2 in the accelerate config) is not refused
    assert ds_resolve.apply(_base_plan(), inline, read(DS_AUTO), Versions()).override_of("mixed_precision") is None
