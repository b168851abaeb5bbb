"""The resolved precision plan: what the stack will really do, and why."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..provenance import Sourced

PLAN_FIELDS = {
    "load_dtype": "dtype the model weights are loaded in",
    "param_dtype": "dtype of the trainable parameters",
    "autocast_dtype": "autocast compute dtype (none: no autocast)",
    "grad_dtype": "dtype of the gradients",
    "optimizer_state_dtype": "dtype of the optimizer states",
    "loss_scaling": "loss scaling: none | dynamic | static",
    "grad_scaler": "whether a torch GradScaler is created and enabled",
    "devices": "which visible devices the run computes on: all | first | a list of indices",
}


class Override(BaseModel):
    """A value the framework replaced: the user's setting lost to another source."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    field: str
    winner: Sourced[Any]
    loser: Sourced[Any]
    reason: str


class PrecisionPlan(BaseModel):
    """Each field is a value and where it came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    framework: str
    load_dtype: Sourced[str]
    param_dtype: Sourced[str]
    autocast_dtype: Sourced[str | None]
    grad_dtype: Sourced[str]
    optimizer_state_dtype: Sourced[str]
    loss_scaling: Sourced[str]
    grad_scaler: Sourced[bool]
    devices: Sourced[str]
    overrides: list[Override] = Field(default_factory=list)

    def fields(self) -> dict[str, Sourced[Any]]:
        return {name: getattr(self, name) for name in PLAN_FIELDS}

    def override_of(self, field: str) -> Override | None:
        return next((o for o in self.overrides if o.field == field), None)

    def device_indices(self, count: int) -> list[int]:
        """Indices (into the visible devices) the run computes on."""
        spec = self.devices.value
        if spec == "first":
            return [0] if count else []
        if spec == "all":
            return list(range(count))
        wanted = [int(p) for p in spec.split(",") if p.strip().isdigit()]
        return [i for i in wanted if i < count]

    @property
    def uses_bf16(self) -> bool:
        return "bfloat16" in {self.load_dtype.value, self.param_dtype.value, self.autocast_dtype.value}

    @property
    def uses_fp16(self) -> bool:
        return "float16" in {self.load_dtype.value, self.param_dtype.value, self.autocast_dtype.value}
