"""The framework (its Trainer and CLI) and its two variants: what the precision plugin does.

Read in the framework's repository (wheels 2.0.0, 2.1.0, 2.2.0-2.5.x, 2.6.0, 2.6.1, 2.6.6):

- ``trainer/connectors/accelerator_connector.py`` ``_check_config_and_set_final_flags`` /
  ``_check_and_init_precision`` (Fabric: ``fabric/connector.py``): ``precision=None`` means
  "32-true"; the strategy decides the plugin first (DeepSpeed → ``DeepSpeedPrecision``,
  FSDP → ``FSDPPrecision``), then "16-true"/"bf16-true" → ``HalfPrecision``, "32-true" →
  ``Precision``, "64-true" → ``DoublePrecision``, "transformer-engine[-float16]" →
  ``TransformerEnginePrecision(weights_dtype=bf16|fp16)``, "16-mixed"/"bf16-mixed" →
  ``MixedPrecision``. "16-mixed" on ``accelerator='cpu'`` warns "You passed
  `Trainer(accelerator='cpu', precision='16-mixed')` but AMP with fp16 is not supported on
  CPU. Using `precision='bf16-mixed'` instead." A precision plugin together with
  ``precision=`` raises "Received both `precision=...` and `plugins=...`. Choose one."
- ``_convert_precision_to_unified_args``: "16" → "16-mixed", "bf16" → "bf16-mixed" with
  "`precision=16` is supported for historical reasons but its usage is discouraged. Please
  set your precision to 16-mixed instead!" (2.0.x: without the backticks/``precision=``);
  anything else: "Precision 'fp16' is invalid. Allowed precision values: (...)". The
  ``-mixed``/``-true`` names came with 2.0.0 (#16783); "16-true", "bf16-true" and
  "transformer-engine" with 2.1.0.
- ``plugins/precision/amp.py`` ``MixedPrecision``: ``torch.autocast``; a
  ``torch.amp.GradScaler(device=...)`` (default ``init_scale=2**16``) only for "16-mixed";
  a scaler with "bf16-mixed" raises.
- ``plugins/precision/half.py`` ``HalfPrecision``: ``convert_module`` casts the whole module,
  tensors are created in that dtype, no autocast, no scaler: "16-true" trains in pure fp16
  with no loss scaling.
- ``fabric/plugins/precision/transformer_engine.py``: module cast to ``weights_dtype``,
  ``torch.autocast(dtype=fallback_compute_dtype=weights_dtype)`` around
  ``te.fp8_autocast(DelayedScaling())``, no scaler (also for "transformer-engine-float16").
  The framework checks no GPU capability; Transformer Engine itself refuses below sm_89.
- ``plugins/precision/fsdp.py`` ``FSDPPrecision``: "-true" casts the module; "-mixed" keeps
  fp32 sharded parameters and autocasts, ``ShardedGradScaler`` for "16-mixed". Up to 2.5.x
  the FSDP ``MixedPrecision`` policy had ``param_dtype=float32`` for "-mixed"; 2.6.0
  (#21361) made it the half dtype, and 2.6.0-2.6.1 also created the parameters in it
  under ``init_module``/``configure_model`` (fixed in 2.6.2, #21586). Only the five
  "32-true", "16-true", "bf16-true", "16-mixed", "bf16-mixed" are accepted.
- ``strategies/deepspeed.py`` + ``fabric/strategies/deepspeed.py``
  ``_format_precision_config``: without an ``fp16``/``bf16`` block of its own the config
  gets ``fp16: {enabled: True, loss_scale: 0 (dynamic), initial_scale_power: 16, ...}`` for
  "16-mixed"/"16-true" and ``bf16: {enabled: True}`` for the bf16 modes; DeepSpeed's engine
  then casts the module (``_configure_distributed_model``: ``module.half()`` /
  ``module.bfloat16()``) and its optimizer keeps fp32 master weights. ``DeepSpeedPrecision``
  accepts the same five modes.

The GPT fine-tuning variant (its repository at 0.5.13): ``precision = precision or
get_default_supported_precision(training=True)`` (``utils.py``: on CUDA "bf16-mixed"
when ``torch.cuda.is_bf16_supported()`` else "16-mixed"; "bf16-mixed" without CUDA).
``quantize: bnb.*`` (finetune/lora.py, adapter.py...): "mixed" in precision raises
"Quantization and mixed precision is not supported."; otherwise
``BitsandbytesPrecision(quantize[4:], dtype)`` with the precision's dtype and Fabric gets
``precision=None``; the optimizer becomes ``bnb.optim.PagedAdamW`` (32-bit states), any
other raises "The chosen quantization format only supports the AdamW optimizer."; more than
one device raises "Quantization is currently not supported for multi-GPU training. Please
set devices=1 and num_nodes=1 when using the --quantize flag." Several devices shard:
FSDPStrategy (finetune/full.py, with activation checkpointing; pretrain.py HYBRID_SHARD),
ModelParallelStrategy + ``fully_shard`` (lora.py, with activation checkpointing), which
refuses "16-mixed". Its command line (``__main__.py``) calls
``torch.set_float32_matmul_precision("high")``: TF32 matmuls.

The Megatron variant (NVIDIA's): 1.x Megatron configs go through
``collections/nlp/parts/megatron_trainer_builder.py`` ``MegatronTrainerBuilder._plugins``:
``trainer.precision`` in [16, '16', 'bf16', '16-mixed', 'bf16-mixed'] becomes the variant's own
plugin and the Trainer gets ``precision=None`` (no alias warning); fp16 gets the variant's
``GradScaler(init_scale=model.native_amp_init_scale (2**32), growth_interval=1000,
hysteresis=2)``. ``model.megatron_amp_O2`` → ``MegatronHalfPrecisionPlugin``: the model is
wrapped in ``Float16Module`` (half parameters), ``enable_autocast = not megatron_amp_O2``,
the optimizer is a ``MainParamsOptimizerWrapper`` with fp32 master parameters ("BF16 uses
FP32 grad accumulation", "FP16 uses FP16 grad accumulation" then
``copy_model_grads_to_main_grads`` and unscale of the fp32 main grads). Without O2:
``PipelineMixedPrecisionPlugin`` (autocast, fp32 parameters). ``model.fsdp`` turns O2 off
("Torch FSDP is not compatible with O2 precision recipe. Setting O2 `False`."). The training
scripts set ``cfg.model.precision = cfg.trainer.precision``. Its 2.x
``pytorch/plugins/mixed_precision.py`` ``MegatronMixedPrecision``:
``Float16Module`` (half parameters), fp32 master parameters in Megatron's optimizer,
``grad_reduce_in_fp32=True``, ``autocast_enabled=False`` by default, fp16 loss scale from
``fp16_initial_loss_scale=2**32`` in Megatron's optimizer (no torch GradScaler).
"""

