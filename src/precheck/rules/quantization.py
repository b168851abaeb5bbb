"""PC206: a 4-bit base model whose compute dtype does not match the activations it receives."""

from __future__ import annotations

from collections.abc import Iterator

from .base import Context, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule


def compute_dtype(ctx: Context) -> str | None:
    """The bitsandbytes 4-bit compute dtype the plan resolved ("float32" by default), or None."""
    quant = ctx.plan.quantization
    if quant is None or not str(quant.value).startswith("4-bit"):
        return None
    text = str(quant.value)
    return text.split("compute ", 1)[1].split()[0].strip(",") if "compute " in text else None


@rule("PC206", "quant-compute-dtype-mismatch", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def quant_compute_dtype_mismatch(ctx: Context) -> Iterator[Finding]:
    """
    Finds a 4-bit (QLoRA) base model computing in another dtype than the fp16 run around it.

    ## What it does
    Reports a bitsandbytes 4-bit base model loaded in float16 whose
    `bnb_4bit_compute_dtype` is not float16 (float32 is bitsandbytes' default).

    ## Why is this bad?
    `Linear4bit.set_compute_type` (bitsandbytes `nn/modules.py`) adopts the input's dtype
    when it is float32 or bfloat16, but keeps the configured compute dtype for float16
    inputs: every 4-bit matmul dequantizes to float32 (or bfloat16) and casts back, and
    bitsandbytes warns `Input type into Linear4bit is torch.float16, but
    bnb_4bit_compute_dtype=torch.float32 (default). This will lead to slow inference or
    training speed.` With a bfloat16 compute dtype, fp16 activations round-trip through
    bf16 and lose mantissa bits, on cards without native bf16 in emulation.

    ## Example
    ```yaml
    load_in_4bit: true
    torch_dtype: float16
    bnb_4bit_compute_dtype: float32
    ```
    Use instead:
    ```yaml
    bnb_4bit_compute_dtype: float16
    ```

    ## Fix
    Set the 4-bit compute dtype to the dtype the model is loaded in.
    """
    compute = compute_dtype(ctx)
    plan = ctx.plan
    if compute is None or plan.load_dtype.value != "float16" or compute == "float16":
        return
    quant = plan.quantization
    assert quant is not None
    config = ctx.config
    edits = edits_for(config.quant_compute_dtype, config.path, "float16")
    yield Finding(
        anchor(config.path, quant.origin, plan.load_dtype.origin),
        f"4-bit base weights compute in {compute} while the model is loaded in float16 "
        f"({plan.load_dtype.origin}): every 4-bit matmul casts float16 activations to {compute} and back",
        Fix("compute the 4-bit layers in float16", edits),
    )
