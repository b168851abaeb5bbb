"""PC103–PC106: features the plan asks of the devices' kernels — TF32, fp8, FlashAttention."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts import quote, span
from ..hardware import Device, devices_label
from .base import Context, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from .device import used_devices

#: FlashAttention kernels and the lowest compute capability their CUDA builds run on
FLASH_MIN_CC = {
    "flash_attention_2": (
        (8, 0),
        f'FlashAttention-2: "RuntimeError: {quote("flash-attn.needs_ampere")}"',
    ),
    # the hopper/ build runs on sm_80+ since January 2025 (flash-attention v2.7.3; before, "FlashAttention-3
    # only supports Hopper GPUs or newer."), and transformers 5.x asks compute capability 8 of it
    "flash_attention_3": (
        (8, 0),
        f'FlashAttention-3 (hopper/ build): "RuntimeError: {quote("flash-attn.fa3_needs_ampere")}"',
    ),
    "flash_attention_4": (
        (9, 0),
        "FlashAttention-4: transformers 5.x refuses it (ImportError: "
        f'"{quote("transformers.flash_attention_4_capability", version=4, major=9)}, but found ...")',
    ),
}
#: FlashAttention's largest head dimension (``flash_api.cpp``: "FlashAttention forward only
#: supports head dimension at most 256")
FLASH_MAX_HEAD_DIM = 256


def _below(device: Device, cc: tuple[int, int]) -> bool:
    have = device.model.cc
    return have is not None and have < cc


@rule(
    "PC103",
    "tf32-unsupported-gpu",
    Severity.ERROR,
    hardware=True,
    fix_safety=FixSafety.SAFE,
)
def tf32_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds `tf32: true` for a run on a device without TF32 (before Ampere).

    ## What it does
    Reports an explicit TF32 switch when a device the run uses has compute capability
    below 8.0 (V100, T4, TITAN RTX, GTX 10xx), in a run that trains through
    TrainingArguments (the HF Trainer and frameworks built on it).

    ## Why is this bad?
    TrainingArguments checks `is_torch_tf32_available()` and stops the run with
    `ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7`, in
    4.x (`__post_init__`) and 5.x alike (`training_args.py:1682@5.23.0`).

    ## Example
    ```yaml
    tf32: true   # on a V100
    ```
    Use instead:
    ```yaml
    tf32: false
    ```

    ## Fix
    Set `tf32: false` or drop the key (the default leaves TF32 off).
    """
    if not ctx.config.traits.hf_trainer:
        return  # only TrainingArguments raises on it
    tf32 = ctx.plan.tf32
    if tf32 is None or not tf32.value or not tf32.origin.in_file:
        return
    lacking = [d for d in used_devices(ctx) if not d.model.tf32]
    if lacking:
        names = devices_label(lacking)
        yield Finding(
            anchor(ctx.config.path, tf32.origin),
            f"`tf32: true` on {names}, which has no TF32 (needs sm_80+): TrainingArguments raises "
            f'ValueError("{quote("transformers.tf32_unsupported")}") at start',
            Fix("turn TF32 off", edits_for(tf32, ctx.config.path, False)),
        )


