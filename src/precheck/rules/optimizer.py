"""PC3xx: optimizers and the dtypes of the gradients and weights they are fed."""

from __future__ import annotations

from collections.abc import Iterator

from ..resolve.simpletuner import BF16_OPTIMIZERS, KEEPS_FP32_GRADIENTS
from ..versions import VersionRange
from .base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule


def _bf16_optimizer_with_fp32_gradients(ctx: Context) -> bool:
    config = ctx.config
    optimizer = str(config.optimizer.value) if config.optimizer else ""
    precision = str(config.gradient_precision.value).lower() if config.gradient_precision else ""
    return optimizer in BF16_OPTIMIZERS and precision == "fp32"


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
    `AdamWBF16.step()` (`helpers/training/optimizers/adamw_bfloat16/__init__.py`) is
    written for bf16 models only and asserts on the first step:
    `AssertionError: only bfloat 16 is supported.` The 2024 git versions of SimpleTuner
    cast every gradient to fp32 after backward when `gradient_precision` is fp32, and the
    run died on that assertion or on "Expected BFloat16, got Float"
    (bghira/SimpleTuner#755, #854). Every PyPI release (2.2.0 and later) rewrites
    `gradient_precision: fp32` to `unmodified` instead; which git tags between v1.0
    (August 2024, affected) and 2.2.0 first did so is not verified, so this rule counts
    all of them as affected.

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
    gradients with an optimizer that takes them (e.g. Adafactor or `optimi-adamw` with
    fp32 weights).
    """
    if not _bf16_optimizer_with_fp32_gradients(ctx):
        return
    precision = ctx.config.gradient_precision
    optimizer = ctx.config.optimizer
    assert precision is not None and optimizer is not None
    yield Finding(
        precision.origin,
        f"`{optimizer.value}` updates bf16 weights only and fails with "
        '"AssertionError: only bfloat 16 is supported." once gradients are cast to fp32',
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
