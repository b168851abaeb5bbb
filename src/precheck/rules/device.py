"""PC1xx: what the devices the run uses can and cannot do."""

from __future__ import annotations

from collections.abc import Iterator

from ..bf16_support import (
    BF16_CHECK_COUNTS_EMULATION,
    emulation_counted_check,
    frameworks_see_bf16,
    runtime_check_answer,
)
from ..facts import quote, span
from ..hardware import Device, devices_label
from ..provenance import Origin
from ..training_method import is_adapter_training
from .base import (
    Context,
    Edit,
    Finding,
    Fix,
    FixSafety,
    Severity,
    anchor,
    edits_for,
    rule,
    unknown_version_note,
    written,
)

#: ``is_torch_bf16_gpu_available`` up to 4.34 returns False below compute capability 8 by itself
#: (``utils/import_utils.py:313@4.34.0``); from 4.35.0 it returns ``torch.cuda.is_bf16_supported()``
#: (``utils/import_utils.py:308@4.35.0``), which counts emulation from torch 2.3
TRANSFORMERS_CHECKS_CAPABILITY = span("transformers.bf16_gpu_checks_capability")


def used_devices(ctx: Context) -> list[Device]:
    devices = ctx.hardware.devices
    return [devices[i] for i in ctx.plan.device_indices(len(devices))]


def _bf16_origin(ctx: Context) -> Origin:
    plan = ctx.plan
    for item in (plan.autocast_dtype, plan.load_dtype, plan.param_dtype):
        if item.value == "bfloat16":
            return item.origin
    return plan.load_dtype.origin


def flag_edit(ctx: Context, name: str, value: object) -> Edit | None:
    """Set a precision switch the way this framework spells it; None if it has no such switch."""
    config = ctx.config
    current = getattr(config, name, None)
    existing = edits_for(current, config.path, value)
    if existing:
        return existing[0]
    key = dict(config.flag_keys).get(name)
    return Edit(config.path, key, value, format=config.format or None) if key else None


def _switch_to_fp16(ctx: Context) -> Fix:
    """Edits that take bf16 out of every place the plan got it from."""
    config, plan = ctx.config, ctx.plan
    traits = config.traits
    if traits.quantized_precisions and config.quantize is not None and config.precision is not None:
        # its quantized path refuses the mixed modes: its fp32 mode (Traits.quantized_precisions)
        value, means = traits.quantized_precisions[-1]
        return Fix(
            f"train in {value} ({means}): `{written(config.quantize, 'quantize')}` takes no mixed precision",
            edits_for(config.precision, config.path, value),
        )
    if traits.precision_without_bf16 is not None and config.precision is None and traits.quantized_precisions:
        # no precision set, the framework's default picked bf16: set the mode without bf16 that every
        # one of its commands takes, its quantized path's fp32 one (the framework's traits cite why)
        value, means = traits.quantized_precisions[-1]
        return Fix(
            f"set the precision to {value} ({means}), or to {traits.precision_without_bf16[0]} where the command "
            "takes it",
            (Edit(config.path, "precision", value, format=config.format or None),),
        )
    if traits.precision_without_bf16 is not None and config.precision is not None:
        value, description = traits.precision_without_bf16
        return Fix(description, edits_for(config.precision, config.path, value))
    if traits.fp16_weights_fix is not None and not is_adapter_training(config):
        # fp16 there loads fp16 weights: a full fine-tune would hit PC401; fp32 instead
        return Fix(
            traits.fp16_weights_fix,
            edits_for(config.bf16 or config.keys.get("bf16"), config.path, False),  # `bf16: auto` too
        )
    edits: list[Edit] = []
    if plan.autocast_dtype.value == "bfloat16":
        if config.mixed_precision is not None and config.mixed_precision.origin.in_file:
            edits.extend(e for e in (flag_edit(ctx, "mixed_precision", "fp16"),) if e)
        else:
            edits.extend(e for e in (flag_edit(ctx, "bf16", False), flag_edit(ctx, "fp16", True)) if e)
    if plan.load_dtype.value == "bfloat16" and (config.torch_dtype is None or config.torch_dtype.origin.in_file):
        # a dtype the file set, or the loader's default where the framework has the key
        dtype = flag_edit(ctx, "torch_dtype", "float32")
        if dtype is not None:
            edits.append(dtype)
    if traits.script:  # the script's own calls: no switch to flip
        return Fix(
            "use fp16 mixed precision: keep the weights in float32, "
            'torch.autocast(device_type="cuda", dtype=torch.float16) and a GradScaler; or train in fp32',
            tuple(edits),
        )
    if edits:
        return Fix("use fp16 mixed precision: fp32 weights, fp16 autocast, dynamic loss scaling", tuple(edits))
    return Fix(f"train in fp16 mixed precision or fp32: set the dtype explicitly in {config.path}")


