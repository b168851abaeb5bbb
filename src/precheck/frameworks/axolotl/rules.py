"""PC710-PC711: axolotl's precision traps.

Source: axolotl-ai-cloud/axolotl (main 00ce888, and 0.10.0+): ``utils/config/__init__.py``
``resolve_dtype`` (``bf16: auto`` resolution, then ``torch_dtype`` = bf16 ``if cfg.bf16 or
cfg.bfloat16`` before fp16 ``elif cfg.load_in_8bit or cfg.fp16 or cfg.float16``);
``core/builders/base.py`` ``_configure_precision_settings``: TrainingArguments ``fp16 =
(cfg.fp16 and not cfg.bf16) or False``, ``bf16 = cfg.bf16 or cfg.bfloat16`` (0.9.x: ``bf16 =
cfg.bf16``); transformers ``TrainingArguments.__post_init__`` (4.57 and 5.23): ``ValueError:
At most one of fp16 and bf16 can be True, but not both``. More in the framework's resolver.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...converters import is_on, to_bool
from ...facts import quote, span
from ...provenance import Sourced
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule

#: 0.10.0: TrainingArguments ``bf16 = cfg.bf16 or cfg.bfloat16`` (0.9.x: ``cfg.bf16``)
AXOLOTL_BFLOAT16_AUTOCASTS = span("axolotl.bfloat16_autocasts")


@rule("PC710", "axolotl-float16-ignored", Severity.WARNING, fix_safety=FixSafety.SAFE, frameworks=("axolotl",))
def axolotl_float16_ignored(ctx: Context) -> Iterator[Finding]:
    """
    Warns when axolotl's `float16: true` has no effect because bf16 wins.

    ## What it does
    Reports `float16: true` when axolotl loads the weights in bf16 anyway: `bf16: true`,
    `bfloat16: true`, or `bf16` left at its default `auto` on a GPU where
    `is_torch_bf16_gpu_available()` is true (every Ampere or newer GPU; with torch 2.3+ also
    older ones, which count emulation).

    ## Why is this bad?
    `resolve_dtype` (`axolotl/utils/config/__init__.py`) turns `bf16: auto` on when fp16 is
    not set and the GPU reports bf16, then picks the load dtype with `if cfg.bf16 or
    cfg.bfloat16: torch.bfloat16 elif cfg.load_in_8bit or cfg.fp16 or cfg.float16:
    torch.float16`. The file asks for fp16 weights; the run trains bf16 weights under bf16
    autocast, and nothing says so.

    ## Example
    ```yaml
    float16: true   # bf16 left at auto, on an A100
    ```
    Use instead:
    ```yaml
    float16: true
    bf16: false     # really fp16 weights (no loss scaling: see PC405)
    ```

    ## Fix
    Remove `float16` (it changes nothing), or set `bf16: false` if fp16 weights were
    meant. The removal keeps what the run does, so the fix is safe.
    """
    config = ctx.config
    item = config.keys.get("float16")  # a key only this rule reads: the file's own spelling
    flag = to_bool(item.value) if item is not None else None
    float16 = Sourced(flag, item.origin) if item is not None and flag is not None else None
    if not is_on(float16) or ctx.plan.load_dtype.value != "bfloat16":
        return
    assert float16 is not None
    if is_on(config.pure_bf16):
        winner, related = "`bfloat16: true`", config.pure_bf16
    elif is_on(config.bf16):
        winner, related = "`bf16: true`", config.bf16
    else:
        winner, related = "`bf16: auto` (the default), which the GPU's bf16 support turned on,", None
    yield Finding(
        float16.origin,
        f"`float16: true` has no effect: {winner} and resolve_dtype checks bf16 before float16, "
        "so the weights load in bf16 and train under bf16 autocast",
        Fix(
            "remove `float16` (or set `bf16: false` if fp16 weights were meant)",
            edits_for(float16, config.path, remove=True),
        ),
        related=(related.origin,) if related is not None else (),
    )


@rule(
    "PC711",
    "axolotl-fp16-with-bfloat16",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
    versions=(AXOLOTL_BFLOAT16_AUTOCASTS,),
    frameworks=("axolotl",),
)
def axolotl_fp16_with_bfloat16(ctx: Context) -> Iterator[Finding]:
    """
    Finds axolotl `fp16: true` with `bfloat16: true`, which hands TrainingArguments both flags.

    ## What it does
    Reports `fp16: true` together with `bfloat16: true` when `bf16` is not `true`
    (absent, `auto` or `false`), for axolotl 0.10.0 and later.

    ## Why is this bad?
    With fp16 set, `resolve_dtype` turns `bf16: auto` off, so fp16 survives. The trainer
    builder (`core/builders/base.py` `_configure_precision_settings`) then passes
    `fp16 = cfg.fp16 and not cfg.bf16` (true) and, from 0.10.0, `bf16 = cfg.bf16 or
    cfg.bfloat16` (true), and transformers' `TrainingArguments.__post_init__` stops the run:
    `ValueError: At most one of fp16 and bf16 can be True, but not both`. (With `bf16:
    true`, `resolve_dtype` drops fp16 instead and the run trains bf16.)

    ## Example
    ```yaml
    bfloat16: true
    fp16: true
    ```
    Use instead:
    ```yaml
    bfloat16: true
    ```

    ## Fix
    Drop `fp16`: `bfloat16: true` already trains bf16 weights under bf16 autocast. Use
    `fp16: true` alone (and `bfloat16: false`) for fp16 mixed precision on a GPU without
    bf16. The choice changes numerics, so the fix is marked unsafe.
    """
    config = ctx.config
    if not is_on(config.fp16) or not is_on(config.pure_bf16) or is_on(config.bf16):
        return
    assert config.fp16 is not None and config.pure_bf16 is not None
    yield Finding(
        config.fp16.origin,
        "`fp16: true` with `bfloat16: true`: axolotl passes TrainingArguments fp16=True and bf16=True "
        f'(bf16 = bf16 or bfloat16), which raises "ValueError: {quote("transformers.fp16_and_bf16")}"',
        Fix("drop fp16 (bfloat16: true already trains in bf16)", edits_for(config.fp16, config.path, False)),
        related=(config.pure_bf16.origin,),
    )


__all__ = ["axolotl_float16_ignored", "axolotl_fp16_with_bfloat16"]
