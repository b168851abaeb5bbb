"""The hardware a run will get: devices in the order the run's CUDA runtime sees them.

A :class:`Hardware` value comes from named profiles (``--gpu V100``), a file written by
``precheck probe --json`` (``--hardware FILE``), or a probe of this machine
(:mod:`precheck.probe`, never importing torch).

Order and visibility follow CUDA:

* ``CUDA_DEVICE_ORDER``: ``FASTEST_FIRST`` (CUDA's default) or ``PCI_BUS_ID`` (the order
  nvidia-smi and NVML use). ``--gpu`` lists cards in CUDA's order already.
* ``CUDA_VISIBLE_DEVICES`` then selects among them: indices into that order, ``GPU-``
  UUID prefixes or ``MIG-`` ids; an invalid entry hides it and every entry after it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from .errors import UsageError
from .escape import printable, shorten
from .gpu_db import GpuModel, custom_model, database

HardwareSource = Literal["profile", "probe", "file", "none"]

_COUNT = re.compile(r"^\s*(\d+)\s*[x×*]\s*(.+?)\s*$", re.IGNORECASE)
#: ``sm_86:48GB``, ``sm_100:180GB``, ``sm_90a:80GB``: CUDA's ``sm_XY`` names capability X.Y with the
#: minor version as the last digit (``sm_100`` is 10.0, ``sm_120`` 12.0; nvcc ``-arch`` spelling)
_CUSTOM = re.compile(r"^\s*sm_?(\d+)(\d)[af]?\s*[:/ ]\s*(\d+(?:\.\d+)?)\s*gi?b?\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Device:
    """One GPU of the machine, at its CUDA index as the training process sees it."""

    #: CUDA index as the training process sees it (after order and visibility)
    index: int
    model: GpuModel
    #: the name as given or reported
    name: str
    memory_gib: float
    #: position in PCI-bus order (nvidia-smi's index) when known
    pci_index: int | None = None
    pci_bus_id: str | None = None
    uuid: str | None = None
    #: MIG instances of this GPU: (MIG uuid, profile such as "1g.10gb")
    mig: tuple[tuple[str, str], ...] = ()

    @property
    def bf16(self) -> bool:
        return self.model.bf16

    def label(self) -> str:
        return f"cuda:{self.index} {self.name} ({self.model.sm}, {self.memory_gib:g} GB)"


def devices_label(devices: list[Device]) -> str:
    """``cuda:0 Tesla V100 (sm_70, 32 GB)``; a run of the same card on consecutive indices is
    one entry (``cuda:0-7 8x Tesla V100-SXM2-32GB (sm_70, 32 GB)``), so messages stay short."""
    groups: list[list[Device]] = []
    for device in devices:
        last = groups[-1][-1] if groups else None
        if last is not None and last.name == device.name and last.index + 1 == device.index:
            groups[-1].append(device)
        else:
            groups.append([device])
    out = []
    for group in groups:
        first = group[0]
        if len(group) == 1:
            out.append(first.label())
        else:
            sm, memory = first.model.sm, f"{first.memory_gib:g} GB"
            out.append(f"cuda:{first.index}-{group[-1].index} {len(group)}x {first.name} ({sm}, {memory})")
    return ", ".join(out)


@dataclass(slots=True)
class Hardware:
    """The GPUs a run trains on, and where precheck learned them."""

    source: HardwareSource
    #: the devices the run can use, in its CUDA order
    devices: list[Device]
    #: every device on the machine in CUDA order, before CUDA_VISIBLE_DEVICES
    all_devices: list[Device] = field(default_factory=list)
    order: str = "FASTEST_FIRST"
    visible: str | None = None
    #: problems found while building this value (probe failures, invalid entries)
    notes: list[str] = field(default_factory=list)
    #: whether the number of devices is known: False for ``--gpu A100`` (a card, no count),
    #: where each run is checked on as many of that card as its launch asks for
    count_known: bool = True

    @property
    def known(self) -> bool:
        """Whether hardware-dependent rules can run: the machine's devices are known
        (even when CUDA_VISIBLE_DEVICES hides all of them from the run)."""
        return bool(self.all_devices)

    @property
    def mixed(self) -> bool:
        return len({d.model.id for d in self.all_devices}) > 1

    def describe(self) -> str:
        if not self.devices:
            return "no GPU"
        counts: dict[str, int] = {}
        for d in self.devices:
            counts[d.name] = counts.get(d.name, 0) + 1
        return ", ".join(f"{n}x {name}" if n > 1 else name for name, n in counts.items())


def model_for(spec: str) -> GpuModel:
    """The database entry for one card name, or a custom card ``sm_86:48GB``."""
    custom = _CUSTOM.match(spec)
    if custom:
        return custom_model(int(custom.group(1)), int(custom.group(2)), float(custom.group(3)))
    db = database()
    found = db.find(spec)
    if found is None:
        hints = db.closest(spec)
        hint = f"; did you mean {', '.join(repr(h) for h in hints)}?" if hints else ""
        raise UsageError(
            f"unknown GPU {spec!r}{hint} (describe a card the database lacks by compute "
            "capability and memory, e.g. --gpu sm_86:48GB; `precheck gpus` lists known names)"
        )
    return found


def expand_specs(specs: list[str]) -> list[GpuModel]:
    """``["8xH100", "V100"]`` → nine models, in the order given."""
    models: list[GpuModel] = []
    for spec in specs:
        count, name = 1, spec
        match = _COUNT.match(spec)
        if match:
            count, name = int(match.group(1)), match.group(2)
            if count < 1 or count > 1024:
                raise UsageError(f"--gpu {spec!r}: the count must be between 1 and 1024")
        models.extend([model_for(name)] * count)
    return models


def from_specs(specs: list[str], env: Mapping[str, str]) -> Hardware:
    """Hardware named on the command line: cards listed in CUDA's order."""
    models = expand_specs(specs)
    devices = [Device(i, m, m.name, m.cuda_memory_gib or m.memory_gib) for i, m in enumerate(models)]
    count_known = len(specs) != 1 or _COUNT.match(specs[0]) is not None
    return with_visibility(Hardware("profile", devices, devices, env_order(env), count_known=count_known), env)


