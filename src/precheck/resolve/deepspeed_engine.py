"""DeepSpeed: what the engine does with a config's fp16/bf16/ZeRO settings, once they are known.

Read in deepspeedai/DeepSpeed (master, 2026; older behaviour where noted):

- ``DeepSpeedConfig._initialize_params`` (``runtime/config.py``): ``assert not
  (fp16.enabled and bf16.enabled), 'bfloat16 and fp16 modes cannot be simultaneously
  enabled'``. ``precision_config.py``: fp16 defaults ``loss_scale`` 0 (dynamic),
  ``initial_scale_power`` 16 (``initial_dynamic_scale = 2**initial_scale_power``); a
  negative scale raises "fp16.loss_scale must be >= 0 (0 enables dynamic loss scaling)".
  ``config_utils.DeepSpeedConfigModel.__init__`` drops ``"auto"`` values, so a standalone
  ``"enabled": "auto"`` means the default (off).
- ``DeepSpeedEngine._configure_distributed_model``: fp16 → ``module.half()``, bf16 →
  ``module.bfloat16()``; neither leaves the parameters as the script loaded them
  (``__check_params`` returns at once). There is no autocast: the model runs in fp16/bf16.
- ``get_data_types``: the model dtype is fp16 / bf16 / fp32; ``data_types.grad_accum_dtype``
  defaults to it. Up to 0.17.5 bf16 without ZeRO defaulted it to fp32 (``if model_dtype ==
  torch.bfloat16 and not self.zero_optimization(): grad_accum_dtype = torch.float32``).
- ``_do_optimizer_sanity_check`` picks the optimizer wrapper: ZeRO (stages 1-3; ZeRO-1 with
  bf16, fp32 accumulation and no CPU offload gets ``BF16_Optimizer``), else apex AMP, else
  by dtype: fp16 → ``FP16_Optimizer``/``FP16_UnfusedOptimizer`` (fp32 master weights); bf16
  → up to 0.17.5 ``BF16_Optimizer`` (fp32 master and fp32 gradient accumulation), from
  0.17.6 (PR #7515 "Enable non-ZeRO mode", merged after the 0.17.5 release and before
  0.17.6, inferred from PR numbers) ``DDP_BFLOAT16``: the fp16 wrapper with bf16 gradients
  and fp32 master weights. Unsupported mixes raise ``NotImplementedError("unsupported mix
  of {model_dtype=} and {grad_accum_dtype=}")`` (0.17.6+; older: "unsupported mix of model
  dtype and gradient accumulation type"). bf16 with an explicit fp32 ``grad_accum_dtype``
  keeps ``BF16_Optimizer`` through 0.18.4 and is refused from 0.18.5. Apex AMP with ZeRO asserts "Amp and ZeRO are not
  currently compatible, please use (legacy) fp16 mode which performs similar to amp
  opt_mode=O2"; with fp16/bf16 it raises "Cannot enable both amp with (legacy) fp16 or
  bfloat16 mode".
- ZeRO 1/2 (``stage_1_and_2.py``) and 3 keep an fp32 partition the optimizer updates
  (``master_weights_and_grads_dtype``: fp32, or fp16/bf16 with
  ``fp16.fp16_master_weights_and_grads`` / ``bf16.bf16_master_weights_and_grads``; optimizer
  states in bf16 with ``bf16.bf16_optimizer_states``).
- ``communication_data_type`` property: the config value, else fp16 if fp16, bf16 if bf16,
  else fp32.
- Loss scaling: only fp16 scales (``CreateLossScaler``/``LossScaleConfig``:
  ``use_grad_scaling = low_precision_dtype == torch.float16``); ``loss_scale`` 0 → dynamic
  from ``2**initial_scale_power``, otherwise that static scale. No torch GradScaler, except
  ``torch_autocast`` (DeepSpeed 0.17.2+) in fp16 without ZeRO (``torch.amp.GradScaler`` in
  ``DeepSpeedEngine.__init__``).

How the settings become known (who fills ``"auto"``): :mod:`precheck.resolve.deepspeed`, with
the HF Trainer's fill-in in :mod:`~precheck.resolve.deepspeed_hf_trainer` and accelerate's
DeepSpeed plugin in :mod:`~precheck.resolve.deepspeed_accelerate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..config import TrainingConfig
from ..dialects.base import to_bool
from ..dtypes import parse_dtype
from ..facts import quote, span
from ..provenance import Origin, Sourced
from ..versions import VersionRange, Versions
from .plan import Override, OverrideKind

#: bf16 without ZeRO runs the fp16 wrapper with bf16 gradients (PR #7515); before: BF16_Optimizer
BF16_NO_ZERO_IN_BF16 = span("deepspeed.bf16_no_zero_in_bf16")
#: without ZeRO, bf16 with an explicit fp32 ``grad_accum_dtype`` still gets ``BF16_Optimizer``
#: through 0.18.4 (engine.py:1476-1477@0.18.4); 0.18.5 dropped that branch (engine.py:1498-1499@0.18.5)
BF16_FP32_ACCUM_REFUSED = span("deepspeed.bf16_fp32_accum_refused")
#: the ``torch_autocast`` section (DeepSpeed 0.17.2, "Enable torch.autocast with ZeRO")
TORCH_AUTOCAST = span("deepspeed.torch_autocast")

BOTH_ENABLED = quote("deepspeed.both_enabled")
AMP_AND_ZERO = quote("deepspeed.amp_and_zero")
AMP_AND_HALF = quote("deepspeed.amp_and_half")
NO_ZERO_SECTION = quote("accelerate.ds_no_zero_section")

HALF = {"fp16": "float16", "bf16": "bfloat16"}
TORCH = {"float16": "torch.float16", "bfloat16": "torch.bfloat16", "float32": "torch.float32"}


# a resolver's working values, never compared or printed: no methods to compile at import
@dataclass(eq=False, repr=False)
class Switches:
    """The DeepSpeed settings the engine ends up with, after any integration filled them."""

    fp16: Sourced[bool]
    bf16: Sourced[bool]
    stage: Sourced[int]


# --- reading the attached config ----------------------------------------------------------


def auto_key(ds: TrainingConfig, path: str) -> Sourced[str] | None:
    return next((item for item in ds.auto_keys if item.value == path), None)


def derive(item: Sourced[Any], detail: str) -> Origin:
    """``detail``, placed at ``item``'s key when it came from a file."""
    if item.origin.in_file:
        prior = item.origin.detail if item.origin.kind == "derived" else None
        return item.origin.derived(f"{prior}; {detail}" if prior else detail)
    return Origin.default(f"{item.origin}; {detail}")


