"""accelerate: what ``accelerate launch --config_file X script.py`` does with precision when the
script builds a plain ``Accelerator()``.

Verified in accelerate 1.15.0 (``commands/launch.py``, ``utils/launch.py``, ``state.py``,
``accelerator.py``, ``utils/dataclasses.py``, ``utils/fsdp_utils.py``, ``utils/modeling.py``) and
by running ``accelerate launch --config_file`` on CPU; unknown accelerate version = this one.

Mixed precision, highest first:

1. ``accelerate launch --mixed_precision X`` (not in any file: precheck cannot see it);
2. the config's ``mixed_precision`` (or the legacy ``fp16: true``);
3. ``"no"``: ``_validate_launch_command`` sets ``args.mixed_precision = "no"`` when the config
   has none.

The launcher always writes the winner into the training processes' environment
(``prepare_*_env``: ``current_env = os.environ.copy()`` then ``current_env["ACCELERATE_MIXED_PRECISION"]
= str(mixed_precision)``), so a shell ``ACCELERATE_MIXED_PRECISION`` never reaches a run started
with ``accelerate launch`` — not even when the config omits ``mixed_precision``. It matters only
for a script started without the launcher (``python``/``torchrun``), which reads no accelerate
config file at all: ``AcceleratorState.__init__`` takes ``parse_choice_from_env(
"ACCELERATE_MIXED_PRECISION", "no")`` when ``Accelerator(mixed_precision=None)``. A script that
passes ``Accelerator(mixed_precision=...)`` (or the HF Trainer's ``bf16``/``fp16``) beats all of
these; this resolver models the plain ``Accelerator()``.

``ACCELERATE_USE_DEEPSPEED`` / ``ACCELERATE_USE_FSDP``: the DeepSpeed launcher and the FSDP branch
of ``prepare_multi_gpu_env`` set them; every launcher copies the rest of the shell environment,
so a shell ``ACCELERATE_USE_DEEPSPEED=true`` switches any GPU run to DeepSpeed
(``AcceleratorState``: ``elif ACCELERATE_USE_DEEPSPEED == "true" and not cpu``, checked before the
multi-GPU branch; ``Accelerator`` builds ``DeepSpeedPlugin()`` from the ``ACCELERATE_DEEPSPEED_*``
variables, stage default 2) and a shell ``ACCELERATE_USE_FSDP=true`` switches a multi-GPU run to
FSDP. ``ACCELERATE_DEEPSPEED_ZERO_STAGE`` and the offload variables are overwritten only for the
keys the config sets. ``ACCELERATE_DOWNCAST_BF16`` is read only under XLA (TPU).

What each mode does (``Accelerator.__init__``, ``prepare_model``, ``get_mixed_precision_context_manager``):

- fp16 (not on CPU, not DeepSpeed/Megatron): ``native_amp``: the model's forward runs under
  ``torch.autocast(dtype=float16)`` and a GradScaler is created (``ShardedGradScaler`` for FSDP1,
  ``get_fsdp2_grad_scaler`` for FSDP2); the model is not cast: its parameters stay as the script
  built them. bf16: ``torch.autocast(dtype=bfloat16)``, no scaler ("bf16 mixed precision requires
  PyTorch >= 1.10 and a supported device." without bf16). fp8: bf16 autocast plus the backend
  (TE ``apply_fp8_autowrap``, torchao, MS-AMP — which also creates a GradScaler outside
  DeepSpeed/FSDP); no backend named: torchao, else TE, else MS-AMP; "`accelerate` + `MS-AMP` +
  `FSDP` is not supported at this time." (NotImplementedError). On a first GPU (nvidia-smi's)
  below compute capability 8.9 ``AcceleratorState`` logs "... Will use FP16 instead." and trains
  in fp16.
- FSDP: ``set_mixed_precision`` gives the policy ``param_dtype = reduce_dtype = buffer_dtype``
  (FSDP1; FSDP2: ``output_dtype``) = fp16/bf16 (fp8: bf16); with mixed precision on, accelerate
  upcasts trainable low-precision parameters to fp32 ("FSDP upcast of low precision parameters
  ...", FSDP2 skips models with 4-bit ``Params4bit``), and torch casts each reduced gradient
  shard back to the parameter dtype (FSDP1 ``_cast_grad_to_param_dtype``, FSDP2 ``foreach_reduce``).
- DeepSpeed: ``AcceleratorState`` keeps mixed precision "no" (fp8 excepted) and calls
  ``DeepSpeedPlugin.set_mixed_precision``: the DeepSpeed engine decides (``resolve.deepspeed``).
- Megatron-LM: ``MegatronLMPlugin.set_mixed_precision`` sets Megatron's fp16/bf16 (``native_amp``
  stays off: no autocast, no torch GradScaler); Megatron then computes in fp16/bf16 with fp32 main
  parameters in its optimizer and scales the fp16 loss itself (Megatron-Core
  ``Float16Module`` / ``Float16OptimizerWithFloat16Params``, as Megatron-based frameworks'
  mixed-precision docs describe them; Megatron's source was not re-read here).
- TorchDynamo (``dynamo_config.dynamo_backend``, exported by the simple and multi-GPU launchers,
  not by the DeepSpeed one) with mixed precision "no" on CUDA: ``AcceleratorState`` sets
  ``torch.backends.cuda.matmul.allow_tf32 = True``.
"""