def with_count(hardware: Hardware, count: int) -> Hardware:
    """``--gpu A100`` (no count) for a run that asks for ``count`` devices: that many of the card."""
    first = hardware.all_devices[0]
    devices = [replace(first, index=i) for i in range(count)]
    # the visibility variables are applied again to the new machine: drop what they said of the old one
    notes = [n for n in hardware.notes if n.split("=", 1)[0] not in VISIBILITY_AMD]
    return Hardware(hardware.source, devices, devices, hardware.order, notes=notes)


def env_order(env: Mapping[str, str]) -> str:
    value = env.get("CUDA_DEVICE_ORDER", "").strip().upper()
    return "PCI_BUS_ID" if value == "PCI_BUS_ID" else "FASTEST_FIRST"


def select_visible(devices: list[Device], value: str) -> tuple[list[Device], str | None]:
    """Apply a CUDA_VISIBLE_DEVICES value; returns the devices and a note if truncated."""
    chosen: list[Device] = []
    for raw in value.split(","):
        entry = raw.strip()
        match: Device | None = None
        if re.fullmatch(r"[0-9]+", entry):  # ASCII digits only: CUDA does not read "０" as 0
            position = int(entry) if len(entry) <= 18 else len(devices)  # a longer number is past every device
            match = devices[position] if position < len(devices) else None
        elif entry.startswith("GPU-"):
            hits = [d for d in devices if d.uuid and d.uuid.startswith(entry)]
            match = hits[0] if len(hits) == 1 else None
        elif entry.startswith("MIG-"):
            match = _mig_instance(devices, entry)
        if match is None or match in chosen:
            what = "repeats a device listed before it" if match is not None else "names no device"
            note = (
                f"CUDA_VISIBLE_DEVICES={shorten(printable(value))!r}: entry {shorten(printable(entry))!r} {what} "
                f"(there are {len(devices)}); CUDA ignores it and every entry after it"
            )
            return chosen, note
        chosen.append(match)
    return chosen, None


_MIG_MEMORY = re.compile(r"\.(\d+)gb", re.IGNORECASE)


def _mig_instance(devices: list[Device], entry: str) -> Device | None:
    """A MIG instance as a device of its own: the parent's capabilities, the slice's memory."""
    for device in devices:
        for uuid, profile in device.mig:
            if uuid.startswith(entry):
                size = _MIG_MEMORY.search(profile)
                memory = float(size.group(1)) if size else device.memory_gib
                return replace(device, name=f"{device.name} MIG {profile}", memory_gib=memory, uuid=uuid, mig=())
    return None


#: variables that select devices, applied in this order (ROCm: the runtime, then HIP)
VISIBILITY_NVIDIA = ("CUDA_VISIBLE_DEVICES",)
VISIBILITY_AMD = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


def with_visibility(hardware: Hardware, env: Mapping[str, str]) -> Hardware:
    """Renumber the devices the run will see, per CUDA_VISIBLE_DEVICES (and ROCm's own)."""
    amd = any(d.model.vendor == "amd" for d in hardware.all_devices)
    devices, notes, shown = list(hardware.all_devices), list(hardware.notes), None
    for name in VISIBILITY_AMD if amd else VISIBILITY_NVIDIA:
        value = env.get(name)
        if value is None:
            continue
        chosen, note = select_visible(devices, value)
        if note:
            notes.append(note.replace("CUDA_VISIBLE_DEVICES", name, 1))
        devices = [replace(d, index=i) for i, d in enumerate(chosen)]
        shown = value if shown is None else f"{shown} → {value}"
    if shown is None:
        return hardware
    return Hardware(
        hardware.source, devices, hardware.all_devices, hardware.order, shown, notes, count_known=hardware.count_known
    )


def cuda_order(devices: list[Device], order: str) -> list[Device]:
    """CUDA's enumeration: PCI order, or FASTEST_FIRST.

    NVIDIA documents FASTEST_FIRST only as "fastest to slowest order using a simple
    heuristic". precheck approximates it by compute capability, then memory, keeping
    PCI order among equals; identical cards therefore keep nvidia-smi's order, and on
    a mixed machine rule PC501 recommends PCI_BUS_ID rather than trusting the guess.
    """
    if order == "PCI_BUS_ID":
        ranked = list(devices)
    else:
        ranked = sorted(devices, key=lambda d: (-(d.model.cc or (0, 0))[0], -(d.model.cc or (0, 0))[1], -d.memory_gib))
    return [replace(d, index=i) for i, d in enumerate(ranked)]


def no_hardware(note: str) -> Hardware:
    return Hardware("none", [], [], notes=[note])