def version_holds(versions: Versions, span: VersionRange) -> tuple[bool, str]:
    info = versions.get(span.package)
    if info is None:
        return True, f"{span.package} version not known: newest behaviour"
    return span.contains(info.version), f"{span.package} {info.version} ({info.source})"


# --- switches -----------------------------------------------------------------------------


def _standalone_flag(ds: TrainingConfig, name: str) -> Sourced[bool]:
    item: Sourced[bool] | None = getattr(ds, name)
    if item is not None:
        return item
    path = f"{name}.enabled" if name == "fp16" or "bf16" in ds.keys else "bfloat16.enabled"
    auto = auto_key(ds, path)
    if auto is not None:
        return Sourced(
            False,
            auto.origin.derived(
                f'`{path}: auto` is filled only by the HF integrations; DeepSpeed drops "auto" values '
                "(DeepSpeedConfigModel.__init__), so its default false applies"
            ),
        )
    return Sourced(False, Origin.default(f"DeepSpeed default {name}.enabled false"))


def standalone_stage(ds: TrainingConfig) -> Sourced[int]:
    if ds.zero_stage is not None:
        return ds.zero_stage
    auto = auto_key(ds, "zero_optimization.stage")
    if auto is not None:
        return Sourced(0, auto.origin.derived('DeepSpeed drops "auto" values: the default ZeRO stage 0 applies'))
    return Sourced(0, Origin.default("DeepSpeed default zero_optimization.stage 0 (ZeRO disabled)"))