def _what_happens(ctx: Context) -> str:
    torch = ctx.versions.get("torch")
    # a hand-written loop: torch.autocast checks torch.cuda.is_bf16_supported() itself
    # (torch/amp/autocast_mode.py); bf16 weights without autocast are never checked
    script = ctx.config.traits.script
    own_check = script or ctx.config.traits.bf16_checked_by_autocast  # the autocast itself checks
    autocast = own_check and ctx.plan.autocast_dtype.value == "bfloat16"
    if torch is not None and not BF16_CHECK_COUNTS_EMULATION.contains(torch.version):
        if autocast:
            who = "torch.autocast" if script else "the framework's autocast (it checks torch.cuda.is_bf16_supported())"
            return (
                f"with torch {torch.version} ({torch.source}) {who} raises "
                f'"RuntimeError: {quote("torch.autocast_no_bf16")}"'
            )
        if not script:
            return (
                f"with torch {torch.version} ({torch.source}) the run stops at start: "
                f'"{quote("transformers.bf16_unsupported")}"'
            )
    transformers = ctx.versions.get("transformers")
    if (
        not script
        and ctx.config.dialect in ("hf-trainer", "trl")
        and transformers is not None
        and TRANSFORMERS_CHECKS_CAPABILITY.contains(transformers.version)
    ):
        # transformers < 4.35 tests the compute capability itself, whatever torch counts
        return (
            f"transformers {transformers.version} ({transformers.source}) tests the compute capability "
            f'itself (major < 8: no bf16), so the run stops at start: "{quote("transformers.bf16_unsupported")}"'
        )
    known = (
        f"torch {torch.version} ({torch.source})"
        if torch
        else "torch>=2.3 (the torch version is not known: pin it or pass --assume-version torch==VERSION)"
    )
    if autocast:
        return f"{known} counts emulation as support, so torch.autocast lets the run start and it runs emulated"
    if script:
        return "nothing checks bf16 weights, so the run starts and computes them emulated, without tensor cores"
    return f"{known} counts emulation as support, so the frameworks let the run start and it runs emulated"


@rule("PC101", "bf16-unsupported-gpu", Severity.ERROR, hardware=True, fix_safety=FixSafety.UNSAFE)
def bf16_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds bf16 in the plan on a device without native bf16.

    ## What it does
    Finds bf16 anywhere in the resolved plan (autocast, load dtype, trainable weights,
    a 4-bit base's `bnb_4bit_compute_dtype`) and a device the run computes on whose
    compute capability is below 8.0 (pre-Ampere NVIDIA: V100, T4, TITAN RTX, GTX 10xx...).

    ## Why is this bad?
    From torch 2.3.0, `torch.cuda.is_bf16_supported()` falls back to allocating a bf16
    tensor (`_check_bf16_tensor_supported`, pytorch#115924), which succeeds on a V100 or
    T4; 2.4.0 named that `including_emulation=True`, the default. Up to 2.2.2 it returned
    `major >= 8 and cuda >= 11`, so transformers stopped such runs at start ("Your setup
    doesn't support bf16/gpu."). transformers up to 4.34 tests `major < 8` itself
    (`utils/import_utils.py:313@4.34.0`), so an HF Trainer run pinned to it stops at start
    whatever the torch version; 4.35.0 returns `torch.cuda.is_bf16_supported()`
    (`utils/import_utils.py:308@4.35.0`). The message names which case applies when the torch
    version is known. A framework whose `pure_bf16` leaves `TrainingArguments.bf16` False
    and checks bf16 support itself stops such a run with torch < 2.3 (PC713), not transformers.
    Where the script itself chose bf16 with `torch.cuda.is_bf16_supported()` (emulation
    counted: the default), the finding says what the check answers on that GPU under the
    run's torch (`torch/cuda/__init__.py:141@2.3.0`); under a known torch < 2.3 the check
    answers False, the script takes its other branch, and nothing is reported.
    From 2.3 the frameworks that rely on it (transformers' "Your setup doesn't support
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
    config = ctx.config
    compute = config.quant_compute_dtype if config.quantization_bits is not None else None
    quant_bf16 = compute is not None and compute.value == "bfloat16" and compute.origin.in_file
    if not ctx.plan.uses_bf16 and not quant_bf16:
        return
    lacking = [d for d in used_devices(ctx) if not d.bf16]
    if not lacking:
        return
    pure = config.pure_bf16
    if config.traits.refuses_unsupported_pure_bf16 and pure is not None and pure.value is True:
        flag = config.bf16
        if (flag is None or not flag.value) and not frameworks_see_bf16(ctx.hardware, ctx.versions)[0]:
            return  # TrainingArguments.bf16 is False: the framework itself refuses pure_bf16 (PC713)
    origin = _bf16_origin(ctx) if ctx.plan.uses_bf16 or compute is None else compute.origin
    names = devices_label(lacking)
    source = f" (from {origin})" if origin.kind != "file" else ""
    chosen = ""
    if emulation_counted_check(origin.written):  # the script asks torch, whose answer depends on its version
        answer, said = runtime_check_answer(lacking[0].name, ctx.versions)
        if not answer:
            return  # under this torch the check says no: the script takes its other branch
        chosen = f"{said}, so the script picks bf16; "
    yield Finding(
        anchor(ctx.config.path, origin),
        f"{chosen}the plan uses bf16{source}, but {names} has no native bf16 (needs sm_80+); {_what_happens(ctx)}"
        + unknown_version_note(origin),
        _switch_to_fp16(ctx),
    )


@rule("PC102", "fp16-slow-gpu", Severity.WARNING, hardware=True, fix_safety=FixSafety.UNSAFE)
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
    origin = anchor(ctx.config.path, item.origin)
    names = devices_label(slow)
    fix = Fix("train in fp32 on this card, or make only a card with fp16 tensor cores visible (CUDA_VISIBLE_DEVICES)")
    if origin.key and ctx.config.fp16 is not None and ctx.config.fp16.origin == origin:
        fix = Fix(fix.description, edits_for(ctx.config.fp16, ctx.config.path, False))
    yield Finding(
        origin,
        f"fp16 compute on {names}: no fp16 tensor cores and fp16 at 1/64 of fp32 throughput",
        fix,
    )
