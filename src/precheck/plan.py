"""The resolved precision plan: what the stack will really do, and why.

Part of the model layer (with :mod:`precheck.config` and :mod:`precheck.provenance`): the
resolvers build it, the rules and reports read it. ``precheck.resolve.plan`` re-exports it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .counts import decimal
from .provenance import Sourced

PLAN_FIELDS = {
    "load_dtype": "dtype the model weights are loaded in",
    "param_dtype": "dtype of the trainable parameters",
    "autocast_dtype": "autocast compute dtype (none: no autocast)",
    "grad_dtype": "dtype of the gradients",
    "optimizer_state_dtype": "dtype of the optimizer states",
    "loss_scaling": "loss scaling: none | dynamic | static",
    "grad_scaler": "whether a torch GradScaler is created and enabled",
    "devices": "which visible devices the run computes on: all | first | a list of indices",
    "master_weights": "dtype of the master copy the optimizer updates (none: it updates the parameters)",
    "grad_accum_dtype": "dtype gradients are accumulated in across micro-batches",
    "initial_scale": "initial loss scale (none: no loss scaling)",
    "reduce_dtype": "dtype gradients are all-reduced in across devices",
    "fp8": "fp8 compute and its backend (none: no fp8)",
    "tf32": "whether float32 matmuls may use TF32 tensor cores",
    "attention": "attention implementation",
    "quantization": "quantized base weights: none | 4-bit/8-bit with compute dtype",
    "sharding": "how states are sharded: none | ZeRO stage and offload | FSDP",
    "gradient_checkpointing": "whether activations are recomputed in the backward pass",
    "batch": "micro-batch size, accumulation steps and sequence length, where given",
}

#: the fields every resolver must set; the rest are completed from the config
CORE_FIELDS = (
    "load_dtype",
    "param_dtype",
    "autocast_dtype",
    "grad_dtype",
    "optimizer_state_dtype",
    "loss_scaling",
    "grad_scaler",
    "devices",
)


class OverrideKind(Enum):
    """What a framework does with the losing setting; rules match on this, never on the prose."""

    #: the framework takes another value (the generic case: the prose says which and why)
    REPLACED = "replaced"
    #: DeepSpeed asserts "bfloat16 and fp16 modes cannot be simultaneously enabled"
    BOTH_ENABLED = "both-enabled"
    #: DeepSpeed raises NotImplementedError for apex amp with its fp16/bf16 mode (``error``)
    AMP_AND_HALF = "amp-and-half"
    #: DeepSpeed asserts that apex amp and ZeRO are incompatible (``error``)
    AMP_AND_ZERO = "amp-and-zero"
    #: DeepSpeed's torch_autocast section next to its fp16/bf16 mode
    AUTOCAST_AND_HALF = "autocast-and-half"
    #: DeepSpeed raises NotImplementedError("unsupported mix ...") for a dtype pair (``error``, ``basis``)
    UNSUPPORTED_MIX = "unsupported-mix"
    #: a DeepSpeed precision section without ``enabled``: DeepSpeed's default false applies
    NOT_ENABLED = "not-enabled"
    #: accelerate adds ``bf16: {"enabled": false}``, so DeepSpeed ignores the legacy ``bfloat16``
    LEGACY_BF16_IGNORED = "legacy-bf16-ignored"
    #: transformers' trainer_config_finalize ValueError: a DeepSpeed value disagrees with
    #: TrainingArguments (``mismatch``: this key's line; ``accelerate_error``: raised first, if any)
    HF_MISMATCH = "hf-mismatch"
    #: accelerate's set_mixed_precision ValueError: the other dtype is on in the DeepSpeed file (``error``)
    ACCELERATE_OTHER_DTYPE = "accelerate-other-dtype"
    #: accelerate keeps an explicit DeepSpeed value that contradicts mixed_precision, silently
    SILENT_KEEP = "silent-keep"
    #: `accelerate launch` refuses an accelerate setting beside a deepspeed_config_file (``error``)
    ACCELERATE_IGNORED = "accelerate-ignored"


@dataclass(slots=True)
class Override:
    """A value the framework replaced: the user's setting lost to another source.

    ``kind`` and the data fields are what rules read; ``reason`` is the prose for
    ``precheck explain`` and is never matched."""

    field: str
    winner: Sourced[Any]
    loser: Sourced[Any]
    reason: str
    kind: OverrideKind = OverrideKind.REPLACED
    #: the message of the exception the framework raises, verbatim (without the exception's name)
    error: str | None = None
    #: HF_MISMATCH: this setting's line of transformers' message (``- ds key=value vs hf name=value``)
    mismatch: str | None = None
    #: HF_MISMATCH: accelerate's set_mixed_precision message, raised before transformers' check
    accelerate_error: str | None = None
    #: the version fact the decision rests on, as the resolver states it (``deepspeed 0.17.6 installed``)
    basis: str | None = None


@dataclass(slots=True)
class PrecisionPlan:
    """Each field is a value and where it came from; a new plan is made with
    :func:`dataclasses.replace` (resolvers refine a plan step by step)."""

    framework: str
    load_dtype: Sourced[str]
    param_dtype: Sourced[str]
    autocast_dtype: Sourced[str | None]
    grad_dtype: Sourced[str]
    optimizer_state_dtype: Sourced[str]
    loss_scaling: Sourced[str]
    grad_scaler: Sourced[bool]
    devices: Sourced[str]
    master_weights: Sourced[str | None] | None = None
    grad_accum_dtype: Sourced[str] | None = None
    initial_scale: Sourced[float | None] | None = None
    reduce_dtype: Sourced[str | None] | None = None
    fp8: Sourced[str | None] | None = None
    tf32: Sourced[bool] | None = None
    attention: Sourced[str] | None = None
    quantization: Sourced[str] | None = None
    sharding: Sourced[str] | None = None
    gradient_checkpointing: Sourced[bool] | None = None
    batch: Sourced[str | None] | None = None
    overrides: list[Override] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.overrides = list(self.overrides)  # never shared with the caller's list

    def fields(self) -> dict[str, Sourced[Any]]:
        """Every field that is set (all of them once :func:`precheck.resolve.resolve` completed the plan)."""
        return {name: getattr(self, name) for name in PLAN_FIELDS if getattr(self, name) is not None}

    def override_of(self, field: str) -> Override | None:
        return next((o for o in self.overrides if o.field == field), None)

    def device_indices(self, count: int) -> list[int]:
        """Indices (into the visible devices) the run computes on."""
        spec = self.devices.value
        if spec == "first":
            return [0] if count else []
        if spec == "all":
            return list(range(count))
        wanted = [i for p in spec.split(",") if (i := decimal(p)) is not None]
        return [i for i in wanted if i < count]

    @property
    def uses_bf16(self) -> bool:
        return "bfloat16" in {self.load_dtype.value, self.param_dtype.value, self.autocast_dtype.value}

    @property
    def uses_fp16(self) -> bool:
        return "float16" in {self.load_dtype.value, self.param_dtype.value, self.autocast_dtype.value}


def same_dtype_plan(
    framework: str,
    *,
    load: Sourced[str],
    params: Sourced[str],
    autocast: Sourced[str | None],
    loss_scaling: Sourced[str],
    grad_scaler: Sourced[bool],
    devices: Sourced[str],
    **rest: Any,
) -> PrecisionPlan:
    """A plan whose gradients and optimizer states share the trainable parameters' dtype:
    a torch optimizer stepping the parameters themselves, with no master copy."""
    return PrecisionPlan(
        framework=framework,
        load_dtype=load,
        param_dtype=params,
        autocast_dtype=autocast,
        grad_dtype=params,
        optimizer_state_dtype=params,
        loss_scaling=loss_scaling,
        grad_scaler=grad_scaler,
        devices=devices,
        **rest,
    )