def standalone_switches(ds: TrainingConfig) -> Switches:
    return Switches(_standalone_flag(ds, "fp16"), _standalone_flag(ds, "bf16"), standalone_stage(ds))


# --- the engine ---------------------------------------------------------------------------


def engine(
    ds: TrainingConfig, switches: Switches, versions: Versions, as_loaded: Sourced[str]
) -> tuple[dict[str, Any], list[Override]]:
    """The plan fields the DeepSpeed engine decides, and the settings it refuses."""
    overrides: list[Override] = []
    fp16, bf16, stage = switches.fp16, switches.bf16, switches.stage
    zero = stage.value > 0
    if fp16.value and bf16.value:
        overrides.append(
            Override(
                field="bf16",
                winner=Sourced(False, derive(fp16, "DeepSpeed checks fp16 first")),
                loser=bf16,
                reason=f'DeepSpeed asserts "{BOTH_ENABLED}" (DeepSpeedConfig._initialize_params): the engine is '
                "never created; the plan shows fp16, which DeepSpeed checks first",
                kind=OverrideKind.BOTH_ENABLED,
                error=BOTH_ENABLED,
            )
        )
    amp = ds.amp if ds.amp is not None and ds.amp.value else None
    autocast_cfg = _torch_autocast(ds, versions)

    if fp16.value or bf16.value:
        switch, name = (fp16, "fp16") if fp16.value else (bf16, "bf16")
        fields = _half(ds, switch, name)
        if amp is not None:
            reason = f'DeepSpeed raises NotImplementedError("{AMP_AND_HALF}") (_do_optimizer_sanity_check)'
            overrides.append(
                Override(
                    field="amp",
                    winner=switch,
                    loser=amp,
                    reason=reason,
                    kind=OverrideKind.AMP_AND_HALF,
                    error=AMP_AND_HALF,
                )
            )
        if autocast_cfg is not None:
            reason = "DeepSpeed's torch_autocast cannot be combined with its fp16/bf16 mode (PR #6993)"
            overrides.append(
                Override(
                    field="autocast_dtype",
                    winner=switch,
                    loser=autocast_cfg,
                    reason=reason,
                    kind=OverrideKind.AUTOCAST_AND_HALF,
                )
            )
        model = HALF[name]
    elif amp is not None:
        fields = _apex(ds, amp, as_loaded)
        if zero:
            overrides.append(
                Override(
                    field="amp",
                    winner=stage,
                    loser=amp,
                    reason=f'DeepSpeed asserts "{AMP_AND_ZERO}" (_do_optimizer_sanity_check)',
                    kind=OverrideKind.AMP_AND_ZERO,
                    error=AMP_AND_ZERO,
                )
            )
        model = "float32"
    elif autocast_cfg is not None:
        fields = _autocast(ds, autocast_cfg, as_loaded, zero)
        model = "float32"
    else:
        fields = _fp32(as_loaded, zero)
        model = "float32"

    fields["grad_accum_dtype"], accum_override = _grad_accum(ds, model, stage, fields, versions, amp is not None)
    if accum_override is not None:
        overrides.append(accum_override)
    fields["reduce_dtype"] = _reduce(ds, model, fp16 if fp16.value else bf16)
    fields["sharding"] = _sharding(ds, stage)
    if zero and amp is None:
        fields.setdefault("master_weights", Sourced("float32", derive(stage, "ZeRO keeps an fp32 partition")))
    return fields, overrides