from __future__ import annotations

from typing import Any

from ..config import TrainingConfig
from ..counts import decimal
from ..dialects.accelerate_config import (
    BOOL_MIXED_PRECISION,
    FP8_BACKENDS,
    FSDP_POLICY_DTYPE,
    PRECISIONS,
    fsdp1_strategy,
)
from ..dialects.base import to_bool, to_int
from ..facts import quote
from ..hardware import Hardware
from ..provenance import Origin, Sourced
from ..sources import Node
from ..versions import Versions
from .deepspeed import ACCELERATE_IGNORED, IGNORED_BESIDE_FILE, Switches, engine
from .deepspeed_accelerate import from_config_file
from .fsdp_upcast import upcast_skipped
from .plan import Override, OverrideKind, PrecisionPlan

HALF = {"fp16": "float16", "bf16": "bfloat16", "fp8": "bfloat16"}
MULTI = (
    "MULTI_GPU",
    "MULTI_NPU",
    "MULTI_MLU",
    "MULTI_SDAA",
    "MULTI_MUSA",
    "MULTI_XPU",
    "MULTI_HPU",
    "MULTI_NEURON",
)
#: ``_deepspeed_config_checks``: keys ``accelerate launch`` refuses next to a deepspeed_config_file
#: (the variables it ignores there, but ``mixed_precision``, which it only ignores)
REFUSED_BESIDE_FILE = tuple(k for k in IGNORED_BESIDE_FILE if k != "mixed_precision")
#: template: ``.format(cc=...)``
FP8_FALLBACK = quote("accelerate.fp8_fallback")
#: ``PrecisionType.list()`` (``utils/dataclasses.py``); template: ``.format(mode=...)``
UNKNOWN_MODE = quote("accelerate.unknown_mixed_precision", mode="{mode}", choices=["no", "fp8", "fp16", "bf16"])
MSAMP_FSDP = quote("accelerate.msamp_fsdp")
SCRIPT_BUILDS = Origin.default(
    "the training script builds the model and accelerate does not cast it: torch creates float32 weights"
)


def _default(detail: str) -> Origin:
    return Origin.default(f"accelerate launch: {detail}")


def _derive(item: Sourced[Any], detail: str) -> Origin:
    return item.origin.derived(detail) if item.origin.in_file else Origin.default(f"{item.origin}; {detail}")


# --- settings -----------------------------------------------------------------------------


def _block(config: TrainingConfig, name: str) -> dict[str, Node]:
    item = config.keys.get(name)
    return item.value if item is not None and isinstance(item.value, dict) else {}


def _entry(config: TrainingConfig, block: str, name: str, prefix: str = "") -> tuple[str, Node] | None:
    """A nested entry by its launch name (``fsdp_version``), spelled with or without the prefix."""
    for key, node in _block(config, block).items():
        if (key if not prefix or key.startswith(prefix) else f"{prefix}{key}") == name:
            return key, node
    return None


def _sourced(config: TrainingConfig, path: str, node: Node, value: Any) -> Sourced[Any]:
    """``value`` at ``node``: in the file the node was read from (a launch's ``--config_file``
    merged into a shell script's run keeps its own file and format), else the config's."""
    line, column = node.anchor
    if node.path is not None and node.path != config.path:  # as dialects.base.origin_of: not its format
        return Sourced(value, Origin("file", node.path, line, column, path))
    return Sourced(value, Origin("file", config.path, line, column, path, format=config.format or None))


