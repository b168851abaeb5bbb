"""The memory estimate ``precheck explain`` shows for a run (JSON and both views read it)."""

from __future__ import annotations

from typing import Any

from .engine import FileResult
from .memory import gib


def memory_of(result: FileResult) -> dict[str, Any] | None:
    """The per-device memory estimate PC801/PC802 judge, when the model's size is known."""
    if result.config is None or result.plan is None or result.hardware is None or result.versions is None:
        return None
    if not result.hardware.known:
        return None
    from .rules.base import Context
    from .rules.memory import estimate_for

    found = estimate_for(Context(result.config, result.plan, result.hardware, result.versions))
    if found is None:
        return None
    est, dims, capacity, device = found
    return {
        "summary": f"{est.breakdown()} of {device}'s {gib(capacity)} "
        f"({dims.params / 1e9:.2f}B parameters, {dims.source})",
        "devices": est.devices,
        "bytes": {name: value for name, value in est.parts()},
        "total_bytes": est.total,
        "device_bytes": capacity,
        "device": device,
        "source": dims.source,
        "parameters": dims.params,
        "trainable": est.trainable,
        "notes": est.notes,
    }
