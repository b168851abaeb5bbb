"""``precheck smoke``: resolve each config as the check does, then run one real step.

Needs torch and transformers (``pip install 'precheck-ml[hf]'``); imports them only here,
inside :func:`smoke`. Never downloads: ``HF_HUB_OFFLINE=1`` is set before transformers is
imported, and the model is built from a config (:mod:`precheck.smoke.tiny_model`).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import engine
from ..distribution import INSTALL_HF
from ..errors import InternalError, UsageError
from ..hardware import Hardware
from ..versions import VersionInfo
from .report import SmokeRun, findings_for, render_json, render_text
from .setup import setup_for

NEEDS = f"precheck smoke runs a real training step and needs torch and transformers: {INSTALL_HF}"


@dataclass
class SmokeReport:
    check: engine.Report
    device: str
    runs: list[SmokeRun] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def exit_code(self) -> int:
        if self.check.errors or self.check.internal_errors:
            return 2
        return 1 if any(not r.passed for r in self.runs) else 0

    def text(self) -> str:
        errors = [str(e) for e in self.check.errors]
        env = self.environment
        header = (
            f"device {env['device']} (torch {env['torch']}, transformers {env['transformers']}); "
            f"plans resolved for {env['hardware']}; {self.seconds:.1f} s"
        )
        return render_text(self.runs, errors, header)

    def json(self) -> str:
        errors = [{"path": e.path, "line": e.line, "column": e.column, "message": e.message} for e in self.check.errors]
        return render_json(self.runs, errors, {**self.environment, "seconds": round(self.seconds, 3)})


def _libraries() -> tuple[str, str]:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import torch
        import transformers
    except ImportError as error:
        raise UsageError(f"{NEEDS} ({error})") from None
    return str(torch.__version__), str(transformers.__version__)


def pick_device(wanted: str | None) -> str:
    import torch

    if wanted is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if wanted not in ("cpu", "cuda"):
        raise UsageError(f"--device {wanted!r}: choose cpu or cuda")
    if wanted == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: torch sees no CUDA device here (use --device cpu)")
    return wanted


def smoke(
    paths: Sequence[str],
    hardware: Hardware,
    *,
    device: str | None = None,
    assumed_versions: dict[str, VersionInfo] | None = None,
    python: str | None = None,
    debug: bool = False,
    exclude: list[str] | None = None,
) -> SmokeReport:
    """Resolve ``paths`` for ``hardware`` and run one step of each run's plan on ``device``."""
    torch_version, transformers_version = _libraries()
    chosen = pick_device(device)
    from . import step

    started = time.perf_counter()
    # all rules: each run lists what the static check says about it, next to what really happened
    checked = engine.run(
        paths, hardware, assumed_versions=assumed_versions, python=python, debug=debug, exclude=exclude
    )
    report = SmokeReport(checked, chosen)
    report.environment = {
        "device": chosen,
        "device_name": _device_name(chosen),
        "torch": torch_version,
        "transformers": transformers_version,
        "hardware": checked.hardware.describe(),
    }
    for result in checked.files:
        if result.config is None or result.plan is None or result.part_of is not None:
            continue
        try:
            setup = setup_for(result.config, result.plan)
            outcome = step.run(setup, chosen)
        except Exception as error:  # a bug in precheck, not in the user's config
            if debug:
                raise
            result.internal = InternalError(result.path, error)
            continue
        run = SmokeRun(result, setup, outcome)
        run.findings = findings_for(result.config, result.plan, setup, outcome, result.findings)
        report.runs.append(run)
    if not report.runs and not checked.errors and not checked.internal_errors:
        raise UsageError(f"no training config to run in {', '.join(paths)}")
    report.seconds = time.perf_counter() - started
    return report


def _device_name(device: str) -> str:
    if device == "cuda":
        import torch

        return str(torch.cuda.get_device_name(0))
    return platform.processor() or platform.machine() or "cpu"
