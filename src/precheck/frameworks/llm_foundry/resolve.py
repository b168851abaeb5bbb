"""What Composer's ``Trainer`` does with the YAML's ``precision`` and ``fsdp_config`` (see
:mod:`.dialect` for the sources read; the defaults and accepted values come from the release
data, :mod:`.schema`).

- The model is built in float32 (MPT's ``init_device``, ``hf_causal_lm``'s
  ``_MASTER_WEIGHTS_PRECISION``); Composer never casts it: weights, gradients and optimizer
  states stay float32 (FSDP's flat parameters too; ``keep_low_precision_grads`` is False unless
  the model's ``master_weights_dtype`` is 16-bit, which this reader leaves alone).
- ``amp_fp16``/``amp_bf16`` autocast the forward pass; ``amp_fp16`` adds a GradScaler
  (``trainer.py:1589``@0.32.1; ``ShardedGradScaler`` under FSDP, ``:1602``).
- ``amp_fp8``: Transformer Engine's fp8 autocast on TE layers (needs sm_89+), no torch autocast.
- FSDP ``MixedPrecision`` (``get_mixed_precision``): ``param_dtype`` is the compute dtype of the
  sharded layers, ``reduce_dtype`` the gradients' all-reduce dtype.
"""

from __future__ import annotations

from typing import Any

from ...config import TrainingConfig
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import scaler_for
from ...resolve.plan import PrecisionPlan, same_dtype_plan
from ...versions import Versions
from . import schema
from .label import NAME, TRAINER

#: ``_get_torch_dtype`` (``composer/distributed/mosaic_parallelism.py``@0.32.1): a precision's FSDP dtype
FSDP_DTYPE = {"fp32": "float32", "amp_fp16": "float16", "amp_bf16": "bfloat16", "amp_fp8": "bfloat16"}
#: the dtype spellings ``_get_torch_dtype`` reads in a ``mixed_precision`` mapping
DTYPE_WORDS = {
    **dict.fromkeys(("float32", "torch.float32", "fp32"), "float32"),
    **dict.fromkeys(("float16", "torch.float16", "half", "fp16", "amp", "amp_fp16"), "float16"),
    **dict.fromkeys(("bfloat16", "bfloat", "torch.bfloat16", "bf16", "amp_bf16"), "bfloat16"),
    **dict.fromkeys(("float8", "torch.float8", "fp8", "amp_fp8"), "bfloat16"),
}
#: the autocast dtype of each precision
AUTOCAST = {"amp_fp16": "float16", "amp_bf16": "bfloat16"}
#: Composer's FSDPConfig defaults (``composer/utils/parallelism.py:34``@0.32.1)
MIXED_PRECISION_DEFAULT = "DEFAULT"


def _version_note(versions: Versions) -> tuple[str | None, str]:
    """The run's version of the framework, and how a default's origin says which release it read."""
    info = versions.get(NAME)
    if info is None:
        return None, f"{NAME} version not known: taken as the newest release read"
    return info.version, f"{NAME} {info.version} ({info.source})"


def precision(config: TrainingConfig, versions: Versions) -> tuple[Sourced[Any], str | None]:
    """The run's ``precision`` (the YAML's, else ``TrainConfig``'s default) and the Composer mode
    it names (lower-cased; None when Composer's ``Precision`` refuses it)."""
    version, note = _version_note(versions)
    item: Sourced[Any] | None = config.precision
    if item is None:
        found = schema.default("precision", version)
        if found is None:
            return Sourced(None, Origin.default("no precision default known")), None
        value, release = found
        item = Sourced(value, Origin.default(f"TrainConfig.precision default {value!r} ({release.label}; {note})"))
    valid = schema.values("precision", version)
    text = str(item.value).lower() if isinstance(item.value, str) else None
    return item, text if text in valid else None


def mixed_precision(config: TrainingConfig) -> Sourced[Any] | None:
    """``fsdp_config.mixed_precision`` (Composer's default ``DEFAULT``) when the run uses FSDP."""
    if config.fsdp is None or not config.fsdp.value:
        return None
    item = config.setting("fsdp_config.mixed_precision")
    if item is None or item.value is None:
        detail = f"{TRAINER} FSDPConfig.mixed_precision default {MIXED_PRECISION_DEFAULT!r}"
        return Sourced(MIXED_PRECISION_DEFAULT, Origin.default(detail))
    return item


def fsdp_dtypes(mode: str, mixed: Sourced[Any]) -> tuple[str | None, str | None] | None:
    """(param_dtype, reduce_dtype) of ``get_mixed_precision``; None when it raises."""
    value = mixed.value
    if isinstance(value, dict):
        param, reduce = value.get("param_dtype"), value.get("reduce_dtype")
        return (
            DTYPE_WORDS.get(str(param)) if param is not None else None,
            DTYPE_WORDS.get(str(reduce)) if reduce is not None else None,
        )
    if not isinstance(value, str):
        return None
    word = value.upper()
    dtype = FSDP_DTYPE[mode]
    if word == "FULL":
        return None, None
    if word == "DEFAULT":
        return dtype, "float32"
    if word == "PURE":
        return dtype, dtype
    return None


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    item, mode = precision(config, versions)
    fp32 = Origin.default(f"{TRAINER} keeps the model's float32 weights (it never casts the model)")
    params: Sourced[str] = Sourced("float32", fp32)
    if config.torch_dtype is not None:  # model.master_weights_dtype: the model is cast, and trained so
        params = Sourced(str(config.torch_dtype.value), config.torch_dtype.origin)
    autocast: Sourced[str | None]
    if mode in AUTOCAST:
        autocast = Sourced(AUTOCAST[mode], item.origin)
    else:
        why = "Composer's Precision refuses this value" if mode is None else f"precision {mode}: no torch autocast"
        autocast = Sourced(None, item.origin.derived(why) if item.origin.in_file else Origin.default(why))
    scaling, scaler = scaler_for(autocast, f"{TRAINER} creates a GradScaler for amp_fp16")
    rest: dict[str, Any] = {}
    if mode == "amp_fp8":
        rest["fp8"] = Sourced("te", item.origin)
    mixed = mixed_precision(config)
    if mixed is not None and mode is not None:
        dtypes = fsdp_dtypes(mode, mixed)
        if dtypes is not None and config.torch_dtype is not None:
            # process_init_device: 16-bit master weights replace the policy (param_dtype None, a
            # mapping's reduce_dtype kept, low-precision gradients kept)
            given = mixed.value.get("reduce_dtype") if isinstance(mixed.value, dict) else None
            dtypes = None, DTYPE_WORDS.get(str(given)) if given is not None else params.value
        if dtypes is not None:
            param, reduce = dtypes
            where = mixed.origin

            def said(detail: str) -> Origin:
                return where.derived(detail) if where.in_file else Origin.default(f"{where.detail}: {detail}")

            if param in ("float16", "bfloat16") and autocast.value != param:
                autocast = Sourced(param, said(f"FSDP MixedPrecision(param_dtype={param}): layers compute in it"))
            rest["reduce_dtype"] = Sourced(reduce or "float32", said(f"FSDP MixedPrecision(reduce_dtype={reduce})"))
        sharding = config.fsdp_sharding
        if sharding is not None:
            rest["sharding"] = Sourced(f"FSDP {sharding.value}", sharding.origin)
    if config.attn_implementation is not None:
        rest["attention"] = config.attn_implementation
    devices = Sourced("all", Origin.default(f"{NAME} runs one process per visible GPU (composer launcher)"))
    return same_dtype_plan(
        config.framework,
        load=params,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=devices,
        **rest,
    )