from __future__ import annotations

from typing import Any

from ...config import TrainingConfig
from ...facts import quote, span
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import frameworks_see_bf16
from ...resolve.plan import Override, PrecisionPlan
from ...versions import VersionRange, Versions
from .dialect import ALIASES, MODE_DTYPE, MODES, QUANTIZE, alias_warning, setting, unify
from .dialect import flavour as flavour  # re-exported: rules still import it from here
from .modes import (
    GPT_LABEL,
    GPT_VARIANT,
    LABEL,
    MEGATRON2_VARIANT,
    MEGATRON_LABEL,
    MEGATRON_VARIANT,
    NEMO_PLUGIN_INPUTS,
    PACKAGE,
)

#: "16-mixed", "bf16-mixed", "32-true", "64-true" exist from 2.0.0 (#16783)
UNIFIED_NAMES = span(f"{PACKAGE}.unified_names")
#: "16-true", "bf16-true", "transformer-engine[-float16]" from 2.1.0
HALF_TRUE = span(f"{PACKAGE}.half_true")
#: the alias warning names ``precision=`` (backticks) from 2.1.0
ALIAS_TEXT_2_1 = span(f"{PACKAGE}.alias_text")
#: FSDP "-mixed": ``MixedPrecision(param_dtype=float32)`` up to 2.5.x
FSDP_MIXED_FP32_COMPUTE = span(f"{PACKAGE}.fsdp_mixed_fp32_compute")
#: FSDP "-mixed" created the parameters in the half dtype (``module_init_context``)
FSDP_MIXED_HALF_INIT = span(f"{PACKAGE}.fsdp_mixed_half_init")

DEEPSPEED_MODES = ("32-true", "16-true", "bf16-true", "16-mixed", "bf16-mixed")
FSDP_MODES = DEEPSPEED_MODES
MODEL_PARALLEL_MODES = ("32-true", "bf16-mixed", "bf16-true", "16-true")
TORCH_INIT_SCALE = 2.0**16
NEMO_INIT_SCALE = 2.0**32