def _kind(config: TrainingConfig) -> Sourced[str]:
    if config.distributed_type is not None:
        return config.distributed_type
    return Sourced("NO", _default("no distributed_type (process_config raises for a config without one)"))


def _mixed(config: TrainingConfig, overrides: list[Override]) -> Sourced[str]:
    """The mixed precision the launcher exports, and the shell value it overwrites."""
    written = config.mixed_precision
    mixed: Sourced[str]
    if written is None:
        mixed = Sourced("no", _default("mixed_precision unset in the config: the launcher exports 'no'"))
    elif written.value in PRECISIONS:
        mixed = written
    else:
        raw = config.keys.get("mixed_precision")
        text = (
            BOOL_MIXED_PRECISION
            if raw is not None and isinstance(raw.value, bool)
            else f"ValueError: {UNKNOWN_MODE.format(mode=written.value)}"
        )
        mixed = Sourced("no", _derive(written, "not a mixed precision accelerate knows: the launch fails"))
        overrides.append(
            Override(
                field="mixed_precision",
                winner=mixed,
                loser=written,
                reason=f"`accelerate launch` fails before training: {text} (prepare_*_env); "
                "the plan shows full precision",
            )
        )
    if config.mixed_precision is None:
        # the DeepSpeed attachment reads the run's mixed precision from here: under `accelerate
        # launch` it is the exported value, never the shell's ACCELERATE_MIXED_PRECISION
        config.mixed_precision = mixed
    shell = config.env.get("ACCELERATE_MIXED_PRECISION")
    if shell is not None and shell.value.strip().lower() != mixed.value:
        overrides.append(
            Override(
                field="mixed_precision",
                winner=mixed,
                loser=shell,
                reason="`accelerate launch` overwrites ACCELERATE_MIXED_PRECISION in the training processes' "
                "environment with the config's mixed_precision (or 'no' when the config has none): "
                'prepare_*_env sets current_env["ACCELERATE_MIXED_PRECISION"] after copying os.environ; the shell '
                "value counts only for a script started without `accelerate launch`",
            )
        )
    return mixed


def _cpu(config: TrainingConfig, kind: Sourced[str]) -> Sourced[bool] | None:
    use_cpu = config.keys.get("use_cpu")
    if use_cpu is not None and to_bool(use_cpu.value):
        return Sourced(True, use_cpu.origin)
    if kind.value == "MULTI_CPU":
        return Sourced(True, kind.origin)
    return None


def _truthy(config: TrainingConfig, name: str) -> Sourced[str] | None:
    item = config.env.get(name)
    return item if item is not None and item.value.strip().lower() == "true" else None


def _launch_env(config: TrainingConfig, kind: Sourced[str], cpu: bool, overrides: list[Override]) -> Sourced[str]:
    """Shell variables the launcher passes through that switch the run to DeepSpeed or FSDP."""
    use_ds = _truthy(config, "ACCELERATE_USE_DEEPSPEED")
    if use_ds is not None and kind.value not in ("DEEPSPEED", "XLA") and not cpu:
        if config.fsdp is not None and config.fsdp.value:
            overrides.append(
                Override(
                    field="fsdp",
                    winner=use_ds,
                    loser=config.fsdp,
                    reason="the shell's ACCELERATE_USE_DEEPSPEED=true reaches the training processes and "
                    "AcceleratorState checks it before FSDP: the run uses DeepSpeed",
                )
            )
            config.fsdp = Sourced(False, use_ds.origin)
        return Sourced("DEEPSPEED", use_ds.origin)
    use_fsdp = _truthy(config, "ACCELERATE_USE_FSDP")
    if use_fsdp is not None and kind.value in MULTI and not cpu:
        config.fsdp = Sourced(True, use_fsdp.origin)
        return Sourced("FSDP", use_fsdp.origin)
    return kind


