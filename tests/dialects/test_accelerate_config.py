"""The accelerate config dialect and what `accelerate launch --config_file` makes of it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from precheck import dialects, engine, resolve
from precheck.config import TrainingConfig
from precheck.hardware import Hardware, from_specs
from precheck.resolve.plan import OverrideKind, PrecisionPlan
from precheck.sources import parse
from precheck.versions import VersionInfo, Versions

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
H100 = from_specs(["8xH100"], {})
A100 = from_specs(["8xA100"], {})


def read(text: str, env: dict[str, str] | None = None, path: str = "acc.yaml", fmt: str = "yaml") -> TrainingConfig:
    doc = parse(path, textwrap.dedent(text).lstrip("\n"), fmt)
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "accelerate", dialect
    return dialect.read(doc, env or {})


def plan_of(
    text: str, env: dict[str, str] | None = None, hardware: Hardware = H100, **known: str
) -> tuple[TrainingConfig, PrecisionPlan]:
    config = read(text, env)
    versions = Versions({n: VersionInfo(n, v, "flag") for n, v in known.items()})
    return config, resolve.resolve(config, hardware, versions)


def _corpus(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).glob("*")) if (CORPUS / folder).is_dir() else []


def _fmt(path: Path) -> str:
    return "json" if path.suffix == ".json" else "yaml"


# --- recognition --------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", _corpus("accelerate"), ids=lambda p: p.name[:70])
def test_every_corpus_accelerate_file_is_recognised_and_resolves(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), _fmt(path))
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "accelerate"
    config = dialect.read(doc, {})
    plan = resolve.resolve(config, H100, Versions())
    written = doc.mapping().get("mixed_precision")
    mode = str(written.value).lower() if written is not None else "no"
    kind = config.distributed_type.value if config.distributed_type else None
    if kind == "DEEPSPEED":  # DeepSpeed's bf16/fp16 mode casts the model; accelerate adds no autocast
        assert plan.autocast_dtype.value is None
    else:
        expected = {"no": None, "fp16": "float16", "bf16": "bfloat16", "fp8": "bfloat16"}[mode]
        assert plan.autocast_dtype.value == expected
        assert plan.param_dtype.value == "float32"  # accelerate does not cast the model; FSDP keeps fp32
    assert plan.grad_scaler.value is (mode == "fp16" and kind != "DEEPSPEED")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")
def test_no_other_corpus_file_is_read_as_accelerate() -> None:
    stolen = []
    for path in sorted(CORPUS.rglob("*")):
        if path.parent.name == "accelerate" or not path.is_file() or path.suffix not in (".json", ".yaml", ".yml"):
            continue
        try:
            doc = parse(str(path), path.read_text(encoding="utf-8"), _fmt(path))
        except Exception:
            continue
        dialect = dialects.detect(doc)
        if dialect is not None and dialect.name == "accelerate":
            stolen.append(path.name)
    assert stolen == []


def test_recognition_needs_distributed_type() -> None:
    doc = parse("x.yaml", "mixed_precision: bf16\nnum_processes: 2\n", "yaml")
    dialect = dialects.detect(doc)
    assert dialect is None or dialect.name != "accelerate"
    # a distributed_type accelerate does not know still marks the file when other keys agree
    doc = parse("x.yaml", "distributed_type: multi_gpu\nmixed_precision: bf16\nnum_processes: 2\n", "yaml")
    detected = dialects.detect(doc)
    assert detected is not None and detected.name == "accelerate"


# --- mapping ------------------------------------------------------------------------------

BASIC = """
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
downcast_bf16: 'no'
gpu_ids: all
mixed_precision: BF16
num_processes: 4
"""


def test_basic_mapping_with_lines() -> None:
    config = read(BASIC)
    assert config.mixed_precision is not None and config.mixed_precision.value == "bf16"  # lower-cased
    assert config.mixed_precision.origin.line == 5 and config.mixed_precision.origin.key == "mixed_precision"
    assert config.distributed_type is not None and config.distributed_type.value == "MULTI_GPU"
    assert config.num_processes is not None and config.num_processes.value == 4
    assert config.devices is None  # gpu_ids: all
    assert config.flag_keys == {"mixed_precision": "mixed_precision"}
    assert config.notes == []


def test_gpu_ids_become_devices() -> None:
    config, plan = plan_of("distributed_type: MULTI_GPU\ngpu_ids: 2, 3\nnum_processes: 2\n")
    assert config.devices is not None and config.devices.value == "2,3"
    assert plan.devices.value == "2,3"
    _, plan = plan_of(
        "distributed_type: MULTI_GPU\ngpu_ids: '0,1'\nnum_processes: 2\n", {"CUDA_VISIBLE_DEVICES": "4,5"}
    )
    override = plan.override_of("devices")
    assert override is not None and override.loser.origin.kind == "env"


def test_devices_follow_the_process_count() -> None:
    assert plan_of("distributed_type: MULTI_GPU\nnum_processes: 2\n")[1].devices.value == "0,1"
    assert plan_of("distributed_type: MULTI_GPU\nnum_processes: 8\n")[1].devices.value == "all"
    assert plan_of("distributed_type: 'NO'\nmixed_precision: bf16\n")[1].devices.value == "first"
    assert plan_of("distributed_type: MULTI_CPU\nuse_cpu: true\nnum_processes: 4\n")[1].devices.value == ""
    two_nodes = "distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 8\n"
    assert plan_of(two_nodes)[1].devices.value == "0,1,2,3"


def test_legacy_fp16_key() -> None:
    config, plan = plan_of("distributed_type: MULTI_GPU\nfp16: true\nnum_processes: 8\n")
    assert config.mixed_precision is not None and config.mixed_precision.value == "fp16"
    assert config.mixed_precision.origin.line == 2
    assert plan.autocast_dtype.value == "float16" and plan.grad_scaler.value is True
    assert plan.loss_scaling.value == "dynamic"


def test_unquoted_distributed_type_no_is_not_reported() -> None:
    config = read("distributed_type: NO\nmixed_precision: 'bf16'\ndowncast_bf16: no\n")
    assert config.distributed_type is not None and config.distributed_type.value == "NO"
    assert [n.kind for n in config.notes] == []


def test_unquoted_mixed_precision_no_fails_the_launch() -> None:
    config, plan = plan_of("distributed_type: MULTI_GPU\nmixed_precision: no\nnum_processes: 2\n")
    [note] = config.notes
    assert note.kind == "yaml11-boolean" and "AttributeError: 'bool' object has no attribute 'lower'" in note.message
    override = plan.override_of("mixed_precision")
    assert override is not None and "AttributeError" in override.reason
    assert plan.autocast_dtype.value is None


def test_unknown_mixed_precision_mode() -> None:
    _, plan = plan_of("distributed_type: MULTI_GPU\nmixed_precision: float16\nnum_processes: 2\n")
    override = plan.override_of("mixed_precision")
    assert override is not None
    assert "Unknown mixed_precision mode: float16. Choose between ['no', 'fp8', 'fp16', 'bf16']." in override.reason


# --- unknown keys -------------------------------------------------------------------------


def test_misspelt_key_is_refused_with_did_you_mean() -> None:
    config = read("distributed_type: MULTI_GPU\nmixed_precison: bf16\nnum_processes: 2\n")
    [note] = config.notes
    assert note.kind == "unknown-key" and (note.line, note.column) == (2, 1)
    assert "did you mean `mixed_precision`?" in note.message
    assert (
        "The config file at acc.yaml had unknown keys (['mixed_precison']), please try upgrading your `accelerate` "
        "version or fix (and potentially remove) these keys from your config file." in note.message
    )
    assert config.mixed_precision is None


def test_every_unknown_key_is_listed_in_the_error() -> None:
    config = read("distributed_type: 'NO'\nfoo: 1\nbar: 2\n")
    assert [n.key for n in config.notes] == ["bar", "foo"]
    assert all("unknown keys (['bar', 'foo'])" in n.message for n in config.notes)


def test_sagemaker_files_have_their_own_keys() -> None:
    config = read(
        "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: 'NO'\nmixed_precision: fp16\n"
        "ec2_instance_type: ml.p3.2xlarge\niam_role_name: role\nnum_processes: 1\n"
    )
    assert [n.key for n in config.notes] == ["num_processes"]  # a ClusterConfig key, not a SageMakerConfig one


def test_nested_keys_the_launcher_ignores() -> None:
    config = read(
        """
        distributed_type: FSDP
        fsdp_config:
          fsdp_offload_param: true
          sharding_strategy: FULL_SHARD
        deepspeed_config:
          zero_stag: 3
        """
    )
    notes = {n.key: n.message for n in config.notes}
    assert set(notes) == {"fsdp_config.fsdp_offload_param", "deepspeed_config.zero_stag"}
    assert "did you mean `fsdp_offload_params`?" in notes["fsdp_config.fsdp_offload_param"]
    assert "did you mean `zero_stage`?" in notes["deepspeed_config.zero_stag"]
    assert config.offload_param is None  # the misspelt key does nothing


# --- mixed precision and the environment --------------------------------------------------


def test_config_mixed_precision_beats_the_shell_variable() -> None:
    _, plan = plan_of(BASIC, {"ACCELERATE_MIXED_PRECISION": "fp16"})
    assert plan.autocast_dtype.value == "bfloat16" and plan.grad_scaler.value is False
    override = plan.override_of("mixed_precision")
    assert override is not None
    assert override.winner.value == "bf16" and override.winner.origin.line == 5
    assert override.loser.value == "fp16" and override.loser.origin.kind == "env"
    assert "overwrites ACCELERATE_MIXED_PRECISION" in override.reason


def test_shell_variable_loses_even_without_config_value() -> None:
    config, plan = plan_of("distributed_type: MULTI_GPU\nnum_processes: 8\n", {"ACCELERATE_MIXED_PRECISION": "bf16"})
    assert plan.autocast_dtype.value is None
    override = plan.override_of("mixed_precision")
    assert override is not None and override.winner.value == "no" and override.winner.origin.kind == "default"
    assert config.mixed_precision is not None and config.mixed_precision.value == "no"  # what the launcher exports


def test_same_value_in_shell_is_no_override() -> None:
    _, plan = plan_of(BASIC, {"ACCELERATE_MIXED_PRECISION": "bf16"})
    assert plan.overrides == []


def test_fp16_on_the_cpu_adds_no_autocast() -> None:
    _, plan = plan_of("distributed_type: 'NO'\nmixed_precision: fp16\nuse_cpu: true\n")
    assert plan.autocast_dtype.value is None and plan.grad_scaler.value is False
    _, plan = plan_of("distributed_type: 'NO'\nmixed_precision: bf16\nuse_cpu: true\n")
    assert plan.autocast_dtype.value == "bfloat16"


def test_shell_use_fsdp_switches_a_multi_gpu_run() -> None:
    config, plan = plan_of(BASIC, {"ACCELERATE_USE_FSDP": "true"})
    assert config.fsdp is not None and config.fsdp.value is True and config.fsdp.origin.kind == "env"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"
    assert plan.sharding is not None and plan.sharding.value.startswith("FSDP1")
    # a single-process run never becomes FSDP (AcceleratorState checks it only for MULTI_* types)
    _, single = plan_of("distributed_type: 'NO'\nmixed_precision: bf16\n", {"ACCELERATE_USE_FSDP": "true"})
    assert single.sharding is not None and single.sharding.value == "none"


def test_shell_use_deepspeed_switches_the_run() -> None:
    env = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"}
    _, plan = plan_of(BASIC, env)
    assert plan.param_dtype.value == "bfloat16" and plan.autocast_dtype.value is None
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-3"


# --- DeepSpeed ----------------------------------------------------------------------------

DS_INLINE = """
distributed_type: DEEPSPEED
deepspeed_config:
  offload_optimizer_device: cpu
  zero3_init_flag: true
  zero_stage: 3
