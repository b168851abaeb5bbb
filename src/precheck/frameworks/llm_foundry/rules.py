"""PC716: a ``precision`` or ``fsdp_config.mixed_precision`` Composer refuses.

Source: Composer (``mosaicml``) 0.32.1: ``composer/core/precision.py`` ``Precision``
(``StringEnum``: ``fp32``, ``amp_fp16``, ``amp_bf16``, ``amp_fp8``, any case), whose
``_missing_`` (``composer/utils/string_enum.py:116``) raises ``ValueError: Value bf16 not found
in Precision``; ``get_mixed_precision`` (``composer/distributed/mosaic_parallelism.py:87``) raises
``ValueError: Unable to interpret mixed_precision=HALF``. The accepted values are read from the
release data (``scripts/extract_schema.py``), not written here.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import quote
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule
from .label import NAME, TRAINER
from .modes import fsdp_dtypes, mixed_precision, precision
from .schema import values


@rule("PC716", "composer-precision-refused", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=(NAME,))
def composer_precision_refused(ctx: Context) -> Iterator[Finding]:
    """
    Finds an llm-foundry `precision` (or `fsdp_config.mixed_precision`) that Composer refuses.

    ## What it does
    Reports a training YAML whose `precision` is not one of Composer's `Precision` values
    (`fp32`, `amp_fp16`, `amp_bf16`, `amp_fp8`: `bf16`, `fp16`, `bfloat16` are not), or whose
    `fsdp_config.mixed_precision` is a string other than `FULL`, `DEFAULT` or `PURE`.

    ## Why is this bad?
    llm-foundry hands `precision` to Composer's `Trainer`, which converts it with
    `Precision(precision)`: `ValueError: Value bf16 not found in Precision` before the first
    step. `get_mixed_precision` (`composer/distributed/mosaic_parallelism.py`) raises
    `ValueError: Unable to interpret mixed_precision=...` while wrapping the model in FSDP.

    ## Example
    ```yaml
    precision: bf16
    ```
    Use instead:
    ```yaml
    precision: amp_bf16
    ```

    ## Fix
    Write one of Composer's values. Which one changes the run's numerics, so the fix is unsafe.
    """
    config = ctx.config
    version = ctx.versions.get(NAME)
    release = version.version if version is not None else None
    valid = values("precision", release)
    item, mode = precision(config, ctx.versions)
    if mode is None and item.origin.in_file:
        yield Finding(
            item.origin,
            f"`precision: {item.value}` is not a {TRAINER} precision: "
            f'"ValueError: {quote("composer.precision_not_found", value=item.value, cls="Precision")}" '
            f"({', '.join(valid)} are)",
            Fix(f"write one of {', '.join(valid)}", edits_for(item, config.path, "amp_bf16")),
        )
    mixed = mixed_precision(config)
    if mixed is None or not mixed.origin.in_file or mode is None:
        return
    if isinstance(mixed.value, (str, dict)) and fsdp_dtypes(mode, mixed) is not None:
        return
    words = ", ".join(str(v) for v in values("fsdp_config.mixed_precision", release))
    yield Finding(
        mixed.origin,
        f"`fsdp_config.mixed_precision: {mixed.value}` is refused by {TRAINER}: "
        f'"ValueError: {quote("composer.mixed_precision_unknown", mixed_precision=str(mixed.value).upper())}" '
        f"({words}, or a mapping of dtypes, are read)",
        Fix(f"write one of {words}", edits_for(mixed, config.path, "DEFAULT")),
    )


__all__ = ["composer_precision_refused"]