def _at(origin: Origin, detail: str) -> Origin:
    """``detail`` about a value derived from ``origin``, keeping its place when it is in the file."""
    combined = f"{origin.detail}; {detail}" if origin.detail else detail
    if origin.in_file:
        return origin.derived(combined)
    return Origin.default(combined)


def _known(versions: Versions) -> str:
    info = versions.get(PACKAGE)
    return f"{PACKAGE} {info.version} ({info.source})" if info else f"{PACKAGE} version not known: newest behaviour"


def _in(versions: Versions, span: VersionRange) -> bool:
    info = versions.get(PACKAGE)
    return span.contains(info.version) if info is not None else span.contains("999")


def _truthy(item: Sourced[Any] | None) -> bool:
    return item is not None and item.value not in (False, None, 0, "false", "False", "null")


class _Mode:
    """The precision mode and where it came from, with the run-stopping problems seen on the way."""

    def __init__(self, mode: str, origin: Origin, problem: str | None = None) -> None:
        self.mode, self.origin, self.problem = mode, origin, problem

    def tag(self, detail: str) -> Origin:
        """``detail`` at the precision setting, with the problem when there is one."""
        text = f"{detail} [{self.problem}]" if self.problem else detail
        return _at(self.origin, text)

    def default(self, detail: str) -> Origin:
        """A framework default, with the problem when there is one."""
        return Origin.default(f"{detail} [{self.problem}]" if self.problem else detail)


def _mode(
    config: TrainingConfig, hardware: Hardware, versions: Versions, kind: str, overrides: list[Override]
) -> _Mode:
    raw = config.precision
    if raw is None:
        if kind == GPT_VARIANT:
            return _gpt_default(hardware, versions)
        return _Mode("32-true", Origin.default(f"Trainer(precision=None) means '32-true' [{_known(versions)}]"))
    mode = unify(raw.value)
    if mode is None:
        allowed = (*MODES, 64, 32, 16, "64", "32", "16", "bf16")
        problem = f"{LABEL} raises ValueError: " + quote(
            f"{PACKAGE}.invalid_precision", precision=repr(raw.value), allowed=allowed
        )
        return _Mode("32-true", raw.origin, problem)
    origin = raw.origin
    info = versions.get(PACKAGE)
    if mode in ("16-true", "bf16-true", "transformer-engine", "transformer-engine-float16") and not _in(
        versions, HALF_TRUE
    ):
        allowed_2_0 = ("16-mixed", "bf16-mixed", "32-true", "64-true", 64, 32, 16, "64", "32", "16", "bf16")
        problem = f"{PACKAGE} {info.version if info else '?'} raises ValueError: " + quote(
            f"{PACKAGE}.invalid_precision", precision=repr(raw.value), allowed=allowed_2_0
        )
        return _Mode(mode, origin, problem)
    if not _in(versions, UNIFIED_NAMES):
        if str(raw.value) not in ALIASES:
            allowed_1_x = ("64", "32", "16", "bf16", 64, 32, 16)
            problem = f"{PACKAGE} {info.version if info else '?'} raises MisconfigurationException: " + quote(
                f"{PACKAGE}.invalid_precision", precision=repr(raw.value), allowed=allowed_1_x
            )
            return _Mode(mode, origin, problem)
        origin = _at(origin, f"{LABEL} 1.x precision {raw.value!r} ({mode!r} in 2.x names), no warning")
    elif str(raw.value) != mode and not (kind == MEGATRON_VARIANT and str(raw.value) in NEMO_PLUGIN_INPUTS):
        warning = alias_warning(raw.value)
        if warning and not _in(versions, ALIAS_TEXT_2_1):
            warning = warning.replace(f"`precision={raw.value}`", str(raw.value))
        origin = _at(origin, f"{raw.value!r} means {mode!r}" + (f"; {LABEL} warns: {warning}" if warning else ""))
    accelerator = setting(config, "trainer.accelerator")
    if (
        mode == "16-mixed"
        and accelerator is not None
        and str(accelerator.value).lower() == "cpu"
        and kind != MEGATRON_VARIANT
    ):
        text = quote(f"{PACKAGE}.cpu_fp16_mixed")
        winner = Sourced("bfloat16", accelerator.origin.derived(f"{LABEL} warns: {text}"))
        overrides.append(Override(field="autocast_dtype", winner=winner, loser=Sourced("float16", origin), reason=text))
        return _Mode("bf16-mixed", winner.origin)
    return _Mode(mode, origin)


