"""``precheck probe``: a table to paste into a bug report, or ``--json`` for ``--hardware``."""

from __future__ import annotations

import json
import os
import sys

from .probe import probe, result_to_json, to_hardware

ORDER_VARS = ("CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES")


def print_probe(as_json: bool) -> None:
    result = probe()
    if as_json:
        print(json.dumps(result_to_json(result), indent=2))
        return
    hardware = to_hardware(result, os.environ)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if not result.gpus:
        print("no GPU found (hardware rules need --gpu NAME or --hardware FILE on this machine)")
        return
    print(f"driver {result.driver or '?'}, CUDA {result.cuda or '?'}, probed with {result.method}")
    env = ", ".join(f"{v}={os.environ[v]}" for v in ORDER_VARS if v in os.environ) or "none"
    print(f"order: CUDA index as the run sees it ({hardware.order}); env: {env}")
    header = (
        f"{'cuda':<5} {'smi':<4} {'pci bus':<17} {'name':<34} {'cc':<5} {'total':>8} {'free':>8}  bf16 tf32 fp8  fa2"
    )
    print(header)
    free = {g.pci_index: g.memory_free_mib for g in result.gpus}
    for d in hardware.devices:
        m = d.model
        flags = "  ".join("yes " if ok else "no  " for ok in (m.bf16, m.tf32, m.fp8, m.flash_attention_2))
        spare = free.get(d.pci_index or 0)
        print(
            f"{d.index:<5} {d.pci_index if d.pci_index is not None else '?':<4} "
            f"{d.pci_bus_id or '?':<17} {d.name[:34]:<34} "
            f"{m.compute_capability:<5} {d.memory_gib:>6.1f}GB {(spare or 0) / 1024:>6.1f}GB  {flags}"
        )
    for note in hardware.notes:
        if note not in result.notes:
            print(f"note: {note}")