mixed_precision: fp16
num_processes: 8
"""


def test_inline_deepspeed_plugin() -> None:
    config, plan = plan_of(DS_INLINE)
    assert config.zero_stage is not None and config.zero_stage.value == 3 and config.zero_stage.origin.line == 5
    assert config.zero_stage.origin.key == "deepspeed_config.zero_stage"
    assert config.offload_optimizer is not None and config.offload_optimizer.value == "cpu"
    assert "deepspeed" not in config.references
    # set_mixed_precision adds fp16 {"enabled": true}: DeepSpeed's fp16 mode, its own loss scaling
    assert plan.param_dtype.value == "float16" and plan.autocast_dtype.value is None
    assert plan.grad_scaler.value is False and plan.loss_scaling.value == "dynamic"
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-3, optimizer offloaded to cpu"
    assert plan.overrides == []  # mixed_precision beside an inline plugin is the normal way


def test_inline_deepspeed_stage_from_the_shell_or_default() -> None:
    text = "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\n"
    _, plan = plan_of(text)
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-2"
    _, plan = plan_of(text, {"ACCELERATE_DEEPSPEED_ZERO_STAGE": "1"})
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-1" and plan.sharding.origin.kind == "env"
    _, plan = plan_of(DS_INLINE, {"ACCELERATE_DEEPSPEED_ZERO_STAGE": "1"})
    override = plan.override_of("zero_stage")
    assert override is not None and override.winner.value == 3


def test_deepspeed_file_is_a_reference_only_when_used() -> None:
    config = read("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds/zero3.json\n")
    ref = config.references["deepspeed"]
    assert ref.value == "ds/zero3.json" and ref.origin.line == 3
    ignored = read("distributed_type: 'NO'\ndeepspeed_config:\n  deepspeed_config_file: path/to/be/ignored\n")
    assert ignored.references == {}


DS_FILE = """
{"bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"},
 "zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}
