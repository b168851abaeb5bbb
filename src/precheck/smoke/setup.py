"""What the smoke step applies, read from a resolved :class:`~precheck.resolve.plan.PrecisionPlan`.

No torch here: this is the bridge between the static plan (each value with where it came
from) and :mod:`precheck.smoke.step`, which runs it. What a one-process CPU or single-GPU
step cannot reproduce (ZeRO/FSDP sharding, DeepSpeed's own loss scaler, fp8, 4-/8-bit
base weights without bitsandbytes on CUDA) is listed in ``Setup.not_simulated``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..config import TrainingConfig
from ..dtypes import parse_dtype
from ..models import family_of
from ..provenance import Origin, Sourced
from ..resolve.common import is_adapter_training
from ..resolve.plan import PrecisionPlan
from .tiny_model import Architecture, choose

#: torch GradScaler's default ``init_scale`` (2**16)
DEFAULT_INIT_SCALE = 65536.0
#: the learning rate when the config names none
DEFAULT_LR = 1e-4
_LR_KEYS = ("learning_rate", "lr", "training.learning_rate", "optimizer.lr", "optimizer.learning_rate")


@dataclass
class Setup:
    """The precision settings the smoke step applies, each traceable to the plan."""

    arch: Architecture
    #: dtype of the model weights as loaded (the frozen base under adapters)
    load_dtype: str
    #: dtype of the trainable parameters (the adapters, or the whole model)
    param_dtype: str
    #: train low-rank adapters on a frozen base
    adapters: bool
    #: autocast dtype, None for no autocast
    autocast: str | None
    grad_scaler: bool
    init_scale: float
    #: gradients are cast to this dtype after backward (a framework's ``gradient_precision``), or None
    grad_cast: str | None
    #: the optimizer as the config names it (None: the framework default, torch AdamW)
    optimizer: str | None
    lr: float
    max_grad_norm: float | None
    #: micro-batches before the optimizer step (2 when the config accumulates gradients)
    micro_batches: int
    gradient_checkpointing: bool
    attention: str | None
    not_simulated: list[str] = field(default_factory=list)

    def describe(self) -> str:
        parts = [f"weights {self.load_dtype}"]
        parts.append(f"{'adapters' if self.adapters else 'trainable'} {self.param_dtype}")
        parts.append(f"autocast {self.autocast or 'off'}")
        parts.append("GradScaler" if self.grad_scaler else "no GradScaler")
        if self.grad_cast:
            parts.append(f"gradients cast to {self.grad_cast}")
        parts.append(f"optimizer {self.optimizer or 'default'}")
        if self.micro_batches > 1:
            parts.append(f"{self.micro_batches} micro-batches")
        if self.gradient_checkpointing:
            parts.append("gradient checkpointing")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "load_dtype": self.load_dtype,
            "param_dtype": self.param_dtype,
            "adapters": self.adapters,
            "autocast_dtype": self.autocast,
            "grad_scaler": self.grad_scaler,
            "init_scale": self.init_scale if self.grad_scaler else None,
            "grad_cast": self.grad_cast,
            "optimizer": self.optimizer,
            "lr": self.lr,
            "max_grad_norm": self.max_grad_norm,
            "micro_batches": self.micro_batches,
            "gradient_checkpointing": self.gradient_checkpointing,
            "attention": self.attention,
            "not_simulated": list(self.not_simulated),
        }


def _value(item: Sourced[Any] | None) -> Any:
    return None if item is None else item.value


def _float_dtype(value: Any) -> str | None:
    found = parse_dtype(value)
    return found if found in ("float16", "bfloat16", "float32") else None


def saved_dtype(config: TrainingConfig) -> tuple[str, str]:
    """The checkpoint's own dtype, which ``dtype="auto"`` loads, and where it was read."""
    if config.model_dtype is not None and _float_dtype(config.model_dtype.value):
        return str(_float_dtype(config.model_dtype.value)), f"the checkpoint's {config.model_dtype.origin}"
    family = family_of(str(config.model.value)) if config.model is not None else None
    if family is not None and _float_dtype(family.native_dtype):
        return str(_float_dtype(family.native_dtype)), f"the {family.name} checkpoints' saved dtype"
    return "float32", "the checkpoint's saved dtype is not known here: float32 stands in"


