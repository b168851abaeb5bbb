"""PC1xx: what the devices the run uses can and cannot do."""

from __future__ import annotations

from collections.abc import Iterator

from ..dtypes import short
from ..hardware import Device
from ..provenance import Origin
from .base import Context, Edit, Finding, Fix, Severity, rule


def used_devices(ctx: Context) -> list[Device]:
    devices = ctx.hardware.devices
    return [devices[i] for i in ctx.plan.device_indices(len(devices))]


def _bf16_origin(ctx: Context) -> Origin:
    plan = ctx.plan
    for item in (plan.autocast_dtype, plan.load_dtype, plan.param_dtype):
        if item.value == "bfloat16":
            return item.origin
    return plan.load_dtype.origin


def _switch_to_fp16(ctx: Context, origin: Origin) -> Fix:
    config = ctx.config
    path = origin.path or config.path
    if origin.key in ("bf16", "--bf16") or (config.bf16 is not None and config.bf16.origin == origin):
        edits = [Edit(path, origin.key or "bf16", False, origin.line)]
        if config.fp16 is not None:
            edits.append(Edit(path, config.fp16.origin.key or "fp16", True, config.fp16.origin.line))
        elif "fp16" in config.flag_keys:
            edits.append(Edit(path, config.flag_keys["fp16"], True))
        return Fix("use fp16 mixed precision (fp32 weights, fp16 autocast, loss scaling)", tuple(edits))
    if origin.key is not None and origin.in_file:
        current = "fp16" if origin.key.endswith(("mixed_precision", "precision")) else "float16"
        return Fix("train in fp16 mixed precision instead", (Edit(path, origin.key, current, origin.line),))
    return Fix(f"set the dtype explicitly to float16 or float32 in {path}")


@rule("PC101", "bf16-unsupported-gpu", Severity.ERROR, hardware=True)
def bf16_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds bf16 in the plan on a device without native bf16.

    ## What it does
    Finds bf16 anywhere in the resolved plan (autocast, load dtype, trainable weights)
    and a device the run computes on whose compute capability is below 8.0 (pre-Ampere
    NVIDIA: V100, T4, TITAN RTX, GTX 10xx...).

    ## Why is this bad?
    `torch.cuda.is_bf16_supported()` counts emulation, so it returns True on a V100 or
    T4 (torch `torch/cuda/__init__.py` `is_bf16_supported(including_emulation=True)`),
    and the frameworks that rely on it (transformers' "Your setup doesn't support
    bf16/gpu", accelerate's "bf16 mixed precision requires PyTorch >= 1.10 and a
    supported device") do not stop the run. What follows is emulated bf16: matmuls
    without tensor cores at a fraction of fp16 speed, and Triton kernels (torch.compile,
    Unsloth, Liger) that do not support bf16 below sm_80.

    ## Example
    ```yaml
    bf16: true   # on a V100
    ```
    Use instead:
    ```yaml
    fp16: true
    ```

    ## Fix
    fp16 mixed precision (fp32 master weights, fp16 autocast, dynamic loss scaling), or
    fp32. The fix names the key that put bf16 into the plan.
    """
    if not ctx.plan.uses_bf16:
        return
    lacking = [d for d in used_devices(ctx) if not d.bf16]
    if not lacking:
        return
    origin = _bf16_origin(ctx)
    names = ", ".join(d.label() for d in lacking)
    source = f" (from {origin})" if origin.kind != "file" else ""
    yield Finding(
        origin if origin.in_file else Origin("file", ctx.config.path, 1, 1),
        f"the plan uses bf16{source}, but {names} has no native bf16 (needs sm_80+); "
        "torch counts emulation, so frameworks will not stop the run",
        _switch_to_fp16(ctx, origin),
    )


@rule("PC102", "fp16-slow-gpu", Severity.WARNING, hardware=True)
def fp16_slow_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Warns when the run computes in fp16 on a device whose fp16 throughput is crippled.

    ## What it does
    Finds fp16 autocast or fp16 weights in the plan and a used device without full-rate
    fp16: consumer Pascal (GTX 10xx, TITAN Xp) and the P40/P4 (GP102/GP104).

    ## Why is this bad?
    On compute capability 6.1 the CUDA Programming Guide's throughput table gives fp16
    arithmetic 2 results per clock per SM against 128 for fp32: fp16 there runs at 1/64
    of fp32 speed, with no tensor cores. The run works, only far slower than in fp32.

    ## Example
    ```yaml
    use_fp16: true   # on a GTX 1080 Ti
    ```
    Use instead:
    ```yaml
    use_fp16: false
    ```

    ## Fix
    Train in fp32 on that card, or make only a card with fp16 tensor cores visible
    (`CUDA_VISIBLE_DEVICES`).
    """
    if not ctx.plan.uses_fp16:
        return
    slow = [d for d in used_devices(ctx) if not d.model.fp16_full_rate]
    if not slow:
        return
    item = ctx.plan.autocast_dtype if ctx.plan.autocast_dtype.value == "float16" else ctx.plan.load_dtype
    origin = item.origin if item.origin.in_file else Origin("file", ctx.config.path, 1, 1)
    names = ", ".join(d.label() for d in slow)
    fix = Fix("train in fp32 on this card, or make only a card with fp16 tensor cores visible (CUDA_VISIBLE_DEVICES)")
    if origin.key and ctx.config.fp16 is not None and ctx.config.fp16.origin == origin:
        fix = Fix(fix.description, (Edit(origin.path or ctx.config.path, origin.key, False, origin.line),))
    yield Finding(
        origin,
        f"fp16 ({short(item.value)}) on {names}: no fp16 tensor cores and fp16 at 1/64 of fp32 throughput",
        fix,
    )