"""


def test_deepspeed_file_through_the_engine(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text(DS_FILE)
    (tmp_path / "acc.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero_stage: 3\n"
        "num_processes: 8\n"
    )
    report = engine.run([str(tmp_path / "acc.yaml")], H100, env={})
    [result] = [r for r in report.files if r.path.endswith("acc.yaml")]
    assert result.plan is not None and result.dialect == "accelerate"
    plan = result.plan
    # no mixed_precision: the launcher exports "no", DeepSpeed's "auto" sections are filled off
    assert plan.param_dtype.value == "float32"
    refused = plan.override_of("zero_stage")
    assert refused is not None and refused.kind is OverrideKind.ACCELERATE_IGNORED
    assert refused.error is not None and refused.error.startswith("When using `deepspeed_config_file`")
    assert refused.loser.origin.line == 4
    assert {f.rule for f in report.findings} >= {"PC605"}


def test_mixed_precision_beside_a_deepspeed_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text(DS_FILE)
    (tmp_path / "acc.yaml").write_text(
        "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\nmixed_precision: bf16\n"
    )
    report = engine.run([str(tmp_path / "acc.yaml")], H100, env={})
    [result] = [r for r in report.files if r.path.endswith("acc.yaml")]
    assert result.plan is not None
    override = result.plan.override_of("mixed_precision")
    assert override is not None and override.kind is OverrideKind.ACCELERATE_IGNORED
    assert result.plan.param_dtype.value == "bfloat16"  # the auto sections are filled from bf16


# --- FSDP ---------------------------------------------------------------------------------

FSDP1 = """
distributed_type: FSDP
fsdp_config:
  fsdp_activation_checkpointing: true
  fsdp_offload_params: true
  fsdp_sharding_strategy: SHARD_GRAD_OP
