"""ms-swift's precision rule: PC201 (an explicit ``fp16: false`` overridden from ``torch_dtype``)."""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import span
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule, written
from ...rules.device import used_devices

#: the releases whose explicit ``--fp16 false`` lost to ``torch_dtype``
OVERRIDES_FLAGS = span("ms-swift.overrides_flags")


@rule(
    "PC201",
    "fp16-flag-overridden-by-torch-dtype",
    Severity.ERROR,
    versions=(OVERRIDES_FLAGS,),
    affects_latest=False,
    frameworks=("ms-swift",),
    fix_safety=FixSafety.UNSAFE,
)
def fp16_flag_overridden_by_torch_dtype(ctx: Context) -> Iterator[Finding]:
    """
    Finds an explicit `fp16: false` that ms-swift overrides from `torch_dtype`.

    ## What it does
    In ms-swift 3.0.0 to 3.3.0.post1, `ModelArguments._init_torch_dtype`
    (`swift/llm/argument/base_args/model_args.py`) runs
    `if self.torch_dtype in {torch.float16, torch.float32}: self.fp16, self.bf16 = True, False`
    for every training run, whatever the user passed: `fp16` was a plain bool, so an
    explicit false looked like the default. The forced flag reaches TrainingArguments,
    which exports `ACCELERATE_MIXED_PRECISION=fp16`. Fixed in 3.3.1 (PR #3909, issue
    #3896): flags became `Optional[bool]` and explicit values are kept.

    ## Why is this bad?
    The run trains with fp16 autocast although the config says it does not. With
    `torch_dtype: float16` the weights are fp16 as well; fp16's range (about 6e-8 to
    65504) overflows and the loss goes NaN (the seed: a V100 run with
    `--torch_dtype float16 --fp16 false`). A V100 has no bf16 either, so bf16 is not
    the way out there.

    ## Example
    ```yaml
    torch_dtype: float16
    fp16: false
    ```
    Use instead (ms-swift ≥ 3.3.1 keeps the flag):
    ```yaml
    torch_dtype: float32
    fp16: false
    ```

    ## Fix
    Upgrade to ms-swift 3.3.1 or later and use `torch_dtype: float32` with
    `fp16: false` (full fp32). On an affected version float32 forces fp16 AMP too, so
    the honest configuration there is fp16 AMP with fp32 weights: `torch_dtype: float32`
    and `fp16: true` (dynamic loss scaling keeps it stable).
    """
    config = ctx.config
    fp16, dtype = config.fp16, config.torch_dtype
    if fp16 is None or fp16.value or dtype is None or dtype.value not in ("float16", "float32"):
        return
    no_bf16 = [d for d in used_devices(ctx) if not d.bf16] if ctx.hardware.known else []
    tail = f"; {no_bf16[0].name} has no bf16 either, so fp32 weights are the safe choice" if no_bf16 else ""
    path = dtype.origin.path or config.path
    yield Finding(
        dtype.origin,
        f"`{written(dtype)}` forces fp16 mixed precision on and the explicit "
        f"`{written(fp16)}` (line {fp16.origin.line}) is ignored: the run trains in fp16{tail}",
        Fix(
            "upgrade to ms-swift>=3.3.1 and train in fp32; on this version accept fp16 AMP with fp32 weights",
            (
                *edits_for(dtype, path, "float32"),
                *edits_for(fp16, path, True),
            ),
        ),
        related=(fp16.origin,),
    )
