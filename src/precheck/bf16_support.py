"""What ``torch.cuda.is_bf16_supported()`` answers on a machine, by torch version (model layer)."""

from __future__ import annotations

import re

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


#: ``torch.cuda.is_bf16_supported()`` written in a script, emulation counted (the default, not
#: ``including_emulation=False``): its answer on a pre-Ampere GPU depends on the torch version
_RUNTIME_CHECK = re.compile(r"\bis_bf16_supported\s*\(\s*(?!including_emulation\s*=\s*False)(?!False\s*\))")


def emulation_counted_check(written: str | None) -> bool:
    """Whether a value was written as ``torch.cuda.is_bf16_supported()`` counting emulation
    (``torch/cuda/__init__.py``: ``including_emulation: bool = True`` from 2.4.0; 2.3.0 falls back
    to ``_check_bf16_tensor_supported`` unconditionally, :data:`BF16_CHECK_COUNTS_EMULATION`).
    Unsloth's ``is_bfloat16_supported()`` is a compute-capability test and is not one."""
    return bool(written) and _RUNTIME_CHECK.search(written or "") is not None


def runtime_check_answer(name: str, versions: Versions) -> tuple[bool, str]:
    """What ``torch.cuda.is_bf16_supported()`` answers on ``name``, a GPU without native bf16, said
    the way a finding says it (``is_bf16_supported() is True on a V100 under torch>=2.3``)."""
    torch = versions.get("torch")
    if torch is not None and not BF16_CHECK_COUNTS_EMULATION.contains(torch.version):
        return (
            False,
            f"`torch.cuda.is_bf16_supported()` is False on {name} under torch {torch.version} ({torch.source})",
        )
    under = f"torch {torch.version} ({torch.source})" if torch is not None else "torch>=2.3 (the newest behaviour)"
    return True, f"`torch.cuda.is_bf16_supported()` is True on {name} under {under}: it counts emulated bf16"