def _half(ds: TrainingConfig, switch: Sourced[bool], name: str) -> dict[str, Any]:
    dtype = HALF[name]
    cast = "module.half()" if name == "fp16" else "module.bfloat16()"
    params = Sourced(
        dtype,
        derive(switch, f"DeepSpeed {name} mode casts the model to {dtype} (_configure_distributed_model: {cast})"),
    )
    fields: dict[str, Any] = {
        "param_dtype": params,
        "grad_dtype": params,
        "autocast_dtype": Sourced(
            None, derive(switch, f"DeepSpeed {name} mode is not autocast: forward and backward run in {dtype}")
        ),
        "grad_scaler": Sourced(
            False,
            derive(
                switch, "DeepSpeed scales the loss itself: no torch GradScaler (accelerate adds none under DeepSpeed)"
            ),
        ),
    }
    master = Sourced(
        "float32",
        derive(
            switch, f"DeepSpeed's {name} optimizers (FP16_Optimizer, BF16_Optimizer, ZeRO) step fp32 master weights"
        ),
    )
    states = Sourced("float32", derive(switch, "the optimizer steps the fp32 master weights: fp32 states"))
    low = ds.setting(f"{name}.{name}_master_weights_and_grads")
    if low is not None and to_bool(low.value):
        master = Sourced(dtype, low.origin.derived(f"master weights and gradients kept in {dtype}"))
    if name == "bf16":
        low_states = ds.setting("bf16.bf16_optimizer_states")
        if low_states is not None and to_bool(low_states.value):
            states = Sourced(dtype, low_states.origin.derived("optimizer states kept in bf16"))
    fields["master_weights"] = master
    fields["optimizer_state_dtype"] = states
    if name == "fp16":
        fields.update(_fp16_scaling(ds, switch))
    else:
        none = derive(
            switch, "only fp16 scales the loss: DeepSpeed's loss scaler keeps 1.0 for bf16 (CreateLossScaler)"
        )
        fields["loss_scaling"] = Sourced("none", none)
        fields["initial_scale"] = Sourced(None, none)
    return fields


def _fp16_scaling(ds: TrainingConfig, switch: Sourced[bool]) -> dict[str, Any]:
    scale = ds.loss_scale
    if scale is not None and scale.value > 0:
        static = scale.origin.derived(f"fp16.loss_scale {scale.value:g}: a static loss scale")
        return {"loss_scaling": Sourced("static", static), "initial_scale": Sourced(float(scale.value), static)}
    dynamic = (
        scale.origin.derived("fp16.loss_scale 0: DeepSpeed's dynamic loss scaling")
        if scale is not None
        else derive(switch, "DeepSpeed default fp16.loss_scale 0: dynamic loss scaling")
    )
    power = ds.initial_scale_power
    if power is not None:
        start = Sourced(
            power_of_two(power.value), power.origin.derived(f"dynamic loss scale starts at 2**{power.value:g}")
        )
    else:
        start = Sourced(2.0**16, Origin.default("DeepSpeed default fp16.initial_scale_power 16: starts at 2**16"))
    return {"loss_scaling": Sourced("dynamic", dynamic), "initial_scale": start}


def _apex(ds: TrainingConfig, amp: Sourced[bool], as_loaded: Sourced[str]) -> dict[str, Any]:
    """apex ``amp.initialize(model, optimizer, **amp_params)`` (opt_level default O1)."""
    level_item = ds.setting("amp.opt_level")
    level = str(level_item.value).upper() if level_item is not None else "O1"
    where = level_item or amp
    origin = derive(where, f"DeepSpeed hands the model to apex amp.initialize (opt_level {level})")
    none = Sourced(None, origin)
    dynamic = Sourced("dynamic", derive(where, "apex amp: dynamic loss scaling"))
    no_scaler = Sourced(False, derive(where, "apex amp scales the loss itself: no torch GradScaler"))
    if level == "O0":
        params = Sourced(as_loaded.value, origin)
        return _simple(params, none, params, none, params, Sourced("none", origin), no_scaler, none)
    if level == "O1":
        params = Sourced(as_loaded.value, origin)
        autocast = Sourced("float16", derive(where, "apex O1 casts whitelisted ops to fp16"))
        return _simple(params, autocast, params, none, params, dynamic, no_scaler, Sourced(2.0**16, origin))
    half = Sourced("float16", derive(where, f"apex {level} casts the model to fp16"))
    if level == "O3":
        static = Sourced("static", derive(where, "apex O3: loss scale 1.0"))
        return _simple(half, none, half, none, half, static, no_scaler, Sourced(1.0, origin))
    fp32 = Sourced("float32", derive(where, "apex O2 keeps fp32 master weights"))
    return _simple(half, none, half, fp32, fp32, dynamic, no_scaler, Sourced(2.0**16, origin))