mixed_precision: bf16
num_processes: 8
"""


def test_fsdp1_mapping_and_policy_dtypes() -> None:
    config, plan = plan_of(FSDP1)
    assert config.fsdp is not None and config.fsdp.value is True
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "shard_grad_op"
    assert (
        config.fsdp_sharding.origin.line == 5
        and config.fsdp_sharding.origin.key == "fsdp_config.fsdp_sharding_strategy"
    )
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    assert config.gradient_checkpointing is not None and config.gradient_checkpointing.value is True
    for name in ("fsdp_param_dtype", "fsdp_reduce_dtype", "fsdp_buffer_dtype"):
        item = getattr(config, name)
        assert item is not None and item.value == "bfloat16" and item.origin.line == 6
    assert plan.param_dtype.value == "float32" and plan.grad_dtype.value == "float32"
    assert plan.autocast_dtype.value == "bfloat16"
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "bfloat16"
    assert plan.sharding is not None and plan.sharding.value == "FSDP1 shard_grad_op, parameters offloaded to cpu"
    assert plan.gradient_checkpointing is not None and plan.gradient_checkpointing.value is True
    assert plan.grad_scaler.value is False


def test_fsdp2_has_no_buffer_dtype_and_reads_reshard() -> None:
    config, plan = plan_of(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  reshard_after_forward: false\n"
        "mixed_precision: fp16\nnum_processes: 8\n"
    )
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "shard_grad_op"
    assert config.fsdp_param_dtype is not None and config.fsdp_param_dtype.value == "float16"
    assert config.fsdp_buffer_dtype is None
    assert plan.grad_scaler.value is True and plan.loss_scaling.value == "dynamic"
    assert "get_fsdp2_grad_scaler" in str(plan.grad_scaler.origin)
    assert plan.sharding is not None and plan.sharding.value == "FSDP2 shard_grad_op"


def test_fsdp_without_mixed_precision_has_no_policy() -> None:
    config, plan = plan_of("distributed_type: FSDP\nmixed_precision: 'no'\nnum_processes: 8\n")
    assert config.fsdp_param_dtype is None and config.fsdp_mixed_precision is None
    assert plan.reduce_dtype is not None and plan.reduce_dtype.value == "float32"
    assert plan.sharding is not None and plan.sharding.value == "FSDP1 full_shard"


def test_fsdp_settings_the_version_does_not_read() -> None:
    _, plan = plan_of(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: SHARD_GRAD_OP\nnum_processes: 8\n"
    )
    override = plan.override_of("fsdp_sharding")
    assert override is not None and override.winner.value == "full_shard" and override.loser.origin.line == 3
    _, plan = plan_of(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\n  fsdp_sharding_strategy: NO_SHARD\n"
        "num_processes: 8\n"
    )
    assert plan.override_of("fsdp_sharding") is not None
    _, same = plan_of(
        "distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: FULL_SHARD\nnum_processes: 8\n"
    )
    assert same.override_of("fsdp_sharding") is None


# --- fp8, dynamo, Megatron ----------------------------------------------------------------

FP8 = """
distributed_type: MULTI_GPU
fp8_config:
  backend: TE
  fp8_format: E4M3
