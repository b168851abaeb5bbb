"""What ``torch.cuda.is_bf16_supported()`` answers on a machine, by torch version (model layer)."""

from __future__ import annotations

from .facts import span
from .hardware import Hardware
from .versions import Versions

#: torch 2.3.0 made ``is_bf16_supported()`` fall back to allocating a bf16 tensor
#: (``_check_bf16_tensor_supported``, pytorch#115924), which succeeds on pre-Ampere GPUs;
#: up to 2.2.2 it was ``major >= 8 and cuda >= 11``. transformers' ``is_torch_bf16_gpu_available``
#: and accelerate's ``is_bf16_available`` return it as is.
BF16_CHECK_COUNTS_EMULATION = span("torch.bf16_check_counts_emulation")


def frameworks_see_bf16(hardware: Hardware, versions: Versions) -> tuple[bool, str]:
    """What ``torch.cuda.is_bf16_supported()`` answers on these devices, and why."""
    if all(d.bf16 for d in hardware.devices):
        return True, "native bf16"
    torch = versions.get("torch")
    if torch is None or BF16_CHECK_COUNTS_EMULATION.contains(torch.version):
        known = f"torch {torch.version}" if torch else "torch version not known: newest behaviour"
        return True, f"torch>=2.3 counts bf16 emulation as support [{known}]"
    return False, f"torch {torch.version} reports no bf16 before Ampere"