def _simple(
    params: Sourced[str],
    autocast: Sourced[str | None],
    grads: Sourced[str],
    master: Sourced[str | None],
    states: Sourced[str],
    scaling: Sourced[str],
    scaler: Sourced[bool],
    initial: Sourced[float | None],
) -> dict[str, Any]:
    return {
        "param_dtype": params,
        "autocast_dtype": autocast,
        "grad_dtype": grads,
        "master_weights": master,
        "optimizer_state_dtype": states,
        "loss_scaling": scaling,
        "grad_scaler": scaler,
        "initial_scale": initial,
    }


def _torch_autocast(ds: TrainingConfig, versions: Versions) -> Sourced[str] | None:
    enabled = ds.setting("torch_autocast.enabled")
    if enabled is None or not to_bool(enabled.value):
        return None
    supported, _ = version_holds(versions, TORCH_AUTOCAST)
    if not supported:
        return None  # older releases ignore the unknown top-level key
    dtype = ds.setting("torch_autocast.dtype")
    parsed = parse_dtype(dtype.value) if dtype is not None else None
    if dtype is not None and parsed is not None:
        return Sourced(parsed, dtype.origin)
    return Sourced(
        "float16", enabled.origin.derived("torch_autocast without dtype: torch.autocast's CUDA default fp16")
    )


def _autocast(ds: TrainingConfig, dtype: Sourced[str], as_loaded: Sourced[str], zero: bool) -> dict[str, Any]:
    params = Sourced(as_loaded.value, derive(dtype, "torch_autocast keeps the parameters as loaded"))
    scaler = Sourced(False, derive(dtype, "no torch GradScaler"))
    scaling = Sourced("none", derive(dtype, "no loss scaling outside fp16"))
    initial: Sourced[float | None] = Sourced(None, scaling.origin)
    if dtype.value == "float16":
        if zero:
            scaling = Sourced("dynamic", derive(dtype, "ZeRO's loss scaler scales fp16 autocast"))
        else:
            scaling = Sourced("dynamic", derive(dtype, "fp16 torch_autocast without ZeRO: torch.amp.GradScaler"))
            scaler = Sourced(True, scaling.origin)
        power = ds.initial_scale_power
        initial = Sourced(power_of_two(power.value if power is not None else 16), scaling.origin)
    master: Sourced[str | None] = (
        Sourced("float32", derive(dtype, "ZeRO keeps an fp32 partition")) if zero else Sourced(None, params.origin)
    )
    states = Sourced("float32", master.origin) if zero else params
    return _simple(params, dtype, params, master, states, scaling, scaler, initial)


def _fp32(as_loaded: Sourced[str], zero: bool) -> dict[str, Any]:
    detail = "neither fp16 nor bf16 is enabled: DeepSpeed keeps the parameters as loaded"
    params = Sourced(as_loaded.value, derive(as_loaded, detail))
    none = Origin.default("DeepSpeed fp32 mode: no loss scaling, no GradScaler")
    fields: dict[str, Any] = {
        "param_dtype": params,
        "grad_dtype": params,
        "autocast_dtype": Sourced(None, Origin.default("DeepSpeed fp32 mode: no autocast")),
        "loss_scaling": Sourced("none", none),
        "grad_scaler": Sourced(False, none),
        "initial_scale": Sourced(None, none),
        "optimizer_state_dtype": Sourced("float32", Origin.default("ZeRO steps an fp32 partition")) if zero else params,
    }
    if not zero:
        fields["master_weights"] = Sourced(
            None, Origin.default("no ZeRO, no fp16/bf16: the optimizer steps the parameters")
        )
    return fields