def _gpt_default(hardware: Hardware, versions: Versions) -> _Mode:
    """``get_default_supported_precision(training=True)``."""
    base = f"{GPT_LABEL} precision unset: get_default_supported_precision(training=True)"
    if not hardware.known:
        return _Mode("bf16-mixed", Origin.default(f"{base}: 'bf16-mixed' where torch.cuda.is_bf16_supported()"))
    if not hardware.devices:
        return _Mode("bf16-mixed", Origin.default(f"{base}: 'bf16-mixed' without CUDA"))
    sees, why = frameworks_see_bf16(hardware, versions)
    return _Mode("bf16-mixed" if sees else "16-mixed", Origin.default(f"{base}: {why}"))


def _devices(config: TrainingConfig, kind: str) -> Sourced[str]:
    accelerator = setting(config, "trainer.accelerator")
    if accelerator is not None and str(accelerator.value).lower() == "cpu":
        return Sourced("", accelerator.origin.derived("accelerator cpu: no GPU is used"))
    if config.devices is not None:
        return config.devices
    if kind == GPT_VARIANT:
        devices = config.keys.get("devices")
        if devices is not None:  # "auto" or -1
            return Sourced("all", devices.origin.derived(f"{GPT_LABEL} parse_devices: torch.cuda.device_count()"))
        if "model_name" in config.keys or "model_config" in config.keys:
            return Sourced("all", Origin.default(f"{GPT_LABEL} pretrain default devices='auto': every visible GPU"))
        return Sourced("first", Origin.default(f"{GPT_LABEL} finetune default devices=1"))
    devices = setting(config, "trainer.devices")
    if devices is not None:
        return Sourced("all", devices.origin.derived(f"{LABEL}: every visible GPU"))
    return Sourced("all", Origin.default(f"{LABEL} Trainer default devices='auto': every visible GPU"))


def _device_count(devices: Sourced[str], hardware: Hardware) -> int | None:
    if devices.value == "first":
        return 1
    if devices.value == "all":
        return len(hardware.devices) if hardware.known else None
    return len([p for p in devices.value.split(",") if p.strip()])


def _scaling(dtype: str, at: Origin, scaler: bool, initial: float) -> dict[str, Any]:
    """Loss-scaling fields: dynamic for fp16 (``scaler``: a torch GradScaler does it), none otherwise."""
    if dtype != "float16":
        none = Origin.default("no loss scaling: only fp16 is scaled")
        return {
            "loss_scaling": Sourced("none", none),
            "grad_scaler": Sourced(False, none),
            "initial_scale": Sourced(None, none),
        }
    return {
        "loss_scaling": Sourced("dynamic", at),
        "grad_scaler": Sourced(scaler, at),
        "initial_scale": Sourced(initial, at),
    }


def _no_scaling(origin: Origin, detail: str) -> dict[str, Any]:
    none = _at(origin, detail)
    return {
        "loss_scaling": Sourced("none", none),
        "grad_scaler": Sourced(False, none),
        "initial_scale": Sourced(None, none),
    }


def _uniform(dtype: str, at: Origin) -> dict[str, Any]:
    """Everything in ``dtype``: weights, gradients and optimizer states, no autocast, no loss scaling."""
    item = Sourced(dtype, at)
    return {
        "load_dtype": item,
        "param_dtype": item,
        "autocast_dtype": Sourced(None, at),
        "grad_dtype": item,
        "optimizer_state_dtype": item,
        "loss_scaling": Sourced("none", at),
        "grad_scaler": Sourced(False, at),
        "initial_scale": Sourced(None, at),
    }


def _plain(mode: _Mode) -> dict[str, Any]:
    """Single device / DDP / ModelParallel: the plugin from ``_check_and_init_precision``."""
    name, dtype = mode.mode, MODE_DTYPE[mode.mode]
    if name == "32-true":
        return _uniform("float32", mode.tag("'32-true': Precision(), full fp32"))
    if name == "64-true":
        return _uniform("float64", mode.tag("'64-true': DoublePrecision casts the module to float64"))
    if name.endswith("-true"):
        return _uniform(
            dtype,
            mode.tag(f"{name!r}: HalfPrecision casts the whole module to {dtype}, no autocast, no GradScaler"),
        )
    if name.startswith("transformer-engine"):
        fields = _uniform(
            dtype,
            mode.tag(f"{name!r}: TransformerEnginePrecision(weights_dtype={dtype}) casts the module, no GradScaler"),
        )
        fields["autocast_dtype"] = Sourced(
            dtype, mode.tag(f"torch.autocast({dtype}) for ops without fp8 (fallback_compute_dtype)")
        )
        fields["fp8"] = Sourced(
            f"transformer-engine ({dtype} weights, DelayedScaling)",
            mode.tag("te.fp8_autocast(enabled=True, fp8_recipe=DelayedScaling()); Transformer Engine needs sm_89+"),
        )
        return fields
    fp32 = Sourced("float32", mode.default(f"{name!r}: MixedPrecision keeps the module in float32"))
    return {
        "load_dtype": fp32,
        "param_dtype": fp32,
        "autocast_dtype": Sourced(dtype, mode.tag(f"{name!r}: MixedPrecision runs torch.autocast({dtype})")),
        "grad_dtype": fp32,
        "optimizer_state_dtype": fp32,
        **_scaling(dtype, mode.tag("'16-mixed': MixedPrecision creates torch.amp.GradScaler"), True, TORCH_INIT_SCALE),
    }