def _deepspeed_plugin(config: TrainingConfig, overrides: list[Override]) -> TrainingConfig:
    """The DeepSpeed config ``DeepSpeedPlugin.__post_init__`` builds without a DeepSpeed file:
    the accelerate config's keys (exported by the launcher), else the shell's
    ACCELERATE_DEEPSPEED_* variables (passed through), else the defaults (stage 2, no offload)."""
    ds = TrainingConfig(dialect="deepspeed", framework="deepspeed", path=config.path)
    stage_env = config.env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE")
    if config.zero_stage is not None:
        ds.zero_stage = config.zero_stage
        if stage_env is not None and stage_env.value.strip() != str(config.zero_stage.value):
            overrides.append(
                Override(
                    field="zero_stage",
                    winner=config.zero_stage,
                    loser=stage_env,
                    reason="`accelerate launch` exports the config's zero_stage as ACCELERATE_DEEPSPEED_ZERO_STAGE, "
                    "replacing the shell's (prepare_deepspeed_cmd_env)",
                )
            )
    elif stage_env is not None and (stage := decimal(stage_env.value)) is not None:
        ds.zero_stage = Sourced(stage, stage_env.origin)
    else:
        ds.zero_stage = Sourced(
            2, Origin.default("accelerate DeepSpeedPlugin: ACCELERATE_DEEPSPEED_ZERO_STAGE defaults to 2")
        )
    for name, variable in (
        ("offload_optimizer", "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE"),
        ("offload_param", "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE"),
    ):
        item = getattr(config, name)
        shell = config.env.get(variable)
        if item is None and shell is not None:
            item = Sourced(shell.value.strip().lower(), shell.origin)
        setattr(ds, name, item)
    ds.grad_accum_steps, ds.max_grad_norm = config.grad_accum_steps, config.max_grad_norm
    ds.keys["zero_optimization"] = Sourced({}, ds.zero_stage.origin)
    if config.zero_stage is None:
        config.zero_stage = ds.zero_stage  # what the run shards with (memory estimates read it here)
    return ds


def _plugin_fields(
    ds: TrainingConfig, mixed: Sourced[str], load: Sourced[str], versions: Versions
) -> tuple[dict[str, Any], list[Override]]:
    """The DeepSpeed engine on the plugin's config: ``set_mixed_precision`` adds ``fp16: {enabled:
    true, auto_cast: true}`` for fp16, ``bf16: {enabled: true}`` for bf16/fp8, the others disabled."""
    detail = "DeepSpeedPlugin.set_mixed_precision adds the {} section for mixed_precision {}"
    switches = Switches(
        fp16=Sourced(mixed.value == "fp16", _derive(mixed, detail.format("fp16", mixed.value))),
        bf16=Sourced(mixed.value in ("bf16", "fp8"), _derive(mixed, detail.format("bf16", mixed.value))),
        stage=ds.zero_stage or Sourced(2, Origin.default("accelerate DeepSpeedPlugin default stage 2")),
    )
    return engine(ds, switches, versions, load)


def _refused_beside_file(config: TrainingConfig, overrides: list[Override]) -> None:
    ref = config.references.get("deepspeed")
    if ref is None:
        return
    for key, node in _block(config, "deepspeed_config").items():
        loser = _sourced(config, f"deepspeed_config.{key}", node, node.plain())
        if key in REFUSED_BESIDE_FILE and from_config_file(loser.origin):  # a launch flag is accepted
            overrides.append(
                Override(
                    field=key,
                    winner=ref,
                    loser=loser,
                    reason="with a deepspeed_config_file `accelerate launch` refuses accelerate's own DeepSpeed "
                    "settings: DeepSpeedPlugin._deepspeed_config_checks raises ValueError "
                    f'"{ACCELERATE_IGNORED}"',
                    kind=OverrideKind.ACCELERATE_IGNORED,
                    error=ACCELERATE_IGNORED,
                )
            )


# --- fp8 ----------------------------------------------------------------------------------


def _first_gpu_cc(hardware: Hardware) -> tuple[str, tuple[int, int]] | None:
    """check_cuda_fp8_capability reads the first line of ``nvidia-smi --query-gpu=compute_capability``."""
    if not hardware.known:
        return None
    devices = sorted(hardware.all_devices, key=lambda d: d.pci_index if d.pci_index is not None else d.index)
    first = devices[0]
    cc = first.model.cc
    return (first.name, cc) if cc is not None else None


