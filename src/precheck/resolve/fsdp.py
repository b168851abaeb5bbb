"""FSDP under the HF Trainer: what an FSDP config (or ``fsdp: "full_shard ..."``) does to a run's precision.

Read in transformers 5.23.0 (``training_args.py`` ``_process_fsdp_args`` /
``_apply_legacy_fsdp_to_config``, ``trainer.py`` ``create_accelerator_and_postprocess``,
``distributed/fsdp.py`` ``update_fsdp_plugin_peft``), accelerate 1.15.0 (``state.py``,
``accelerator.py`` ``prepare_model``, ``utils/fsdp_utils.py`` ``fsdp2_prepare_model``,
``utils/dataclasses.py`` ``FullyShardedDataParallelPlugin``) and torch (``_runtime_utils.py``
``_cast_grad_to_param_dtype``, ``_fully_shard/_fsdp_collectives.py`` ``foreach_reduce``):

- The Trainer builds ``FullyShardedDataParallelPlugin(**fsdp_plugin_args)`` and
  ``Accelerator(mixed_precision=args.mixed_precision, fsdp_plugin=...)``; ``mixed_precision`` is
  ``fp16``/``bf16`` from the flags, else ``ACCELERATE_MIXED_PRECISION``. In a multi-process run
  ``AcceleratorState`` switches to FSDP and, unless it is "no", calls
  ``fsdp_plugin.set_mixed_precision(mixed_precision)``: ``param_dtype = reduce_dtype =
  buffer_dtype`` (FSDP1 ``MixedPrecision``) or ``param_dtype = reduce_dtype = output_dtype``
  (FSDP2 ``MixedPrecisionPolicy``) = fp16 / bf16 (fp8: bf16). A 4-bit QLoRA model with a floating
  ``bnb_4bit_quant_storage`` gets that storage dtype instead (``update_fsdp_plugin_peft``).
- With mixed precision on, accelerate upcasts trainable low-precision parameters to fp32
  before sharding: FSDP1 "Upcasted low precision parameters in ... because mixed precision turned
  on in FSDP." (``prepare_model``), FSDP2 "FSDP upcast of low precision parameters to fp32 (since
  mixed_precision != 'no') ..." (``fsdp2_prepare_model``, skipped for models holding 4-bit
  ``Params4bit``). A bf16 full fine-tune therefore keeps fp32 weights, gradients and optimizer
  states; the policy casts the weights to the compute dtype for forward/backward.
- Gradients are reduce-scattered in ``reduce_dtype`` and cast back to the parameter dtype
  (FSDP1 ``_cast_grad_to_param_dtype``, FSDP2 ``foreach_reduce`` → ``orig_dtype``).
- ``fsdp_config['activation_checkpointing']`` together with the ``activation_checkpointing`` /
  ``gradient_checkpointing`` argument raises (5.23.0) "`fsdp_config['activation_checkpointing']`
  (FSDP's own activation checkpointing) and the `activation_checkpointing` training argument
  can't both be set to True. Use FSDP's activation checkpointing when using FSDP." (4.57.6: "The
  activation_checkpointing in FSDP config and the gradient_checkpointing in training arg can't be
  set to True simultaneously. Please use FSDP's activation_checkpointing logic when using FSDP.");
  a framework that launches FSDP from its own file option (trait ``fsdp_from_file``) may turn
  ``gradient_checkpointing`` off instead, with a warning (the trait names its fact).
- ``fsdp_config`` without ``fsdp`` does nothing (5.23.0 ``if not self.fsdp: return None``;
  4.57.6 warns "`--fsdp_config` is useful only when `--fsdp` is specified."). A framework's
  own ``--fsdp file.json`` (trait ``fsdp_from_file``) switches FSDP on by itself.

Contract for the HF resolver (HF configs with ``fsdp: "full_shard auto_wrap"`` and an inline or
named ``fsdp_config``): :func:`fsdp_plan_fields` returns the plan fields FSDP changes and the
overrides; :func:`apply_fsdp` applies them (``ATTACHMENTS["fsdp"]`` is :func:`apply`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..config import TrainingConfig
from ..dialects.base import to_bool
from ..dialects.fsdp_config import STRATEGIES, fsdp_entries
from ..facts import quote, span
from ..hardware import Hardware
from ..provenance import Origin, Sourced
from ..versions import VersionRange, Versions
from .fsdp_upcast import upcast_skipped
from .plan import Override, PrecisionPlan, same_dtype_plan

#: transformers reads ``fsdp_config['version']`` from 5.0.0 (default 1); the default became 2
#: in 5.10.1 (training_args.py:2736@5.10.1; 5.9.0 still 1)
READS_VERSION = span("transformers.fsdp_reads_version")
FSDP2_DEFAULT = span("transformers.fsdp2_default")
#: 5.x names the argument ``activation_checkpointing`` (``gradient_checkpointing`` is its alias)
AC_ERROR_V5 = quote("transformers.fsdp_ac_conflict")
AC_ERROR_V4 = quote("transformers.fsdp_ac_conflict_v4")
HF_V5 = span("transformers.fsdp_reads_version")
POLICY = {"float16": "float16", "bfloat16": "bfloat16"}


# a resolver's working values, never compared or printed: no methods to compile at import
@dataclass(eq=False, repr=False)
class FsdpSettings:
    """What the Trainer hands accelerate's FSDP plugin."""

    enabled: Sourced[bool]
    version: Sourced[int]
    sharding: Sourced[str]
    offload: Sourced[bool]
    activation_checkpointing: Sourced[bool] | None