mixed_precision: fp8
num_processes: 8
"""


def test_fp8_on_hopper() -> None:
    config, plan = plan_of(FP8)
    assert config.fp8 is not None and config.fp8.value == "te" and config.fp8.origin.line == 3
    assert plan.fp8 is not None and plan.fp8.value == "te"
    assert plan.autocast_dtype.value == "bfloat16" and plan.grad_scaler.value is False


def test_fp8_falls_back_to_fp16_before_ada() -> None:
    _, plan = plan_of(FP8, hardware=A100)
    override = plan.override_of("mixed_precision")
    assert override is not None and "Will use FP16 instead." in override.reason
    assert plan.autocast_dtype.value == "float16" and plan.grad_scaler.value is True
    assert plan.fp8 is not None and plan.fp8.value == "te"  # what was asked, for PC104


def test_fp8_backends() -> None:
    _, msamp = plan_of(FP8.replace("TE", "MSAMP"))
    assert msamp.fp8 is not None and msamp.fp8.value == "msamp" and msamp.grad_scaler.value is True
    _, auto = plan_of("distributed_type: MULTI_GPU\nmixed_precision: fp8\nnum_processes: 8\n")
    assert auto.fp8 is not None and auto.fp8.value == "auto"
    _, wrong = plan_of(FP8.replace("TE", "te"))
    override = wrong.override_of("fp8")
    assert override is not None and "'te' is not a valid FP8BackendType" in override.reason


def test_fp8_config_without_fp8_mode_is_ignored() -> None:
    config, plan = plan_of(FP8.replace("mixed_precision: fp8", "mixed_precision: bf16"))
    assert config.fp8 is None
    override = plan.override_of("fp8")
    assert override is not None and "setup_fp8_env" in override.reason
    assert plan.fp8 is not None and plan.fp8.value is None


def test_msamp_with_fsdp_is_refused() -> None:
    _, plan = plan_of("distributed_type: FSDP\nfp8_config:\n  backend: MSAMP\nmixed_precision: fp8\nnum_processes: 8\n")
    override = plan.override_of("fp8")
    assert override is not None and "`accelerate` + `MS-AMP` + `FSDP` is not supported" in override.reason


def test_dynamo_without_mixed_precision_turns_tf32_on() -> None:
    text = "distributed_type: MULTI_GPU\ndynamo_config:\n  dynamo_backend: INDUCTOR\nmixed_precision: 'no'\n"
    _, plan = plan_of(text)
    assert plan.tf32 is not None and plan.tf32.value is True and plan.tf32.origin.line == 3
    _, off = plan_of(text, {"NVIDIA_TF32_OVERRIDE": "0"})
    assert off.tf32 is not None and off.tf32.value is False
    _, bf16 = plan_of(text.replace("'no'", "bf16"))
    assert bf16.tf32 is not None and bf16.tf32.value is False


def test_megatron() -> None:
    _, plan = plan_of("distributed_type: MEGATRON_LM\nmixed_precision: fp16\nnum_processes: 8\n")
    assert plan.param_dtype.value == "float16" and plan.autocast_dtype.value is None
    assert plan.grad_scaler.value is False and plan.loss_scaling.value == "dynamic"
    assert plan.master_weights is not None and plan.master_weights.value == "float32"


def test_json_config() -> None:
    doc = parse("acc.json", '{"distributed_type": "MULTI_GPU", "mixed_precison": "bf16", "num_processes": 2}', "json")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "accelerate"
    config = dialect.read(doc, {})
    assert [n.key for n in config.notes] == ["mixed_precison"]
    assert "The config file at acc.json had unknown keys (['mixed_precison'])" in config.notes[0].message


def test_deepspeed_launcher_exports_no_dynamo() -> None:
    text = "distributed_type: DEEPSPEED\ndynamo_config:\n  dynamo_backend: INDUCTOR\nmixed_precision: 'no'\n"
    _, plan = plan_of(text)
    assert plan.tf32 is not None and plan.tf32.value is False and plan.tf32.origin.kind == "default"
