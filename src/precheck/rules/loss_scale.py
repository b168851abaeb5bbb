"""PC405–PC407: loss scaling that is missing, frozen, or set to values DeepSpeed cannot use.

Sources (each rule's docstring names what it relies on):

- fp16 range: the smallest subnormal is 2**-24 (≈5.96e-8), the smallest normal 2**-14
  (≈6.1e-5); torch ``amp/grad_scaler.py`` (``GradScaler`` docstring): "To minimize gradient
  underflow, a large scale factor should be used"; without a scaler, fp16 gradients below
  2**-24 are stored as 0.
- deepspeedai/DeepSpeed master (read 2026): ``runtime/fp16/loss_scaler.py`` ``LossScaler`` (static:
  ``update_scale`` does nothing) and ``DynamicLossScaler.update_scale`` (halves on overflow, doubles
  after ``scale_window`` clean steps: ``stable_interval % self.scale_window``);
  ``runtime/fp16/fused_optimizer.py`` ``FP16_Optimizer.step`` skips a step whose fp16 gradients
  overflow ("Overflow detected. Skipping step.") and ``_update_scale`` with a static scale only
  logs "Grad overflow on iteration: %s" / "Using static loss scale of: %s".
  ``runtime/precision_config.py`` ``DeepSpeedFP16Config``: ``loss_scale`` 0 means dynamic; from
  0.18.8 a negative or non-finite ``loss_scale`` is refused while parsing, from 0.19.3
  ``loss_scale_window``/``min_loss_scale`` <= 0 only with fp16 on and ``loss_scale`` 0 (the
  boundaries and messages are facts in ``data/facts.json``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ..config import TrainingConfig
from ..facts import quote, span
from ..provenance import Sourced
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule, written
from .device import flag_edit
from .optimizer_support import names_adapters

FP16_SMALLEST = 2.0**-24
FP16_MAX = 65504.0


def _deepspeed(ctx: Context) -> TrainingConfig | None:
    if ctx.config.dialect == "deepspeed":  # a DeepSpeed file checked on its own
        return ctx.config
    return ctx.config.attached.get("deepspeed")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past the float range
        return None


# --- PC405 ------------------------------------------------------------------------------------


def _mixed_precision_edits(ctx: Context) -> tuple[Edit, ...]:
    """fp32 weights under fp16 autocast, in the framework's own keys (none where it has no such switch)."""
    config = ctx.config
    if config.traits.plain_hf_trainer:
        edits = [e for e in (flag_edit(ctx, "torch_dtype", "float32"), flag_edit(ctx, "fp16", True)) if e]
        return tuple(edits)
    if config.traits.precision_modes and config.precision is not None:
        return edits_for(config.precision, config.path, "16-mixed")
    return ()