def _fp8(
    config: TrainingConfig, mixed: Sourced[str], cpu: bool, hardware: Hardware, overrides: list[Override]
) -> tuple[Sourced[str], Sourced[str | None] | None]:
    """The mixed precision after accelerate's fp8 checks, and the plan's fp8 field."""
    block = _block(config, "fp8_config")
    backend_node = next((n for k, n in block.items() if k in ("backend", "fp8_backend")), None)
    if mixed.value != "fp8":
        if block:
            written = backend_node or next(iter(block.values()))
            overrides.append(
                Override(
                    field="fp8",
                    winner=Sourced(None, _derive(mixed, f"mixed_precision {mixed.value}: no fp8")),
                    loser=_sourced(config, f"fp8_config.{written.key}", written, written.plain()),
                    reason="`accelerate launch` exports fp8_config only for mixed_precision fp8 (setup_fp8_env): "
                    "it is ignored",
                )
            )
        return mixed, None
    fp8: Sourced[str | None] = config.fp8 or Sourced("auto", _derive(mixed, "fp8 backend chosen at run time"))
    if backend_node is not None and isinstance(backend_node.value, str) and backend_node.value not in FP8_BACKENDS:
        overrides.append(
            Override(
                field="fp8",
                winner=Sourced(None, fp8.origin),
                loser=fp8,
                reason=f"Accelerator.fp8_backend raises ValueError: '{backend_node.value}' is not a valid "
                "FP8BackendType (the names are TE, MSAMP, AO, as `accelerate config` writes them)",
            )
        )
    first = _first_gpu_cc(hardware)
    if first is not None and not cpu and first[1] < (8, 9):
        name, cc = first
        text = FP8_FALLBACK.format(cc=cc)
        fallback = Sourced("fp16", _derive(mixed, f"fp8 on {name} (sm_{cc[0]}{cc[1]}): accelerate uses fp16"))
        overrides.append(
            Override(
                field="mixed_precision",
                winner=fallback,
                loser=mixed,
                reason=f'AcceleratorState.__init__ (check_cuda_fp8_capability, first nvidia-smi GPU) logs "{text}"',
            )
        )
        fp8 = Sourced(fp8.value, _derive(fp8, f"requested; on {name} accelerate trains in fp16 instead"))
        return fallback, fp8
    return mixed, fp8


# --- modes --------------------------------------------------------------------------------


def _scaling(detail: Origin | None) -> dict[str, Any]:
    if detail is None:
        none = Origin.default("no loss scaling: accelerate creates a GradScaler only for fp16 (and MS-AMP)")
        return {"loss_scaling": Sourced("none", none), "grad_scaler": Sourced(False, none)}
    return {"loss_scaling": Sourced("dynamic", detail), "grad_scaler": Sourced(True, detail)}


def _native(load: Sourced[str], mixed: Sourced[str], fp8: Sourced[str | None] | None, cpu: bool) -> dict[str, Any]:
    """Single process / DDP: autocast around the model's forward, the parameters as built."""
    params = Sourced(load.value, _derive(load, "accelerate does not cast the model (prepare_model)"))
    fields: dict[str, Any] = {"param_dtype": params, "grad_dtype": params, "optimizer_state_dtype": params}
    mode = mixed.value
    if mode == "no":
        fields["autocast_dtype"] = Sourced(None, _derive(mixed, "mixed_precision no: no autocast"))
        fields.update(_scaling(None))
    elif mode == "fp16" and cpu:
        fields["autocast_dtype"] = Sourced(
            None, _derive(mixed, "fp16 on the CPU: native_amp stays off (Accelerator.__init__), no autocast")
        )
        fields.update(_scaling(None))
    elif mode == "fp16":
        fields["autocast_dtype"] = Sourced(
            "float16", _derive(mixed, "accelerate wraps the model's forward in torch.autocast(float16)")
        )
        fields.update(_scaling(_derive(mixed, "accelerate creates a GradScaler for fp16 (get_grad_scaler)")))
    else:
        what = "fp8: bf16 autocast around the fp8 layers" if mode == "fp8" else "torch.autocast(bfloat16)"
        fields["autocast_dtype"] = Sourced(
            "bfloat16", _derive(mixed, f"accelerate wraps the model's forward in {what}")
        )
        msamp = fp8 is not None and fp8.value == "msamp"
        fields.update(
            _scaling(
                _derive(fp8, "MS-AMP: accelerate creates a GradScaler (get_grad_scaler)") if msamp and fp8 else None
            )
        )
    return fields


def _fsdp_version(config: TrainingConfig) -> Sourced[int]:
    found = _entry(config, "fsdp_config", "fsdp_version", "fsdp_")
    if found is not None and to_int(found[1].value) in (1, 2):
        return _sourced(config, f"fsdp_config.{found[0]}", found[1], to_int(found[1].value))
    return Sourced(1, _default("fsdp_version defaults to 1 (`--fsdp_version` default)"))