def _fsdp(mode: _Mode, versions: Versions, init_context: bool, tag: str = "FSDPPrecision") -> dict[str, Any]:
    name, dtype = mode.mode, MODE_DTYPE[mode.mode]
    if name not in FSDP_MODES:
        problem = "raises ValueError: " + quote(f"{PACKAGE}.fsdp_precision", precision=repr(name), allowed=FSDP_MODES)
        return _plain(_Mode(name, mode.origin, mode.problem or problem))
    if not name.endswith("-mixed"):
        fields = _plain(mode)
        if name != "32-true":
            fields["reduce_dtype"] = Sourced(dtype, mode.tag(f"{tag}: FSDP MixedPrecision reduce_dtype {dtype}"))
            detail = (
                f"{tag}: the module is cast to {dtype} before FSDP shards it ({LABEL} warns "
                f"'{quote(f'{PACKAGE}.fsdp_full_precision_copy')}' but the sharded parameters are the cast ones)"
            )
            fields["param_dtype"] = Sourced(dtype, mode.tag(detail))
        return fields
    known = _known(versions)
    if init_context and _in(versions, FSDP_MIXED_HALF_INIT):
        detail = (
            f"{tag} {name!r} in {PACKAGE}>=2.6.0,<2.6.2 creates the parameters in {dtype} under init_module "
            f"(fixed in 2.6.2, #21586): no fp32 copy [{known}]"
        )
        half = Sourced(dtype, mode.tag(detail))
        fields = {
            "load_dtype": half,
            "param_dtype": half,
            "autocast_dtype": Sourced(dtype, mode.tag(f"{tag}: torch.autocast({dtype})")),
            "grad_dtype": half,
            "optimizer_state_dtype": half,
            "reduce_dtype": half,
        }
    else:
        compute = "float32" if _in(versions, FSDP_MIXED_FP32_COMPUTE) else dtype
        fp32 = Sourced("float32", mode.default(f"{tag} {name!r}: sharded parameters stay float32 [{known}]"))
        fields = {
            "load_dtype": fp32,
            "param_dtype": fp32,
            "autocast_dtype": Sourced(
                dtype, mode.tag(f"{tag}: torch.autocast({dtype}), FSDP MixedPrecision param_dtype={compute} [{known}]")
            ),
            "grad_dtype": fp32,
            "optimizer_state_dtype": fp32,
            "reduce_dtype": Sourced(dtype, mode.tag(f"{tag}: FSDP MixedPrecision reduce_dtype={dtype}")),
        }
    fields.update(_scaling(dtype, mode.tag(f"{tag} '16-mixed' creates a ShardedGradScaler"), True, TORCH_INIT_SCALE))
    return fields


def _deepspeed(mode: _Mode) -> dict[str, Any]:
    name, dtype = mode.mode, MODE_DTYPE[mode.mode]
    if name not in DEEPSPEED_MODES:
        problem = "raises ValueError: " + quote(
            f"{PACKAGE}.deepspeed_precision", precision=repr(name), allowed=DEEPSPEED_MODES
        )
        return _plain(_Mode(name, mode.origin, mode.problem or problem))
    if name == "32-true":
        return _plain(mode)
    block = "fp16" if dtype == "float16" else "bf16"
    detail = (
        f"DeepSpeedStrategy turns {name!r} into DeepSpeed `{block}: {{enabled: true}}` (unless its config has a "
        f"`{block}` block); the engine casts the module to {dtype}"
    )
    half = Sourced(dtype, mode.tag(detail))
    fp32 = Sourced("float32", mode.tag("DeepSpeed's optimizer keeps fp32 master weights and states"))
    load = half if name.endswith("-true") else Sourced("float32", Origin.default("the module is built in float32"))
    fields: dict[str, Any] = {
        "load_dtype": load,
        "param_dtype": half,
        "autocast_dtype": Sourced(None, mode.tag("DeepSpeedPrecision: no torch autocast")),
        "grad_dtype": half,
        "optimizer_state_dtype": fp32,
        "master_weights": fp32,
    }
    fields.update(
        _scaling(
            dtype,
            mode.tag("DeepSpeed fp16 loss_scale=0: DeepSpeed's dynamic loss scaler, initial_scale_power=16"),
            False,
            TORCH_INIT_SCALE,
        )
    )
    return fields


