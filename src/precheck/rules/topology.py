"""PC5xx: which cards the run gets, in which order."""

from __future__ import annotations

from collections.abc import Iterator

from ..escape import shorten
from ..hardware import VISIBILITY_AMD
from ..provenance import Origin
from .base import Context, Finding, Fix, Severity, anchor, rule
from .device import used_devices


def _anchor(ctx: Context, name: str) -> Origin:
    """Env vars have no line: point at the top of the config the run reads."""
    item = ctx.config.env.get(name)
    return anchor(ctx.config.path, *([item.origin] if item is not None else []))


@rule("PC501", "cuda-device-order-ambiguous", Severity.WARNING, hardware=True)
def cuda_device_order_ambiguous(ctx: Context) -> Iterator[Finding]:
    """
    Warns on a machine with different GPUs when CUDA's device order is left to its default.

    ## What it does
    Reports mixed GPU models when `CUDA_DEVICE_ORDER` is not `PCI_BUS_ID`, and lists
    which physical card each CUDA index is and which ones this run computes on.

    ## Why is this bad?
    nvidia-smi and NVML number GPUs by PCI bus. CUDA enumerates them "in fastest to
    slowest order using a simple heuristic" unless `CUDA_DEVICE_ORDER=PCI_BUS_ID` (CUDA
    Programming Guide, "CUDA Environment Variables"; the heuristic itself is not
    documented). `CUDA_VISIBLE_DEVICES=1` copied from nvidia-smi can then select the
    other card. The seed: a TITAN RTX (24 GB) + GTX 1080 Ti (11 GB) box whose fp16
    fine-tuning run landed on the weaker card and failed with "expected mat1 and mat2
    to have the same dtype, but got: c10::Half != float" (meta-llama/llama-cookbook#715).

    ## Example
    A TITAN RTX and a GTX 1080 Ti, no `CUDA_DEVICE_ORDER` in the environment.

    Use instead:
    ```sh
    export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=<the card's nvidia-smi index>
    ```

    ## Fix
    `export CUDA_DEVICE_ORDER=PCI_BUS_ID` so indices match nvidia-smi, and make only the
    card(s) the run should use visible with `CUDA_VISIBLE_DEVICES`.
    """
    hardware = ctx.hardware
    if not hardware.mixed or hardware.order == "PCI_BUS_ID":
        return
    machine = "; ".join(
        f"CUDA index {i} = {d.name} ({d.model.sm}, {d.memory_gib:g} GB)" for i, d in enumerate(hardware.all_devices)
    )
    used = ", ".join(d.label() for d in used_devices(ctx)) or "no GPU"
    chosen = f"with CUDA_VISIBLE_DEVICES={shorten(hardware.visible)}, " if hardware.visible is not None else ""
    listing = f"{machine}; {chosen}this run computes on {used}"
    yield Finding(
        _anchor(ctx, "CUDA_DEVICE_ORDER"),
        f"mixed GPUs in CUDA's default FASTEST_FIRST order, which is not nvidia-smi's: {listing}",
        Fix(
            "export CUDA_DEVICE_ORDER=PCI_BUS_ID so CUDA indices match nvidia-smi, and expose only the "
            "intended card(s) with CUDA_VISIBLE_DEVICES"
        ),
    )


@rule("PC502", "cuda-visible-devices-invalid", Severity.ERROR, hardware=True)
def cuda_visible_devices_invalid(ctx: Context) -> Iterator[Finding]:
    """
    Finds a `CUDA_VISIBLE_DEVICES` that names devices the machine does not have.

    ## What it does
    Applies `CUDA_VISIBLE_DEVICES` to the machine's devices as CUDA does and reports an
    entry that matches no device (an index past the end, an unknown UUID, a repeat).

    ## Why is this bad?
    CUDA hides the invalid entry and every entry after it ("only devices with indices
    that appear before the invalid index in the list are visible": `0,2,-1,1` makes
    devices 0 and 2 visible). The run gets fewer GPUs than planned, or none:
    "RuntimeError: No CUDA GPUs are available" / "invalid device ordinal".

    ## Example
    `CUDA_VISIBLE_DEVICES=0,4` on a 2-GPU machine.

    Use instead: `CUDA_VISIBLE_DEVICES=0,1`.

    ## Fix
    List only indices below the device count (or existing UUIDs).
    """
    value = ctx.hardware.visible
    if value is None:
        return
    for note in ctx.hardware.notes:
        if note.split("=", 1)[0] in VISIBILITY_AMD:
            yield Finding(
                _anchor(ctx, "CUDA_VISIBLE_DEVICES"),
                f"{note}; the run sees {len(ctx.hardware.devices)} device(s)",
                Fix("name only devices this machine has"),
            )
