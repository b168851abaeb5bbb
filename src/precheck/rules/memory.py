"""PC8xx: the plan's memory against the memory of the devices it runs on (see :mod:`precheck.memory`)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..memory import GIB, Dims, Estimate, dims_for, estimate, gib, run_value
from ..provenance import Origin, Sourced
from .base import Context, Finding, Fix, Severity, anchor, rule
from .device import used_devices

if TYPE_CHECKING:
    from ..config import TrainingConfig

#: share of a device's memory above which the run is likely to hit out-of-memory
#: (fragmentation, temporary buffers, NCCL workspaces)
NEAR_LIMIT = 0.9


def estimate_for(ctx: Context) -> tuple[Estimate, Dims, float, str] | None:
    """The estimate, the dims, the smallest used device's memory in bytes and its name.

    None for a config that trains nothing (``TrainingConfig.inference``), when the model's
    size is unknown, or a file the run names could not be read
    (its sharding is unknown). A multi-device run whose files set no sharding, of a
    framework whose launcher can add it, is estimated at its best case (ZeRO-3), so that
    only a run that fits in no way is reported.
    """
    config = ctx.config
    if config.inference:
        return None  # generation or evaluation: no gradients, no optimizer states to estimate
    dims = dims_for(config)
    devices = used_devices(ctx)
    if dims is None or not devices or set(config.references) - set(config.attached):
        return None
    sharded = run_value(config, "zero_stage") is not None or bool(run_value(config, "fsdp"))
    if len(devices) > 1 and not sharded and config.traits.launcher_shards:
        best = _default(3, "no sharding in the run's files: assuming the launcher shards with ZeRO-3/FSDP")
        config = replace(config, zero_stage=best)
    smallest = min(devices, key=lambda d: d.memory_gib)
    est = estimate(config, ctx.plan, dims, len(devices))
    if config is not ctx.config:
        est.notes.append("no sharding in the files: assumed the launcher adds ZeRO-3/FSDP (the best case)")
    return est, dims, smallest.memory_gib * GIB, smallest.name


def _default(value: Any, detail: str) -> Sourced[Any]:
    return Sourced(value, Origin.default(detail))


#: a repository's own switches whose names say the run trains adapters (open-instruct's
#: ``use_lora``/``use_qlora``, LLaVA's ``lora_enable``, peft examples' ``use_peft_lora``,
#: ``use_4bit_quantization``): read by a script precheck did not follow, they are not facts,
#: but an estimate that ignores them (a full fine-tune) contradicts the file
_NAMED_QLORA = ("use_qlora", "qlora", "use_4bit_quantization", "use_4bit", "load_in_4bit", "q_lora")
_NAMED_LORA = ("use_lora", "lora_enable", "use_peft_lora", "use_peft", "lora", "peft")


def _named_method(config: TrainingConfig) -> tuple[TrainingConfig, str] | None:
    """The run as its own switches name it (LoRA, QLoRA) when no fact says the method, and the
    assumption that says so; None when no such switch is on."""
    if method_known(config):
        return None
    on = {k: v for k, v in config.keys.items() if v.value is True or str(v.value).lower() in ("true", "yes", "1")}
    qlora = next((on[k] for k in _NAMED_QLORA if k in on), None)
    lora = qlora or next((on[k] for k in _NAMED_LORA if k in on), None)
    if lora is None:
        return None
    key = lora.origin.key or "?"
    what = "QLoRA (4-bit base)" if qlora is not None else "LoRA"
    where = lora.origin.location()
    said = f"{what}, as `{key}: true` ({where}) says by its name: the training script that reads it decides"
    named = replace(config, train_type=Sourced("lora", lora.origin.derived(said)))
    if qlora is not None:
        named = replace(named, quantization_bits=Sourced(4, qlora.origin.derived(said)))
    return named, said


def _as_named(ctx: Context) -> tuple[Context, tuple[str, ...]]:
    """``ctx`` with the training method its own switches name (adapters in fp32, as peft
    creates them), and the assumption; ``ctx`` itself when none does."""
    found = _named_method(ctx.config)
    if found is None:
        return ctx, ()
    config, said = found
    fp32 = Sourced("float32", Origin.default("LoRA adapters: peft creates them in float32"))
    plan = replace(ctx.plan, param_dtype=fp32, optimizer_state_dtype=fp32, grad_dtype=fp32)
    return replace(ctx, config=config, plan=plan), (said,)


def _alternatives(ctx: Context, dims: Dims, devices: int, limit: float) -> list[str]:
    """Single changes that bring the estimate under ``limit``, with what they cost."""
    config, plan = ctx.config, ctx.plan
    options: list[tuple[str, Any, Any]] = []
    if not (plan.gradient_checkpointing and plan.gradient_checkpointing.value) and config.seq_len is not None:
        options.append(
            (
                "gradient checkpointing",
                config,
                replace(plan, gradient_checkpointing=_default(True, "what-if")),
            )
        )
    if config.batch_size is not None and config.batch_size.value > 1:
        smaller = replace(config, batch_size=_default(1, "what-if"))
        options.append((f"micro-batch 1 with {config.batch_size.value}× gradient accumulation", smaller, plan))
    sharded = run_value(config, "zero_stage") is not None or bool(run_value(config, "fsdp"))
    if devices > 1 and not sharded:
        options.append(("ZeRO-3 or FSDP full_shard", replace(config, zero_stage=_default(3, "w")), plan))
    if run_value(config, "zero_stage") is not None and run_value(config, "offload_optimizer") is None:
        offload = replace(config, offload_optimizer=_default("cpu", "what-if"))
        options.append(("optimizer offload to the CPU", offload, plan))
    if config.train_type is None or str(config.train_type.value).lower() == "full":
        lora = replace(config, train_type=_default("lora", "what-if"))
        fp32 = Sourced("float32", Origin.default("what-if"))
        adapters = replace(plan, param_dtype=fp32, optimizer_state_dtype=fp32, grad_dtype=fp32)
        options.append(("LoRA", lora, adapters))
        qlora = replace(lora, quantization_bits=_default(4, "what-if"))
        options.append(("QLoRA (4-bit base)", qlora, adapters))
    out = []
    for label, cfg, pln in options:
        total = estimate(cfg, pln, dims, devices).total
        if total <= limit:
            out.append(f"{label} ({gib(total)})")
    return out


def method_known(config: TrainingConfig) -> bool:
    """Whether the training method (full, LoRA, QLoRA) rests on facts: a key of the run's
    files, the parameters counted with ``--deep``, or a framework that decides it itself."""
    stated = (config.train_type, config.quantization_bits, config.trainable_params)
    decided = config.traits.method_by_entry_point or config.traits.lora_by_default  # the framework's default
    return any(item is not None for item in stated) or decided


def premises(ctx: Context, dims: Dims, limit: float, *, states_only: bool) -> tuple[str, ...]:
    """What a memory finding assumes: the training method when no file says it (unless even
    QLoRA would not fit), the device count when ``--gpu`` named none and the launch asks for none."""
    out: list[str] = []
    config = ctx.config
    if not method_known(config):
        qlora = replace(config, train_type=_default("lora", "what-if"), quantization_bits=_default(4, "what-if"))
        fp32 = Sourced("float32", Origin.default("what-if"))
        adapters = replace(ctx.plan, param_dtype=fp32, optimizer_state_dtype=fp32, grad_dtype=fp32)
        best = estimate(qlora, adapters, dims, len(used_devices(ctx)))
        if (best.states if states_only else best.total) <= limit:
            out.append(
                "a full fine-tune: no file precheck read says LoRA or QLoRA, and the training script decides "
                "(state it in the run's config, e.g. TRL's `use_peft`, `load_in_4bit`)"
            )
    sharded = run_value(config, "zero_stage") is not None or bool(run_value(config, "fsdp"))
    offloaded = _launcher_offload(ctx, dims, limit, states_only=states_only)
    if offloaded is not None:
        out.append(offloaded)
    if not ctx.hardware.count_known and (sharded or config.traits.launcher_shards):
        # more devices shard more: the count matters (unsharded runs hold the same on each)
        model = ctx.hardware.all_devices[0].model
        card = model.aliases[0] if model.aliases else model.name
        out.append(
            f"{len(used_devices(ctx))} device(s): --gpu names a card without a count and the launch asks for none "
            f"(state the machine: --gpu {shlex.quote('1x' + card)}, --gpu {shlex.quote('8x' + card)})"
        )
    return tuple(out)


def _launcher_offload(ctx: Context, dims: Dims, limit: float, *, states_only: bool) -> str | None:
    """The assumption that the launcher shards without offloading, when the run's files set no
    sharding, its framework's launcher adds it (``launcher_shards``), and ZeRO-3 with the
    optimizer states and parameters offloaded to the CPU would fit: the launch decides that too
    (xtuner's ``--deepspeed deepspeed_zero3_offload``, a DeepSpeed file passed to the HF
    Trainer), so the estimate's best case without offload is not a fact."""
    config = ctx.config
    devices = used_devices(ctx)
    sharded = run_value(config, "zero_stage") is not None or bool(run_value(config, "fsdp"))
    if sharded or not config.traits.launcher_shards or len(devices) < 2:
        return None
    offload = replace(
        config,
        zero_stage=_default(3, "what-if"),
        offload_optimizer=_default("cpu", "what-if"),
        offload_param=_default("cpu", "what-if"),
    )
    best = estimate(offload, ctx.plan, dims, len(devices))
    if (best.states if states_only else best.total) > limit:
        return None
    return (
        "the launcher shards without CPU offload: no file precheck read sets the sharding, and ZeRO-3 with "
        f"the optimizer states and parameters offloaded to the CPU would hold {gib(best.total)} per device "
        "(state the launch's DeepSpeed/FSDP config)"
    )


