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
from .label import NAME, TRAINER
from .modes import AUTOCAST, DTYPE_WORDS, fsdp_dtypes, mixed_precision, precision


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
        if item.value is None and not item.origin.in_file:  # no precision llm-foundry's default could stand for
            why = item.origin.detail or "no precision known"
        elif mode is None:
            why = "Composer's Precision refuses this value"
        else:
            why = f"precision {mode}: no torch autocast"
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
