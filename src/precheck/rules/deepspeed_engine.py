"""PC606-PC610, PC613: what the DeepSpeed engine refuses or does with the dtypes a config sets.

Which file the rules read: :mod:`precheck.rules.deepspeed_file`.

DeepSpeed facts (deepspeedai/DeepSpeed master, read 2026; the resolver
:mod:`precheck.resolve.deepspeed_engine` records the engine's decisions and refusals as plan fields
and ``plan.overrides``, which these rules read):

- ``runtime/config_utils.py`` ``DeepSpeedConfigModel.__init__`` drops ``"auto"`` values of its
  pydantic sections (``fp16``, ``bf16``, ``zero_optimization``...), so their defaults apply;
  top-level scalars are read with ``get_scalar_param`` (``dict.get``) and stay the string
  ``"auto"``: ``DeepSpeedConfig._batch_assertion`` then fails on ``train_batch > 0`` with
  ``TypeError: '>' not supported between instances of 'str' and 'int'``.
- ``engine.py`` ``communication_data_type``: the config value, else fp16 if fp16, bf16 if bf16,
  else fp32. ``get_data_types``: ``data_types.grad_accum_dtype`` defaults to the model dtype
  (up to 0.17.5: fp32 for bf16 without ZeRO). ``_do_optimizer_sanity_check`` warns "**** BF16
  gradient accumulation is not safe numerically with large number of accumulation steps,
  proceed with caution *****" (pipeline case); ZeRO accumulates in ``grad_accum_dtype``
  (``stage_1_and_2.py`` / ``stage3.py``: ``grad_buffer.add_(...)`` in
  ``gradient_accumulation_dtype``) and takes ``fp32`` there since PR #2847 ("ZeRO Gradient
  Accumulation Dtype"); issues #1800 and #2768 report divergence from bf16 accumulation.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..config import TrainingConfig
from ..facts import quote, span
from ..plan import OverrideKind
from ..provenance import Sourced
from .base import Context, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from .deepspeed_file import DS_DTYPE, deepspeed_config, launcher
from .setting_text import key_of, located

#: micro-batches per step from which bf16 accumulation is reported (PC607): DeepSpeed warns of
#: "large number of accumulation steps" without a number; every bf16 addition rounds the running
#: sum to 8 significant bits, and with 16 or more additions the rounding of partial sums that
#: cancel (micro-batch gradients differ in sign) is no longer small against the final sum.
#: 2-8 steps, the common fine-tuning setting, are left alone (one to a few roundings).
MANY_STEPS = 16


# --- PC606 --------------------------------------------------------------------------------


@rule("PC606", "ds-apex-amp-conflict", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_apex_amp_conflict(ctx: Context) -> Iterator[Finding]:
    """
    Finds DeepSpeed's apex `amp` section combined with ZeRO or with fp16/bf16 mode.

    ## What it does
    Reports `amp.enabled: true` in a DeepSpeed file whose ZeRO stage is above 0, or whose
    `fp16`/`bf16` mode is on (after the launcher filled `"auto"`). Every release refuses it:
    see below. An `amp` key in any other form is PC613 (DeepSpeed 0.19.8 and later).

    ## Why is this bad?
    Up to 0.19.7 `DeepSpeedEngine._do_optimizer_sanity_check`
    (`runtime/engine.py:2260-2282@0.19.7`) asserts `Amp and ZeRO are not currently
    compatible, please use (legacy) fp16 mode which performs similar to amp opt_mode=O2`
    with ZeRO and raises `NotImplementedError: Cannot enable both amp with (legacy) fp16 or
    bfloat16 mode` with fp16/bf16. From 0.19.8 `_reject_removed_config_keys`
    (`runtime/config.py:88,136@0.19.8`) refuses the `amp` key itself. The engine is never built.

    ## Example
    ```json
    {"amp": {"enabled": true, "opt_level": "O1"}, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Turn apex AMP off (from 0.19.8 delete the `amp` section) and use DeepSpeed's own fp16
    (or bf16) mode, which keeps fp32 master weights like apex O2; or drop ZeRO.
    """
    ds = deepspeed_config(ctx)
    if ds is None:
        return
    for override in ctx.plan.overrides:
        if override.field != "amp":
            continue
        amp = override.loser
        if override.kind is OverrideKind.AMP_AND_ZERO:
            stage = f"ZeRO stage {override.winner.value}{located(override.winner)}"
            text = f'with {stage} DeepSpeed asserts "{override.error}"'
        elif override.kind is OverrideKind.AMP_AND_HALF:
            mode = "fp16" if key_of(override.winner).startswith("fp16") else "bf16"
            text = (
                f'with {mode} mode{located(override.winner)} DeepSpeed raises NotImplementedError("{override.error}")'
            )
        else:
            continue
        edits = edits_for(amp, ds.path, False)
        if override.kind is OverrideKind.AMP_AND_ZERO and ds.fp16 is not None:
            edits = (*edits, *edits_for(ds.fp16, ds.path, True))
        yield Finding(
            anchor(ds.path, amp.origin),
            f"apex AMP (`{key_of(amp)}`) cannot run here: {text} (_do_optimizer_sanity_check; "
            "from 0.19.8 the `amp` key itself is refused)",
            Fix("turn apex AMP off and use DeepSpeed's fp16/bf16 mode (fp32 master weights, like apex O2)", edits),
            related=(override.winner.origin,) if override.winner.origin.in_file else (),
        )


@rule(
    "PC613",
    "ds-amp-key-removed",
    Severity.ERROR,
    versions=(span("deepspeed.amp_removed"),),
    affects_latest=False,
    fix_safety=FixSafety.UNSAFE,
)
def ds_amp_key_removed(ctx: Context) -> Iterator[Finding]:
    """
    Finds an `amp` key in a DeepSpeed config, which DeepSpeed 0.19.8 and later refuse.

    ## What it does
    Reports a top-level `amp` section, enabled or not, with or without ZeRO, that PC606 has
    not already reported. An error with DeepSpeed 0.19.8 or later; a warning when the
    version is not known (every earlier release accepts the section when it is off or used
    without ZeRO and fp16/bf16).

    ## Why is this bad?
    0.19.8 removed the apex integration: `_reject_removed_config_keys`
    (`runtime/config.py:88,136@0.19.8`) raises `DeepSpeedConfigError: NVIDIA Apex AMP
    integration has been removed. Use DeepSpeed 'fp16', 'bf16', or 'torch_autocast'
    instead.` while reading the config, before anything is built.

    ## Example
    ```json
    {"amp": {"enabled": false}, "fp16": {"enabled": true}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true}}
    ```

    ## Fix
    Delete the `amp` section; use DeepSpeed's fp16 (or bf16) mode.
    """
    ds = deepspeed_config(ctx)
    if ds is None:
        return
    section = ds.setting("amp")
    if section is None or not section.origin.in_file or any(o.field == "amp" for o in ctx.plan.overrides):
        return
    yield Finding(
        anchor(ds.path, section.origin),
        f'`amp` is refused while DeepSpeed reads the config: "{quote("deepspeed.amp_removed")}" '
        "(_reject_removed_config_keys)",
        Fix("delete the `amp` section; use DeepSpeed's fp16/bf16 mode (fp32 master weights, like apex O2)"),
    )


# --- PC607 --------------------------------------------------------------------------------


def _accumulation_steps(ctx: Context, ds: TrainingConfig) -> Sourced[int] | None:
    """Micro-batches accumulated per optimizer step, where a file says."""
    if ds.grad_accum_steps is not None and ds.grad_accum_steps.value is not None:
        return ds.grad_accum_steps
    if ds is not ctx.config and launcher(ctx) in ("fills", "keeps"):
        return ctx.config.grad_accum_steps  # the launcher writes it into the DeepSpeed config
    return None


@rule("PC607", "ds-bf16-grad-accumulation", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def ds_bf16_grad_accumulation(ctx: Context) -> Iterator[Finding]:
    """
    Warns when DeepSpeed accumulates gradients in bf16 across 16 or more micro-batches.

    ## What it does
    Reports a DeepSpeed run whose gradient accumulation dtype is bf16 (an explicit
    `data_types.grad_accum_dtype: bf16`, or DeepSpeed's default for a bf16 model: ZeRO
    stages 1-3, and from 0.17.6 also without ZeRO) while 16 or more micro-batches are
    accumulated per step (`gradient_accumulation_steps`, in the DeepSpeed file or filled
    from the training arguments). Fewer steps (the usual 2-8 of a fine-tune) cost a few
    roundings and are not reported.

    ## Why is this bad?
    bf16 keeps 8 significant bits: adding a micro-batch's gradient to a running bf16 sum
    rounds away the low bits of the smaller one each time, and the error grows with the
    number of micro-batches. DeepSpeed's own engine warns "**** BF16 gradient accumulation
    is not safe numerically with large number of accumulation steps, proceed with caution
    *****" (`_do_optimizer_sanity_check`, pipeline case), and its issues #1800 ("ZeRO/bf16
    grad accumulation in bf16 needs fixing") and #2768 ("Training occasionally diverges when
    I train in BF16 with ZeRO enabled because accumulation is also done in BF16") describe
    the effect. `get_data_types` defaults `grad_accum_dtype` to the model dtype.

    ## Example
    ```json
    {"bf16": {"enabled": true}, "gradient_accumulation_steps": 16, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true}, "gradient_accumulation_steps": 16, "zero_optimization": {"stage": 2},
     "data_types": {"grad_accum_dtype": "fp32"}}
    ```

    ## Fix
    With ZeRO set `data_types.grad_accum_dtype: fp32` (every stage accepts it since
    PR #2847; ZeRO-1 without offload then uses `BF16_Optimizer`). Without ZeRO, DeepSpeed
    accepts it through 0.18.4 (`BF16_Optimizer`, `runtime/engine.py:1476-1477@0.18.4`) and
    refuses it from 0.18.5 ("unsupported mix", `runtime/engine.py:1498-1499@0.18.5`): there
    use ZeRO stage 1. Costs 4 bytes per parameter of gradient memory.
    """
    ds = deepspeed_config(ctx)
    accum = ctx.plan.grad_accum_dtype
    if ds is None or accum is None or accum.value != "bfloat16":
        return
    steps = _accumulation_steps(ctx, ds)
    if steps is None or not isinstance(steps.value, int) or steps.value < MANY_STEPS:
        return
    if ctx.plan.override_of("grad_accum_dtype") is not None:
        return  # the engine refuses the combination: PC609
    explicit = ds.grad_accum_dtype
    zero = ds.zero_stage is not None and ds.zero_stage.value > 0
    edits = edits_for(explicit, ds.path, "fp32") if explicit is not None and zero else ()
    origin = anchor(ds.path, *(o.origin for o in (explicit, steps) if o is not None), accum.origin)
    place = located(steps) if steps.origin != origin else ""
    yield Finding(
        origin,
        f"{steps.value} micro-batches{place} are accumulated into bf16 gradients "
        f"({'data_types.grad_accum_dtype: bf16' if explicit is not None else 'DeepSpeed default for a bf16 model'}): "
        "each addition rounds to 8 significant bits, and DeepSpeed itself warns that "
        f'"{quote("deepspeed.bf16_accumulation_warning")}"',
        Fix(
            "accumulate in fp32: `data_types.grad_accum_dtype: fp32` (without ZeRO only on deepspeed<0.18.5; "
            "from 0.18.5 add ZeRO stage 1)",
            edits,
        ),
        related=(steps.origin,) if steps.origin.in_file and steps.origin != origin else (),
    )


# --- PC608 --------------------------------------------------------------------------------


@rule("PC608", "ds-low-precision-reduce", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def ds_low_precision_reduce(ctx: Context) -> Iterator[Finding]:
    """
    Warns when `communication_data_type` all-reduces gradients in a 16-bit format that loses their range or bits.

    ## What it does
    Reports an explicit `communication_data_type` of `fp16` for bf16 or fp32 gradients, or of
    `bf16` for fp16 or fp32 gradients. The default (the model's own dtype: fp16 under fp16,
    bf16 under bf16, fp32 otherwise) is not reported.

    ## Why is this bad?
    `DeepSpeedEngine.communication_data_type` (`deepspeed/runtime/engine.py`) returns the
    configured value before the model dtype, and the ZeRO optimizers cast each gradient
    bucket to it before the reduce. fp16 holds magnitudes between about 6e-8 and 65504:
    bf16 or fp32 gradients carry no loss scale, so small ones flush to zero and large ones
    become inf. bf16 keeps 8 significant bits against fp16's 11 and fp32's 24: every
    gradient loses precision in the sum over ranks. accelerate sets
    `communication_data_type: fp32` itself for bf16 DeepSpeed runs on ROCm because of the
    overflow path ("bf16 DeepSpeed training can silently produce NaN weights",
    `DeepSpeedPlugin.set_mixed_precision`).

    ## Example
    ```json
    {"bf16": {"enabled": true}, "communication_data_type": "fp16", "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true}, "communication_data_type": "fp32", "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    `communication_data_type: fp32` (twice the reduce traffic), or remove the key to reduce
    in the gradients' own dtype.
    """
    ds = deepspeed_config(ctx)
    if ds is None or ds.communication_dtype is None:
        return
    comm, grads = ds.communication_dtype.value, ctx.plan.grad_dtype.value
    if comm == "float16" and grads in ("bfloat16", "float32"):
        why = (
            f"{DS_DTYPE[grads]} gradients carry no loss scale, and fp16 flushes magnitudes below ~6e-8 to zero "
            "and turns those above 65504 into inf"
        )
    elif comm == "bfloat16" and grads in ("float16", "float32"):
        why = f"bf16 keeps 8 significant bits of the {DS_DTYPE[grads]} gradients ({11 if grads == 'float16' else 24})"
    else:
        return
    item = ds.communication_dtype
    yield Finding(
        item.origin,
        f"`{key_of(item)}: {DS_DTYPE[comm]}` all-reduces {DS_DTYPE[grads]} gradients in {DS_DTYPE[comm]}: {why}",
        Fix("reduce in fp32 (or remove the key to reduce in the gradients' dtype)", edits_for(item, ds.path, "fp32")),
        related=(ctx.plan.grad_dtype.origin,) if ctx.plan.grad_dtype.origin.in_file else (),
    )


# --- PC609 --------------------------------------------------------------------------------


@rule("PC609", "ds-grad-accum-dtype-unsupported", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_grad_accum_dtype_unsupported(ctx: Context) -> Iterator[Finding]:
    """
    Finds a `data_types.grad_accum_dtype` DeepSpeed refuses without ZeRO.

    ## What it does
    Reports `data_types.grad_accum_dtype` differing from the model dtype (fp16/bf16/fp32
    mode) in a DeepSpeed run without ZeRO, where the engine has no optimizer for the mix
    (bf16 with fp32 accumulation is accepted through 0.18.4).

    ## Why is this bad?
    `DeepSpeedEngine._do_optimizer_sanity_check` (`deepspeed/runtime/engine.py`) picks an
    optimizer wrapper by dtype pair and raises `NotImplementedError: unsupported mix of
    model_dtype=torch.bfloat16 and grad_accum_dtype=torch.float32` (0.17.6+; older:
    "unsupported mix of model dtype and gradient accumulation type") for any pair it lacks.
    bf16 with fp32 accumulation keeps its `BF16_Optimizer` branch through 0.18.4
    (`runtime/engine.py:1476-1477@0.18.4`); 0.18.5 removed it (`runtime/engine.py:1498-1499@0.18.5`),
    so there it is only reachable through ZeRO stage 1.

    ## Example
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 0}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 1}}
    ```

    ## Fix
    bf16 with fp32 accumulation: ZeRO stage 1 (`BF16_Optimizer`). Otherwise remove
    `grad_accum_dtype` (it defaults to the model dtype).
    """
    ds = deepspeed_config(ctx)
    override = ctx.plan.override_of("grad_accum_dtype")
    if ds is None or override is None or override.kind is not OverrideKind.UNSUPPORTED_MIX:
        return
    explicit = override.loser
    model = override.winner.value
    wants_fp32_bf16 = model == "bfloat16" and explicit.value == "float32"
    if wants_fp32_bf16 and ds.zero_stage is not None:
        fix = Fix("use ZeRO stage 1, which accumulates bf16 gradients in fp32", edits_for(ds.zero_stage, ds.path, 1))
    else:
        fix = Fix(
            f"accumulate in the model dtype ({DS_DTYPE.get(str(model), model)})",
            edits_for(explicit, ds.path, DS_DTYPE.get(str(model), model)),
        )
    tail = f"[{override.basis}]" if override.basis else ""
    yield Finding(
        anchor(ds.path, explicit.origin),
        f"`{key_of(explicit)}: {DS_DTYPE.get(str(explicit.value), explicit.value)}` with a "
        f"{DS_DTYPE.get(str(model), model)} model and no ZeRO: DeepSpeed raises NotImplementedError"
        f'("{override.error or "unsupported mix"}") (_do_optimizer_sanity_check) {tail}'.rstrip(),
        fix,
    )


# --- PC610 --------------------------------------------------------------------------------


@rule("PC610", "ds-dead-fp16-loss-scale", Severity.INFO)
def ds_dead_fp16_loss_scale(ctx: Context) -> Iterator[Finding]:
    """
    Notes fp16 loss-scale settings in a DeepSpeed run that does not train in fp16.

    ## What it does
    Reports an `fp16.loss_scale` other than 0 or an `fp16.initial_scale_power` other than
    16 when the run has no loss scaling (bf16 or fp32 training). A file checked on its own
    whose `fp16.enabled` is `"auto"` is not reported (the launcher decides).

    ## Why is this bad?
    Only fp16 scales the loss: `LossScaleConfig`/`CreateLossScaler` use grad scaling only
    for `low_precision_dtype == torch.float16`, and bf16 keeps a scale of 1.0. A tuned
    scale in a bf16 run does nothing, which misleads whoever reads the file into thinking
    overflow is being managed.

    ## Example
    ```json
    {"fp16": {"enabled": false, "initial_scale_power": 32}, "bf16": {"enabled": true}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": false}, "bf16": {"enabled": true}}
    ```

    ## Fix
    Nothing breaks. Remove the settings, or keep them if the same file also serves fp16
    runs (the usual `"enabled": "auto"` template).
    """
    ds = deepspeed_config(ctx)
    if ds is None or ctx.plan.loss_scaling.value != "none":
        return
    if launcher(ctx) == "standalone" and any(item.value == "fp16.enabled" for item in ds.auto_keys):
        return
    mode = "bf16" if ctx.plan.uses_bf16 else "fp32"
    for item, default in ((ds.loss_scale, 0.0), (ds.initial_scale_power, 16.0)):
        if item is None or item.value == default or not item.origin.in_file:
            continue
        yield Finding(
            item.origin,
            f"`{key_of(item)}: {item.value:g}` has no effect: this run trains in {mode}, and DeepSpeed scales the "
            "loss only in fp16 (CreateLossScaler)",
            Fix("remove it, or keep it if the file also serves fp16 runs"),
        )
