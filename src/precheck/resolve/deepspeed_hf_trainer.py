"""The HF Trainer's DeepSpeed integration: how it fills a DeepSpeed file's ``"auto"`` values and
which explicit values it refuses as a mismatch with TrainingArguments.

Read in transformers 5.23.0 ``integrations/deepspeed.py`` (the Trainer then hands the file to
accelerate's DeepSpeed plugin: :mod:`precheck.resolve.deepspeed_accelerate`):

- ``HfTrainerDeepSpeedConfig.trainer_config_process`` fills ``"auto"`` through ``fill_match``:
  ``fp16.enabled`` ← ``fp16 or fp16_full_eval``, ``bf16.enabled`` ← ``bf16 or bf16_full_eval``,
  ``train_micro_batch_size_per_gpu`` ← ``per_device_train_batch_size``,
  ``gradient_accumulation_steps``, ``gradient_clipping`` ← ``max_grad_norm``, optimizer
  lr/betas/eps/weight_decay. A section the file lacks is not filled (``find_config_node``
  returns None). An explicit value that differs is collected as ``"- ds {key}={ds_val} vs hf
  {hf_key}={hf_val}"`` and ``trainer_config_finalize`` (in ``train()``) raises ``ValueError(
  "Please correct the following DeepSpeed config values that mismatch TrainingArguments
  values:\\n{mismatches}\\nThe easiest method is to set these DeepSpeed config values to
  'auto'.")``. transformers 4.x named the fp16 key ``fp16|fp16_full_eval+fp16_backend(amp)``.
"""

from __future__ import annotations

from typing import Any

from ..config import TrainingConfig
from ..dialects.base import to_bool
from ..facts import quote, span
from ..provenance import Origin, Sourced
from ..versions import Versions
from .deepspeed_accelerate import ACCELERATE_OTHER_DTYPE, added_section, integrated_stage
from .deepspeed_engine import HALF, Switches, auto_key, derive, version_holds
from .plan import Override, OverrideKind, PrecisionPlan

#: transformers 5.0 dropped ``fp16_backend`` from the fp16 mismatch key
HF_V5 = span("transformers.v5_fp16_mismatch_key")
#: templates: ``.format(mismatches=...)``
HF_MISMATCH = quote("transformers.ds_config_mismatch")


def _trainer_args(plan: PrecisionPlan, main: TrainingConfig) -> tuple[dict[str, Sourced[bool]], Sourced[str]]:
    """TrainingArguments' fp16/bf16 (with ``*_full_eval``) and ``mixed_precision``, as the main
    framework resolved them (its plan's autocast: the framework's own defaults included)."""
    autocast = plan.autocast_dtype
    from_env = autocast.origin.kind == "env"
    flags: dict[str, Sourced[bool]] = {}
    mixed: Sourced[str] | None = None
    for name in ("fp16", "bf16"):
        set_flag: Sourced[bool] | None = getattr(main, name)
        if autocast.value == HALF[name] and not from_env:
            item = Sourced(True, autocast.origin)
            mixed = mixed or Sourced(name, autocast.origin)
        elif set_flag is not None:
            item = Sourced(bool(set_flag.value), set_flag.origin)
        else:
            item = Sourced(False, Origin.default(f"TrainingArguments default {name}=False"))
        full = main.keys.get(f"{name}_full_eval")
        if not item.value and full is not None and to_bool(full.value):
            item = Sourced(True, full.origin)
        flags[name] = item
    if mixed is None:
        env = main.env.get("ACCELERATE_MIXED_PRECISION")
        mixed = Sourced(env.value, env.origin) if env is not None else Sourced("no", Origin.default("no fp16/bf16"))
    return flags, mixed


def _filled(hf: Sourced[bool], path: str, label: str) -> Origin:
    detail = f"DeepSpeed `{path}: auto` filled from TrainingArguments {label} (HfTrainerDeepSpeedConfig.fill_match)"
    if hf.origin.in_file:
        return hf.origin.derived(detail)
    if hf.origin.kind == "default" and (hf.origin.detail or "").startswith("TrainingArguments default"):
        return Origin.default(f"DeepSpeed `{path}: auto` filled with TrainingArguments default {hf.value}")
    return Origin.default(f"DeepSpeed `{path}: auto` filled with TrainingArguments {label}={hf.value} ({hf.origin})")