def _known(versions: Versions, span: VersionRange) -> tuple[bool, str]:
    info = versions.get(span.package)
    if info is None:
        return True, f"{span.package} version not known: newest behaviour"
    return span.contains(info.version), f"{span.package} {info.version} ({info.source})"


def _derive(item: Sourced[Any], detail: str) -> Origin:
    return item.origin.derived(detail) if item.origin.in_file else Origin.default(f"{item.origin}; {detail}")


def _options(main: TrainingConfig, fsdp: TrainingConfig | None) -> TrainingConfig:
    """Where the ``fsdp`` options were mapped: the framework's FSDP file, else the main config."""
    if fsdp is not None and "fsdp" in fsdp.keys:
        return fsdp
    return main


def settings_for(
    main: TrainingConfig, fsdp: TrainingConfig | None, versions: Versions, overrides: list[Override]
) -> FsdpSettings | None:
    """The FSDP settings of the run, or None when it does not use FSDP."""
    entries = fsdp_entries(fsdp) if fsdp is not None else {}
    source = _options(main, fsdp)
    enabled = source.fsdp if source.fsdp is not None else main.fsdp
    if main.traits.fsdp_from_file and fsdp is not None and enabled is None:
        ref = main.references.get("fsdp")
        enabled = Sourced(True, ref.origin if ref is not None else Origin.default(f"{main.framework} --fsdp"))
    if enabled is None or not enabled.value:
        if fsdp is not None and entries:
            first = next(iter(entries.values()))
            overrides.append(
                Override(
                    field="fsdp",
                    winner=enabled or Sourced(False, Origin.default("TrainingArguments default fsdp=None")),
                    loser=first,
                    reason="fsdp_config without `fsdp`: the Trainer ignores it (transformers 5.23.0 "
                    "_process_fsdp_args returns None when fsdp is off; 4.57.6 warns "
                    f'"{quote("transformers.fsdp_config_unused")}")',
                )
            )
        return None
    version = _version(main, entries, versions)
    sharding = _sharding(entries, source, version)
    offload = _offload(entries, source, versions, overrides)
    ac = entries.get("activation_checkpointing")
    checkpointing = (
        Sourced(bool(to_bool(ac.value)), ac.origin) if ac is not None and to_bool(ac.value) is not None else None
    )
    return FsdpSettings(enabled, version, sharding, offload, checkpointing)


def _version(main: TrainingConfig, entries: dict[str, Sourced[Any]], versions: Versions) -> Sourced[int]:
    written = entries.get("version")
    reads, known = _known(versions, READS_VERSION)
    if written is not None and str(written.value).strip() in ("1", "2") and (reads or main.traits.fsdp_from_file):
        return Sourced(int(str(written.value).strip()), written.origin)
    if main.traits.fsdp_from_file:
        return Sourced(2, Origin.default(f"{main.framework}: FSDP_VERSION from fsdp_config fsdp_version, default 2"))
    two, known = _known(versions, FSDP2_DEFAULT)
    if two:
        return Sourced(2, Origin.default(f"fsdp_config version defaults to 2 in {FSDP2_DEFAULT} [{known}]"))
    if reads:
        return Sourced(1, Origin.default(f"fsdp_config version defaults to 1 before transformers 5.11 [{known}]"))
    return Sourced(1, Origin.default(f"{known} reads no fsdp_config version: accelerate's FSDP_VERSION default 1"))


