"""This framework: weights in the ``mixed_precision`` dtype, gradients per ``gradient_precision``.

Read upstream: ``--mixed_precision`` defaults to bf16 and sets the weight
dtype (bf16 → bfloat16, fp16 → float16, else float32). Releases from 2.2.0 (the first on
PyPI) rewrite ``gradient_precision: fp32`` to ``"unmodified"`` unless the optimizer needs
fp32 gradients (none in the table does: ``cmd_args.parse_cmdline_args``); the 2024 git
versions kept it and cast every gradient to fp32 after backward (``train.py``).
``adamw_bf16`` keeps its states in bf16.
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...dtypes import parse_dtype
from ...facts import span
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import scaler_for
from ...resolve.plan import Override, PrecisionPlan
from ...versions import VersionRange, Versions
from .label import LABEL, NAME

#: versions that honour gradient_precision=fp32 for every optimizer
KEEPS_FP32_GRADIENTS = VersionRange(NAME, None, span(f"{NAME}.rewrites_fp32_gradients").low)
BF16_OPTIMIZERS = {"adamw_bf16", "adam_bfloat16"}


def keeps_fp32_gradients(versions: Versions) -> bool:
    info = versions.get(NAME)
    return info is not None and KEEPS_FP32_GRADIENTS.contains(info.version)


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    mode = config.mixed_precision or Sourced("bf16", Origin.default(f"{LABEL} default mixed_precision: bf16"))
    weight = parse_dtype(mode.value) if mode.value in ("bf16", "fp16") else "float32"
    assert weight is not None
    weights = Sourced(
        weight,
        mode.origin.derived(f"{LABEL}'s weight dtype follows mixed_precision") if mode.origin.in_file else mode.origin,
    )
    autocast: Sourced[str | None] = Sourced(weight if mode.value in ("bf16", "fp16") else None, mode.origin)
    overrides: list[Override] = []
    grads = weights
    wanted = config.gradient_precision
    if wanted is not None and str(wanted.value).lower() == "fp32":
        if keeps_fp32_gradients(versions):
            grads = Sourced("float32", wanted.origin.derived("gradients cast to fp32 after backward"))
        else:
            kept = Sourced(
                weights.value, Origin.default(f"{NAME}>=2.2.0 rewrites gradient_precision fp32 to unmodified")
            )
            overrides.append(Override(field="grad_dtype", winner=kept, loser=wanted, reason=kept.origin.detail or ""))
            grads = kept
    optimizer = str(config.optimizer.value) if config.optimizer else ""
    states = (
        Sourced("bfloat16", config.optimizer.origin) if config.optimizer and optimizer in BF16_OPTIMIZERS else weights
    )
    scaling, scaler = scaler_for(autocast, "accelerate creates a GradScaler for fp16")
    return PrecisionPlan(
        framework=config.framework,
        load_dtype=weights,
        param_dtype=weights,
        autocast_dtype=autocast,
        grad_dtype=grads,
        optimizer_state_dtype=states,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced("all", Origin.default("accelerate launch uses every visible GPU")),
        overrides=overrides,
    )