def _finding(
    ctx: Context, est: Estimate, dims: Dims, memory: float, name: str, verdict: str, named: tuple[str, ...] = ()
) -> Finding:
    config = ctx.config
    where = anchor(
        config.path,
        *(item.origin for item in (config.batch_size, config.model, config.torch_dtype) if item is not None),
    )
    devices = est.devices
    fits = _alternatives(ctx, dims, devices, memory * NEAR_LIMIT)
    options = "; ".join(fits) if fits else "a larger card, more devices with ZeRO-3/FSDP, or LoRA/QLoRA"
    message = (
        f"estimated {est.breakdown()} {verdict} {name}'s {gib(memory)}: {dims.params / 1e9:.2f}B parameters "
        f"({dims.source}), {est.trainable / 1e9:.3g}B trainable; {'; '.join(est.notes)}"
    )
    assumed = (*named, *premises(ctx, dims, memory, states_only=verdict == "exceeds"))
    return Finding(where, message, Fix(f"fits with: {options}"), _related(ctx), assumptions=assumed)


def _related(ctx: Context) -> tuple[Origin, ...]:
    """Keys that drive the estimate, shown as related places."""
    config = ctx.config
    items = (config.batch_size, config.seq_len, config.gradient_checkpointing, config.zero_stage, config.optimizer)
    return tuple(e.origin for e in items if e is not None and e.origin.in_file)


