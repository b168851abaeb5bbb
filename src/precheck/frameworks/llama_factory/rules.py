"""PC712-PC714: LLaMA-Factory's precision traps.

Source: hiyouga/LLaMA-Factory (0.9.x to 0.9.6.dev0): ``hparams/parser.py`` ``get_train_args``
(``if finetuning_args.pure_bf16:`` "This device does not support `pure_bf16`." unless
``is_torch_bf16_gpu_available()``; "`pure_bf16` is incompatible with DeepSpeed ZeRO-3." when
``is_deepspeed_zero3_enabled()``; ``compute_dtype`` bf16 for ``bf16 or pure_bf16``);
``model/adapter.py`` ``init_adapter``: "Pure bf16 / BAdam detected, remaining trainable params
in half precision." (no fp32 upcast). torch ``torch/amp/grad_scaler.py`` ``_unscale_grads_``
calls ``torch._amp_foreach_non_finite_check_and_unscale_``, whose CUDA kernel is dispatched for
float, double and half only: bf16 gradients raise ``NotImplementedError:
"_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...bf16_support import frameworks_see_bf16
from ...config import TrainingConfig
from ...converters import is_on
from ...facts import quote
from ...provenance import Sourced
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule


def _llamafactory_trainer(config: TrainingConfig) -> bool:
    """A LLaMA-Factory v0 run on the HF Trainer (not v1, not a Megatron backend)."""
    return config.variant != "v1" and config.megatron_backend is None


def _pure_bf16(config: TrainingConfig) -> Sourced[bool] | None:
    item = config.pure_bf16
    return item if is_on(item) and _llamafactory_trainer(config) else None


@rule(
    "PC712", "llamafactory-pure-bf16-zero3", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("llamafactory",)
)
def llamafactory_pure_bf16_zero3(ctx: Context) -> Iterator[Finding]:
    """
    Finds LLaMA-Factory `pure_bf16: true` with a DeepSpeed ZeRO-3 config.

    ## What it does
    Reports `pure_bf16: true` when the file's `deepspeed:` config has
    `zero_optimization.stage: 3`.

    ## Why is this bad?
    `get_train_args` (`llamafactory/hparams/parser.py`) checks `if finetuning_args.pure_bf16:
    ... if is_deepspeed_zero3_enabled(): raise ValueError("`pure_bf16` is incompatible with
    DeepSpeed ZeRO-3.")` before loading anything.

    ## Example
    ```yaml
    pure_bf16: true
    deepspeed: examples/deepspeed/ds_z3_config.json
    ```
    Use instead:
    ```yaml
    bf16: true
    deepspeed: examples/deepspeed/ds_z3_config.json
    ```

    ## Fix
    Use `bf16: true` under ZeRO-3 (DeepSpeed keeps fp32 master weights), or a ZeRO-2 config
    to keep pure bf16. Either changes the run, so the fix is marked unsafe.
    """
    config = ctx.config
    pure = _pure_bf16(config)
    attached = config.attached.get("deepspeed")
    stage = attached.zero_stage if attached is not None else None
    if pure is None or stage is None or stage.value != 3:
        return
    yield Finding(
        pure.origin,
        "`pure_bf16: true` with DeepSpeed ZeRO-3: LLaMA-Factory raises "
        f'"ValueError: {quote("llamafactory.pure_bf16_zero3")}"',
        Fix("use bf16: true under ZeRO-3 (or a ZeRO-2 config)", edits_for(pure, config.path, False)),
        related=(stage.origin,),
    )


@rule(
    "PC713",
    "llamafactory-pure-bf16-unsupported-gpu",
    Severity.ERROR,
    hardware=True,
    fix_safety=FixSafety.UNSAFE,
    frameworks=("llamafactory",),
)
def llamafactory_pure_bf16_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds LLaMA-Factory `pure_bf16: true` where the bf16 check fails (pre-Ampere GPU, torch < 2.3).

    ## What it does
    Reports `pure_bf16: true` when `torch.cuda.is_bf16_supported()` answers False on the
    GPUs: a GPU before Ampere with torch 2.2 or older. From torch 2.3 the check counts
    emulation and passes on a V100 or T4; that case is PC101's.

    ## Why is this bad?
    `get_train_args` (`llamafactory/hparams/parser.py`) raises `ValueError: This device does
    not support `pure_bf16`.` unless `is_torch_bf16_gpu_available()` (transformers:
    `torch.cuda.is_bf16_supported()`) or an NPU with bf16.

    ## Example
    ```yaml
    pure_bf16: true   # V100 with torch 2.2
    ```
    Use instead:
    ```yaml
    fp16: true
    ```

    ## Fix
    Train with fp16 mixed precision (`fp16: true`) or in fp32 on that GPU. Either changes
    the run, so the fix is marked unsafe.
    """
    config = ctx.config
    pure = _pure_bf16(config)
    if pure is None or not ctx.hardware.devices:
        return
    sees, why = frameworks_see_bf16(ctx.hardware, ctx.versions)
    if sees:
        return
    lacking = [d for d in ctx.hardware.devices if not d.bf16]
    names = ", ".join(f"{sum(1 for d in lacking if d.name == n)}x {n}" for n in sorted({d.name for d in lacking}))
    yield Finding(
        pure.origin,
        f"`pure_bf16: true` on {names}: {why}, so LLaMA-Factory raises "
        f'"ValueError: {quote("llamafactory.pure_bf16_unsupported")}"',
        Fix("train with fp16 mixed precision (fp16: true) or in fp32", edits_for(pure, config.path, False)),
    )


