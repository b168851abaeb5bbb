"""Probe this machine's GPUs without importing torch.

NVML first (the ``nvidia-ml-py`` package, imported only here), then
``nvidia-smi --query-gpu`` with a time-out. Both enumerate by PCI bus; the order the
training process sees is then derived (:func:`cuda_order`) and ``CUDA_VISIBLE_DEVICES``
applied. Every external call is bounded in time and every failure becomes a note:
probing never hangs and never stops a check.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .escape import printable
from .gpu_db import GpuModel, custom_model, database
from .hardware import Device, Hardware, cuda_order, env_order, with_visibility

TIMEOUT_S = 5.0
#: importing torch and initialising CUDA takes several seconds cold (7 s seen on an H100 host)
TORCH_TIMEOUT_S = 60.0
PROBE_SCHEMA = 1


@dataclass
class RawGpu:
    """One device as a driver tool reports it, in PCI-bus order."""

    pci_index: int
    name: str
    memory_mib: float
    compute_capability: str | None = None
    pci_bus_id: str | None = None
    uuid: str | None = None
    memory_free_mib: float | None = None
    #: MIG instances carved out of this GPU: (MIG uuid, profile such as "1g.10gb")
    mig: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ProbeResult:
    gpus: list[RawGpu] = field(default_factory=list)
    method: str = "none"
    driver: str | None = None
    cuda: str | None = None
    notes: list[str] = field(default_factory=list)


def _with_timeout(fn: Callable[[], Any], seconds: float) -> Any:
    """Run ``fn`` in a daemon thread; TimeoutError if it does not return in time."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # reported to the caller, never raised in the thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def probe_nvml() -> ProbeResult:
    import pynvml  # nvidia-ml-py; optional

    pynvml.nvmlInit()
    try:
        result = ProbeResult(method="nvml")
        result.driver = _text(pynvml.nvmlSystemGetDriverVersion())
        try:
            version = pynvml.nvmlSystemGetCudaDriverVersion_v2()
            result.cuda = f"{version // 1000}.{version % 1000 // 10}"
        except Exception:
            pass
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            try:
                major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
                cc: str | None = f"{major}.{minor}"
            except Exception:
                cc = None
            result.gpus.append(
                RawGpu(
                    pci_index=index,
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    memory_mib=memory.total / 2**20,
                    memory_free_mib=memory.free / 2**20,
                    compute_capability=cc,
                    pci_bus_id=_text(pynvml.nvmlDeviceGetPciInfo(handle).busId),
                    uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                )
            )
        return result
    finally:
        pynvml.nvmlShutdown()


SMI_FIELDS = "index,pci.bus_id,name,uuid,memory.total,memory.free,compute_cap,driver_version"


