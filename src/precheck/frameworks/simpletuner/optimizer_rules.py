"""SimpleTuner's optimizer rules: PC301, PC302 (``gradient_precision``) and PC306 (``adamw_bf16``
over weights that are not bf16).

Sources: bghira/SimpleTuner ``helpers/training/optimizers/adamw_bfloat16/__init__.py``
``AdamWBF16.step``: ``assert p.dtype == torch.bfloat16, "only bfloat 16 is supported."``;
``optimizer_param.determine_optimizer_class_with_config`` swaps ``adamw_bf16`` for
``optimi-adamw`` only for a quantised base model whose weight dtype is not bf16 ("When
--base_model_default_dtype=fp32, AdamWBF16 may not be used. Switching to AdamW.").
"""

from __future__ import annotations

from collections.abc import Iterator

from ...config import TrainingConfig
from ...facts import quote, span
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from ...rules.optimizer_support import optimizer_name, setting
from ...versions import VersionRange

#: versions that honour gradient_precision=fp32 for every optimizer
KEEPS_FP32_GRADIENTS = VersionRange("simpletuner", None, span("simpletuner.rewrites_fp32_gradients").low)


def _bf16_optimizer_with_fp32_gradients(ctx: Context) -> bool:
    config = ctx.config
    optimizer = str(config.optimizer.value) if config.optimizer else ""
    precision = str(config.gradient_precision.value).lower() if config.gradient_precision else ""
    return optimizer in config.traits.bf16_optimizers and precision == "fp32"


@rule(
    "PC301",
    "bf16-optimizer-fp32-gradients",
    Severity.ERROR,
    versions=(KEEPS_FP32_GRADIENTS,),
    affects_latest=False,
    frameworks=("simpletuner",),
    fix_safety=FixSafety.SAFE,
)
def bf16_optimizer_fp32_gradients(ctx: Context) -> Iterator[Finding]:
    """
    Finds SimpleTuner's bf16-only optimizer paired with fp32 gradients.

    ## What it does
    Reports `optimizer: adamw_bf16` (formerly `adam_bfloat16`) together with
    `gradient_precision: fp32` for SimpleTuner versions that honour that setting.

    ## Why is this bad?
    The two settings contradict each other. With `gradient_precision: fp32` the 2024
    training loop (`main()` in the August 2024 `train.py`; `Trainer.train` in
    `helpers/training/trainer.py`, e.g. bghira/SimpleTuner@00fd561) runs
    `param.grad.data = param.grad.data.to(torch.float32)` for every trainable parameter
    after each `accelerator.backward(loss)`; the weights keep their dtype. The test meant
    to skip the bf16 optimizer looks for the old spelling (`not args.adam_bfloat16`, the
    deprecated boolean flag, in `train.py`; `optimizer != "adam_bfloat16"` in
    `trainer.py`), so `optimizer: adamw_bf16` still gets fp32 gradients.
    `AdamWBF16` keeps `exp_avg`, `exp_avg_sq` and its rounding `shift` as `zeros_like(p)`
    (bf16) and rounds the fp32 gradients into them at every step: the fp32 copy of every
    gradient costs memory and buys only fp32 accumulation across micro-batches.

    The seed run (bghira/SimpleTuner#755, August 2024, gradient checkpointing on) died on
    its first step with `AssertionError: only bfloat 16 is supported.`; the advice (per the
    seed write-up) was to drop `--gradient_precision=fp32`. That assertion (`AdamWBF16.step`,
    `helpers/training/adam_bfloat16/__init__.py` line 67 at bghira/SimpleTuner@12f2b41) tests
    the parameter's dtype when its state is created, not the gradient's: a gradient cast
    alone does not raise it (`precheck smoke` of the seed passes), a trainable weight that
    is not bf16 does (PC306). Later versions' `parse_cmdline_args`
    (`helpers/configuration/cmd_args.py`, already at bghira/SimpleTuner@01beb97, before
    the PyPI package) rewrite `gradient_precision: fp32` to `unmodified` for optimizers
    whose table entry does not ask for fp32 gradients (PC302); which tag first did so is
    not verified, so this rule counts every version before 2.2.0 as affected.

    ## Example
    ```json
    {"--optimizer": "adamw_bf16", "--gradient_precision": "fp32"}
    ```
    Use instead:
    ```json
    {"--optimizer": "adamw_bf16"}
    ```

    ## Fix
    Remove `gradient_precision` (bf16 gradients for the bf16 optimizer), or keep fp32
    gradients with an optimizer whose states are not bf16-only (e.g. `optimi-adamw`; the
    August 2024 optimizer table already lists `adafactor` as removed).
    """
    if not _bf16_optimizer_with_fp32_gradients(ctx):
        return
    precision = ctx.config.gradient_precision
    optimizer = ctx.config.optimizer
    assert precision is not None and optimizer is not None
    yield Finding(
        precision.origin,
        f"`{optimizer.value}` keeps bf16 weights and bf16 states, yet SimpleTuner casts its gradients to "
        "fp32 after backward: they are only rounded back into bf16 (bghira/SimpleTuner#755 ran this "
        f'pair and died with "AssertionError: {quote("simpletuner.adamw_bf16_only")}")',
        Fix(
            "drop fp32 gradients for the bf16 optimizer",
            edits_for(precision, ctx.config.path, remove=True),
        ),
        related=(optimizer.origin,),
    )