def learning_rate(config: TrainingConfig) -> float:
    for key in _LR_KEYS:
        item = config.setting(key)
        if item is None:
            continue
        try:
            return float(item.value)
        except (TypeError, ValueError):
            continue
    return DEFAULT_LR


def uses_adapters(config: TrainingConfig) -> bool:
    """LoRA-style training (as the resolvers decide it); a full fine-tune otherwise."""
    if config.quantization_bits is not None:
        return True  # QLoRA: a quantized base is never trained in full
    # as the framework's resolver decides it when the config names no method
    return is_adapter_training(config, "lora" if config.traits.resolves_unset_method_as_lora else "full")


def setup_for(config: TrainingConfig, plan: PrecisionPlan) -> Setup:
    """The step to run for ``config`` as ``plan`` resolved it."""
    notes: list[str] = []
    load = _float_dtype(plan.load_dtype.value)
    if load is None and plan.load_dtype.value == "auto":
        load, why = saved_dtype(config)
        notes.append(f"load dtype `auto` ({plan.load_dtype.origin}): {why}")
    elif load is None:  # int4/int8: quantized
        compute = _float_dtype(_value(config.quant_compute_dtype)) or "float32"
        notes.append(
            f"base weights `{plan.load_dtype.value}` ({plan.load_dtype.origin}): not quantized here, "
            f"the frozen base runs in {compute}"
        )
        load = compute
    same = plan.param_dtype.value == plan.load_dtype.value
    params = load if same else _float_dtype(plan.param_dtype.value) or "float32"
    quantization = str(_value(plan.quantization) or "none")
    if quantization != "none" and not any(n.startswith("base weights") for n in notes):
        notes.append(f"quantization `{quantization}` not simulated: the smoke run does not quantize the base weights")
    sharding = str(_value(plan.sharding) or "none")
    if sharding != "none":
        notes.append(f"sharding `{sharding}` not simulated: one process holds the whole model")
    if _value(plan.fp8):
        notes.append(f"fp8 `{_value(plan.fp8)}` not simulated")
    master = _value(plan.master_weights)
    if master:
        notes.append(f"the {master} master copy the optimizer updates is not simulated")
    scaler = bool(plan.grad_scaler.value)
    if str(plan.loss_scaling.value) != "none" and not scaler:
        notes.append(f"{plan.loss_scaling.value} loss scaling by the framework's own scaler is not simulated")
    grads = _float_dtype(plan.grad_dtype.value)
    initial = _value(plan.initial_scale)
    accumulation = _value(config.grad_accum_steps)
    attention = str(_value(plan.attention) or "default")
    if attention not in ("default", "eager", "sdpa"):
        notes.append(f"attention `{attention}` not simulated: sdpa stands in")
    max_norm = _value(config.max_grad_norm)
    return Setup(
        arch=choose(config),
        load_dtype=load,
        param_dtype=params,
        adapters=uses_adapters(config),
        autocast=_float_dtype(plan.autocast_dtype.value),
        grad_scaler=scaler,
        init_scale=float(initial) if isinstance(initial, (int, float)) and initial > 0 else DEFAULT_INIT_SCALE,
        grad_cast=grads if grads is not None and grads != params else None,
        optimizer=str(config.optimizer.value) if config.optimizer is not None else None,
        lr=learning_rate(config),
        max_grad_norm=float(max_norm) if isinstance(max_norm, (int, float)) and max_norm > 0 else None,
        micro_batches=2 if isinstance(accumulation, int) and accumulation > 1 else 1,
        gradient_checkpointing=bool(_value(plan.gradient_checkpointing)),
        attention=attention if attention in ("eager", "sdpa") else None,
        not_simulated=notes,
    )


def optimizer_origin(config: TrainingConfig) -> Sourced[str | None]:
    """The optimizer key and where it is, or the default the framework falls back to."""
    if config.optimizer is not None:
        return Sourced(str(config.optimizer.value), config.optimizer.origin)
    return Sourced(None, Origin.default("no optimizer named: the framework's AdamW"))
