"""``precheck probe``: a table to paste into a bug report, or ``--json`` for ``--hardware``."""

from __future__ import annotations

import json
import os
import sys

from .probe import probe, result_to_json, to_hardware

ORDER_VARS = ("CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def print_probe(as_json: bool = False, use_torch: bool = False) -> None:
    result = probe(use_torch)
    if as_json:
        print(json.dumps(result_to_json(result), indent=2))
        return
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if not result.gpus:
        print("no GPU found (hardware rules need --gpu NAME or --hardware FILE on this machine)")
        return
    from rich.console import Console
    from rich.table import Table

    hardware = to_hardware(result, os.environ)
    env = ", ".join(f"{v}={os.environ[v]}" for v in ORDER_VARS if v in os.environ) or "none set"
    table = Table(
        title=f"{len(hardware.devices)} device(s) as the run sees them, {hardware.order} order",
        caption=f"driver {result.driver or '?'}, CUDA {result.cuda or '?'}, probed with {result.method}; env: {env}",
    )
    free = {g.pci_index: g.memory_free_mib for g in result.gpus}
    for column in ("cuda", "smi", "PCI bus", "name", "cc", "total GB", "free GB", "bf16", "tf32", "fp8", "FA2"):
        table.add_column(column, justify="right" if column.endswith("GB") else "left")
    for d in hardware.devices:
        m = d.model
        spare = free.get(d.pci_index if d.pci_index is not None else -1)
        table.add_row(
            str(d.index),
            "?" if d.pci_index is None else str(d.pci_index),
            d.pci_bus_id or "?",
            d.name,
            m.compute_capability,
            f"{d.memory_gib:.1f}",
            "?" if spare is None else f"{spare / 1024:.1f}",
            _yes(m.bf16),
            _yes(m.tf32),
            _yes(m.fp8),
            _yes(m.flash_attention_2),
        )
    console = Console(width=None if sys.stdout.isatty() else 160, highlight=False)
    console.print(table)
    for note in hardware.notes:
        if note not in result.notes:
            console.print(f"note: {note}")
