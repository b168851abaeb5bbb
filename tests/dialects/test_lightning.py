"""Lightning (LightningCLI / Trainer YAML), LitGPT and NeMo: recognition, mapping, plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import Case, check_case, plan_for, read_as
from precheck import dialects
from precheck.config import TrainingConfig
from precheck.frameworks.lightning.dialect import device_indices, unify
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
LIGHTNING_CORPUS = sorted((CORPUS / "lightning").glob("*.y*ml")) if CORPUS.is_dir() else []


def read(text: str, fmt: str = "yaml") -> TrainingConfig:
    return read_as("lightning", text, fmt=fmt)


def plan_of(text: str, gpus: list[str] | None = None, versions: dict[str, str] | None = None) -> PrecisionPlan:
    return plan_for(read(text), gpus, versions)


def trainer(precision: str, extra: str = "") -> str:
    """A LightningCLI config with ``trainer.precision`` on line 2."""
    return f"trainer:\n  precision: {precision}\n  max_epochs: 3\n{extra}model:\n  class_path: my.Model\n"


def core(plan: PrecisionPlan) -> tuple[object, ...]:
    return (
        plan.load_dtype.value,
        plan.param_dtype.value,
        plan.autocast_dtype.value,
        plan.grad_dtype.value,
        plan.optimizer_state_dtype.value,
        plan.loss_scaling.value,
        plan.grad_scaler.value,
    )


LITGPT = """
checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3-8B
out_dir: out/finetune/lora
precision: {precision}
quantize: {quantize}
devices: {devices}
num_nodes: 1
lora_r: 32
train:
  global_batch_size: 16
  micro_batch_size: 2
  max_seq_length: 512
  max_norm: 1.0
optimizer: AdamW
"""


def litgpt(precision: str = "bf16-true", quantize: str = "", devices: str = "1") -> str:
    return LITGPT.format(precision=precision, quantize=quantize, devices=devices)


MEGATRON = """
trainer:
  devices: 1
  num_nodes: 1
  accelerator: gpu
  precision: {precision}
  max_steps: 100
  gradient_clip_val: 1.0
