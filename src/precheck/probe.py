"""Probe this machine's GPUs without importing torch.

NVML first (the ``nvidia-ml-py`` package, imported only here), then
``nvidia-smi --query-gpu`` with a time-out. Both enumerate by PCI bus; the order the
training process sees is then derived (:func:`cuda_order`) and ``CUDA_VISIBLE_DEVICES``
applied. Every external call is bounded in time and every failure becomes a note:
probing never hangs and never stops a check.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import InputError
from .gpu_db import GpuModel, custom_model, database
from .hardware import Device, Hardware, env_order, with_visibility

TIMEOUT_S = 5.0
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
        if len(parts) < 8 or not parts[0].isdigit():
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
                compute_capability=cc if cc and cc[0].isdigit() else None,
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


def probe() -> ProbeResult:
    """NVML, then nvidia-smi; never raises, never hangs."""
    notes: list[str] = []
    try:
        result: ProbeResult = _with_timeout(probe_nvml, TIMEOUT_S)
        if result.gpus:
            return result
        notes.append("NVML: no GPU")
    except ImportError:
        notes.append("NVML: nvidia-ml-py is not installed")
    except Exception as exc:  # a broken driver is a note, not a crash
        notes.append(f"NVML: {type(exc).__name__}: {exc}")
    try:
        result = probe_smi()
    except subprocess.TimeoutExpired:
        result = ProbeResult(notes=[f"nvidia-smi: no answer within {TIMEOUT_S:g} s"])
    except OSError as exc:
        result = ProbeResult(notes=[f"nvidia-smi: {exc}"])
    result.notes = notes + result.notes
    return result


def model_of(gpu: RawGpu) -> GpuModel:
    found = database().find(gpu.name)
    if found is not None:
        return found
    cc = gpu.compute_capability or "0.0"
    major, _, minor = cc.partition(".")
    return custom_model(int(major or 0), int(minor or 0), round(gpu.memory_mib / 1024, 1))


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


def to_hardware(result: ProbeResult, env: Mapping[str, str], source: str = "probe") -> Hardware:
    devices = [
        Device(
            index=g.pci_index,
            model=model_of(g),
            name=g.name,
            memory_gib=round(g.memory_mib / 1024, 1),
            pci_index=g.pci_index,
            pci_bus_id=g.pci_bus_id,
            uuid=g.uuid,
        )
        for g in result.gpus
    ]
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
            }
            for g in result.gpus
        ],
        "notes": result.notes,
    }


def load_hardware_file(path: str, env: Mapping[str, str]) -> Hardware:
    """Hardware from a file written by ``precheck probe --json``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a precheck probe file: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != PROBE_SCHEMA or not isinstance(data.get("devices"), list):
        raise InputError(path, f'not a precheck probe file (expected {{"version": {PROBE_SCHEMA}, "devices": [...]}})')
    try:
        gpus = [
            RawGpu(
                pci_index=int(item["pci_index"]),
                name=str(item["name"]),
                memory_mib=float(item["memory_mib"]),
                compute_capability=item.get("compute_capability"),
                pci_bus_id=item.get("pci_bus_id"),
                uuid=item.get("uuid"),
                memory_free_mib=item.get("memory_free_mib"),
            )
            for item in data["devices"]
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(path, f"bad device entry: {exc}") from None
    result = ProbeResult(gpus, str(data.get("method", "file")), data.get("driver"), data.get("cuda"), [])
    return to_hardware(result, env, "file")