def _sharding(entries: dict[str, Sourced[Any]], source: TrainingConfig, version: Sourced[int]) -> Sourced[str]:
    reshard = entries.get("reshard_after_forward")
    if reshard is not None:
        if version.value == 2 and to_bool(reshard.value) is not None:
            return Sourced("full_shard" if to_bool(reshard.value) else "shard_grad_op", reshard.origin)
        if version.value == 1 and str(reshard.value).lower() in STRATEGIES:
            return Sourced(str(reshard.value).lower(), reshard.origin)
    if source.fsdp_sharding is not None and source.fsdp_sharding.value in STRATEGIES:
        return source.fsdp_sharding
    if version.value == 2:
        return Sourced("full_shard", Origin.default("FSDP2 reshard_after_forward defaults to True (full shard)"))
    return Sourced("full_shard", Origin.default("FSDP1 sharding strategy defaults to full_shard"))


def _offload(
    entries: dict[str, Sourced[Any]], source: TrainingConfig, versions: Versions, overrides: list[Override]
) -> Sourced[bool]:
    written = entries.get("cpu_offload")
    option = source.offload_param if source.offload_param is not None and source.offload_param.value == "cpu" else None
    reads, known = _known(versions, FSDP2_DEFAULT)
    if written is not None and to_bool(written.value) is not None:
        if reads:
            return Sourced(bool(to_bool(written.value)), written.origin)
        overrides.append(
            Override(
                field="offload_param",
                winner=Sourced(option is not None, option.origin if option else Origin.default("no offload option")),
                loser=written,
                reason=f"fsdp_config cpu_offload is read from transformers 5.11.0 [{known}]; older releases take "
                "only the `offload` fsdp option",
            )
        )
    if option is not None:
        return Sourced(True, option.origin)
    return Sourced(False, Origin.default("FSDP keeps parameters on the GPU unless offload is asked"))


def _policy_dtype(plan: PrecisionPlan) -> Sourced[str] | None:
    autocast = plan.autocast_dtype
    if autocast.value in POLICY:
        return Sourced(str(autocast.value), autocast.origin)
    return None


