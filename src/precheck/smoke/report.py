"""Smoke results as findings placed on the config keys that caused them, in text or JSON.

An exception is mapped back to the plan fields its phase (or its message) depends on:
"Attempting to unscale FP16 gradients." to ``grad_scaler`` and ``param_dtype``; an optimizer
failure to the optimizer key and the gradient/parameter dtypes; and so on. Each plan field
carries its :class:`~precheck.provenance.Origin`, so the finding points at the key in the
user's file that set it (``use_fp16`` at ``full-finetune-fp16.yaml:6:1``), as ``precheck
explain`` shows. No torch import here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import TrainingConfig
from ..engine import FileResult
from ..explain import origin_json
from ..facts import quote
from ..provenance import Origin, Sourced
from ..resolve.plan import PrecisionPlan
from ..rules.base import Finding, Severity
from .setup import _LR_KEYS, Setup, optimizer_origin

if TYPE_CHECKING:
    from .step import Outcome

SCHEMA_VERSION = 1

#: exception texts whose cause is known whatever the phase
_BY_MESSAGE = (
    ("Attempting to unscale FP16 gradients", ("grad_scaler", "precision_switch", "param_dtype", "load_dtype")),
    (
        "_amp_foreach_non_finite_check_and_unscale",
        ("grad_scaler", "precision_switch", "grad_dtype", "param_dtype", "load_dtype"),
    ),
    ("only bfloat 16 is supported", ("optimizer", "param_dtype")),
)
#: the plan fields each phase of the step depends on, most likely cause first
_BY_PHASE = {
    "build": ("attention",),
    "load": ("load_dtype", "quantization"),
    "trainable": ("param_dtype", "load_dtype"),
    "optimizer-init": ("optimizer", "param_dtype"),
    "forward": ("autocast_dtype", "load_dtype", "param_dtype", "attention"),
    "backward": ("autocast_dtype", "param_dtype", "load_dtype", "gradient_checkpointing", "grad_scaler"),
    "unscale": ("grad_scaler", "precision_switch", "grad_dtype", "param_dtype"),
    "clip": ("grad_dtype", "param_dtype"),
    "optimizer-step": ("optimizer", "grad_dtype", "param_dtype", "optimizer_state_dtype"),
}
_NON_FINITE = {
    "loss": ("autocast_dtype", "load_dtype"),
    "gradients": ("autocast_dtype", "loss_scaling", "param_dtype"),
    "weights": ("learning_rate", "optimizer", "param_dtype", "optimizer_state_dtype"),
}


def _switches(config: TrainingConfig) -> tuple[Sourced[Any] | None, ...]:
    return (config.fp16, config.mixed_precision, config.amp, config.precision, config.bf16)


BF16_SCALER_CUDA = quote("torch.unscale_bf16_cuda")


@dataclass(frozen=True)
class Cause:
    """A plan field (or config key) that took part, with its value and where it was set."""

    field: str
    value: Any
    origin: Origin

    def text(self) -> str:
        shown = (
            "none" if self.value is None else str(self.value).lower() if isinstance(self.value, bool) else self.value
        )
        return f"{self.field} = {shown}  [{self.origin}]"

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "value": self.value,
            "source": str(self.origin),
            "origin": origin_json(self.origin),
        }


@dataclass
class SmokeFinding:
    kind: str  # "step-failed" | "non-finite" | "not-reproduced"
    severity: Severity
    message: str
    origin: Origin
    causes: list[Cause]
    phase: str | None = None
    exception: dict[str, str] | None = None


@dataclass
class SmokeRun:
    result: FileResult
    setup: Setup
    outcome: Outcome
    findings: list[SmokeFinding] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome.passed


def _cause(name: str, config: TrainingConfig, plan: PrecisionPlan) -> Cause | None:
    item: Sourced[Any] | None
    if name == "optimizer":
        item = optimizer_origin(config)
    elif name == "precision_switch":  # the mixed-precision switch as the framework spells it
        item = next((f for f in _switches(config) if f is not None and f.origin.in_file), None)
    elif name == "learning_rate":
        item = next((found for key in _LR_KEYS if (found := config.setting(key)) is not None), None)
    else:
        item = plan.fields().get(name)
    return None if item is None else Cause(name, item.value, item.origin)


def causes_for(names: tuple[str, ...], config: TrainingConfig, plan: PrecisionPlan) -> list[Cause]:
    found = [c for n in names if (c := _cause(n, config, plan)) is not None]
    return found


def place(causes: list[Cause], config: TrainingConfig) -> Origin:
    """The key a finding points at: the first cause set in a file, else the config itself."""
    for cause in causes:
        if cause.origin.in_file:
            origin = cause.origin
            return Origin("file", origin.path, origin.line, origin.column, origin.key)
    return Origin("file", config.path)


def findings_for(
    config: TrainingConfig, plan: PrecisionPlan, setup: Setup, outcome: Outcome, static: list[Finding] | None = None
) -> list[SmokeFinding]:
    out: list[SmokeFinding] = []
    failure = outcome.failure
    if failure is not None:
        names = next((f for text, f in _BY_MESSAGE if text in failure.message), None)
        causes = causes_for(names or _BY_PHASE.get(failure.phase, ()), config, plan)
        out.append(
            SmokeFinding(
                "step-failed",
                Severity.ERROR,
                f"the training step failed at {failure.phase}: {failure.exception}: {failure.message}",
                place(causes, config),
                causes,
                failure.phase,
                {"type": failure.exception, "message": failure.message},
            )
        )
    for where, detail in outcome.non_finite:
        causes = causes_for(_NON_FINITE[where], config, plan)
        out.append(
            SmokeFinding(
                "non-finite",
                Severity.ERROR,
                f"the training step made the {where} non-finite ({detail})",
                place(causes, config),
                causes,
                where,
            )
        )
    if outcome.device == "cpu" and setup.grad_scaler and "bfloat16" in outcome.grad_dtypes and failure is None:
        causes = causes_for(("grad_scaler", "precision_switch", "grad_dtype", "load_dtype"), config, plan)
        codes = sorted({f.rule for f in static or [] if "not implemented for 'BFloat16'" in f.message})
        covered = f"the static check reports it: {', '.join(codes)}" if codes else "no static rule reported it"
        out.append(
            SmokeFinding(
                "not-reproduced",
                Severity.WARNING,
                "a GradScaler unscales bfloat16 gradients: on CUDA torch raises "
                f"NotImplementedError: {BF16_SCALER_CUDA}, but its CPU kernel accepts bfloat16, so this CPU "
                f"run could not reproduce the crash ({covered})",
                place(causes, config),
                causes,
                "unscale",
            )
        )
    return out


# --------------------------------------------------------------------------- rendering


def run_lines(run: SmokeRun) -> list[str]:
    outcome, setup = run.outcome, run.setup
    status = "passed" if run.passed else "FAILED"
    arch = outcome.arch or setup.arch
    lines = [f"{run.result.path} ({run.result.dialect}): {status} on {outcome.device} in {outcome.seconds:.2f} s"]
    kind = "adapters on a frozen base" if setup.adapters else "full fine-tune"
    lines.append(f"  model    {arch.describe()}, {kind}")
    lines.append(f"  applied  {setup.describe()}")
    if outcome.trainable:
        grads = ", ".join(outcome.grad_dtypes) or "none"
        loss = f"{outcome.loss:.4f}" if outcome.loss is not None else "none"
        lines.append(
            f"  ran      loss {loss}; {outcome.trainable:,} of {outcome.parameters:,} parameters trainable "
            f"({', '.join(outcome.trainable_dtypes)}), gradients {grads}, optimizer {outcome.optimizer}"
        )
    for note in [*setup.not_simulated, *outcome.notes]:
        lines.append(f"  note     {note}")
    static = run.result.findings
    if static:
        listed = ", ".join(f"{f.rule} {f.severity}" for f in static)
        lines.append(f"  check    the static check reports {listed}")
    for finding in run.findings:
        lines.append(f"{finding.origin.location()}: smoke {finding.severity} {finding.message}")
        for cause in finding.causes:
            lines.append(f"  cause: {cause.text()}")
    return lines


def render_text(runs: list[SmokeRun], errors: list[str], header: str) -> str:
    lines = list(errors)
    for run in runs:
        lines.extend(run_lines(run))
        lines.append("")
    failed = sum(1 for r in runs if not r.passed)
    lines.append(f"smoke: {failed} failed, {len(runs) - failed} passed; {header}")
    return "\n".join(lines)


def _finding_json(finding: SmokeFinding) -> dict[str, Any]:
    origin = finding.origin
    return {
        "kind": finding.kind,
        "severity": str(finding.severity),
        "path": origin.path,
        "line": origin.line,
        "column": origin.column,
        "key": origin.key,
        "message": finding.message,
        "phase": finding.phase,
        "exception": finding.exception,
        "causes": [c.as_dict() for c in finding.causes],
    }


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "device": outcome.device,
        "passed": outcome.passed,
        "loss": outcome.loss,
        "parameters": outcome.parameters,
        "trainable": outcome.trainable,
        "trainable_dtypes": outcome.trainable_dtypes,
        "grad_dtypes": outcome.grad_dtypes,
        "optimizer": outcome.optimizer,
        "skipped_step": outcome.skipped_step,
        "phases": outcome.phases,
        "seconds": round(outcome.seconds, 3),
    }


def render_json(runs: list[SmokeRun], errors: list[dict[str, Any]], environment: dict[str, Any]) -> str:
    document = {
        "version": SCHEMA_VERSION,
        "environment": environment,
        "runs": [
            {
                "path": run.result.path,
                "dialect": run.result.dialect,
                "framework": run.result.config.framework if run.result.config else None,
                "passed": run.passed,
                "model": {
                    "model_type": (run.outcome.arch or run.setup.arch).model_type,
                    "source": (run.outcome.arch or run.setup.arch).source,
                    "stand_in": (run.outcome.arch or run.setup.arch).stand_in,
                },
                "applied": run.setup.as_dict(),
                "outcome": _outcome_json(run.outcome),
                "notes": [*run.setup.not_simulated, *run.outcome.notes],
                "findings": [_finding_json(f) for f in run.findings],
                "static": [
                    {"rule": f.rule, "severity": str(f.severity), "line": f.origin.line, "key": f.origin.key}
                    for f in run.result.findings
                ],
            }
            for run in runs
        ],
        "errors": errors,
        "summary": {"passed": sum(1 for r in runs if r.passed), "failed": sum(1 for r in runs if not r.passed)},
    }
    return json.dumps(document, indent=2)