def _script_weights(config: TrainingConfig) -> Sourced[str]:
    """The weights the launched script hands ``accelerator.prepare`` (its ``from_pretrained(torch_dtype=...)``
    or cast, :mod:`precheck.sources.script_prepared`), else float32: accelerate does not cast a model."""
    dtype = config.torch_dtype
    if dtype is not None and isinstance(dtype.value, str) and dtype.origin.in_file:
        return Sourced(dtype.value, dtype.origin)
    return Sourced("float32", SCRIPT_BUILDS)


def _fsdp(
    config: TrainingConfig,
    load: Sourced[str],
    mixed: Sourced[str],
    fp8: Sourced[str | None] | None,
    overrides: list[Override],
    versions: Versions,
) -> dict[str, Any]:
    version = _fsdp_version(config)
    v = version.value
    dtype = FSDP_POLICY_DTYPE.get(mixed.value)
    fields: dict[str, Any] = {}
    skipped = upcast_skipped(v, versions) if load.value in ("float16", "bfloat16") else None
    if dtype is not None and skipped is not None:
        params = Sourced(load.value, _derive(load, f"FSDP{v} with mixed precision: {skipped}"))
        fields.update(
            param_dtype=params,
            grad_dtype=Sourced(
                load.value, _derive(load, f"FSDP casts each reduced gradient shard to the {load.value} parameters")
            ),
            optimizer_state_dtype=Sourced(load.value, params.origin),
            autocast_dtype=Sourced(
                "float16" if mixed.value == "fp16" else "bfloat16",
                _derive(mixed, f"FSDP{v} MixedPrecision policy {dtype} and accelerate's autocast"),
            ),
            reduce_dtype=Sourced(
                dtype, _derive(mixed, f"FullyShardedDataParallelPlugin.set_mixed_precision: reduce_dtype {dtype}")
            ),
        )
        fields.update(
            _scaling(_derive(mixed, "accelerate creates a GradScaler for fp16") if mixed.value == "fp16" else None)
        )
        fields["sharding"] = _fsdp_sharding(config, version, overrides)
        return fields
    if dtype is None:
        params = Sourced(load.value, _derive(load, "FSDP without mixed precision keeps the parameters as built"))
        fields.update(
            param_dtype=params,
            grad_dtype=params,
            optimizer_state_dtype=params,
            autocast_dtype=Sourced(None, _derive(mixed, "mixed_precision no: no FSDP policy, no autocast")),
            reduce_dtype=Sourced(
                load.value, _derive(mixed, "no FSDP MixedPrecision policy: gradients reduce as built")
            ),
        )
        fields.update(_scaling(None))
    else:
        policy = "param/reduce/buffer" if v == 1 else "param/reduce/output"
        params = Sourced(
            "float32",
            _derive(
                mixed,
                f"FSDP{v} with mixed precision: accelerate upcasts trainable low-precision parameters to fp32 "
                f"(prepare_model / fsdp2_prepare_model), the {policy} policy computes in {dtype}",
            ),
        )
        grads = Sourced(
            "float32",
            _derive(mixed, f"FSDP reduces gradients in {dtype} and casts each shard back to the fp32 parameters"),
        )
        fields.update(
            param_dtype=params,
            grad_dtype=grads,
            optimizer_state_dtype=Sourced("float32", params.origin),
            autocast_dtype=Sourced(
                "float16" if mixed.value == "fp16" else "bfloat16",
                _derive(mixed, f"FSDP{v} MixedPrecision {policy}_dtype {dtype} and accelerate's autocast"),
            ),
            reduce_dtype=Sourced(
                dtype, _derive(mixed, f"FullyShardedDataParallelPlugin.set_mixed_precision: reduce_dtype {dtype}")
            ),
        )
        scaler = None
        if mixed.value == "fp16":
            kind = "ShardedGradScaler" if v == 1 else "the FSDP2 grad scaler (get_fsdp2_grad_scaler)"
            scaler = _derive(mixed, f"accelerate creates {kind} for fp16")
        fields.update(_scaling(scaler))
        if fp8 is not None and fp8.value == "msamp":
            overrides.append(
                Override(
                    field="fp8",
                    winner=Sourced(None, config.fsdp.origin if config.fsdp else mixed.origin),
                    loser=fp8,
                    reason=f'Accelerator.__init__ raises NotImplementedError("{MSAMP_FSDP}")',
                )
            )
    fields["sharding"] = _fsdp_sharding(config, version, overrides)
    return fields


