"""PC715: llama-cookbook's precision trap.

Source: meta-llama/llama-cookbook (main 20dd34e): ``finetuning.py`` ``main`` (``torch_dtype=
torch.float16 if train_config.use_fp16 else "auto"``; ``if train_config.enable_fsdp and
fsdp_config.pure_bf16 and not train_config.quantization: model.to(torch.bfloat16)``; FSDP
``mixed_precision=mixed_precision_policy if not fsdp_config.pure_bf16 else None``);
``utils/train_utils.py`` ``train`` (``ShardedGradScaler()`` for ``use_fp16`` under FSDP,
``torch.cuda.amp.autocast`` when ``use_fp16``). torch
``torch/distributed/fsdp/sharded_grad_scaler.py`` ``_unscale_grads_`` calls
``torch._amp_foreach_non_finite_check_and_unscale_``, whose CUDA kernel is dispatched for
float, double and half only: bf16 gradients raise ``NotImplementedError:
"_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...converters import is_on
from ...facts import quote
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule


@rule(
    "PC715",
    "llama-cookbook-fp16-pure-bf16-fsdp",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
    frameworks=("llama-cookbook",),
)
def llama_cookbook_fp16_pure_bf16_fsdp(ctx: Context) -> Iterator[Finding]:
    """
    Finds llama-cookbook `use_fp16` with `pure_bf16` under FSDP (full fine-tune).

    ## What it does
    Reports `use_fp16: true`, `enable_fsdp: true` and `pure_bf16: true` together in a
    full fine-tune (no `use_peft: true`) of an unquantized model.

    ## Why is this bad?
    `finetuning.py` `main` loads the model in fp16 (`torch_dtype=torch.float16 if
    train_config.use_fp16`) and then, because `enable_fsdp and fsdp_config.pure_bf16 and
    not train_config.quantization`, casts it with `model.to(torch.bfloat16)`; FSDP gets no
    mixed-precision policy (`mixed_precision=... if not fsdp_config.pure_bf16 else None`).
    `train_utils.train` still runs fp16 autocast with a `ShardedGradScaler()` for
    `use_fp16`, and its unscale of the bf16 gradients fails at the first step:
    `NotImplementedError: "_amp_foreach_non_finite_check_and_unscale_cuda" not implemented
    for 'BFloat16'`.

    ## Example
    ```yaml
    enable_fsdp: true
    use_fp16: true
    pure_bf16: true
    ```
    Use instead:
    ```yaml
    enable_fsdp: true
    pure_bf16: true
    ```

    ## Fix
    Drop `use_fp16` to train pure bf16 (no loss scaling needed), or drop `pure_bf16` to
    train with FSDP's fp16 policy. Either changes the run, so the fix is marked unsafe.
    """
    config = ctx.config
    if not (is_on(config.fp16) and is_on(config.fsdp) and is_on(config.pure_bf16)):
        return
    if config.quantization_bits is not None or (config.train_type is not None and config.train_type.value == "lora"):
        return
    assert config.fp16 is not None and config.pure_bf16 is not None
    yield Finding(
        config.fp16.origin,
        "`use_fp16` with `pure_bf16` under FSDP: finetuning.py casts the fp16-loaded model to bf16, and the "
        "ShardedGradScaler use_fp16 adds fails on its bf16 gradients: "
        f'"NotImplementedError: {quote("torch.unscale_bf16_cuda")}"',
        Fix("drop use_fp16 (pure bf16 needs no loss scaling)", edits_for(config.fp16, config.path, False)),
        related=(config.pure_bf16.origin,),
    )


__all__ = ["llama_cookbook_fp16_pure_bf16_fsdp"]