def hf_switches(
    plan: PrecisionPlan, main: TrainingConfig, ds: TrainingConfig, versions: Versions
) -> tuple[Switches, list[Override]]:
    flags, mixed = _trainer_args(plan, main)
    v5, _ = version_holds(versions, HF_V5)
    labels = {
        "fp16": "fp16|fp16_full_eval" if v5 else "fp16|fp16_full_eval+fp16_backend(amp)",
        "bf16": "bf16|bf16_full_eval",
    }
    values: dict[str, Sourced[bool]] = {}
    present: dict[str, bool] = {}
    pending: list[tuple[str, Sourced[Any], Sourced[Any], str]] = []  # field, winner, loser, mismatch line
    notes: list[Override] = []
    for name in ("fp16", "bf16"):
        path, hf = f"{name}.enabled", flags[name]
        present[name] = name in ds.keys
        explicit: Sourced[bool] | None = getattr(ds, name) if present[name] else None
        if present[name] and auto_key(ds, path) is not None:
            values[name] = Sourced(hf.value, _filled(hf, path, labels[name]))
        elif explicit is not None:
            values[name] = explicit
            if explicit.value == hf.value and hf.origin.in_file:
                # TrainingArguments' flag must say the same (fill_match): both decide it
                values[name] = Sourced(explicit.value, explicit.origin.with_through(hf.origin.places))
            if explicit.value != hf.value:
                pending.append((name, explicit, hf, f"- ds {path}={explicit.value} vs hf {labels[name]}={hf.value}"))
        elif present[name]:
            values[name] = Sourced(
                False, derive(ds.keys[name], f"the {name} section has no `enabled`: DeepSpeed's default false")
            )
            if hf.value:
                notes.append(
                    Override(
                        field=name,
                        winner=values[name],
                        loser=hf,
                        reason=f'the DeepSpeed {name} section has no `enabled` key: transformers fills only an "auto" '
                        "value (fill_match) and accelerate adds only a missing section, so DeepSpeed's default "
                        f"enabled=false applies and the run trains without {name}",
                        kind=OverrideKind.NOT_ENABLED,
                    )
                )
        else:
            values[name], legacy = added_section(ds, name, mixed)
            if legacy is not None:
                notes.append(legacy)
    _batch_mismatches(main, ds, pending)
    overrides = notes + _mismatch_overrides(pending, mixed, values, present)
    return Switches(values["fp16"], values["bf16"], integrated_stage(ds)), overrides


def _batch_mismatches(
    main: TrainingConfig, ds: TrainingConfig, pending: list[tuple[str, Sourced[Any], Sourced[Any], str]]
) -> None:
    """fill_match on the batch and clipping keys, against TrainingArguments (or its defaults)."""
    known_defaults = main.framework in ("transformers", "trl")
    finder = main.keys.get("auto_find_batch_size")
    must_match_batch = not (finder is not None and to_bool(finder.value))
    checks = (
        (
            "batch_size",
            "train_micro_batch_size_per_gpu",
            main.batch_size,
            8,
            "per_device_train_batch_size",
            must_match_batch,
        ),
        (
            "grad_accum_steps",
            "gradient_accumulation_steps",
            main.grad_accum_steps,
            1,
            "gradient_accumulation_steps",
            True,
        ),
        ("max_grad_norm", "gradient_clipping", main.max_grad_norm, 1.0, "max_grad_norm", True),
    )
    for name, key, hf_item, default, hf_key, must in checks:
        ds_item: Sourced[Any] | None = getattr(ds, name)
        if ds_item is None or not must:
            continue
        if hf_item is None:
            if not known_defaults:
                continue
            hf_item = Sourced(default, Origin.default(f"TrainingArguments default {hf_key}={default}"))
        if ds_item.value != hf_item.value:
            pending.append(
                (name, ds_item, hf_item, f"- ds {key}={_written(ds_item.value)} vs hf {hf_key}={hf_item.value}")
            )


def _written(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() and not isinstance(value, bool) else value


def _mismatch_overrides(
    pending: list[tuple[str, Sourced[Any], Sourced[Any], str]],
    mixed: Sourced[str],
    values: dict[str, Sourced[bool]],
    present: dict[str, bool],
) -> list[Override]:
    first = ""
    accelerate: str | None = None
    out: list[Override] = []
    if mixed.value in ("fp16", "bf16", "fp8"):
        other = "bf16" if mixed.value == "fp16" else "fp16"
        if present[other] and values[other].value:
            text = accelerate = ACCELERATE_OTHER_DTYPE.format(mixed_precision=mixed.value, other=other)
            first = (
                "accelerate raises ValueError when the Trainer creates its Accelerator "
                f'(DeepSpeedPlugin.set_mixed_precision): "{text}"; '
            )
            if not any(p[0] == other for p in pending):
                out.append(
                    Override(
                        field=other,
                        winner=values[other],
                        loser=Sourced(False, mixed.origin),
                        reason=first[:-2],
                        kind=OverrideKind.ACCELERATE_OTHER_DTYPE,
                        error=text,
                    )
                )
    if not pending:
        return out
    message = HF_MISMATCH.format(mismatches="\n".join(p[3] for p in pending))
    reason = (
        f"{first}transformers raises ValueError in train() "
        f'(HfTrainerDeepSpeedConfig.trainer_config_finalize): "{message}"'
    )
    return out + [
        Override(
            field=name,
            winner=winner,
            loser=loser,
            reason=reason,
            kind=OverrideKind.HF_MISMATCH,
            error=message,
            mismatch=line,
            accelerate_error=accelerate,
        )
        for name, winner, loser, line in pending
    ]