def _megatron_builder(
    config: TrainingConfig, mode: _Mode, versions: Versions, overrides: list[Override]
) -> dict[str, Any]:
    """The Megatron variant's 1.x ``MegatronTrainerBuilder._plugins`` for fp16/bf16."""
    dtype = MODE_DTYPE[mode.mode]
    o2 = setting(config, "model.megatron_amp_O2")
    fsdp = setting(config, "model.fsdp")
    scale = setting(config, "model.native_amp_init_scale")
    initial = float(scale.value) if scale is not None and isinstance(scale.value, (int, float)) else NEMO_INIT_SCALE
    scale_detail = f"{MEGATRON_LABEL} GradScaler(init_scale=model.native_amp_init_scale" + (
        ")" if scale else ", default 2**32)"
    )
    if _truthy(o2) and _truthy(fsdp):
        assert o2 is not None and fsdp is not None
        reason = f"{MEGATRON_LABEL}: 'Torch FSDP is not compatible with O2 precision recipe. Setting O2 `False`.'"
        overrides.append(
            Override(
                field="param_dtype",
                winner=Sourced("float32", fsdp.origin.derived(reason)),
                loser=Sourced(dtype, o2.origin),
                reason=reason,
            )
        )
        o2 = None
    fields: dict[str, Any]
    if _truthy(fsdp):
        fields = _fsdp(mode, versions, False, f"{MEGATRON_LABEL} FSDPMixedPrecisionPlugin")
        if config.fsdp_reduce_dtype is not None:
            fields["reduce_dtype"] = config.fsdp_reduce_dtype
        else:
            fields["reduce_dtype"] = Sourced(
                "float32", Origin.default(f"{MEGATRON_LABEL} fsdp_grad_reduce_dtype default 32")
            )
        return fields
    if _truthy(o2):
        assert o2 is not None
        model_precision = setting(config, "model.precision")
        if model_precision is not None and unify(model_precision.value) not in (None, mode.mode):
            reason = f"{MEGATRON_LABEL} training scripts set cfg.model.precision = cfg.trainer.precision"
            overrides.append(
                Override(
                    field="param_dtype",
                    winner=Sourced(dtype, mode.origin),
                    loser=Sourced(MODE_DTYPE.get(unify(model_precision.value) or "", "?"), model_precision.origin),
                    reason=reason,
                )
            )
        half = Sourced(dtype, o2.origin.derived(f"megatron_amp_O2: Float16Module casts the model to {dtype}"))
        master = Sourced(
            "float32", o2.origin.derived("megatron_amp_O2: MainParamsOptimizerWrapper keeps fp32 master parameters")
        )
        fields = {
            "load_dtype": Sourced("float32", Origin.default(f"{MEGATRON_LABEL} builds the model in float32")),
            "param_dtype": half,
            "autocast_dtype": Sourced(
                None, o2.origin.derived("megatron_amp_O2: enable_autocast = not megatron_amp_O2")
            ),
            "optimizer_state_dtype": master,
            "master_weights": master,
        }
        if dtype == "bfloat16":
            main = Sourced(
                "float32", o2.origin.derived("MegatronHalfPrecisionPlugin: 'BF16 uses FP32 grad accumulation'")
            )
            fields.update(grad_dtype=main, grad_accum_dtype=main, reduce_dtype=main)
        else:
            fp16 = Sourced(
                "float16", o2.origin.derived("MegatronHalfPrecisionPlugin: 'FP16 uses FP16 grad accumulation'")
            )
            fields.update(
                grad_dtype=Sourced(
                    "float32", o2.origin.derived("fp16 grads copied to fp32 main grads before unscale and step")
                ),
                grad_accum_dtype=fp16,
                reduce_dtype=fp16,
            )
        fields.update(_scaling(dtype, mode.tag(scale_detail), True, initial))
        return fields
    fields = _plain(mode)
    fields["autocast_dtype"] = Sourced(
        dtype,
        mode.tag(f"{MEGATRON_LABEL} PipelineMixedPrecisionPlugin: Megatron forward under torch.autocast({dtype})"),
    )
    fields.update(_scaling(dtype, mode.tag(scale_detail), True, initial))
    return fields