def _fsdp_sharding(config: TrainingConfig, version: Sourced[int], overrides: list[Override]) -> Sourced[str]:
    v = version.value
    strategy = _entry(config, "fsdp_config", "fsdp_sharding_strategy", "fsdp_")
    reshard = _entry(config, "fsdp_config", "fsdp_reshard_after_forward", "fsdp_")
    if config.fsdp_sharding is not None:
        sharding = config.fsdp_sharding
    elif v == 1:
        sharding = Sourced("full_shard", _default("FSDP1 sharding: `--fsdp_sharding_strategy` defaults to FULL_SHARD"))
    else:
        sharding = Sourced(
            "full_shard", _default("FSDP2: `--fsdp_reshard_after_forward` defaults to true (full shard)")
        )
    ignored = reshard if v == 1 else strategy
    if ignored is not None and fsdp1_strategy(ignored[1].value) != sharding.value:
        loser = _sourced(config, f"fsdp_config.{ignored[0]}", ignored[1], ignored[1].plain())
        read = "fsdp_sharding_strategy" if v == 1 else "fsdp_reshard_after_forward"
        overrides.append(
            Override(
                field="fsdp_sharding",
                winner=sharding,
                loser=loser,
                reason=f"FSDP{v} under `accelerate launch` reads only {read}: FullyShardedDataParallelPlugin "
                + (
                    "takes FSDP_SHARDING_STRATEGY (always exported, default FULL_SHARD) and falls back to "
                    "reshard_after_forward only without it"
                    if v == 1
                    else "takes reshard_after_forward (a bool) and ignores the deprecated sharding_strategy"
                ),
            )
        )
    text = f"FSDP{v} {sharding.value}"
    if config.offload_param is not None and config.offload_param.value not in ("none", ""):
        text += f", parameters offloaded to {config.offload_param.value}"
    return Sourced(text, sharding.origin)


def _deepspeed(load: Sourced[str], mixed: Sourced[str]) -> dict[str, Any]:
    """Before the DeepSpeed attachment: accelerate itself adds no autocast and no scaler."""
    params = Sourced(load.value, _derive(load, "the DeepSpeed engine decides (its config could not be read)"))
    none = _derive(
        mixed,
        "under DeepSpeed AcceleratorState keeps mixed precision 'no' and DeepSpeedPlugin.set_mixed_precision "
        "hands it to the DeepSpeed config",
    )
    return {
        "param_dtype": params,
        "grad_dtype": params,
        "optimizer_state_dtype": params,
        "autocast_dtype": Sourced(None, none),
        "loss_scaling": Sourced("none", none),
        "grad_scaler": Sourced(False, none),
    }


def _megatron(load: Sourced[str], mixed: Sourced[str]) -> dict[str, Any]:
    dtype = HALF.get(mixed.value)
    none = _derive(mixed, "Megatron-LM: accelerate adds no autocast and no torch GradScaler (native_amp off)")
    if dtype is None or mixed.value == "fp8":
        params = Sourced(load.value, _derive(mixed, "Megatron-LM without fp16/bf16 keeps the parameters as built"))
        return {
            "param_dtype": params,
            "grad_dtype": params,
            "optimizer_state_dtype": params,
            "autocast_dtype": Sourced(None, none),
            "loss_scaling": Sourced("none", none),
            "grad_scaler": Sourced(False, none),
        }
    half = Sourced(
        dtype,
        _derive(mixed, f"MegatronLMPlugin.set_mixed_precision: Megatron-LM computes in {dtype} (Float16Module)"),
    )
    fp32 = Sourced("float32", _derive(mixed, "Megatron-LM's optimizer keeps fp32 main parameters and states"))
    scaling = "dynamic" if mixed.value == "fp16" else "none"
    return {
        "param_dtype": half,
        "grad_dtype": half,
        "master_weights": fp32,
        "optimizer_state_dtype": fp32,
        "autocast_dtype": Sourced(None, none),
        "loss_scaling": Sourced(scaling, _derive(mixed, "Megatron-LM scales the fp16 loss itself")),
        "grad_scaler": Sourced(False, none),
    }


# --- devices and TF32 ---------------------------------------------------------------------


def _per_node(config: TrainingConfig) -> int | None:
    if config.num_processes is None or config.num_processes.value < 1:
        return None
    machines = config.keys.get("num_machines")
    count = to_int(machines.value) if machines is not None else 1
    if not count or config.num_processes.value % count:
        return None
    return config.num_processes.value // count


