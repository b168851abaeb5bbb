"""PC716: a ``precision`` or ``fsdp_config.mixed_precision`` Composer refuses.

Source: Composer (``mosaicml``) 0.32.1: ``composer/core/precision.py`` ``Precision``
(``StringEnum``: ``fp32``, ``amp_fp16``, ``amp_bf16``, ``amp_fp8``, any case;
``composer/utils/string_enum.py:116`` raises ``ValueError(f'Value {value} not found in
{cls.__name__}')``), ``composer/distributed/mosaic_parallelism.py:87``
(``ValueError(f'Unable to interpret mixed_precision={mixed_precision}')``). The accepted values
are read from the release data (``scripts/extract_schema.py``), not written here.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule
from . import schema
from .label import NAME, TRAINER
from .modes import fsdp_dtypes, mixed_precision, precision


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
    valid = schema.values("precision", release)
    item, mode = precision(config, ctx.versions)
    if mode is None and item.origin.in_file:
        yield Finding(
            item.origin,
            f'`precision: {item.value}` is not a {TRAINER} precision: "ValueError: Value {item.value} not found in '
            f'Precision" ({", ".join(valid)} are)',
            Fix(f"write one of {', '.join(valid)}", edits_for(item, config.path, "amp_bf16")),
        )
    mixed = mixed_precision(config)
    if mixed is None or not mixed.origin.in_file or mode is None:
        return
    if isinstance(mixed.value, (str, dict)) and fsdp_dtypes(mode, mixed) is not None:
        return
    words = ", ".join(str(v) for v in schema.values("fsdp_config.mixed_precision", release))
    yield Finding(
        mixed.origin,
        f'`fsdp_config.mixed_precision: {mixed.value}` is refused by {TRAINER}: "ValueError: Unable to interpret '
        f'mixed_precision={mixed.value}" ({words}, or a mapping of dtypes, are read)',
        Fix(f"write one of {words}", edits_for(mixed, config.path, "DEFAULT")),
    )


__all__ = ["composer_precision_refused"]