@rule("PC801", "memory-exceeds-device", Severity.ERROR, hardware=True)
def memory_exceeds_device(ctx: Context) -> Iterator[Finding]:
    """
    Finds a run whose model states alone do not fit in the device's memory.

    ## What it does
    Estimates what each device holds: weights in their load dtype, fp32 master weights,
    gradients, optimizer states by optimizer and dtype, divided as ZeRO or FSDP shards
    them and minus what is offloaded, plus the CUDA context (the formulas are in
    `precheck.memory`). The model's size comes from a local checkpoint's `config.json`
    or precheck's table of popular families. Reports the estimate and its breakdown
    when these model states exceed the smallest device the run uses. They follow from
    the parameter count and the dtypes, so the verdict is firm; activations, which
    depend on kernels a config does not always show (fused cross-entropy, activation
    offloading, packing), are judged by PC802.

    The verdict rests on the training method (full, LoRA, QLoRA) and the device count.
    Where no file the run reads states the method (the training script decides) and even
    QLoRA would fit, or `--gpu` names a card without a count (`--gpu A100`) and the launch
    asks for none while sharding could spread the states, the finding is a warning that
    names what was assumed (`--gpu 8xA100-80GB`, TRL's `use_peft`). A framework whose
    default method is LoRA is estimated with adapters when its files name none (the
    `lora_by_default` trait, each framework citing its source: a `finetuning_type` that
    defaults to "lora", `hparams/finetuning_args.py:464@0.9.5`; a `training.lora = True` with
    a `backbone_dtype = "int4"` default, `text_causal_language_modeling_config.py:189,368@v1.14.9`,
    estimated on a 4-bit base). A model TRL loads itself is float32 from TRL 0.27 unless `dtype` is given
    (`trainer/utils.py:1332@1.16.0`). A config that trains nothing (a generation or
    evaluation recipe config with no optimizer) is not estimated.

    ## Why is this bad?
    The run dies at the first step, or at the first long batch, with
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 0 has a
    total capacity of 23.65 GiB of which 1.02 GiB is free.` — after the model was
    downloaded and loaded, and on a cluster after the job waited in the queue.

    ## Example
    A full fine-tune of Llama 2 7B with AdamW in fp32 on one 24 GB card: 6.7B × 16 B =
    100 GiB of model states alone.
    ```yaml
    model_name_or_path: meta-llama/Llama-2-7b-hf
    per_device_train_batch_size: 4
    ```
    Use instead: LoRA/QLoRA, or ZeRO-3 over enough devices.

    ## Fix
    The message lists the single changes that make the estimate fit (gradient
    checkpointing, a smaller micro-batch with accumulation, ZeRO-3/FSDP, optimizer
    offload, LoRA) with the estimate each gives.
    """
    ctx, named = _as_named(ctx)
    found = estimate_for(ctx)
    if found is None:
        return
    est, dims, memory, name = found
    if est.states > memory:
        yield _finding(ctx, est, dims, memory, name, "exceeds", named)


