"""PC707-PC709: traps of the framework's variants: LitGPT fine-tuning and NeMo 1.x Megatron.

Sources:

- Lightning-AI/litgpt (main, c16c72c): ``litgpt/finetune/lora.py`` ``setup`` (also adapter.py,
  adapter_v2.py): ``precision = precision or get_default_supported_precision(training=True)``
  (``litgpt/utils.py``: always a ``-mixed`` value for training); with ``quantize: bnb.*``:
  ``if "mixed" in precision: raise ValueError("Quantization and mixed precision is not
  supported.")``, then ``{"16-true": ..., "bf16-true": ..., "32-true": ...}[precision]``
  (a ``KeyError`` for anything else); ``if devices * num_nodes > 1: if quantize: raise
  NotImplementedError("Quantization is currently not supported for multi-GPU training. Please
  set devices=1 and num_nodes=1 when using the --quantize flag.")``.
- NVIDIA/NeMo 1.x (``nemo/collections/nlp/models/language_modeling/megatron_base_model.py``
  ``MegatronBaseModel._validate_and_override_config``): ``if self.cfg.get('fsdp', False) and
  self.cfg.get('fp8', False): raise ValueError('Torch FSDP does not support FP8.')``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...converters import is_on, to_int
from ...facts import quote
from ...provenance import Sourced
from ...release_schemas import ReleaseSchema, release
from ...rules.base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from ...versions import VersionRange
from .modes import ENTRY_NOTE, GPT_PROGRAM, GPT_VARIANT
from .rules import all_bf16, bnb_quantize, in_file

LITGPT_QUANTIZE_PRECISIONS = ("16-true", "bf16-true", "32-true")


def _litgpt_precision_fix(ctx: Context, raw: str | None) -> str:
    """The ``-true`` precision LitGPT's quantized path takes: bf16 where asked for or where every
    GPU has it, else fp32 (not ``16-true``: pure fp16 with no GradScaler, PC405)."""
    if raw is not None:
        if raw.startswith("bf16"):
            return "bf16-true"
        if raw.startswith("32"):
            return "32-true"
        if raw.startswith("16"):
            return "bf16-true" if all_bf16(ctx) else "32-true"
    return "32-true" if all_bf16(ctx) is False else "bf16-true"


@rule("PC707", "litgpt-quantize-precision", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def litgpt_quantize_precision(ctx: Context) -> Iterator[Finding]:
    """
    Finds LitGPT `quantize: bnb.*` with a precision other than 16-true, bf16-true or 32-true.

    ## What it does
    Reports a LitGPT fine-tuning config (`litgpt finetune lora|adapter|adapter_v2`) that
    quantizes with bitsandbytes while `precision` is a "-mixed" value, is left unset, or is
    anything other than "16-true", "bf16-true" and "32-true".

    ## Why is this bad?
    `setup()` (`litgpt/finetune/lora.py`, adapter.py, adapter_v2.py) first fills an unset
    precision with `get_default_supported_precision(training=True)` (`litgpt/utils.py`),
    which is always "bf16-mixed" or "16-mixed", then checks `if "mixed" in precision: raise
    ValueError("Quantization and mixed precision is not supported.")`, then maps the value
    with `{"16-true": ..., "bf16-true": ..., "32-true": ...}[precision]` (a `KeyError` for
    any other). The run stops before the model loads.

    ## Example
    ```yaml
    quantize: bnb.nf4
    precision: bf16-mixed
    ```
    Use instead:
    ```yaml
    quantize: bnb.nf4
    precision: bf16-true
    ```

    ## Fix
    Use `bf16-true` where the GPUs have bf16 (sm_80+), else `32-true` (`16-true` runs, but
    trains pure fp16 with no GradScaler: PC405). Weights and LoRA then compute in that dtype (`BitsandbytesPrecision`)
    instead of autocast, so the fix is marked unsafe.
    """
    config = ctx.config
    quantize = bnb_quantize(config)
    if quantize is None:
        return
    item = config.precision
    raw = str(item.value) if item is not None else None
    if raw is not None and raw in LITGPT_QUANTIZE_PRECISIONS:
        return
    value = _litgpt_precision_fix(ctx, raw)
    if raw is None:
        yield Finding(
            quantize.origin,
            f"`quantize: {quantize.value}` without `precision`: LitGPT fills in get_default_supported_precision("
            f'training=True), a "-mixed" precision, and raises "ValueError: {quote("litgpt.quantize_mixed")}"',
            Fix(f"set precision: {value}", (Edit(config.path, "precision", value, format=config.format or None),)),
        )
        return
    assert item is not None
    if "mixed" in raw:
        text = f'raises "ValueError: {quote("litgpt.quantize_mixed")}"'
    else:
        text = f"raises KeyError: {raw!r} (quantize takes precision 16-true, bf16-true or 32-true)"
    yield Finding(
        item.origin,
        f"`precision: {raw}` with `quantize: {quantize.value}`: LitGPT {text}",
        Fix(f"use precision: {value}", edits_for(item, config.path, value)),
        related=(quantize.origin,),
    )


def _litgpt_devices(ctx: Context) -> tuple[int, list[Sourced[Any]]] | None:
    """devices x num_nodes as LitGPT's ``parse_devices`` counts them, with the keys that say so."""
    config = ctx.config
    devices = config.keys.get("devices")
    nodes = config.keys.get("num_nodes")
    keys: list[Sourced[Any]] = []
    count = 1  # finetune/lora.py default devices=1
    if devices is not None:
        raw = devices.value
        if raw in ("auto", -1, "-1"):
            if not ctx.hardware.known:
                return None
            count = max(len(ctx.hardware.devices), 1)  # torch.cuda.device_count() or 1
        else:
            number = to_int(raw)
            if number is None:
                return None
            count = number
        if count > 1:
            keys.append(devices)
    node_count = to_int(nodes.value) if nodes is not None else 1
    if node_count is None:
        return None
    if node_count > 1 and nodes is not None:
        keys.append(nodes)
    return count * node_count, keys