@rule("PC405", "fp16-without-loss-scaling", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def fp16_without_loss_scaling(ctx: Context) -> Iterator[Finding]:
    """
    Warns when gradients are float16 and nothing scales the loss.

    ## What it does
    Reports a plan whose gradients are float16 (the trainable weights are fp16) with no loss
    scaling: a `precision: 16-true` mode, a HF/TRL full fine-tune of a model loaded with
    `torch_dtype: float16` and no `fp16` flag, a `float16: true` switch that loads fp16
    weights. A framework that refuses fp16 at start is not reported.

    ## Why is this bad?
    fp16 stores nothing below 2**-24 (≈6e-8) and loses precision below 2**-14 (≈6e-5), where
    many gradient values of a large model lie. Loss scaling exists to lift them into range
    (torch's `GradScaler`: "To minimize gradient underflow, a large scale factor should be
    used"); without it those gradients flush to zero and the parameters they belong to stop
    learning, and with an fp16 loss the backward pass can also overflow unnoticed (no
    inf/NaN check skips the step).

    ## Example
    ```yaml
    trainer:
      precision: 16-true
    ```
    Use instead:
    ```yaml
    trainer:
      precision: 16-mixed   # fp32 weights, fp16 autocast, GradScaler
    ```

    ## Fix
    Train with fp16 mixed precision (fp32 weights, fp16 autocast, dynamic loss scaling):
    `precision: 16-mixed`, or `torch_dtype: float32` with `fp16: true`; or bf16 where the
    GPU has it.
    """
    plan = ctx.plan
    if plan.grad_dtype.value != "float16" or plan.loss_scaling.value != "none" or plan.grad_scaler.value:
        return
    if ctx.config.traits.refuses_fp16:
        return  # the framework refuses fp16 before training
    config = ctx.config
    if names_adapters(config):
        return  # a script's own LoRA switch the dialect does not map: the adapters are fp32
    model = [config.model.origin] if config.model is not None else []
    source = "" if plan.load_dtype.origin.in_file else f" (the weights are float16 because: {plan.load_dtype.origin})"
    yield Finding(
        anchor(config.path, plan.grad_dtype.origin, plan.param_dtype.origin, plan.load_dtype.origin, *model),
        f"gradients are float16{source} and nothing scales the loss: values below 2**-24 (~6e-8) become 0 and "
        "below 2**-14 (~6e-5) lose precision, so small gradients vanish, and overflowing steps are not skipped",
        _quantized_fix(ctx)
        or Fix(
            "train with fp16 mixed precision (fp32 weights, fp16 autocast, dynamic loss scaling) or in bf16",
            _mixed_precision_edits(ctx),
        ),
    )


def _quantized_fix(ctx: Context) -> Fix | None:
    """A quantized run of a framework whose quantized path refuses mixed precision
    (``Traits.quantized_precisions``): the modes it takes, bf16 where every GPU the run uses has
    it (sm_80+), else fp32; None for any other run."""
    config = ctx.config
    modes = config.traits.quantized_precisions
    if not modes or config.quantize is None:
        return None
    (bf16, bf16_means), (fp32, fp32_means) = modes[0], modes[-1]
    devices = ctx.hardware.devices if ctx.hardware.known else []
    used = [devices[i] for i in ctx.plan.device_indices(len(devices))] if devices else []
    chosen = bf16 if used and all(d.bf16 for d in used) else fp32 if used else None
    text = (
        f"`{written(config.quantize, 'quantize')}` takes no mixed precision (the run raises): train in {bf16} "
        f"({bf16_means}) where the GPU has bf16 (sm_80+), else in {fp32} ({fp32_means})"
    )
    edits = edits_for(config.precision, config.path, chosen) if chosen is not None and config.precision else ()
    return Fix(text, edits)


# --- PC406 ------------------------------------------------------------------------------------


@rule("PC406", "ds-static-loss-scale", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def ds_static_loss_scale(ctx: Context) -> Iterator[Finding]:
    """
    Warns when a DeepSpeed fp16 run fixes the loss scale (`fp16.loss_scale` > 0).

    ## What it does
    Reports a DeepSpeed run that trains in fp16 (after the launcher filled `"auto"`) with a
    static loss scale: `fp16.loss_scale` other than 0. (In a bf16 or fp32 run the setting
    does nothing: PC610.)

    ## Why is this bad?
    `loss_scale: 0` selects DeepSpeed's dynamic loss scaling; any other value is used as a
    constant (`LossScaler`, whose `update_scale` does nothing). `FP16_Optimizer.step` still
    skips every step whose fp16 gradients overflow ("Overflow detected. Skipping step.") but
    `_update_scale` only logs "Grad overflow on iteration: N" / "Using static loss scale of:
    S" and keeps the scale: a scale that is too large for the run skips steps again and
    again, one that is too small lets gradients below 2**-24/S flush to zero, and the scale
    cannot follow the gradients as they shrink during training.

    ## Example
    ```json
    {"fp16": {"enabled": true, "loss_scale": 1024}, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "initial_scale_power": 16}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    `fp16.loss_scale: 0` (dynamic scaling from `2**initial_scale_power`), or bf16.
    """
    ds = _deepspeed(ctx)
    if ds is None or ds.loss_scale is None or ctx.plan.loss_scaling.value != "static":
        return
    scale = ds.loss_scale
    if not (_number(scale.value) or 0) > 0:
        return
    tail = (
        f"; a scale of {scale.value:g} overflows fp16 for any gradient above {FP16_MAX / float(scale.value):.3g}"
        if float(scale.value) > 2.0**16
        else ""
    )
    yield Finding(
        anchor(ds.path, scale.origin),
        f"`{scale.origin.key or 'fp16.loss_scale'}: {scale.value:g}` fixes the loss scale: DeepSpeed skips every "
        'step whose gradients overflow without lowering it (FP16_Optimizer._update_scale: "Using static loss '
        f'scale of: {scale.value:g}") and never raises it, so gradients below 2**-24/scale still flush to zero{tail}',
        Fix("use dynamic loss scaling", edits_for(scale, ds.path, 0)),
    )


# --- PC407 ------------------------------------------------------------------------------------


#: before 0.19.3 a floor at or below 0 is no floor: ``update_scale`` halves the scale to
#: ``max(cur_scale / scale_factor, min_scale)`` and stops the run only at ``cur_scale == min_scale``
#: (``runtime/fp16/loss_scaler.py:269-273@0.19.2``), so a bad floor matters only if the run keeps overflowing
NO_FLOOR = (
    "DeepSpeed takes it as no floor (DynamicLossScaler.update_scale: "
    f"`{quote('deepspeed.min_scale_floor')}`): overflowing steps halve the scale toward 0 where the default "
    "floor 1 stops the run"
)
NO_FLOOR_PREMISE = "fp16 gradients overflow on step after step (only then does the scale fall to the floor)"


def _invalid(ctx: Context, ds: TrainingConfig) -> Iterator[tuple[Sourced[Any], str, Any, tuple[str, ...]]]:
    """(setting, what goes wrong in the run's DeepSpeed release, the valid value to use, what
    that rests on beyond the files: empty where it always goes wrong)."""
    fp16_on = ctx.plan.loss_scaling.value in ("dynamic", "static")  # DeepSpeed scales only in fp16
    scale = ds.loss_scale
    if scale is not None and scale.origin.in_file:
        value = _number(scale.value)
        if value is not None and (value < 0 or not math.isfinite(value)):
            refused, known = ctx.versions.holds(span("deepspeed.loss_scale_negative"))
            fact_id = "deepspeed.loss_scale_negative" if math.isfinite(value) else "deepspeed.loss_scale_finite"
            if refused:
                yield scale, f'DeepSpeed refuses the config ("{quote(fact_id)}", DeepSpeedFP16Config) [{known}]', 0, ()
            elif fp16_on:
                yield scale, f"DeepSpeed takes it as a static fp16 loss scale: the loss turns NaN [{known}]", 0, ()
    dynamic = fp16_on and (scale is None or _number(scale.value) == 0)
    if not dynamic:
        return  # only DynamicLossScaler (fp16, loss_scale 0) reads the window and the floor
    for key, default, before, premise in (
        (
            "loss_scale_window",
            1000,
            "DynamicLossScaler.update_scale divides by it (ZeroDivisionError mid-training)",
            (),
        ),
        ("min_loss_scale", 1, NO_FLOOR, (NO_FLOOR_PREMISE,)),
    ):
        item = ds.setting(f"fp16.{key}")
        value = _number(item.value) if item is not None else None
        if item is None or value is None or (value > 0 and math.isfinite(value)):
            continue
        refused, known = ctx.versions.holds(span(f"deepspeed.{key}"))
        if refused:
            yield item, f'DeepSpeed refuses the config ("{quote(f"deepspeed.{key}")}") [{known}]', default, ()
        else:
            yield item, f"{before} [{known}]", default, premise


@rule("PC407", "ds-invalid-loss-scaler", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_invalid_loss_scaler(ctx: Context) -> Iterator[Finding]:
    """
    Finds DeepSpeed fp16 loss-scaler values that cannot work: a negative scale, a zero window.

    ## What it does
    Reports, in a DeepSpeed config, an `fp16.loss_scale` below 0 or not finite (from 0.18.8
    whether or not fp16 is on; before, only in an fp16 run), and an `fp16.loss_scale_window`
    or `fp16.min_loss_scale` at or below 0 in an fp16 run with dynamic scaling
    (`loss_scale: 0`), the only place DeepSpeed reads them.

    ## Why is this bad?
    From 0.18.8 `DeepSpeedFP16Config._validate_loss_scale` refuses a negative or non-finite
    scale while parsing the file: "fp16.loss_scale must be >= 0 (0 enables dynamic loss
    scaling)" (`runtime/precision_config.py:130@0.18.8`); before, it was a static scale that
    turns the loss into NaN. From 0.19.3 `_validate_dynamic_loss_scale_params` checks the
    window and the floor `if self.enabled and self.loss_scale == 0`
    (`runtime/precision_config.py:188-196@0.19.3`): "fp16.loss_scale_window must be > 0 when
    dynamic loss scaling is enabled (loss_scale=0)"; before, `DynamicLossScaler.update_scale`
    divides by the window (`stable_interval % self.scale_window`) in the middle of training,
    and takes a floor at or below 0 as no floor (`next_scale = max(self.cur_scale /
    self.scale_factor, self.min_scale)`, `runtime/fp16/loss_scaler.py:273@0.19.2`; it stops
    the run only when the scale reaches the floor): then the run goes on, and the scale falls
    toward 0 only while fp16 gradients keep overflowing, so that case is a warning naming
    the premise.
    Static scaling and bf16/fp32 runs never read either value.

    ## Example
    ```json
    {"fp16": {"enabled": true, "loss_scale": -1, "loss_scale_window": 0}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true, "loss_scale": 0, "loss_scale_window": 1000}}
    ```

    ## Fix
    `loss_scale: 0` for dynamic scaling (or a positive static scale),
    `loss_scale_window: 1000` and `min_loss_scale: 1` (DeepSpeed's defaults).
    """
    ds = _deepspeed(ctx)
    if ds is None:
        return
    for item, what, valid, premise in _invalid(ctx, ds):
        key = item.origin.key or "fp16"
        shown = f"{item.value:g}" if isinstance(item.value, float) else str(item.value)
        yield Finding(
            anchor(ds.path, item.origin),
            f"`{key}: {shown}` is not a usable loss-scaler setting: {what}",
            Fix(f"use {valid} (DeepSpeed's default)", edits_for(item, ds.path, valid)),
            assumptions=premise,
        )