def parse_smi(output: str) -> ProbeResult:
    """Parse ``nvidia-smi --query-gpu=SMI_FIELDS --format=csv,noheader,nounits``."""
    result = ProbeResult(method="nvidia-smi")
    for line in output.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 8 or not parts[0].isascii() or not parts[0].isdecimal():
            if line.strip():
                result.notes.append(f"nvidia-smi: unexpected line {line.strip()[:120]!r}")
            continue
        index, bus, name, uuid, total, free, cc, driver = parts[:8]
        result.driver = driver
        result.gpus.append(
            RawGpu(
                pci_index=int(index),
                name=name,
                memory_mib=_number(total),
                memory_free_mib=_number(free),
                compute_capability=cc if _CC.fullmatch(cc) else None,
                pci_bus_id=bus,
                uuid=uuid,
            )
        )
    return result


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def probe_smi(executable: str = "nvidia-smi") -> ProbeResult:
    path = shutil.which(executable)
    if path is None:
        return ProbeResult(notes=["nvidia-smi not found"])
    completed = subprocess.run(
        [path, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
        message = (completed.stderr or completed.stdout).strip().splitlines()
        return ProbeResult(notes=[f"nvidia-smi failed: {message[0] if message else completed.returncode}"])
    return parse_smi(completed.stdout)


#: a compute capability as nvidia-smi prints it ("8.0"); "[N/A]" on old drivers
_CC = re.compile(r"[0-9]+\.[0-9]+")
_MIG_LINE = re.compile(r"^\s*MIG\s+(\S+)\s+Device\s+\d+:\s*\(UUID:\s*(MIG-[^)\s]+)\)")
_GPU_LINE = re.compile(r"^GPU\s+(\d+):")


def parse_smi_list(output: str) -> dict[int, list[tuple[str, str]]]:
    """MIG instances per GPU from ``nvidia-smi -L``."""
    found: dict[int, list[tuple[str, str]]] = {}
    current: int | None = None
    for line in output.splitlines():
        gpu = _GPU_LINE.match(line)
        if gpu:
            current = int(gpu.group(1))
            continue
        mig = _MIG_LINE.match(line)
        if mig and current is not None:
            found.setdefault(current, []).append((mig.group(2), mig.group(1)))
    return found


def attach_mig(result: ProbeResult, listing: str) -> None:
    for index, instances in parse_smi_list(listing).items():
        for gpu in result.gpus:
            if gpu.pci_index == index:
                gpu.mig = instances


def parse_rocm_smi(output: str) -> ProbeResult:
    """Parse ``rocm-smi --showproductname --showmeminfo vram --showbus --json``."""
    result = ProbeResult(method="rocm-smi")
    data = json.loads(output)
    cards = sorted((k for k in data if k.startswith("card")), key=lambda k: int(re.sub(r"\D", "", k) or 0))
    for position, key in enumerate(cards):
        card = data[key]
        name = str(
            card.get("Card Series") or card.get("Card series") or card.get("Device Name") or card.get("Card SKU") or key
        )
        total = float(card.get("VRAM Total Memory (B)", 0) or 0)
        used = float(card.get("VRAM Total Used Memory (B)", 0) or 0)
        gfx = card.get("GFX Version") or card.get("gfx_version")
        result.gpus.append(
            RawGpu(
                pci_index=position,
                name=name if name.upper().startswith("AMD") else f"AMD {name}",
                memory_mib=total / 2**20,
                memory_free_mib=(total - used) / 2**20 if total else None,
                compute_capability=str(gfx) if gfx else None,
                pci_bus_id=card.get("PCI Bus"),
                uuid=card.get("Unique ID"),
            )
        )
    return result


def probe_rocm_smi() -> ProbeResult:
    path = shutil.which("rocm-smi")
    if path is None:
        return ProbeResult(notes=["rocm-smi not found"])
    completed = subprocess.run(
        [path, "--showproductname", "--showmeminfo", "vram", "--showbus", "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
        return ProbeResult(notes=[f"rocm-smi failed with exit code {completed.returncode}"])
    try:
        return parse_rocm_smi(completed.stdout)
    except (ValueError, TypeError, AttributeError) as exc:
        return ProbeResult(notes=[f"rocm-smi: unreadable output ({exc})"])


def probe_torch() -> ProbeResult:
    """Ask torch (only when the user asks: ``precheck probe --torch``); CUDA order already."""
    import torch

    result = ProbeResult(method="torch", cuda=torch.version.cuda or torch.version.hip)
    for index in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(index)
        gcn = getattr(props, "gcnArchName", "") if torch.version.hip else ""
        result.gpus.append(
            RawGpu(
                pci_index=index,
                name=props.name,
                memory_mib=props.total_memory / 2**20,
                compute_capability=gcn.split(":")[0] if gcn else f"{props.major}.{props.minor}",
                uuid=f"GPU-{props.uuid}" if getattr(props, "uuid", None) else None,
            )
        )
    return result


def _safely(
    fn: Callable[[], ProbeResult], label: str, notes: list[str], seconds: float
) -> tuple[ProbeResult | None, bool]:
    """``fn``'s result when it found devices, and whether it answered in time at all."""
    try:
        result: ProbeResult = _with_timeout(fn, seconds)
    except ImportError as exc:
        notes.append(f"{label}: {exc.name or exc} is not installed")
        return None, True
    except (TimeoutError, subprocess.TimeoutExpired):
        notes.append(f"{label}: no answer within {seconds:g} s")
        return None, False
    except Exception as exc:  # a broken driver is a note, not a crash
        notes.append(f"{label}: {type(exc).__name__}: {exc}")
        return None, True
    notes.extend(result.notes)
    return (result if result.gpus else None), True


def probe(use_torch: bool = False) -> ProbeResult:
    """NVML, then nvidia-smi, then rocm-smi (torch first when asked); never raises, never hangs.

    When NVML does not answer, nvidia-smi is not run: it reads the same driver library
    (``libnvidia-ml``) and hangs with it, so a wedged driver costs one time-out, not two."""
    notes: list[str] = []
    sources: list[tuple[Callable[[], ProbeResult], str]] = [
        (probe_nvml, "NVML"),
        (_probe_smi_with_mig, "nvidia-smi"),
        (probe_rocm_smi, "rocm-smi"),
    ]
    if use_torch:
        sources.insert(0, (probe_torch, "torch"))
    nvml_silent = False
    for fn, label in sources:
        if label == "nvidia-smi" and nvml_silent:
            notes.append("nvidia-smi: not run, as NVML gave no answer (both ask the driver's libnvidia-ml)")
            continue
        found, answered = _safely(fn, label, notes, TORCH_TIMEOUT_S if label == "torch" else TIMEOUT_S)
        nvml_silent = nvml_silent or (label == "NVML" and not answered)
        if found is not None:
            found.notes = [n for n in notes if n not in found.notes] + found.notes
            return found
    return ProbeResult(notes=notes)


def _probe_smi_with_mig() -> ProbeResult:
    result = probe_smi()
    path = shutil.which("nvidia-smi")
    if result.gpus and path:
        listing = subprocess.run([path, "-L"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        if listing.returncode == 0:
            attach_mig(result, listing.stdout)
    return result


def model_of(gpu: RawGpu) -> GpuModel:
    found = database().find(gpu.name)
    if found is not None:
        return found
    cc = _CC.fullmatch(gpu.compute_capability or "")  # not "gfx90a" or what a hand-edited file holds
    major, minor = (int(cc.group(0).split(".")[0]), int(cc.group(0).split(".")[1])) if cc else (0, 0)
    return custom_model(major, minor, round(gpu.memory_mib / 1024, 1))


def to_hardware(result: ProbeResult, env: Mapping[str, str], source: str = "probe") -> Hardware:
    devices = [
        Device(
            index=g.pci_index,
            model=model_of(g),
            name=printable(g.name),  # a driver tool's or a file's text: no escape sequences in messages
            memory_gib=round(g.memory_mib / 1024, 1),
            pci_index=g.pci_index,
            pci_bus_id=g.pci_bus_id,
            uuid=g.uuid,
            mig=tuple(g.mig),
        )
        for g in result.gpus
    ]
    if result.method == "torch":
        order, ordered = "as torch enumerates", devices  # torch already numbers as CUDA does
    elif any(d.model.vendor == "amd" for d in devices):
        order, ordered = "PCI_BUS_ID", devices  # ROCm enumerates by PCI bus
    else:
        order = env_order(env)
        ordered = cuda_order(devices, order)
    hardware = Hardware(source, ordered, ordered, order, notes=list(result.notes))  # type: ignore[arg-type]
    return with_visibility(hardware, env)


def probe_hardware(env: Mapping[str, str]) -> Hardware:
    return to_hardware(probe(), env)


def result_to_json(result: ProbeResult) -> dict[str, Any]:
    return {
        "version": PROBE_SCHEMA,
        "method": result.method,
        "driver": result.driver,
        "cuda": result.cuda,
        "devices": [
            {
                "pci_index": g.pci_index,
                "pci_bus_id": g.pci_bus_id,
                "name": g.name,
                "uuid": g.uuid,
                "compute_capability": g.compute_capability,
                "memory_mib": g.memory_mib,
                "memory_free_mib": g.memory_free_mib,
                "mig": [{"uuid": uuid, "profile": profile} for uuid, profile in g.mig],
            }
            for g in result.gpus
        ],
        "notes": result.notes,
    }


def load_hardware_file(path: str, env: Mapping[str, str]) -> Hardware:
    """Hardware from a file written by ``precheck probe --json``; a bad entry is an input
    error at its line and column."""
    import math

    from .sources import read_text
    from .sources.json_source import parse_json
    from .sources.nodes import Node

    document = parse_json(path, read_text(Path(path), path))
    data = document.root.plain()
    if not isinstance(data, dict) or data.get("version") != PROBE_SCHEMA or not isinstance(data.get("devices"), list):
        raise InputError(path, f'not a precheck probe file (expected {{"version": {PROBE_SCHEMA}, "devices": [...]}})')
    devices = document.root.get("devices")
    assert devices is not None and isinstance(devices.value, list)

    def bad(node: Node, message: str) -> InputError:
        line, column = node.anchor
        return InputError(path, f"bad device entry: {message}", line, column)

    def text_field(item: Node, name: str, required: bool = False) -> str | None:
        node = item.get(name)
        if node is None or node.value is None:
            if required:
                raise bad(item, f"{name!r} is missing")
            return None
        if not isinstance(node.value, str):
            raise bad(node, f"{name!r} must be a string, not {node.raw or node.plain()!r}")
        return node.value

    def number_field(item: Node, name: str, required: bool = False) -> float | None:
        node = item.get(name)
        if node is None or node.value is None:
            if required:
                raise bad(item, f"{name!r} is missing")
            return None
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise bad(node, f"{name!r} must be a finite number of MiB, not {node.raw or value!r}")
        return float(value)

    gpus = []
    for item in devices.value:
        if not isinstance(item.value, dict):
            raise bad(item, "each device must be a JSON object")
        index = item.get("pci_index")
        if index is None or isinstance(index.value, bool) or not isinstance(index.value, int):
            raise bad(index or item, "'pci_index' must be an integer")
        mig_node = item.get("mig")
        mig = []
        for entry in mig_node.value if mig_node is not None and isinstance(mig_node.value, list) else []:
            if not isinstance(entry.value, dict):
                raise bad(entry, "each MIG instance must be a JSON object")
            mig.append((text_field(entry, "uuid", True) or "", text_field(entry, "profile", True) or ""))
        gpus.append(
            RawGpu(
                pci_index=index.value,
                name=text_field(item, "name", True) or "",
                memory_mib=number_field(item, "memory_mib", True) or 0.0,
                compute_capability=text_field(item, "compute_capability"),
                pci_bus_id=text_field(item, "pci_bus_id"),
                uuid=text_field(item, "uuid"),
                memory_free_mib=number_field(item, "memory_free_mib"),
                mig=mig,
            )
        )
    result = ProbeResult(gpus, str(data.get("method", "file")), data.get("driver"), data.get("cuda"), [])
    return to_hardware(result, env, "file")