@rule("PC802", "memory-near-limit", Severity.WARNING, hardware=True)
def memory_near_limit(ctx: Context) -> Iterator[Finding]:
    """
    Finds a run whose estimated memory with activations is above 90 % of the device's.

    ## What it does
    The PC801 estimate plus activations from the micro-batch, the sequence length, the
    model's width and depth and gradient checkpointing, which counts as on where the
    framework turns it on by default: TRL's trainer configs from 0.22 (`sft_config.py:111@0.22.0`,
    `base_config.py:62@1.16.0`), Unsloth's `get_peft_model` (`use_gradient_checkpointing =
    "unsloth"`, `models/llama.py:4579@2026.10.9`), a framework's own `architecture.gradient_checkpointing`
    default (`text_causal_language_modeling_config.py:369@v1.14.9`). Reports when that total exceeds
    the smallest device's memory although the model states fit, or when it lies between
    90 % and 100 % of it.

    ## Why is this bad?
    The estimate leaves out the caching allocator's fragmentation, NCCL buffers and the
    longest batch's peaks; within 10 % of the limit runs often fail later with
    `torch.OutOfMemoryError: CUDA out of memory`, at an evaluation or a long sample.

    ## Example
    Llama 3 8B with LoRA in bf16, micro-batch 16 of 4096 tokens on an 80 GB card.

    ## Fix
    Turn on gradient checkpointing or lower the micro-batch and raise
    `gradient_accumulation_steps` to keep the effective batch.
    """
    ctx, named = _as_named(ctx)
    found = estimate_for(ctx)
    if found is None:
        return
    est, dims, memory, name = found
    if est.states <= memory < est.total:
        yield _finding(ctx, est, dims, memory, name, "exceeds (with activations)", named)
    elif memory * NEAR_LIMIT < est.total <= memory:
        yield _finding(ctx, est, dims, memory, name, f"is {est.total / memory:.0%} of", named)