@rule("PC104", "fp8-unsupported-gpu", Severity.ERROR, hardware=True, fix_safety=FixSafety.UNSAFE)
def fp8_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds fp8 training on a device below compute capability 8.9 (Ada, Hopper).

    ## What it does
    Reports fp8 in the plan (accelerate's `mixed_precision: fp8`, an fp8 backend, a
    `transformer-engine` precision mode) when a device the run uses is older than
    Ada Lovelace / Hopper.

    ## Why is this bad?
    fp8 tensor cores exist from sm_89. accelerate (1.15.0, `AcceleratorState`) checks
    `check_cuda_fp8_capability()` (`compute_capability >= (8, 9)`) and, on an A100,
    only logs "The current device has compute capability of (8, 0) which is insufficient
    for FP8 mixed precision training (requires a GPU Hopper/Ada Lovelace or higher,
    compute capability of 8.9 or higher). Will use FP16 instead." — the run then trains
    in fp16 with loss scaling, not what the config says. Transformer Engine called
    directly refuses: "Device compute capability 8.9 or higher required for FP8
    execution."; torchao's float8 training needs sm_89 as well. MS-AMP keeps fp8 weights
    and optimizer states on Ampere but computes in fp16/bf16 there.

    A framework whose own config validation asks for sm_90 (its `fp8_refused_below_hopper`
    trait names the facts) refuses an L4, L40S or RTX 4090 (sm_89) as well: the one that does
    (from 0.13.1) raises "fp8 requested, but fp8 is not supported on this GPU" in `check_fp8`
    (`utils/schemas/config.py:1847@0.19.0`) unless `compute_supports_fp8()`, which is
    `compute_capability >= (9, 0)` (`cli/config.py:356@0.19.0`).

    ## Example
    ```yaml
    mixed_precision: fp8   # on 8×A100
    ```
    Use instead:
    ```yaml
    mixed_precision: bf16
    ```

    ## Fix
    Use bf16 mixed precision on Ampere; fp8 needs an L4/L40S/RTX 4090 (sm_89) or an H100
    (an H100, H200 or B200, sm_90+, where the framework checks for sm_90 itself).
    """
    fp8 = ctx.plan.fp8
    if fp8 is None or not fp8.value:
        return
    own = ctx.config.traits.fp8_refused_below_hopper
    refused, known = ctx.versions.holds(span(own[0])) if own else (False, "")
    if own and refused:
        # the framework's own config validation asks for sm_90 (compute_supports_fp8)
        lacking = [d for d in used_devices(ctx) if _below(d, (9, 0))]
        why = f'the framework\'s config validation refuses it below sm_90: "{quote(own[1])}" [{known}]'
        cards = "fp8 needs sm_90+ here: H100, H200, B200"
    else:
        lacking = [d for d in used_devices(ctx) if _below(d, (8, 9))]
        why = "fp8 tensor cores need sm_89+; accelerate falls back to fp16, Transformer Engine and torchao refuse"
        cards = "fp8 needs sm_89+: L4, L40S, RTX 4090, H100"
    if lacking:
        names = devices_label(lacking)
        fix = Fix(f"use bf16 mixed precision here ({cards})")
        if ctx.config.mixed_precision is not None and ctx.config.mixed_precision.value == "fp8":
            fix = Fix(fix.description, edits_for(ctx.config.mixed_precision, ctx.config.path, "bf16"))
        yield Finding(anchor(ctx.config.path, fp8.origin), f"fp8 ({fp8.value}) on {names}: {why}", fix)


def _head_dim(ctx: Context) -> int | None:
    dims = ctx.config.model_dims
    if "head_dim" in dims:
        return int(dims["head_dim"].value)
    if "hidden_size" in dims and "num_attention_heads" in dims and dims["num_attention_heads"].value:
        return int(dims["hidden_size"].value) // int(dims["num_attention_heads"].value)
    return None


@rule("PC105", "flash-attention-unsupported", Severity.ERROR, hardware=True, fix_safety=FixSafety.UNSAFE)
def flash_attention_unsupported(ctx: Context) -> Iterator[Finding]:
    """
    Finds a FlashAttention kernel the devices (or the model's head size) cannot run.

    ## What it does
    Reports `attn_implementation: flash_attention_2` or `flash_attention_3` (or a framework's
    FlashAttention switch) on a device before Ampere, FlashAttention-4 on a device before
    Hopper, and FlashAttention with a head dimension above 256 (from a local checkpoint's
    config.json).

    ## Why is this bad?
    The kernels are compiled for those architectures only and check at the first forward
    pass, after the model has loaded: flash-attn 2's `flash_api.cpp` raises
    `RuntimeError: FlashAttention only supports Ampere GPUs or newer.`
    (`csrc/flash_attn/flash_api.cpp:370@v2.8.3`), and so does FlashAttention-3's Hopper
    build, which has run on sm_80+ since January 2025 (`hopper/flash_api.cpp:677@v2.8.3`,
    `is_sm8x = dprops->major >= 8`; `hopper/setup.py:151@v2.8.3` builds the sm_80 kernels;
    builds before v2.7.3 said "FlashAttention-3 only supports Hopper GPUs or newer.").
    transformers 5.x asks compute capability 8 for FlashAttention-3 and 9 for
    FlashAttention-4 (`modeling_flash_attention_utils.py:133,144@5.23.0`). Heads wider than
    256 raise `RuntimeError: FlashAttention forward only supports head dimension at most 256`.

    ## Example
    ```yaml
    attn_implementation: flash_attention_2   # on a V100
    ```
    Use instead:
    ```yaml
    attn_implementation: sdpa
    ```

    ## Fix
    Use `sdpa` (PyTorch's scaled-dot-product attention has kernels for every GPU).
    """
    attention = ctx.plan.attention
    if attention is None:
        return
    kind = str(attention.value).lower()
    if kind not in FLASH_MIN_CC:
        return
    need, error = FLASH_MIN_CC[kind]
    where = anchor(ctx.config.path, attention.origin)
    fix = Fix("use sdpa attention", edits_for(attention, ctx.config.path, "sdpa"))
    lacking = [d for d in used_devices(ctx) if _below(d, need)]
    if lacking:
        names = devices_label(lacking)
        yield Finding(where, f"{kind} on {names} (needs sm_{need[0]}{need[1]}+): {error}", fix)
    head = _head_dim(ctx)
    if head is not None and head > FLASH_MAX_HEAD_DIM:
        yield Finding(
            where,
            f'{kind} with head dimension {head} (max {FLASH_MAX_HEAD_DIM}): "{quote("flash-attn.head_dim")}"',
            fix,
        )


@rule("PC106", "flash-attention-fp32", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def flash_attention_fp32(ctx: Context) -> Iterator[Finding]:
    """
    Finds FlashAttention in a run that computes in float32.

    ## What it does
    Reports a FlashAttention kernel when the plan has float32 weights and no fp16/bf16
    autocast, so attention inputs reach the kernel in float32.

    ## Why is this bad?
    FlashAttention computes in fp16/bf16 only: the kernel raises `RuntimeError:
    FlashAttention only support fp16 and bf16 data type`. transformers warns at load time
    ("Flash Attention 2 only supports torch.float16 and torch.bfloat16 dtypes, but the
    current dype in LlamaForCausalLM is torch.float32. You should run training or
    inference using Automatic Mixed-Precision...") and the run fails at the first forward.

    ## Example
    ```yaml
    attn_implementation: flash_attention_2
    torch_dtype: float32
    ```
    Use instead: `bf16: true` (autocast) or `torch_dtype: bfloat16`.

    ## Fix
    Turn on bf16 (or fp16) mixed precision, or use `sdpa` attention.
    """
    attention, plan = ctx.plan.attention, ctx.plan
    if attention is None or str(attention.value).lower() not in FLASH_MIN_CC:
        return
    if plan.autocast_dtype.value in ("float16", "bfloat16") or plan.param_dtype.value in ("float16", "bfloat16"):
        return
    if plan.load_dtype.value in ("float16", "bfloat16", "auto"):
        return
    yield Finding(
        anchor(ctx.config.path, attention.origin),
        f"{attention.value} with float32 compute (weights {plan.load_dtype.value}, no autocast): "
        f'"{quote("flash-attn.half_only")}"',
        Fix("turn on bf16/fp16 mixed precision, or use sdpa", edits_for(attention, ctx.config.path, "sdpa")),
    )