def _grad_accum(
    ds: TrainingConfig, model: str, stage: Sourced[int], fields: dict[str, Any], versions: Versions, apex: bool
) -> tuple[Sourced[str], Override | None]:
    new, known = version_holds(versions, BF16_NO_ZERO_IN_BF16)
    explicit = ds.grad_accum_dtype
    zero = stage.value > 0
    if explicit is not None:
        override = None
        if not zero and not apex and explicit.value != model:
            bf16_fp32 = model == "bfloat16" and explicit.value == "float32"
            refused, known = version_holds(versions, BF16_FP32_ACCUM_REFUSED) if bf16_fp32 else (True, known)
            if bf16_fp32 and not refused:
                text = ""
            elif new:
                text = (
                    quote("deepspeed.unsupported_mix")
                    .replace("{model_dtype=}", f"model_dtype={TORCH[model]}")
                    .replace("{grad_accum_dtype=}", f"grad_accum_dtype={TORCH.get(explicit.value)}")
                )
            else:
                text = quote("deepspeed.unsupported_mix_old")
            if text:
                override = Override(
                    field="grad_accum_dtype",
                    winner=Sourced(model, derive(stage, "without ZeRO the gradients accumulate in the model dtype")),
                    loser=explicit,
                    reason=f'DeepSpeed raises NotImplementedError("{text}") without ZeRO '
                    f"(_do_optimizer_sanity_check) [{known}]",
                    kind=OverrideKind.UNSUPPORTED_MIX,
                    error=text,
                    basis=known,
                )
        return explicit, override
    if model == "bfloat16" and not zero:
        if new:
            origin = derive(
                stage,
                "bf16 without ZeRO: the fp16 wrapper with bf16 gradients "
                f"(DDP_BFLOAT16, {BF16_NO_ZERO_IN_BF16}) [{known}]",
            )
            return Sourced("bfloat16", origin), None
        origin = derive(stage, f"bf16 without ZeRO: BF16_Optimizer accumulates in fp32 (deepspeed<0.17.6) [{known}]")
        return Sourced("float32", origin), None
    if model == "float32" and not zero:
        grads: Sourced[str] = fields["grad_dtype"]
        return Sourced(grads.value, derive(grads, "gradients accumulate in .grad, in the parameter dtype")), None
    detail = "data_types.grad_accum_dtype unset: DeepSpeed accumulates in the model dtype (get_data_types)"
    return Sourced(model, derive(stage, detail) if zero else Origin.default(detail)), None


def _reduce(ds: TrainingConfig, model: str, switch: Sourced[bool]) -> Sourced[str | None]:
    if ds.communication_dtype is not None:
        return ds.communication_dtype  # type: ignore[return-value]
    detail = "communication_data_type unset: DeepSpeed reduces in fp16 if fp16, bf16 if bf16, else fp32"
    return Sourced(model, derive(switch, detail) if model != "float32" else Origin.default(detail))


def _sharding(ds: TrainingConfig, stage: Sourced[int]) -> Sourced[str]:
    if stage.value <= 0:
        if "zero_optimization" not in ds.keys:
            detail = (
                "no zero_optimization section: DeepSpeed runs without ZeRO, and the HF integrations refuse the file "
                f'(accelerate DeepSpeedPlugin raises ValueError "{NO_ZERO_SECTION}")'
            )
            return Sourced("none", Origin.default(detail))
        return Sourced("none", derive(stage, "ZeRO stage 0: data parallel, every device holds a full copy"))
    parts = [f"ZeRO-{stage.value}"]
    for name, item in (("optimizer", ds.offload_optimizer), ("parameters", ds.offload_param)):
        if item is not None and item.value not in ("none", ""):
            parts.append(f"{name} offloaded to {item.value}")
    return Sourced(", ".join(parts), stage.origin)


def power_of_two(power: float) -> float:
    """``2 ** initial_scale_power`` as DeepSpeed computes it, inf past the float range
    (``2.0 ** 5000`` raises OverflowError; DeepSpeed's int power becomes inf as a float)."""
    try:
        return float(2.0**power)
    except OverflowError:
        return math.inf