@rule("PC708", "litgpt-quantize-multi-device", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def litgpt_quantize_multi_device(ctx: Context) -> Iterator[Finding]:
    """
    Finds LitGPT `quantize` with more than one device (devices x num_nodes > 1).

    ## What it does
    Reports a LitGPT fine-tuning config that sets `quantize` and asks for several devices:
    `devices` above 1, `devices: auto`/-1 on a machine with several GPUs, or `num_nodes`
    above 1.

    ## Why is this bad?
    `setup()` in `litgpt/finetune/lora.py` (and adapter.py, adapter_v2.py) checks `if
    devices * num_nodes > 1: if quantize: raise NotImplementedError("Quantization is
    currently not supported for multi-GPU training. Please set devices=1 and num_nodes=1
    when using the --quantize flag.")` before building the Fabric.

    ## Example
    ```yaml
    quantize: bnb.nf4
    precision: bf16-true
    devices: 4
    ```
    Use instead:
    ```yaml
    quantize: bnb.nf4
    precision: bf16-true
    devices: 1
    ```

    ## Fix
    Train the quantized model on one device, or drop `quantize` to shard the unquantized
    model over several (FSDP). Either changes the run, so the fix is marked unsafe.
    """
    config = ctx.config
    quantize = config.quantize
    if config.variant != "litgpt" or quantize is None:
        return
    found = _litgpt_devices(ctx)
    if found is None:
        return
    total, keys = found
    if total <= 1:
        return
    edits = tuple(edit for item in keys for edit in edits_for(item, config.path, 1))
    origin = anchor(config.path, *(item.origin for item in keys), quantize.origin)
    yield Finding(
        origin,
        f"`quantize: {quantize.value}` on {total} devices: LitGPT raises "
        f'"NotImplementedError: {quote("litgpt.quantize_multi_gpu")}"',
        Fix("train the quantized model on one device (or drop quantize to shard over several)", edits),
        related=(quantize.origin,),
    )


@rule("PC709", "nemo-fsdp-fp8", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def nemo_fsdp_fp8(ctx: Context) -> Iterator[Finding]:
    """
    Finds a NeMo 1.x Megatron config with both `model.fsdp` and `model.fp8`.

    ## What it does
    Reports a NeMo 1.x Megatron model config (`megatron_gpt_config.yaml` and its kin) that
    turns on Torch FSDP (`model.fsdp: true`) and Transformer Engine FP8 (`model.fp8: true`)
    together.

    ## Why is this bad?
    `MegatronBaseModel._validate_and_override_config`
    (`nemo/collections/nlp/models/language_modeling/megatron_base_model.py`) runs when the
    model is built and raises `ValueError: Torch FSDP does not support FP8.`

    ## Example
    ```yaml
    model:
      megatron_amp_O2: false
      fsdp: true
      fp8: true
    ```
    Use instead:
    ```yaml
    model:
      megatron_amp_O2: false
      fsdp: true
      fp8: false
    ```

    ## Fix
    Drop FP8 to keep FSDP (bf16 compute), or drop FSDP and use Megatron's tensor/pipeline
    parallelism with the distributed optimizer to keep FP8. Either changes the run, so the
    fix is marked unsafe.
    """
    config = ctx.config
    # the dialect sets fsdp and fp8 from a Megatron config's model.fsdp and model.fp8, and
    # fsdp from trainer.strategy too: the model block's own switch is what NeMo checks
    fsdp, fp8 = config.fsdp, config.fp8
    if config.variant != "nemo" or not is_on(config.setting("model.fsdp")) or not in_file(fp8):
        return
    assert fsdp is not None and fp8 is not None
    yield Finding(
        fp8.origin,
        f'`model.fp8` with `model.fsdp`: NeMo\'s MegatronBaseModel raises "ValueError: {quote("nemo.fsdp_fp8")}"',
        Fix("turn FP8 off to keep FSDP (or FSDP off to keep FP8)", edits_for(fp8, config.path, False)),
        related=(fsdp.origin,),
    )


def _entry_points(ctx: Context, schema: ReleaseSchema) -> list[str]:
    """The GPT variant's entry points that may run this config: the one the launch named, else
    those whose parameters its keys fit (``model_name`` only ``pretrain`` takes,
    ``checkpoint_dir`` only the fine-tuning commands do)."""
    named = next((n.key for n in ctx.config.notes if n.kind == ENTRY_NOTE and n.key), None)
    if named is not None:
        return [named] if schema.entry_point(named) is not None else []
    keys = {k.lstrip("-").replace("-", "_") for k in ctx.config.keys}
    commands = schema.commands()
    if "model_name" in keys:
        return [c for c in commands if c == "pretrain"]
    if "checkpoint_dir" in keys:
        return [c for c in commands if c.startswith("finetune")]
    return list(commands)


@rule(
    "PC717",
    "litgpt-option-refused",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
    frameworks=("lightning",),
    versions=(VersionRange(GPT_PROGRAM),),  # every release: the schema of the run's release is read
)
def litgpt_option_refused(ctx: Context) -> Iterator[Finding]:
    """
    Finds a LitGPT option, or a value of one, that the command's parser refuses.

    ## What it does
    Reads the LitGPT command that runs the config (`litgpt pretrain`, `litgpt finetune_lora`...,
    named by the launch line, else every command whose parameters the file's keys fit) against
    the option schema extracted from LitGPT's release (`scripts/extract_schema.py`: each
    command's `setup()` parameters, their `Literal[...]` choices). Reports a key no such command
    takes, and a value outside an option's choices in every such command.

    ## Why is this bad?
    `litgpt` is a jsonargparse `CLI` over the `setup()` functions (`litgpt/__main__.py`): an
    option the function does not take, or a value outside its `Literal` type, stops the parser
    before training. `litgpt pretrain` takes `precision: Literal["bf16-true", "bf16-mixed",
    "32-true", None]` (`litgpt/pretrain.py:52`@0.5.13): "16-mixed" and "16-true", the 16-bit
    precisions of a V100 or T4, are refused; `finetune_full` has no `quantize` at all.

    ## Example
    ```sh
    litgpt pretrain pythia-160m --precision 16-mixed   # on a V100
    ```
    Use instead:
    ```sh
    litgpt pretrain pythia-160m --precision 32-true
    ```

    ## Fix
    Use a value the command accepts (listed in the message) or drop the option. On a GPU
    without bf16, `pretrain` trains in "32-true" only, so the fix is marked unsafe.
    """
    config = ctx.config
    if config.variant != GPT_VARIANT:
        return
    info = ctx.versions.get(GPT_PROGRAM)
    schema = release(GPT_PROGRAM, info.version if info is not None else None)
    commands = _entry_points(ctx, schema)
    entries = [e for e in (schema.entry_point(c) for c in commands) if e is not None]
    if not entries:
        return
    where = " or ".join(f"`{GPT_PROGRAM} {c}`" for c in commands)
    read = schema.label
    for key, item in config.keys.items():
        name = key.lstrip("-").replace("-", "_")
        if not item.origin.in_file or name in ("config", "c"):
            continue
        defined = [e["options"][name] for e in entries if name in e["options"]]
        if not defined:
            yield Finding(
                item.origin,
                f"`{key}` is not an option of {where} ({read}): jsonargparse stops before training "
                "(an unrecognized argument, or a config key the command does not take)",
                Fix("remove it, or use the command that takes it", edits_for(item, config.path, remove=True)),
            )
            continue
        choices = [d.get("choices") for d in defined]
        value = item.value
        if isinstance(value, (dict, list)) or any(c is None for c in choices):
            continue
        if all(value not in c for c in choices if c is not None):
            allowed = sorted({str(v) for c in choices if c is not None for v in c if v is not None})
            fix = Fix(f"use one of {', '.join(allowed)}")
            if name == "precision":
                wanted = "32-true" if all_bf16(ctx) is False else "bf16-mixed"
                if wanted in allowed:
                    fix = Fix(f"use {wanted} (one of {', '.join(allowed)})", edits_for(item, config.path, wanted))
            yield Finding(
                item.origin,
                f"`{key}: {value}` is not a value {where} accepts ({', '.join(allowed)}; read in {read}): "
                "jsonargparse stops before training",
                fix,
            )


__all__ = ["litgpt_option_refused", "litgpt_quantize_multi_device", "litgpt_quantize_precision", "nemo_fsdp_fp8"]
