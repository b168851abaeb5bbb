"""H2O LLM Studio's loss-scaling rule: PC402 (the GradScaler its older releases create for bf16 too)."""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import quote, span
from ...rules.base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, rule

#: releases whose GradScaler ignored the dtype: ``scaler = GradScaler()`` in train.py at
#: v1.4.0/v1.4.1; v1.5.0 added ``mixed_precision_dtype`` and ``enabled=(... == "float16")``
#: (read at the tags, see the fact's note)
SCALER_ALWAYS_ON = span("h2o-llmstudio.scaler_always_on")


@rule(
    "PC402",
    "grad-scaler-under-bf16",
    Severity.ERROR,
    versions=(SCALER_ALWAYS_ON,),
    affects_latest=False,
    frameworks=("h2o-llmstudio",),
    fix_safety=FixSafety.UNSAFE,
)
def grad_scaler_under_bf16(ctx: Context) -> Iterator[Finding]:
    """
    Finds H2O LLM Studio runs whose GradScaler meets bf16 gradients.

    ## What it does
    Reports mixed precision with bf16 trainable weights (a LoRA run on a
    `backbone_dtype: bfloat16` backbone) for H2O LLM Studio versions that create the
    GradScaler whenever mixed precision is on. A cfg.yaml that has
    `mixed_precision_dtype` was saved by a release with the fix (the setting and the
    fix arrived together), so with no version known it is not reported.

    ## Why is this bad?
    Up to v1.4.1, `train.py` `run_train` created `GradScaler()` for every mixed-precision
    run and called `scaler.step(optimizer)`. torch's unscale kernel has no bf16
    instantiation (`aten/src/ATen/native/cuda/AmpKernels.cu`), so bf16 gradients crash:
    `"_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'`
    (h2oai/h2o-llmstudio#628). The fix, together with the `mixed_precision_dtype`
    setting (#672, after v1.4.0; first stored in commit 0c9afe46), is
    `GradScaler(enabled=(mixed_precision_dtype == "float16"))`, first released in v1.5.0
    (read at the tags: `train.py:184@v1.4.1` `scaler = GradScaler()`, `train.py:185@v1.5.0`).

    ## Example
    ```yaml
    architecture:
        backbone_dtype: bfloat16
    environment:
        mixed_precision: true
    training:
        lora: true
    ```
    Use instead (before the fix): `mixed_precision: false` (bf16 needs no loss scaling),
    or upgrade H2O LLM Studio.

    ## Fix
    Turn off the GradScaler under bf16: on an affected version set
    `environment.mixed_precision: false`; on a fixed one use
    `mixed_precision_dtype: bfloat16`, which disables it.
    """
    config = ctx.config
    amp_on = config.amp is None or bool(config.amp.value)
    # Affected versions autocast in fp16 whatever the file says; bf16 gradients came from
    # a bf16 backbone (PEFT of that time created LoRA weights in the base layer's dtype;
    # int4/int8 backbones had their other weights cast to fp32).
    bf16_backbone = config.torch_dtype is not None and config.torch_dtype.value == "bfloat16"
    # `mixed_precision_dtype` arrived with the fix: a file that has it was written by a
    # fixed release, which is the best guess when nothing else says which one runs it.
    written_by_fixed = config.amp_dtype is not None and ctx.versions.get("h2o-llmstudio") is None
    if not amp_on or not bf16_backbone or written_by_fixed or ctx.plan.override_of("autocast_dtype") is not None:
        return
    setting = config.amp or config.torch_dtype
    origin = anchor(config.path, *([setting.origin] if setting is not None else []))
    edits: tuple[Edit, ...] = ()
    if config.amp is not None:
        edits = (
            Edit(
                config.amp.origin.path or config.path,
                "environment.mixed_precision",
                False,
                config.amp.origin.line,
                format=config.amp.origin.format,
            ),
        )
    yield Finding(
        origin,
        "mixed precision creates a GradScaler whatever the dtype, and bf16 gradients crash it: "
        + quote("torch.unscale_bf16_cuda"),
        Fix("bf16 needs no loss scaling: turn the GradScaler off (upgrade, or disable mixed precision)", edits),
    )