def _megatron_plugin(config: TrainingConfig, mode: _Mode) -> dict[str, Any]:
    """The Megatron variant's 2.x ``MegatronMixedPrecision``."""
    dtype = MODE_DTYPE[mode.mode]
    if mode.mode not in ("16-mixed", "bf16-mixed"):
        return _plain(mode)
    autocast = setting(config, "plugins.autocast_enabled")
    reduce32 = setting(config, "plugins.grad_reduce_in_fp32")
    half = Sourced(dtype, mode.tag(f"MegatronMixedPrecision: Float16Module casts the model to {dtype}"))
    master = Sourced("float32", Origin.default("Megatron's optimizer keeps fp32 main parameters"))
    if reduce32 is not None and not _truthy(reduce32):
        grads = Sourced(dtype, reduce32.origin.derived("grad_reduce_in_fp32: false"))
    else:
        grads = Sourced("float32", Origin.default("MegatronMixedPrecision grad_reduce_in_fp32=True: fp32 main grads"))
    fields: dict[str, Any] = {
        "load_dtype": Sourced("float32", Origin.default(f"{MEGATRON_LABEL} builds the model in float32")),
        "param_dtype": half,
        "autocast_dtype": Sourced(dtype, autocast.origin)
        if _truthy(autocast) and autocast is not None
        else Sourced(None, Origin.default("MegatronMixedPrecision autocast_enabled=False")),
        "grad_dtype": grads,
        "grad_accum_dtype": grads,
        "reduce_dtype": grads,
        "optimizer_state_dtype": master,
        "master_weights": master,
    }
    fields.update(
        _scaling(dtype, mode.tag("Megatron optimizer loss scaling, fp16_initial_loss_scale"), False, NEMO_INIT_SCALE)
    )
    return fields