@rule("PC714", "llamafactory-pure-bf16-fp16", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("llamafactory",))
def llamafactory_pure_bf16_fp16(ctx: Context) -> Iterator[Finding]:
    """
    Finds LLaMA-Factory `pure_bf16: true` with `fp16: true` in a full or freeze fine-tune.

    ## What it does
    Reports a full or freeze fine-tune (`finetuning_type: full|freeze`) with `pure_bf16:
    true` and `fp16: true` (and not `bf16: true`, which is PC205), without a DeepSpeed
    config (DeepSpeed's fp16 engine casts the model to fp16 itself).

    ## Why is this bad?
    `pure_bf16` makes the compute dtype bf16 (`get_train_args`: `if training_args.bf16 or
    finetuning_args.pure_bf16: compute_dtype = torch.bfloat16`) and `init_adapter` keeps the
    trainable weights in it ("Pure bf16 / BAdam detected, remaining trainable params in half
    precision."). `fp16: true` still turns on fp16 AMP, whose GradScaler unscales the bf16
    gradients at the first step: `NotImplementedError:
    "_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'` (the
    CUDA kernel covers float, double and half only).

    ## Example
    ```yaml
    finetuning_type: full
    pure_bf16: true
    fp16: true
    ```
    Use instead:
    ```yaml
    finetuning_type: full
    pure_bf16: true
    ```

    ## Fix
    Drop `fp16`: pure bf16 needs no loss scaling. That removes fp16 autocast, so the fix is
    marked unsafe.
    """
    config = ctx.config
    pure = _pure_bf16(config)
    kind = str(config.train_type.value).strip().lower() if config.train_type is not None else "lora"
    if pure is None or not is_on(config.fp16) or is_on(config.bf16) or kind not in ("full", "freeze"):
        return
    if "deepspeed" in config.attached or "deepspeed" in config.references:
        return
    assert config.fp16 is not None
    yield Finding(
        config.fp16.origin,
        "`fp16: true` with `pure_bf16: true`: the trainable weights stay bf16 and fp16 AMP's GradScaler "
        f'unscales their bf16 gradients: "NotImplementedError: {quote("torch.unscale_bf16_cuda")}" at the first step',
        Fix("drop fp16: pure bf16 needs no loss scaling", edits_for(config.fp16, config.path, False)),
        related=(pure.origin,),
    )


__all__ = ["llamafactory_pure_bf16_fp16", "llamafactory_pure_bf16_unsupported_gpu", "llamafactory_pure_bf16_zero3"]