def _devices(
    config: TrainingConfig, kind: Sourced[str], cpu: Sourced[bool] | None, hardware: Hardware, overrides: list[Override]
) -> Sourced[str]:
    if cpu is not None:
        return Sourced("", _derive(cpu, "the run computes on the CPU: no GPU is used"))
    per_node = _per_node(config)
    single = kind.value == "NO"
    if config.devices is not None:
        ids = [p for p in config.devices.value.split(",") if p.strip()]
        shell = config.env.get("CUDA_VISIBLE_DEVICES")
        if shell is not None:
            overrides.append(
                Override(
                    field="devices",
                    winner=config.devices,
                    loser=shell,
                    reason="`accelerate launch` sets CUDA_VISIBLE_DEVICES to gpu_ids for the training processes "
                    "(prepare_*_env), replacing the shell's value",
                )
            )
        used = ids[:1] if single else ids[:per_node] if per_node else ids
        detail = "gpu_ids become CUDA_VISIBLE_DEVICES" + (
            "; one process uses the first" if single else f"; {len(used)} processes per machine"
        )
        return Sourced(",".join(used), config.devices.origin.derived(detail))
    if single:
        return Sourced("first", _derive(kind, "distributed_type NO: one process on the first GPU (simple launcher)"))
    if per_node is not None and hardware.known and per_node < len(hardware.devices):
        assert config.num_processes is not None
        return Sourced(
            ",".join(str(i) for i in range(per_node)),
            config.num_processes.origin.derived(f"{per_node} processes per machine use cuda:0..{per_node - 1}"),
        )
    return Sourced("all", _derive(kind, "one process per visible GPU"))


def _dynamo_backend(config: TrainingConfig) -> Sourced[str] | None:
    found = _entry(config, "dynamo_config", "dynamo_backend", "dynamo_")
    if found is not None and isinstance(found[1].value, str):
        return _sourced(config, f"dynamo_config.{found[0]}", found[1], found[1].value.upper())
    legacy = config.keys.get("dynamo_backend")
    if legacy is not None and isinstance(legacy.value, str):
        return Sourced(legacy.value.upper(), legacy.origin)
    return None


def _tf32(config: TrainingConfig, mixed: Sourced[str], cpu: bool, kind: str) -> Sourced[bool] | None:
    backend = _dynamo_backend(config)
    # the DeepSpeed launcher exports no ACCELERATE_DYNAMO_* (prepare_deepspeed_cmd_env): no dynamo there
    if backend is None or backend.value == "NO" or mixed.value != "no" or cpu or kind == "DEEPSPEED":
        return None
    override = config.env.get("NVIDIA_TF32_OVERRIDE")
    if override is not None and override.value.strip() == "0":
        return Sourced(False, override.origin)
    return Sourced(
        True,
        _derive(
            backend,
            "TorchDynamo with mixed precision 'no': AcceleratorState sets torch.backends.cuda.matmul.allow_tf32 = True",
        ),
    )


# --- entry point --------------------------------------------------------------------------


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    overrides: list[Override] = []
    written_kind = _kind(config)
    mixed = _mixed(config, overrides)
    cpu = _cpu(config, written_kind)
    kind = _launch_env(config, written_kind, cpu is not None, overrides)
    mixed, fp8 = _fp8(config, mixed, cpu is not None, hardware, overrides)
    load = _script_weights(config)
    if kind.value == "DEEPSPEED" and "deepspeed" in config.references:
        _refused_beside_file(config, overrides)
        fields = _deepspeed(load, mixed)  # the DeepSpeed file, once attached, decides (resolve.deepspeed.apply)
    elif kind.value == "DEEPSPEED":
        fields, refused = _plugin_fields(_deepspeed_plugin(config, overrides), mixed, load, versions)
        overrides.extend(refused)
    elif kind.value == "FSDP":
        fields = _fsdp(config, load, mixed, fp8, overrides, versions)
    elif kind.value == "MEGATRON_LM":
        fields = _megatron(load, mixed)
    else:
        fields = _native(load, mixed, fp8, cpu is not None)
    tf32 = _tf32(config, mixed, cpu is not None, kind.value)
    if tf32 is not None:
        fields["tf32"] = tf32
    return PrecisionPlan(
        framework=config.framework,
        load_dtype=load,
        devices=_devices(config, written_kind, cpu, hardware, overrides),
        fp8=fp8 or Sourced(None, _derive(mixed, f"mixed_precision {mixed.value}: no fp8")),
        overrides=overrides,
        **fields,
    )
