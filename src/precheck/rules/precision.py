"""PC2xx: precision settings that contradict each other or the model."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts import quote, span
from ..models import family_of
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, edits_for, rule, written
from .device import flag_edit, used_devices


def _to_bf16_edits(ctx: Context) -> list[Edit]:
    """Move every fp16 source of the plan to bf16: the AMP switches and an fp16 load dtype."""
    config, plan = ctx.config, ctx.plan
    edits: list[Edit] = []
    if plan.autocast_dtype.value == "float16" and config.fp16 is not None and config.fp16.origin.in_file:
        edits.append(flag_edit(ctx, "fp16", False))  # type: ignore[arg-type]
        if "bf16" in dict(config.flag_keys):  # elsewhere turning fp16 off is what selects bf16
            edits.append(flag_edit(ctx, "bf16", True))  # type: ignore[arg-type]
    dtype = config.torch_dtype
    if plan.load_dtype.value == "float16" and dtype is not None and dtype.value == "float16":
        edits.extend(edits_for(dtype, config.path, "bfloat16"))
    return edits


def _bf16_weights_under_fp16_autocast(ctx: Context) -> Iterator[Finding]:
    """Weights the file itself loads in bf16, computed under fp16 autocast."""
    config, plan = ctx.config, ctx.plan
    load = plan.load_dtype
    written_bf16 = load.value == "bfloat16" and load.origin.kind == "file" and load.origin.path == config.path
    # bf16 gradients under the GradScaler are PC404's crash, not this
    if written_bf16 and plan.autocast_dtype.value == "float16" and plan.grad_dtype.value != "bfloat16":
        yield Finding(
            load.origin,
            f"the weights are loaded in bf16 (`{load.origin.key or 'dtype'}`) and computed under fp16 autocast: "
            "each op casts them to fp16, and a model run in bf16 can overflow fp16's maximum of 65504 "
            f'(NaN losses; H2O LLM Studio stops with "{quote("h2o-llmstudio.nan_loss")}")',
            Fix("autocast in bf16 to match the weights (or load them in float32 for fp16 AMP)"),
            related=(plan.autocast_dtype.origin,) if plan.autocast_dtype.origin.in_file else (),
        )


@rule("PC202", "fp16-on-bf16-model", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def fp16_on_bf16_model(ctx: Context) -> Iterator[Finding]:
    """
    Warns when a checkpoint released in bf16 is trained with fp16.

    ## What it does
    Reads the checkpoint's saved dtype from its `config.json` when the model is a local
    folder, or else looks the model up in precheck's table of popular families
    (`precheck.models`, each with the `torch_dtype` its publisher saved in `config.json`
    and where that was read), and reports fp16 autocast or fp16 weights for a family released in bfloat16
    (Llama 3, TinyLlama, Qwen2, GLM-4, Baichuan2-13B, Mistral). Llama 2 was released in float16 and is not
    reported. A config that trains nothing (a recipe framework's generation, evaluation and
    quantization configs, which build no optimizer; PC701 exempts them too) is not reported.
    Also reports weights the file loads in bf16 under fp16 autocast (a
    `backbone_dtype: bfloat16` with `mixed_precision_dtype: float16` and LoRA, where the
    training loop builds `autocast(dtype=float16)` over the bf16 backbone).

    ## Why is this bad?
    A bf16 checkpoint was trained with bf16's range (up to ~3.4e38); its activations can
    exceed fp16's maximum of 65504. In fp16 they overflow to inf, loss scaling cannot
    recover it, and `grad_norm` turns NaN (the seed: TinyLlama trained in fp16 with
    Unsloth, unslothai/unsloth#911, while bf16 on an RTX 4090 trained fine).

    ## Example
    ```yaml
    model_name_or_path: TinyLlama/TinyLlama-1.1B-Chat-v1.0
    fp16: true
    ```
    Use instead (on a GPU with bf16):
    ```yaml
    bf16: true
    ```

    ## Fix
    `bf16: true` (and `fp16: false`) where every device supports bf16; otherwise keep
    fp16 with gradient clipping and dynamic loss scaling, or train in fp32.
    """
    config, plan = ctx.config, ctx.plan
    if config.inference:
        return  # generation or evaluation: nothing is trained
    if config.model is None or not plan.uses_fp16:
        yield from _bf16_weights_under_fp16_autocast(ctx)
        return
    if config.model_dtype is not None:  # the local checkpoint's own config.json
        native, released = config.model_dtype.value, f"its config.json, {config.model_dtype.origin.location()}"
    else:
        family = family_of(str(config.model.value))
        if family is None:
            yield from _bf16_weights_under_fp16_autocast(ctx)
            return
        native, released = family.native_dtype, f"{family.name} family"
    if native != "bfloat16":
        yield from _bf16_weights_under_fp16_autocast(ctx)
        return
    item = ctx.plan.autocast_dtype if ctx.plan.autocast_dtype.value == "float16" else ctx.plan.load_dtype
    origin = item.origin if item.origin.in_file else config.model.origin
    bf16_ok = ctx.hardware.known and all(d.bf16 for d in used_devices(ctx))
    if bf16_ok:
        fix = Fix("train in bf16: every device this run uses supports it", tuple(_to_bf16_edits(ctx)))
    else:
        fix = Fix(
            "keep fp16 only with gradient clipping and dynamic loss scaling, "
            "or train in fp32 (bf16 needs an sm_80+ GPU)"
        )
    yield Finding(
        origin,
        f"{config.model.value} was released in bf16 ({released}); training it in fp16 "
        "overflows past fp16's maximum of 65504, which shows up as NaN grad_norm",
        fix,
        related=(config.model.origin,),
    )


#: transformers 4.x TrainingArguments: ``half_precision_backend`` auto|apex|cpu_amp; gone in 5.0.0
HAS_HALF_PRECISION_BACKEND = span("transformers.half_precision_backend")
NO_HALF_PRECISION_BACKEND = span("transformers.half_precision_backend_removed")


@rule(
    "PC203",
    "apex-with-bf16",
    Severity.ERROR,
    versions=(HAS_HALF_PRECISION_BACKEND,),
    affects_latest=False,
    fix_safety=FixSafety.SAFE,
)
def apex_with_bf16(ctx: Context) -> Iterator[Finding]:
    """
    Finds `half_precision_backend: apex` together with `bf16: true`.

    ## What it does
    Reports the apex AMP backend selected for a bf16 run in transformers 4.x (the HF
    Trainer and TRL, whose files are TrainingArguments' own keys).

    ## Why is this bad?
    `TrainingArguments.__post_init__` (transformers 4.57, `training_args.py`) raises
    ``ValueError: `--half_precision_backend apex`: GPU bf16 is not supported by apex.`` when
    `bf16` is set and the backend is apex. (5.0.0 removed the field; see PC204.)

    ## Example
    ```yaml
    bf16: true
    half_precision_backend: apex
    ```
    Use instead:
    ```yaml
    bf16: true
    ```

    ## Fix
    Remove `half_precision_backend` (the default, `auto`, uses torch AMP).
    """
    if not ctx.config.traits.plain_hf_trainer:
        return
    backend = ctx.config.half_precision_backend
    bf16 = ctx.config.bf16
    if backend is None or str(backend.value).lower() != "apex" or bf16 is None or not bf16.value:
        return
    yield Finding(
        backend.origin,
        f'apex cannot run bf16: "{quote("transformers.apex_bf16")}"',
        Fix(
            "use torch AMP",
            edits_for(backend, ctx.config.path, remove=True),
        ),
        related=(bf16.origin,),
    )


@rule(
    "PC204",
    "half-precision-backend-removed",
    Severity.ERROR,
    versions=(NO_HALF_PRECISION_BACKEND,),
    fix_safety=FixSafety.SAFE,
)
def half_precision_backend_removed(ctx: Context) -> Iterator[Finding]:
    """
    Finds `half_precision_backend`, which transformers 5 no longer accepts.

    ## What it does
    Reports the key for transformers 5.0.0 and later (and when the version is not known:
    the newest releases reject it), in the HF Trainer's and TRL's own files.

    ## Why is this bad?
    transformers 5.0.0 removed the `half_precision_backend` field from `TrainingArguments`
    (present up to 4.57.x, absent from 5.0.0rc0 on). `TrainingArguments` is a dataclass, so
    the argument parser stops before training: "Some specified arguments are not used by
    the HfArgumentParser".

    ## Example
    ```yaml
    half_precision_backend: auto
    ```
    Use instead: remove the key.

    ## Fix
    Remove `half_precision_backend`; torch AMP is the only backend.
    """
    backend = ctx.config.half_precision_backend
    if backend is None or not ctx.config.traits.plain_hf_trainer:
        return
    yield Finding(
        backend.origin,
        "transformers 5 removed `half_precision_backend`: the argument parser rejects the config",
        Fix(
            "remove the key",
            edits_for(backend, ctx.config.path, remove=True),
        ),
    )


@rule(
    "PC205",
    "fp16-and-bf16",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
)
def fp16_and_bf16(ctx: Context) -> Iterator[Finding]:
    """
    Finds `fp16: true` and `bf16: true` in one run.

    ## What it does
    Reports both mixed-precision switches on for frameworks that hand them to
    transformers' TrainingArguments as written (the HF Trainer, TRL, frameworks that pass
    the flags on). A framework that reconciles them first (fp16 off when bf16 is on) is
    not reported.

    ## Why is this bad?
    `TrainingArguments` rejects the pair before training (`training_args.py:1785@5.23.0`,
    4.57 alike): `ValueError: At most one of fp16 and bf16 can be True, but not both`.
    Which one was meant is not in the file. A framework release that rewrites both flags
    from `torch_dtype` (bf16 when `torch_dtype` is unset and both flags are on) never gets
    there: one of the two flags is ignored silently, as in PC201.

    ## Example
    ```yaml
    fp16: true
    bf16: true
    ```
    Use instead (on an Ampere or newer GPU):
    ```yaml
    bf16: true
    ```

    ## Fix
    Keep bf16 where every device supports it, otherwise keep fp16. The choice changes the
    run's numerics, so the fix is marked unsafe.
    """
    fp16, bf16 = ctx.config.fp16, ctx.config.bf16
    if not ctx.config.traits.passes_precision_flags:
        return
    if fp16 is None or bf16 is None or not (fp16.value and bf16.value):
        return
    keep_bf16 = ctx.hardware.known and all(d.bf16 for d in used_devices(ctx))
    drop = fp16 if keep_bf16 else bf16
    later = bf16.origin.line and fp16.origin.line and bf16.origin.line > fp16.origin.line
    where = bf16.origin if later else fp16.origin
    message = f'`fp16` and `bf16` are both true: "{quote("transformers.fp16_and_bf16")}"'
    rewriting = ctx.config.traits.flags_from_torch_dtype
    if rewriting is not None:
        rewrites, known = ctx.versions.holds(rewriting)
        dtype = ctx.config.torch_dtype
        if rewrites:
            wins = "float16" if dtype is not None and dtype.value in ("float16", "float32") else "bfloat16"
            said = f"`{written(dtype)}`" if dtype is not None else "`torch_dtype` unset: bf16"
            kept = "fp16" if wins == "float16" else "bf16"
            message = (
                f"`fp16` and `bf16` are both true: {rewriting.package} rewrites both from torch_dtype ({said}), "
                f"so the run trains in {kept} and the other flag is ignored silently [{known}]"
            )
        else:
            message += f" [{known}]"
    yield Finding(
        where,
        message,
        Fix(
            "keep bf16 (every device supports it)" if keep_bf16 else "keep fp16 (bf16 is not native on every device)",
            edits_for(drop, ctx.config.path, False),
        ),
        related=(fp16.origin, bf16.origin),
    )