def _bitsandbytes(config: TrainingConfig, mode: _Mode, count: int | None, kind: str) -> dict[str, Any]:
    """The GPT variant's ``quantize: bnb.*`` / a ``BitsandbytesPrecision`` plugin."""
    assert config.quantization_bits is not None
    bits = config.quantization_bits
    problems = []
    if kind == GPT_VARIANT:
        if "mixed" in mode.mode:
            problems.append(f"{GPT_LABEL} raises ValueError: {quote(f'{GPT_VARIANT}.quantize_mixed')}")
        elif mode.mode not in ("16-true", "bf16-true", "32-true"):
            problems.append(
                f"{GPT_LABEL} raises KeyError: {mode.mode!r} (quantize takes 16-true, bf16-true or 32-true)"
            )
        if count is not None and count > 1:
            problems.append(f"{GPT_LABEL} raises NotImplementedError: {quote(f'{GPT_VARIANT}.quantize_multi_gpu')}")
        dtype = MODE_DTYPE[mode.mode] if mode.mode in ("16-true", "bf16-true", "32-true") else "bfloat16"
        optimizer = config.optimizer
        if optimizer is not None and "AdamW" not in str(optimizer.value):
            problems.append(f"{GPT_LABEL} raises ValueError: {quote(f'{GPT_VARIANT}.quantize_adamw')}")
    else:
        dtype = config.quant_compute_dtype.value if config.quant_compute_dtype else "bfloat16"
    quantize = setting(config, "quantize")
    method = str(quantize.value) if quantize is not None else ""
    if method.startswith("bnb.int8") and dtype != "float16":
        problems.append(
            "BitsandbytesPrecision raises ValueError: "
            + quote(f"{PACKAGE}.bnb_int8_dtype", mode=repr(method[4:]), dtype=f"torch.{dtype}")
        )
    tag = f" [{'; '.join(problems)}]" if problems else ""
    # the GPT variant's dtype is its precision's (`dtype = {...}[precision]`): the precision set decides it,
    # through the quantize that hands it to the plugin; a plugin's own `dtype` otherwise
    decided = mode.origin if kind == GPT_VARIANT and mode.origin.in_file else bits.origin
    detail = f"BitsandbytesPrecision(dtype={dtype}): weights, LoRA and inputs in {dtype}{tag}"
    origin = _at(decided, detail)
    if decided is not bits.origin:
        origin = origin.with_through(bits.origin.places)
    item = Sourced(dtype, origin)
    mode_name = QUANTIZE.get(method, (bits.value, method[4:] or "bnb"))[1]
    label = f"{bits.value}-bit {mode_name} (bitsandbytes), compute {dtype}"
    fields: dict[str, Any] = {
        "load_dtype": item,
        "param_dtype": item,
        "autocast_dtype": Sourced(None, _at(bits.origin, "BitsandbytesPrecision: no autocast")),
        "grad_dtype": item,
        "optimizer_state_dtype": Sourced(
            "float32", Origin.default(f"{GPT_LABEL}: bnb.optim.PagedAdamW keeps 32-bit (fp32) optimizer states")
        )
        if kind == GPT_VARIANT
        else item,
        "quantization": Sourced(label, origin),
        **_no_scaling(bits.origin, "BitsandbytesPrecision: no GradScaler"),
    }
    return fields


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    kind = flavour(config)
    overrides: list[Override] = []
    mode = _mode(config, hardware, versions, kind, overrides)
    removed = [k for k in ("amp_backend", "amp_level") if setting(config, f"trainer.{k}") is not None]
    if removed and _in(versions, UNIFIED_NAMES):
        text = (
            f"{PACKAGE}>=2.0 removed Trainer({removed[0]}=...) (apex, #16149): Trainer(**cfg.trainer) raises "
            f"TypeError: Trainer.__init__() got an unexpected keyword argument {removed[0]!r}"
        )
        mode.problem = f"{mode.problem}; {text}" if mode.problem else text
    devices = _devices(config, kind)
    count = _device_count(devices, hardware)
    many = count is None or count > 1
    extra: dict[str, Any] = {}
    if kind == MEGATRON_VARIANT and config.precision is not None and str(config.precision.value) in NEMO_PLUGIN_INPUTS:
        fields = _megatron_builder(config, mode, versions, overrides)
    elif kind == MEGATRON2_VARIANT:
        fields = _megatron_plugin(config, mode)
    elif config.quantization_bits is not None and (kind == GPT_VARIANT or config.precision is None):
        fields = _bitsandbytes(config, mode, count, kind)
    elif kind == GPT_VARIANT:
        fields = _gpt_variant(config, mode, versions, many, extra)
    elif config.zero_stage is not None:
        fields = _deepspeed(mode)
    elif config.fsdp is not None and config.fsdp.value:
        fields = _fsdp(mode, versions, False)
    else:
        fields = _plain(mode)
    if kind == GPT_VARIANT:
        extra.setdefault(
            "tf32",
            Sourced(
                True, Origin.default(f"{GPT_VARIANT} CLI (__main__.py): torch.set_float32_matmul_precision('high')")
            ),
        )
    fields.update(extra)
    return PrecisionPlan(framework=config.framework, devices=devices, overrides=overrides, **fields)


def _gpt_variant(
    config: TrainingConfig, mode: _Mode, versions: Versions, many: bool, extra: dict[str, Any]
) -> dict[str, Any]:
    """The GPT variant picks the strategy: FSDP for several devices (full/pretrain), FSDP2 for LoRA."""
    lora = config.train_type is not None and config.train_type.value == "lora"
    if not many or config.fsdp is None:
        if config.fsdp is not None:
            extra["sharding"] = Sourced("none", Origin.default(f"{GPT_LABEL} on one device: strategy 'auto'"))
        return _plain(mode)
    if lora:
        extra["gradient_checkpointing"] = Sourced(
            True, Origin.default(f"{GPT_LABEL} finetune/lora.py parallelize_fn(activation_checkpointing=True)")
        )
        if mode.mode not in MODEL_PARALLEL_MODES:
            problem = "raises ValueError: " + quote(
                f"{PACKAGE}.model_parallel_precision",
                precision=repr(mode.mode),
                allowed=", ".join(MODEL_PARALLEL_MODES),
            )
            return _plain(_Mode(mode.mode, mode.origin, mode.problem or problem))
        return _plain(mode)
    pretrain = "model_name" in config.keys or "model_config" in config.keys
    if not pretrain:
        extra["gradient_checkpointing"] = Sourced(
            True,
            Origin.default(f"{GPT_LABEL} finetune/full.py FSDPStrategy(activation_checkpointing_policy={{Block}})"),
        )
    return _fsdp(mode, versions, True)