@rule(
    "PC302",
    "gradient-precision-ignored",
    Severity.INFO,
    versions=(VersionRange("simpletuner", KEEPS_FP32_GRADIENTS.high),),
    frameworks=("simpletuner",),
    fix_safety=FixSafety.SAFE,
)
def gradient_precision_ignored(ctx: Context) -> Iterator[Finding]:
    """
    Notes a `gradient_precision: fp32` that SimpleTuner silently drops.

    ## What it does
    Reports `gradient_precision: fp32` in SimpleTuner 2.2.0 and later.

    ## Why is this bad?
    `parse_cmdline_args` (`helpers/configuration/cmd_args.py`) keeps fp32 gradients only
    for optimizers whose table entry asks for them (`is_optimizer_grad_fp32`), and no
    optimizer in the table does; for the rest it sets
    `args.gradient_precision = "unmodified"` without a message. The config claims fp32
    gradient accumulation the run does not do.

    ## Example
    ```json
    {"gradient_precision": "fp32"}
    ```
    Use instead: remove the key.

    ## Fix
    Remove `gradient_precision`.
    """
    precision = ctx.config.gradient_precision
    if precision is None or str(precision.value).lower() != "fp32" or _bf16_optimizer_with_fp32_gradients(ctx):
        return
    yield Finding(
        precision.origin,
        "SimpleTuner rewrites `gradient_precision: fp32` to `unmodified` for every optimizer it ships: "
        "this setting has no effect",
        Fix(
            "remove the setting",
            edits_for(precision, ctx.config.path, remove=True),
        ),
    )


# --- PC306 ---------------------------------------------------------------------------------


def _quantised_base(config: TrainingConfig) -> bool:
    item = setting(config, "base_model_precision")
    return item is not None and str(item.value).strip().lower() not in ("", "no_change", "none", "null")


@rule(
    "PC306", "bf16-optimizer-non-bf16-weights", Severity.ERROR, frameworks=("simpletuner",), fix_safety=FixSafety.UNSAFE
)
def bf16_optimizer_non_bf16_weights(ctx: Context) -> Iterator[Finding]:
    """
    Finds SimpleTuner's `adamw_bf16` over weights that are not bf16 (`mixed_precision` fp16 or no).

    ## What it does
    Reports `optimizer: adamw_bf16` (formerly `adam_bfloat16`) when `mixed_precision` makes
    the trained weights float16 or float32 and the base model is not quantised
    (`base_model_precision` unset or `no_change`). PC301 covers fp32 gradients on bf16
    weights.

    ## Why is this bad?
    SimpleTuner casts the model to its weight dtype (bf16 → bfloat16, fp16 → float16,
    otherwise float32). `AdamWBF16.step` (`helpers/training/optimizers/adamw_bfloat16`)
    asserts on the first step: `AssertionError: only bfloat 16 is supported.`
    `determine_optimizer_class_with_config` swaps the optimizer for `optimi-adamw` only for a
    quantised base model ("When --base_model_default_dtype=fp32, AdamWBF16 may not be used.
    Switching to AdamW."), not for these weights.

    ## Example
    ```json
    {"optimizer": "adamw_bf16", "mixed_precision": "no"}
    ```
    Use instead:
    ```json
    {"optimizer": "optimi-adamw", "mixed_precision": "no"}
    ```

    ## Fix
    `optimizer: optimi-adamw` (any dtype, Kahan summation for bf16), or `mixed_precision:
    bf16` on a GPU with bf16.
    """
    config = ctx.config
    name = optimizer_name(config)
    if name is None or name not in config.traits.bf16_optimizers or ctx.plan.param_dtype.value == "bfloat16":
        return
    if _quantised_base(config) or config.zero_stage is not None or "deepspeed" in config.attached:
        return  # quantised: SimpleTuner switches the optimizer; DeepSpeed: DummyOptim
    item = config.optimizer
    assert item is not None
    params = ctx.plan.param_dtype
    yield Finding(
        anchor(config.path, item.origin),
        f"`{name}` only steps bfloat16 weights, and this run trains {params.value} weights "
        f'({params.origin}): the first step fails with "AssertionError: {quote("simpletuner.adamw_bf16_only")}"',
        Fix("use an optimizer that takes any dtype", edits_for(item, config.path, "optimi-adamw")),
        related=(params.origin,) if params.origin.in_file else (),
    )
