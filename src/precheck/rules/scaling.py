"""PC4xx: loss scaling and GradScaler against the gradients' dtype."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts import quote
from ..training_method import PEFT_UPCASTS, is_adapter_training, quantized_base
from ..versions import VersionRange
from .base import Context, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule, unknown_version_note


@rule("PC401", "grad-scaler-fp16-gradients", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def grad_scaler_fp16_gradients(ctx: Context) -> Iterator[Finding]:
    """
    Finds fp16 trainable weights under a GradScaler (fp16 AMP on an fp16 model).

    ## What it does
    Reports a plan whose trainable parameters (hence gradients) are fp16 while a torch
    `GradScaler` is enabled: fp16 mixed precision on top of a model loaded in fp16 and
    trained in full (adapters are fp32 under PEFT and are fine).

    ## Why is this bad?
    `GradScaler.unscale_` calls `_unscale_grads_(..., allow_fp16=False)`
    (`torch/amp/grad_scaler.py`), which raises
    `ValueError: Attempting to unscale FP16 gradients.` at the first optimizer step.
    Mixed precision needs fp32 master weights. FSDP's `ShardedGradScaler` allows fp16
    gradients and is not reported.

    ## Example
    ```yaml
    use_fp16: true    # loads the model in fp16 and adds a GradScaler
    use_peft: false
    ```
    Use instead:
    ```yaml
    use_fp16: true
    use_peft: true
    ```

    ## Fix
    Load the weights in fp32 and let autocast do fp16 (`torch_dtype: float32`), train
    adapters (LoRA) instead of the fp16 weights, or drop fp16 mixed precision.
    """
    plan = ctx.plan
    if not plan.grad_scaler.value or plan.grad_dtype.value != "float16":
        return
    if ctx.config.fsdp is not None and ctx.config.fsdp.value:
        return
    if is_adapter_training(ctx.config, "lora" if ctx.config.quantization_bits else "full"):
        return  # adapters in fp16 are PC403's case (old peft)
    origin = anchor(ctx.config.path, plan.grad_scaler.origin, plan.load_dtype.origin)
    edits = edits_for(ctx.config.torch_dtype, ctx.config.path, "float32")
    yield Finding(
        origin,
        "fp16 mixed precision on fp16 trainable weights: the GradScaler raises "
        f'"ValueError: {quote("torch.unscale_fp16")}" at the first step',
        Fix("keep fp32 master weights (load in float32, autocast does fp16) or train LoRA adapters", edits),
        related=(plan.load_dtype.origin,) if plan.load_dtype.origin.in_file else (),
    )


#: where a LoRA adapter is fp16 because its base layer is: peft before 0.12.0
PEFT_KEEPS_BASE_DTYPE = VersionRange("peft", None, PEFT_UPCASTS.low)


@rule(
    "PC403",
    "fp16-lora-adapters-grad-scaler",
    Severity.ERROR,
    versions=(PEFT_KEEPS_BASE_DTYPE,),
    affects_latest=False,
    fix_safety=FixSafety.UNSAFE,
)
def fp16_lora_adapters_grad_scaler(ctx: Context) -> Iterator[Finding]:
    """
    Finds LoRA on an fp16 model under fp16 mixed precision with a peft that keeps adapters in fp16.

    ## What it does
    Reports LoRA training whose base model is loaded in float16 while fp16 autocast adds
    a GradScaler, for peft releases before 0.12.0, where the adapters are peft's own (a
    framework that casts them to float32 itself is not reported).

    ## Why is this bad?
    Up to peft 0.11.1, `LoraLayer.update_layer` ran
    `self.to(weight.device, dtype=weight.dtype)` when the base weight is floating point
    (`peft/tuners/lora/layer.py:128-131@0.11.1`): the adapters took the base layer's
    float16. A 4-bit, 8-bit or GPTQ base holds integer weights (`weight`/`qweight`), so its
    adapters stay float32 and are not reported. Their gradients are then fp16 and `GradScaler.unscale_` raises
    `ValueError: Attempting to unscale FP16 gradients.` at the first step. peft 0.12.0
    added `get_peft_model(..., autocast_adapter_dtype=True)`, which upcasts fp16/bf16
    adapters to float32 (`tuners_utils._cast_adapter_dtype`).

    ## Example
    ```yaml
    torch_dtype: float16
    use_peft: true
    fp16: true      # with peft==0.11.1
    ```
    Use instead: peft 0.12.0 or later, or `torch_dtype: float32`.

    ## Fix
    Upgrade peft to 0.12.0 or later, or load the base model in float32 (autocast still
    computes in fp16).
    """
    config, plan = ctx.config, ctx.plan
    if not config.traits.adapters_follow_peft:
        return  # the framework casts its adapters to float32 itself
    if not plan.grad_scaler.value or plan.load_dtype.value != "float16":
        return
    if not is_adapter_training(config, "lora" if config.quantization_bits else "full"):
        return
    if quantized_base(config):
        return  # an integer base weight: peft leaves the adapters in float32 (lora/layer.py:128-131@0.11.1)
    origin = anchor(config.path, plan.load_dtype.origin)
    edits = edits_for(config.torch_dtype, config.path, "float32")
    yield Finding(
        origin,
        "LoRA adapters are created in the base model's float16, which fp16 mixed precision's GradScaler "
        f'refuses: "ValueError: {quote("torch.unscale_fp16")}"',
        Fix("upgrade peft to 0.12.0 or later, or load the base model in float32", edits),
    )


@rule(
    "PC404",
    "grad-scaler-bf16-gradients",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
)
def grad_scaler_bf16_gradients(ctx: Context) -> Iterator[Finding]:
    """
    Finds fp16 mixed precision (with its GradScaler) over bf16 trainable weights.

    ## What it does
    Reports a plan whose GradScaler is enabled (fp16 autocast) while the trainable
    weights, hence the gradients, are bf16: a model loaded in bfloat16 and trained in
    full with `fp16: true`, where nothing refuses the pair before the first step. The load
    dtype is the run's: a recipe's `torch_dtype`, else `from_pretrained`'s default (the
    checkpoint's own dtype from transformers 5), else, for a model TRL loads itself (`trl
    sft`, a model id handed to a trainer), float32 from TRL 0.27 (`create_model_from_path`:
    `kwargs.get("dtype", "float32")`, `trainer/utils.py:1332@1.16.0`), where fp16 AMP keeps
    fp32 weights and is not reported.

    ## Why is this bad?
    The unscale kernel is dispatched for float, double and half only
    (`aten/src/ATen/native/cuda/AmpKernels.cu`), so the first optimizer step fails with
    `"_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'`.
    bf16 needs no loss scaling. (A GradScaler created whatever the dtype is PC402.) A hand-written loop
    (`torch.cuda.amp.GradScaler()` or `torch.amp.GradScaler("cuda")` over a model loaded
    or cast to bf16) fails the same way at `scaler.step(optimizer)`, whatever the autocast
    dtype; with fp32 weights a GradScaler under bf16 autocast is merely unneeded.

    ## Example
    ```yaml
    torch_dtype: bfloat16
    fp16: true
    ```
    Use instead:
    ```yaml
    torch_dtype: bfloat16
    bf16: true
    ```

    ## Fix
    Train in bf16 mixed precision (no GradScaler), or load the weights in float32 to keep
    fp16 AMP.
    """
    plan = ctx.plan
    if not ctx.config.traits.grad_scaler_any_weights:
        return  # the framework refuses the pair before (or has its own rule)
    if not plan.grad_scaler.value or plan.grad_dtype.value != "bfloat16":
        return
    config = ctx.config
    crash = quote("torch.unscale_bf16_cuda")
    edits = edits_for(config.torch_dtype, config.path, "float32")
    if config.traits.script:  # the script creates the GradScaler itself: point at it
        weights = plan.load_dtype.origin
        where = f"`{weights.key}`, line {weights.line}" if weights.in_file and weights.key else f"line {weights.line}"
        yield Finding(
            anchor(config.path, plan.grad_scaler.origin, weights),
            f"the GradScaler unscales bf16 gradients (the weights are bf16: {where if weights.in_file else weights}) "
            f"and its CUDA kernel has no bf16 version: scaler.step() fails with {crash}",
            Fix("bf16 needs no loss scaling: drop the GradScaler (or GradScaler(enabled=False)), or keep fp32 weights"),
            related=(plan.load_dtype.origin,) if plan.load_dtype.origin.in_file else (),
        )
        return
    origin = anchor(config.path, plan.autocast_dtype.origin, plan.load_dtype.origin)
    yield Finding(
        origin,
        f"fp16 mixed precision adds a GradScaler, and the bf16 gradients crash it: {crash}"
        + unknown_version_note(plan.load_dtype.origin, plan.grad_dtype.origin),
        Fix("keep fp32 master weights for fp16 AMP, or train in bf16 mixed precision instead", edits),
    )