model:
  micro_batch_size: 4
  global_batch_size: 8
  tensor_model_parallel_size: 1
  native_amp_init_scale: 4294967296
  megatron_amp_O2: {o2}
{extra}"""


def megatron(precision: str = "bf16", o2: str = "True", extra: str = "") -> str:
    return MEGATRON.format(precision=precision, o2=o2, extra=extra)


# -- recognition ------------------------------------------------------------------------


@pytest.mark.skipif(not LIGHTNING_CORPUS, reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", LIGHTNING_CORPUS, ids=lambda p: p.name[:60])
def test_every_corpus_file_is_read_as_lightning(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "lightning"
    config = dialect.read(doc, {})
    plan = plan_for(config, ["8xH100"])
    assert plan.param_dtype.value in ("float32", "bfloat16", "float16")


def test_corpus_has_the_21_files() -> None:
    if not LIGHTNING_CORPUS:
        pytest.skip("../shared/corpus is not beside this checkout")
    assert len(LIGHTNING_CORPUS) == 21


@pytest.mark.parametrize(
    "text",
    [
        "trainer:\n  accelerator: gpu\n  devices: 2\n",  # a bare Trainer block
        trainer("bf16-mixed"),
        litgpt(),
        "name: x\ntrainer:\n  devices: -1\n  max_steps: 10\nmodel:\n  _target_: a.B\n",
    ],
)
def test_lightning_snippets_are_recognised(text: str) -> None:
    read(text)


@pytest.mark.parametrize(
    "text",
    [
        # verl's PPO config has a `trainer:` block with no Trainer arguments but `logger`
        "trainer:\n  logger: [console]\n  total_epochs: 3\n  n_gpus_per_node: 8\nactor_rollout_ref: {}\n",
        "output_dir: out\nper_device_train_batch_size: 4\nlearning_rate: 1e-5\nbf16: true\n",
        "precision: bf16-true\n",  # a lone precision key is not enough
    ],
)
def test_other_files_are_not_lightning(text: str) -> None:
    doc = parse("c.yaml", text, "yaml")
    dialect = dialects.detect(doc)
    assert dialect is None or dialect.name != "lightning"


# -- mapping ----------------------------------------------------------------------------


def test_trainer_keys_map_with_their_lines() -> None:
    config = read(
        """
        trainer:
          precision: 16-mixed
          devices: [0, 2]
          strategy: deepspeed_stage_3_offload
          accumulate_grad_batches: 4
          gradient_clip_val: 0.5
        data:
          class_path: my.Data
          init_args:
            batch_size: 8
        """
    )
    assert config.precision is not None and (config.precision.value, config.precision.origin.line) == ("16-mixed", 2)
    assert config.mixed_precision is not None and config.mixed_precision.value == "fp16"
    assert config.torch_dtype is None
    assert config.devices is not None and (config.devices.value, config.devices.origin.line) == ("0,2", 3)
    assert config.zero_stage is not None and config.zero_stage.value == 3 and config.zero_stage.origin.line == 4
    assert config.offload_optimizer is not None and config.offload_optimizer.value == "cpu"
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    assert config.grad_accum_steps is not None and config.grad_accum_steps.value == 4
    assert config.max_grad_norm is not None and (config.max_grad_norm.value, config.max_grad_norm.origin.line) == (
        0.5,
        6,
    )
    assert config.batch_size is not None and config.batch_size.value == 8


def test_lightningcli_fit_subcommand_block() -> None:
    config = read("fit:\n  trainer:\n    precision: bf16-true\n    devices: 2\n  model:\n    class_path: my.Model\n")
    assert config.precision is not None and (config.precision.value, config.precision.origin.line) == ("bf16-true", 3)
    assert plan_for(config).param_dtype.value == "bfloat16" and plan_for(config).devices.value == "0,1"


def test_gradient_clip_by_value_is_not_a_norm() -> None:
    config = read(trainer("32", "  gradient_clip_val: 0.5\n  gradient_clip_algorithm: value\n"))
    assert config.max_grad_norm is None


@pytest.mark.parametrize(
    ("raw", "mode"),
    [
        ("16-mixed", "16-mixed"),
        ("bf16-mixed", "bf16-mixed"),
        ("16-true", "16-true"),
        ("bf16-true", "bf16-true"),
        ("32-true", "32-true"),
        ("64-true", "64-true"),
        ("transformer-engine", "transformer-engine"),
        ("transformer-engine-float16", "transformer-engine-float16"),
        (16, "16-mixed"),
        ("16", "16-mixed"),
        ("bf16", "bf16-mixed"),
        (32, "32-true"),
        ("32", "32-true"),
        (64, "64-true"),
        ("fp16", None),
        ("BF16", None),
        ("bf16-mixed ", None),
        (True, None),
    ],
)
def test_precision_strings_unify_like_lightning(raw: object, mode: str | None) -> None:
    assert unify(raw) == mode


@pytest.mark.parametrize(
    ("raw", "mixed", "dtype", "fp8"),
    [
        ("16-mixed", "fp16", None, None),
        ("bf16-mixed", "bf16", None, None),
        ("16-true", "no", "float16", None),
        ("bf16-true", "no", "bfloat16", None),
        ("64-true", "no", "float64", None),
        ("32-true", None, None, None),
        ("transformer-engine", "fp8", "bfloat16", "transformer-engine (bfloat16 weights)"),
        ("transformer-engine-float16", "fp8", "float16", "transformer-engine (float16 weights)"),
        ("16", "fp16", None, None),
    ],
)
def test_precision_maps_onto_the_switches(raw: str, mixed: str | None, dtype: str | None, fp8: str | None) -> None:
    config = read(trainer(raw))
    assert (config.mixed_precision.value if config.mixed_precision else None) == mixed
    assert (config.torch_dtype.value if config.torch_dtype else None) == dtype
    assert (config.fp8.value if config.fp8 else None) == fp8
    if config.torch_dtype is not None:  # derived, so no fix may rewrite a `torch_dtype` key
        assert config.torch_dtype.origin.key is None and config.torch_dtype.origin.line == 2


@pytest.mark.parametrize(
    ("value", "indices"),
    [(4, "0,1,2,3"), ("2", "0,1"), ("0,1", "0,1"), ("1,", "1"), (-1, None), ("-1", None), ("auto", None), (0, None)],
)
def test_devices_follow_lightnings_parser(value: object, indices: str | None) -> None:
    assert device_indices(value) == indices


def test_fsdp_and_deepspeed_strategy_classes() -> None:
    fsdp = read(
        trainer(
            "bf16-mixed",
            "  strategy:\n    class_path: lightning.pytorch.strategies.FSDPStrategy\n"
            "    init_args:\n      sharding_strategy: SHARD_GRAD_OP\n      cpu_offload: true\n",
        )
    )
    assert fsdp.fsdp is not None and fsdp.fsdp.value
    assert fsdp.fsdp_sharding is not None and fsdp.fsdp_sharding.value == "shard_grad_op"
    assert fsdp.offload_param is not None and fsdp.offload_param.value == "cpu"
    ds = read(
        trainer(
            "16-mixed",
            "  strategy:\n    class_path: lightning.pytorch.strategies.DeepSpeedStrategy\n"
            "    init_args:\n      stage: 3\n      offload_optimizer: true\n      config: ds_config.json\n",
        )
    )
    assert ds.zero_stage is not None and ds.zero_stage.value == 3
    assert ds.offload_optimizer is not None and ds.offload_optimizer.value == "cpu"
    assert ds.references["deepspeed"].value == "ds_config.json"
    plain = read(trainer("16-mixed", "  strategy: fsdp\n"))
    assert plain.fsdp is not None and plain.fsdp_sharding is not None and plain.fsdp_sharding.value == "full_shard"


def test_omegaconf_interpolation_is_followed() -> None:
    config = read(
        """
        trainer:
          devices: 1
          accelerator: gpu
          precision: ${export.dtype}
        export:
          dtype: bf16
        """
    )
    assert config.precision is not None and config.precision.value == "bf16"
    assert config.precision.origin.line == 4 and "line 6" in str(config.precision.origin)


def test_nemo2_precision_plugin() -> None:
    config = read(
        """
        trainer:
          devices: -1
          accelerator: gpu
          max_steps: 10
        plugins:
          _target_: nemo.lightning.MegatronMixedPrecision
          precision: "bf16-mixed"
        """
    )
    assert config.precision is not None and (config.precision.value, config.precision.origin.line) == ("bf16-mixed", 7)


def test_bitsandbytes_plugin_in_lightningcli() -> None:
    config = read(
        """
        trainer:
          devices: 1
          max_epochs: 1
          plugins:
            class_path: lightning.pytorch.plugins.BitsandbytesPrecision
            init_args:
              mode: nf4-dq
              dtype: bfloat16
        """
    )
    assert config.precision is None
    assert config.quantization_bits is not None and config.quantization_bits.value == 4
    assert config.quant_compute_dtype is not None and config.quant_compute_dtype.value == "bfloat16"
    plan = plan_for(config)
    assert plan.quantization is not None and plan.quantization.value.startswith("4-bit")
    assert plan.param_dtype.value == "bfloat16" and plan.autocast_dtype.value is None


def test_litgpt_keys() -> None:
    config = read(litgpt("bf16-true", "bnb.nf4", "1"))
    assert config.model is not None and config.model.value == "checkpoints/meta-llama/Meta-Llama-3-8B"
    assert config.quantization_bits is not None and (
        config.quantization_bits.value,
        config.quantization_bits.origin.line,
    )
    assert config.quantization_bits.value == 4 and config.quantization_bits.origin.line == 4
    assert config.quant_compute_dtype is not None and config.quant_compute_dtype.value == "bfloat16"
    assert config.train_type is not None and config.train_type.value == "lora"
    assert config.batch_size is not None and config.batch_size.value == 2
    # TrainArgs.gradient_accumulation_iters: 16 // (1 device x 1 node) // 2
    assert config.grad_accum_steps is not None and config.grad_accum_steps.value == 8
    assert config.max_grad_norm is not None and config.max_grad_norm.value == 1.0
    assert config.seq_len is not None and config.seq_len.value == 512
    many = read(litgpt("bf16-true", "", "4"))
    assert many.grad_accum_steps is not None and many.grad_accum_steps.value == 2
    assert many.fsdp is not None and many.devices is not None and many.devices.value == "0,1,2,3"


def test_nemo_megatron_keys() -> None:
    config = read(
        megatron(
            "16",
            "False",
            "  fsdp: True\n  fsdp_sharding_strategy: hybrid\n  fsdp_grad_reduce_dtype: bf16\n  fp8: True\n"
            "  fp8_hybrid: True\n  activations_checkpoint_granularity: selective\n",
        )
    )
    assert config.initial_scale_power is not None and config.initial_scale_power.value == 32
    assert config.fsdp is not None and config.fsdp_sharding is not None and config.fsdp_sharding.value == "hybrid_shard"
    assert config.fsdp_reduce_dtype is not None and config.fsdp_reduce_dtype.value == "bfloat16"
    assert config.fp8 is not None and "HYBRID" in config.fp8.value
    assert config.gradient_checkpointing is not None and config.gradient_checkpointing.value
    assert config.grad_accum_steps is None  # Megatron derives it from global_batch_size
    assert config.max_grad_norm is not None and config.max_grad_norm.value == 1.0


# -- resolution: the plain plugins ---------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("32-true", ("float32", "float32", None, "float32", "float32", "none", False)),
        ("64-true", ("float64", "float64", None, "float64", "float64", "none", False)),
        ("16-mixed", ("float32", "float32", "float16", "float32", "float32", "dynamic", True)),
        ("bf16-mixed", ("float32", "float32", "bfloat16", "float32", "float32", "none", False)),
        ("16-true", ("float16", "float16", None, "float16", "float16", "none", False)),
        ("bf16-true", ("bfloat16", "bfloat16", None, "bfloat16", "bfloat16", "none", False)),
        ("transformer-engine", ("bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "none", False)),
        ("transformer-engine-float16", ("float16", "float16", "float16", "float16", "float16", "none", False)),
    ],
)
def test_each_mode_resolves_like_its_plugin(raw: str, expected: tuple[object, ...]) -> None:
    plan = plan_of(trainer(raw))
    assert core(plan) == expected
    assert plan.master_weights is not None and plan.master_weights.value is None


def test_16_mixed_scaler_starts_at_torch_default() -> None:
    plan = plan_of(trainer("16-mixed"))
    assert plan.initial_scale is not None and plan.initial_scale.value == 2.0**16
    assert "GradScaler" in str(plan.grad_scaler.origin) and plan.grad_scaler.origin.line == 2


def test_16_true_has_no_loss_scaling() -> None:
    plan = plan_of(trainer("16-true"))
    assert plan.loss_scaling.value == "none" and plan.initial_scale is not None and plan.initial_scale.value is None
    assert "HalfPrecision" in str(plan.param_dtype.origin)


def test_transformer_engine_puts_fp8_in_the_plan() -> None:
    plan = plan_of(trainer("transformer-engine"))
    assert plan.fp8 is not None and plan.fp8.value is not None and plan.fp8.value.startswith("transformer-engine")


def test_default_is_32_true() -> None:
    plan = plan_of("trainer:\n  devices: 2\n  max_epochs: 1\n")
    assert core(plan)[:3] == ("float32", "float32", None) and "32-true" in str(plan.param_dtype.origin)
    assert plan.devices.value == "0,1"


# -- resolution: aliases, invalid values, versions -------------------------------------------


def test_legacy_alias_warns_with_lightnings_text() -> None:
    plan = plan_of(trainer("16"))
    assert plan.autocast_dtype.value == "float16" and plan.grad_scaler.value
    assert (
        "`precision=16` is supported for historical reasons but its usage is discouraged. "
        "Please set your precision to 16-mixed instead!"
    ) in str(plan.autocast_dtype.origin)
    bf16 = plan_of(trainer("bf16"))
    assert bf16.autocast_dtype.value == "bfloat16" and "set your precision to bf16-mixed" in str(
        bf16.autocast_dtype.origin
    )
    old = plan_of(trainer("16"), versions={"lightning": "2.0.9"})
    assert "16 is supported for historical reasons" in str(old.autocast_dtype.origin)
    assert "`precision=16`" not in str(old.autocast_dtype.origin)
    assert "historical" not in str(plan_of(trainer("32")).param_dtype.origin)


def test_lightning_1_x_knows_only_the_old_names() -> None:
    plan = plan_of(trainer("bf16-mixed"), versions={"lightning": "1.9.5"})
    assert "raises MisconfigurationException: Precision 'bf16-mixed' is invalid" in str(plan.autocast_dtype.origin)
    old = plan_of(trainer("16"), versions={"lightning": "1.9.5"})
    assert old.grad_scaler.value and "historical" not in str(old.autocast_dtype.origin)


def test_invalid_precision_is_reported_in_the_provenance() -> None:
    plan = plan_of(trainer("fp16"))
    assert "Precision 'fp16' is invalid. Allowed precision values:" in str(plan.param_dtype.origin)


def test_true_half_needs_lightning_2_1() -> None:
    plan = plan_of(trainer("bf16-true"), versions={"lightning": "2.0.9"})
    assert "2.0.9 raises ValueError: Precision 'bf16-true' is invalid" in str(plan.param_dtype.origin)
    assert "invalid" not in str(plan_of(trainer("bf16-true"), versions={"lightning": "2.1.0"}).param_dtype.origin)


def test_16_mixed_on_cpu_becomes_bf16_mixed() -> None:
    plan = plan_of(trainer("16-mixed", "  accelerator: cpu\n"))
    assert plan.autocast_dtype.value == "bfloat16" and not plan.grad_scaler.value
    override = plan.override_of("autocast_dtype")
    assert override is not None and override.loser.value == "float16" and override.loser.origin.line == 2
    assert "AMP with fp16 is not supported on CPU. Using `precision='bf16-mixed'` instead." in override.reason
    assert plan.devices.value == "" and plan.device_indices(8) == []


def test_apex_arguments_removed_in_lightning_2() -> None:
    plan = plan_of(trainer("16", "  amp_backend: apex\n"))
    assert "got an unexpected keyword argument 'amp_backend'" in str(plan.autocast_dtype.origin)


# -- resolution: strategies -----------------------------------------------------------------


def test_fsdp_mixed_keeps_fp32_shards_and_reduces_in_half() -> None:
    plan = plan_of(trainer("bf16-mixed", "  strategy: fsdp\n"))
    assert core(plan)[:5] == ("float32", "float32", "bfloat16", "float32", "float32")
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"
    assert plan.sharding is not None and plan.sharding.value.startswith("FSDP")
    old = plan_of(trainer("bf16-mixed", "  strategy: fsdp\n"), versions={"lightning": "2.5.0"})
    assert "param_dtype=float32" in str(old.autocast_dtype.origin)
    fp16 = plan_of(trainer("16-mixed", "  strategy: fsdp\n"))
    assert fp16.grad_scaler.value and "ShardedGradScaler" in str(fp16.grad_scaler.origin)


def test_fsdp_true_half_shards_the_cast_weights() -> None:
    plan = plan_of(trainer("bf16-true", "  strategy: fsdp\n"))
    assert core(plan)[:5] == ("bfloat16",) * 2 + (None,) + ("bfloat16",) * 2


def test_fsdp_rejects_transformer_engine() -> None:
    plan = plan_of(trainer("transformer-engine", "  strategy: fsdp\n"))
    assert "is not supported in FSDP" in str(plan.param_dtype.origin)


def test_deepspeed_casts_the_module_and_keeps_fp32_master() -> None:
    plan = plan_of(trainer("16-mixed", "  strategy: deepspeed_stage_2\n"))
    assert core(plan) == ("float32", "float16", None, "float16", "float32", "dynamic", False)
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.initial_scale is not None and plan.initial_scale.value == 2.0**16
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-2"
    bf16 = plan_of(trainer("bf16-true", "  strategy: deepspeed\n"))
    assert core(bf16)[:2] == ("bfloat16", "bfloat16") and bf16.loss_scaling.value == "none"
    bad = plan_of(trainer("64-true", "  strategy: deepspeed\n"))
    assert "`Trainer(strategy='deepspeed', precision='64-true')` is not supported" in str(bad.param_dtype.origin)


# -- resolution: LitGPT -------------------------------------------------------------------------


def test_litgpt_default_precision_follows_the_bf16_check() -> None:
    text = litgpt("", "", "1")
    a100 = plan_of(text, ["A100"])
    assert a100.autocast_dtype.value == "bfloat16" and "get_default_supported_precision" in str(
        a100.autocast_dtype.origin
    )
    old_torch = plan_of(text, ["V100"], {"torch": "2.2.2"})
    assert old_torch.autocast_dtype.value == "float16" and old_torch.grad_scaler.value
    new_torch = plan_of(text, ["V100"], {"torch": "2.3.0"})
    assert new_torch.autocast_dtype.value == "bfloat16"


def test_litgpt_quantize_uses_the_precision_dtype() -> None:
    plan = plan_of(litgpt("bf16-true", "bnb.nf4", "1"), ["A100"])
    assert core(plan) == ("bfloat16", "bfloat16", None, "bfloat16", "float32", "none", False)
    assert plan.quantization is not None and plan.quantization.value == "4-bit nf4 (bitsandbytes), compute bfloat16"
    assert plan.tf32 is not None and plan.tf32.value  # litgpt sets matmul precision "high"


def test_litgpt_quantize_with_mixed_precision_fails() -> None:
    plan = plan_of(litgpt("bf16-mixed", "bnb.nf4", "1"))
    assert "Quantization and mixed precision is not supported." in str(plan.param_dtype.origin)
    many = plan_of(litgpt("bf16-true", "bnb.nf4", "2"))
    assert "Quantization is currently not supported for multi-GPU training" in str(many.param_dtype.origin)
    int8 = plan_of(litgpt("bf16-true", "bnb.int8-training", "1"))
    assert "'int8-training' only works with `dtype=torch.float16`" in str(int8.param_dtype.origin)


def test_litgpt_full_finetune_on_several_devices_uses_fsdp_by_version() -> None:
    text = litgpt("bf16-mixed", "", "4").replace("lora_r: 32\n", "")
    new = plan_of(text, ["8xA100"])
    assert core(new)[:5] == ("float32", "float32", "bfloat16", "float32", "float32")
    assert new.gradient_checkpointing is not None and new.gradient_checkpointing.value
    buggy = plan_of(text, ["8xA100"], {"lightning": "2.6.1"})
    assert buggy.param_dtype.value == "bfloat16" and buggy.optimizer_state_dtype.value == "bfloat16"
    assert "#21586" in str(buggy.param_dtype.origin)
    fixed = plan_of(text, ["8xA100"], {"lightning": "2.6.2"})
    assert fixed.param_dtype.value == "float32"


def test_litgpt_lora_on_several_devices_rejects_16_mixed() -> None:
    plan = plan_of(litgpt("16-mixed", "", "2"), ["2xA100"])
    assert "The `ModelParallelStrategy` does not support `Fabric(..., precision='16-mixed')`" in str(
        plan.param_dtype.origin
    )


def test_litgpt_auto_devices_on_one_gpu_does_not_shard() -> None:
    text = litgpt("bf16-mixed", "", "auto").replace("lora_r: 32\n", "")
    assert plan_of(text, ["A100"]).sharding.value == "none"  # type: ignore[union-attr]
    assert plan_of(text, ["4xA100"]).sharding.value.startswith("FSDP")  # type: ignore[union-attr]


# -- resolution: NeMo ---------------------------------------------------------------------------


def test_nemo_o2_bf16_keeps_fp32_master_weights() -> None:
    plan = plan_of(megatron("bf16", "True"))
    assert core(plan) == ("float32", "bfloat16", None, "float32", "float32", "none", False)
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.grad_accum_dtype is not None and plan.grad_accum_dtype.value == "float32"
    # the builder hands the Trainer precision=None: no Lightning alias warning
    assert "historical" not in str(plan.param_dtype.origin)


def test_nemo_o2_fp16_unscales_fp32_main_grads() -> None:
    plan = plan_of(megatron("16", "True"))
    assert core(plan) == ("float32", "float16", None, "float32", "float32", "dynamic", True)
    assert plan.initial_scale is not None and plan.initial_scale.value == 2.0**32
    assert plan.grad_accum_dtype is not None and plan.grad_accum_dtype.value == "float16"


def test_nemo_o1_autocasts() -> None:
    plan = plan_of(megatron("16-mixed", "False"))
    assert core(plan) == ("float32", "float32", "float16", "float32", "float32", "dynamic", True)
    assert plan.initial_scale is not None and plan.initial_scale.value == 2.0**32


def test_nemo_fsdp_turns_o2_off() -> None:
    plan = plan_of(megatron("bf16", "True", "  fsdp: True\n"))
    assert plan.param_dtype.value == "float32" and plan.autocast_dtype.value == "bfloat16"
    override = plan.override_of("param_dtype")
    assert override is not None and "Setting O2 `False`" in override.reason
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float32"


def test_nemo_model_precision_loses_to_trainer_precision() -> None:
    plan = plan_of(megatron("bf16", "True", "  precision: 16\n"))
    override = plan.override_of("param_dtype")
    assert override is not None and override.loser.value == "float16" and override.winner.value == "bfloat16"


def test_nemo_32_goes_to_lightning() -> None:
    plan = plan_of(megatron("32", "False"))
    assert core(plan)[:3] == ("float32", "float32", None) and plan.devices.value == "0"


def test_nemo2_megatron_mixed_precision() -> None:
    plan = plan_of(
        """
        trainer:
          devices: 2
          max_steps: 10
        plugins:
          _target_: nemo.lightning.MegatronMixedPrecision
          precision: 16-mixed
        """
    )
    assert core(plan) == ("float32", "float16", None, "float32", "float32", "dynamic", False)
    assert plan.initial_scale is not None and plan.initial_scale.value == 2.0**32


# -- rules see the plans -------------------------------------------------------------------------


def test_bf16_true_on_v100_is_reported() -> None:
    check_case(Case("bf16-true on V100", "PC101", trainer("bf16-true"), gpus=["V100"], expect={(2, 3)}))


def test_bf16_true_on_a100_is_fine() -> None:
    check_case(Case("bf16-true on A100", "PC101", trainer("bf16-true"), gpus=["A100"]))


def test_transformer_engine_on_a100_is_reported() -> None:
    check_case(Case("te on A100", "PC104", trainer("transformer-engine"), gpus=["A100"], expect={(2, 3)}))
    check_case(Case("te on H100", "PC104", trainer("transformer-engine"), gpus=["H100"]))


def test_cpu_run_is_not_checked_against_gpus() -> None:
    check_case(Case("cpu", "PC101", trainer("bf16-mixed", "  accelerator: cpu\n"), gpus=["V100"]))
