"""PC701-PC702: torchtune's precision traps.

Source: pytorch/torchtune (main, 05a4cec): ``torchtune/training/precision.py`` ``get_dtype``
(``PRECISION_STR_TO_DTYPE`` = fp16, bf16, fp32, fp64; anything else raises ``ValueError: Dtype
{dtype} must be one of fp16, bf16, fp32, fp64 for finetuning.``); every training recipe's
``__init__`` refuses fp16 right after ``get_dtype``: "full fp16 training is not supported with
this recipe. Please use bf16 or fp32 instead." (full_finetune_*, *_distributed, PPO, QAT,
dev/early_exit, dev/grpo) or "fp16 precision is not supported in this recipe. Please use fp32
or bf16." (lora_finetune_single_device, lora_dpo_single_device, knowledge_distillation_*).
More in the framework's resolver.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...config import TrainingConfig
from ...dtypes import parse_dtype
from ...facts import quote
from ...provenance import Sourced
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule


def _in_file(item: Sourced[str] | None) -> bool:
    return item is not None and item.origin.in_file and item.origin.key is not None


def _all_bf16(ctx: Context) -> bool | None:
    """Whether every device the run uses has native bf16 (None: the devices are not known)."""
    if not ctx.hardware.known:
        return None
    devices = ctx.hardware.devices
    used = [devices[i] for i in ctx.plan.device_indices(len(devices))]
    return all(d.bf16 for d in used) if used else None


#: ``PRECISION_STR_TO_DTYPE`` keys, by the dtype they mean
TORCHTUNE_SPELLING = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
TORCHTUNE_VALID = ("fp16", "bf16", "fp32", "fp64")


def _torchtune_dtype(config: TrainingConfig) -> Sourced[str] | None:
    """``dtype`` as written in the file (not the async GRPO recipe's hard-coded bf16)."""
    item = config.precision
    if not _in_file(item) or item is None or item.origin.kind != "file":
        return None
    return item


@rule("PC701", "torchtune-fp16-rejected", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("torchtune",))
def torchtune_fp16_rejected(ctx: Context) -> Iterator[Finding]:
    """
    Finds `dtype: fp16` in a torchtune training config: every training recipe refuses it at start.

    ## What it does
    Reports a torchtune config with an `optimizer` (what every training recipe builds)
    whose `dtype` is `fp16`. The generation, evaluation and quantization recipes
    (`generate.py:39`, `eleuther_eval.py:454`, `quantize.py:50`@0.6.1) take fp16 and are
    not reported: their configs (torchtune's own `generation.yaml`) have no optimizer.

    ## Why is this bad?
    torchtune trains in `dtype` itself, with no autocast and no loss scaling, so its recipes
    reject fp16 in `__init__`, right after `training.get_dtype`: `ValueError: full fp16
    training is not supported with this recipe. Please use bf16 or fp32 instead.`
    (full_finetune_single_device/distributed, lora_finetune_distributed, the DPO, PPO and QAT
    recipes) or `ValueError: fp16 precision is not supported in this recipe. Please use fp32
    or bf16.` (lora_finetune_single_device, lora_dpo_single_device, knowledge_distillation_*)
    (pytorch/torchtune `recipes/full_finetune_single_device.py:126@0.6.1`,
    `recipes/lora_finetune_single_device.py:132@0.6.1`).

    ## Example
    ```yaml
    dtype: fp16
    ```
    Use instead:
    ```yaml
    dtype: bf16   # fp32 on a GPU without bf16 (V100, T4)
    ```

    ## Fix
    `dtype: bf16` on Ampere or newer, `dtype: fp32` on older GPUs. Either changes the run's
    numerics, so the fix is marked unsafe.
    """
    item = _torchtune_dtype(ctx.config)
    if item is None or item.value != "fp16" or "optimizer" not in ctx.config.keys:
        return  # no optimizer: generate / eleuther_eval / quantize, which take fp16
    bf16 = _all_bf16(ctx)
    value, why = ("fp32", "the GPUs have no native bf16") if bf16 is False else ("bf16", "bf16 where the GPU has it")
    yield Finding(
        item.origin,
        "`dtype: fp16` is refused by every torchtune training recipe at start: "
        f'"{quote("torchtune.full_fp16_refused")}" (single-device LoRA/DPO and distillation recipes: '
        f'"{quote("torchtune.fp16_refused")}")',
        Fix(f"train in {value} ({why}; fp32 otherwise)", edits_for(item, ctx.config.path, value)),
    )


@rule("PC702", "torchtune-dtype-spelling", Severity.ERROR, fix_safety=FixSafety.SAFE, frameworks=("torchtune",))
def torchtune_dtype_spelling(ctx: Context) -> Iterator[Finding]:
    """
    Finds a torchtune `dtype` outside fp16/bf16/fp32/fp64 (`bfloat16`, `float32`...).

    ## What it does
    Reports a `dtype` (top level or `training.dtype`) that is not one of torchtune's four
    spellings, such as the torch names `bfloat16` or `float32`.

    ## Why is this bad?
    The recipes call `training.get_dtype(cfg.dtype, device=...)` (`torchtune/training/
    precision.py`; `torchtune/utils/precision.py` up to 0.2), which looks the string up in
    `PRECISION_STR_TO_DTYPE` and raises `ValueError: Dtype bfloat16 must be one of fp16,
    bf16, fp32, fp64 for finetuning.` before anything is built.

    ## Example
    ```yaml
    dtype: bfloat16
    ```
    Use instead:
    ```yaml
    dtype: bf16
    ```

    ## Fix
    Write the same dtype the way torchtune spells it (`bf16`, `fp32`, `fp16`, `fp64`). The
    meaning does not change, so the fix is safe.
    """
    item = _torchtune_dtype(ctx.config)
    if item is None or item.value in (*TORCHTUNE_VALID, "null"):
        return
    meant = parse_dtype(item.value)
    message = quote("torchtune.dtype_spelling", dtype=item.value, choices=", ".join(TORCHTUNE_VALID))
    fix = Fix("use one of torchtune's dtype spellings: fp16, bf16, fp32, fp64")
    if meant is not None:
        spelled = TORCHTUNE_SPELLING[meant]
        fix = Fix(f"write {meant} as torchtune spells it", edits_for(item, ctx.config.path, spelled))
    yield Finding(
        item.origin,
        f'`dtype: {item.value}` is not a torchtune dtype: get_dtype raises "ValueError: {message}"',
        fix,
    )


__all__ = ["torchtune_dtype_spelling", "torchtune_fp16_rejected"]