def fsdp_plan_fields(
    plan: PrecisionPlan, main: TrainingConfig, fsdp: TrainingConfig | None, versions: Versions
) -> tuple[dict[str, Any], list[Override]]:
    """The plan fields FSDP changes for an HF-Trainer run, and the settings that lost.

    ``plan``: the run's plan before FSDP (its ``autocast_dtype`` is the Trainer's mixed precision:
    fp16/bf16 flags, or ACCELERATE_MIXED_PRECISION); ``main``: the run's config (its ``fsdp``,
    ``fsdp_sharding``, ``offload_param`` from ``fsdp: "full_shard offload ..."``, its
    ``gradient_checkpointing``); ``fsdp``: the config read by the ``fsdp`` dialect from the named
    or inline ``fsdp_config`` (None when there is none). Returns ``({}, overrides)`` when the run
    does not use FSDP.
    """
    overrides: list[Override] = []
    settings = settings_for(main, fsdp, versions, overrides)
    if settings is None:
        return {}, overrides
    v = settings.version.value
    fields: dict[str, Any] = {}
    dtype = _policy_dtype(plan)
    if dtype is not None:
        policy = "param/reduce/buffer" if v == 1 else "param/reduce/output"
        detail = f"FullyShardedDataParallelPlugin.set_mixed_precision: FSDP{v} {policy}_dtype {dtype.value}"
        fields["reduce_dtype"] = Sourced(dtype.value, _derive(dtype, detail))
        quantized = main.quantization_bits is not None and main.quantization_bits.value == 4
        skipped = upcast_skipped(v, versions)  # accelerate < 0.30 (FSDP1), 1.13.x (FSDP2): none
        if plan.param_dtype.value in ("float16", "bfloat16") and not (v == 2 and quantized) and skipped is None:
            fp32 = Sourced(
                "float32",
                _derive(
                    dtype,
                    f"FSDP{v} with mixed precision: accelerate upcasts trainable {plan.param_dtype.value} parameters "
                    f"to fp32 and the policy computes in {dtype.value}",
                ),
            )
            overrides.append(
                Override(
                    field="param_dtype",
                    winner=fp32,
                    loser=plan.param_dtype,
                    reason="accelerate upcasts trainable low-precision parameters to fp32 under FSDP with mixed "
                    f'precision: "{quote("accelerate.fsdp2_upcast")}" (fsdp2_prepare_model; FSDP1 prepare_model: '
                    f'"{quote("accelerate.fsdp1_upcast", name="...")}")',
                )
            )
            fields["param_dtype"] = fp32
            fields["optimizer_state_dtype"] = Sourced("float32", fp32.origin)
        params = fields.get("param_dtype", plan.param_dtype)
        fields["grad_dtype"] = Sourced(
            params.value,
            _derive(dtype, f"FSDP reduce-scatters gradients in {dtype.value} and casts them back to the parameters"),
        )
        fields["grad_accum_dtype"] = fields["grad_dtype"]
    else:
        fields["reduce_dtype"] = Sourced(
            plan.grad_dtype.value,
            _derive(
                plan.autocast_dtype, "no mixed precision: no FSDP MixedPrecision policy, gradients reduce as they are"
            ),
        )
    sharding = f"FSDP{v} {settings.sharding.value}"
    if settings.offload.value:
        sharding += ", parameters offloaded to cpu"
    fields["sharding"] = Sourced(sharding, settings.sharding.origin)
    ac = settings.activation_checkpointing
    if ac is not None and ac.value:
        fields["gradient_checkpointing"] = ac
        own = main.gradient_checkpointing
        if own is not None and own.value and own.origin != ac.origin:
            winner = ac
            notice = main.traits.fsdp_from_file
            if notice is not None:
                winner = Sourced(False, _derive(ac, "FSDP's own activation checkpointing recomputes instead"))
                reason = (
                    f"{main.framework} turns gradient_checkpointing off when fsdp_config.activation_checkpointing "
                    f'is on ("{quote(notice)}")'
                )
            else:
                v5, _ = _known(versions, HF_V5)
                text = AC_ERROR_V5 if v5 else AC_ERROR_V4
                reason = f'the Trainer raises ValueError "{text}" (create_accelerator_and_postprocess)'
            overrides.append(Override(field="gradient_checkpointing", winner=winner, loser=own, reason=reason))
    return fields, overrides


def apply_fsdp(
    plan: PrecisionPlan, main: TrainingConfig, fsdp: TrainingConfig | None, versions: Versions
) -> PrecisionPlan:
    """``plan`` with FSDP applied (unchanged, but for overrides, when the run does not use FSDP)."""
    fields, overrides = fsdp_plan_fields(plan, main, fsdp, versions)
    return replace(plan, **fields, overrides=[*plan.overrides, *overrides])


def apply(plan: PrecisionPlan, main: TrainingConfig, fsdp: TrainingConfig, versions: Versions) -> PrecisionPlan:
    """``ATTACHMENTS["fsdp"]``: the run's plan once the FSDP config it names is applied."""
    return apply_fsdp(plan, main, fsdp, versions)


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    """An FSDP config on its own: the Trainer's bf16/fp16 that decide its policy are not in it."""
    load = Sourced(
        "float32", Origin.default("the training script loads the model, not the FSDP config: assumed float32")
    )
    none = Origin.default("no fp16/bf16 in an FSDP config: the flags of the run that names it decide (none here)")
    base = same_dtype_plan(
        config.framework,
        load=load,
        params=load,
        autocast=Sourced(None, none),
        loss_scaling=Sourced("none", none),
        grad_scaler=Sourced(False, none),
        devices=Sourced("all", Origin.default("the Trainer uses every visible GPU")),
    )
    standalone = replace(config, fsdp=config.fsdp or Sourced(True, Origin.default("an FSDP config: FSDP assumed on")))
    return apply_fsdp(base, standalone, config, versions)
