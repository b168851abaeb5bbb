"""``PrecheckCallback``: precheck's checks on a live ``transformers.Trainer``, before the first step.

At ``on_train_begin`` (transformers 5.23.0 ``Trainer._inner_training_loop`` calls it after
the optimizer is created and ``accelerator.prepare`` ran, before the first batch) the
callback:

1. turns the real ``TrainingArguments`` (``args.to_dict()``) into a document read by the
   hf-trainer (or, for a TRL config class, the trl) dialect, each value with the origin
   ``TrainingArguments.<field>``; the model's real weight dtype is added as ``torch_dtype``
   (origin ``model.dtype``) and a PEFT model as ``use_peft``, so the plan is the run's own;
2. resolves the precision plan and runs the static rules against the hardware (the one
   given, else this machine's probe) with the installed library versions;
   When no hardware is given and the run is on the CPU, the static GradScaler rules are
   left out: accelerate creates no scaler there, and step 3 sees the real one;
3. checks what only the live objects show: the dtypes of the parameters that will be
   trained against the GradScaler accelerate really created (``AcceleratedOptimizer.scaler``;
   accelerate 1.15.0 creates one only for fp16 on a non-CPU device), parameters left on the
   meta device or on another device than ``args.device``, and trainable parameters the
   optimizer does not hold.

Errors stop training before the first step: a :class:`PrecheckCallbackError` carrying the
report is raised out of ``trainer.train()``. With ``on_error="warn"`` the report is logged
as a warning and training goes on (``control.should_training_stop = False``). Warnings and
info findings are always logged, never raised.

Requires transformers (it subclasses ``TrainerCallback``); precheck's default check path
never imports this module.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

try:  # this module is the callback itself: it subclasses TrainerCallback, so it needs transformers
    import torch
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"precheck.integrations.transformers needs torch and transformers ({missing}): pip install 'precheck-ml[hf]'"
    ) from missing

from .. import frameworks, resolve
from ..config import TrainingConfig
from ..engine import run_rules
from ..errors import InputError, PrecheckError
from ..facts import quote
from ..hardware import Hardware, from_specs
from ..provenance import Origin
from ..references import attach
from ..rules import select_rules
from ..rules.base import Context, Finding, Severity
from ..sources import Document, Node
from ..versions import VersionInfo, Versions, installed_in

logger = logging.getLogger("precheck")

ARGS = "TrainingArguments"
MODEL = "model"
#: libraries whose installed versions decide the plan and the rules
LIBRARIES = ("torch", "transformers", "trl", "peft", "accelerate", "deepspeed")

FP16_UNSCALE = f"ValueError: {quote('torch.unscale_fp16')}"
BF16_UNSCALE = f"NotImplementedError: {quote('torch.unscale_bf16_cuda')}"
#: static rules that already report a GradScaler over fp16 / bf16 gradients
_STATIC_FP16_SCALER = {"PC401"}
_STATIC_BF16_SCALER = {"PC402", "PC404"}


class PrecheckCallbackError(PrecheckError):
    """The run would fail or train wrong; ``str(error)`` is the report, ``findings`` the findings."""

    def __init__(self, report: str, findings: list[Finding]):
        super().__init__(report)
        self.findings = findings


# --------------------------------------------------------------------------- the arguments as a document


def _node(value: Any, key: str | None, line: int, path: str | None = None) -> Node:
    if isinstance(value, dict):
        children = {str(k): _node(v, str(k), line) for k, v in value.items() if v is not None}
        return Node(children, line, 1, key, line, 1, path=path)
    if isinstance(value, (list, tuple)):
        return Node([_node(v, None, line) for v in value], line, 1, key, line, 1, path=path)
    if value is None or isinstance(value, (bool, int, float, str)):
        return Node(value, line, 1, key, line, 1, raw=None if value is None else str(value), path=path)
    return Node(str(value), line, 1, key, line, 1, raw=str(value), path=path)


def weights_dtype(model: torch.nn.Module) -> torch.dtype | None:
    """The dtype most of the model's weights have (the frozen base's, when some are frozen)."""
    params = list(model.parameters())
    frozen = [p for p in params if not p.requires_grad]
    counts: Counter[torch.dtype] = Counter()
    for p in frozen or params:
        counts[p.dtype] += p.numel()
    return counts.most_common(1)[0][0] if counts else None


def is_peft(model: torch.nn.Module) -> bool:
    return hasattr(model, "peft_config")


def arguments_document(args: Any, model: torch.nn.Module | None = None) -> Document:
    """``args.to_dict()`` (and the model's dtype) as a document whose origins name the field."""
    data = args.to_dict() if hasattr(args, "to_dict") else dict(vars(args))
    entries: dict[str, Node] = {}
    for line, (key, value) in enumerate(((k, v) for k, v in data.items() if v is not None), start=1):
        entries[key] = _node(value, key, line)
    line = len(entries)
    if model is not None:
        dtype = weights_dtype(model)
        if dtype is not None:
            line += 1
            entries["torch_dtype"] = _node(str(dtype).removeprefix("torch."), "torch_dtype", line, MODEL)
        line += 1
        entries["use_peft"] = _node(is_peft(model), "use_peft", line, MODEL)
        name = getattr(getattr(model, "config", None), "_name_or_path", "") or ""
        if name and "model_name_or_path" not in entries:
            line += 1
            entries["model_name_or_path"] = _node(str(name), "model_name_or_path", line, MODEL)
    return Document(ARGS, "json", Node(entries, 1, 1), "")


def config_from_arguments(args: Any, model: torch.nn.Module | None = None) -> TrainingConfig:
    """A :class:`TrainingConfig` of the live run, read by the hf-trainer or trl dialect."""
    name = "trl" if type(args).__module__.startswith("trl") else "hf-trainer"
    config = frameworks.BY_NAME[name].read(arguments_document(args, model), os.environ)
    config.notes = []  # the lint of file syntax and unknown keys is for files, not live arguments
    try:  # a DeepSpeed / FSDP config file the arguments name, a local model folder
        attach(config, Path.cwd() / ARGS, os.environ)
    except InputError as error:
        logger.warning("precheck: could not read a file the TrainingArguments name: %s", error)
    return config


def installed_versions() -> Versions:
    found = installed_in(None, LIBRARIES)
    return Versions({name: VersionInfo(name, version, "installed") for name, version in found.items()})


# --------------------------------------------------------------------------- live checks


def _origin(key: str, path: str = MODEL) -> Origin:
    return Origin("file", path, None, None, key)


def live_findings(args: Any, model: torch.nn.Module | None, optimizer: Any, static: Sequence[Finding]) -> list[Finding]:
    """What the live objects show and the plan cannot."""
    if model is None:
        return []
    out: list[Finding] = []
    codes = {f.rule for f in static}
    trainable = [p for p in model.parameters() if p.requires_grad]
    dtypes = {p.dtype for p in trainable}
    scaler = getattr(optimizer, "scaler", None)
    scaling = scaler is not None and bool(getattr(scaler, "is_enabled", lambda: True)())
    if scaling and torch.float16 in dtypes and not codes & _STATIC_FP16_SCALER:
        out.append(
            _live(
                "grad-scaler-fp16-params",
                Severity.ERROR,
                "the Trainer's GradScaler will unscale float16 gradients of float16 trainable parameters: "
                f"the first step fails with {FP16_UNSCALE}",
                "keep the trainable parameters in float32 (model.float(), or LoRA adapters in float32)",
                _origin("parameters"),
            )
        )
    scaler_device = str(getattr(scaler, "_device", "cuda")) if scaling else ""
    if scaling and torch.bfloat16 in dtypes and scaler_device.startswith("cuda") and not codes & _STATIC_BF16_SCALER:
        out.append(
            _live(
                "grad-scaler-bf16-params",
                Severity.ERROR,
                f"the Trainer's GradScaler (fp16=True) will unscale bfloat16 gradients: the first step fails with "
                f"{BF16_UNSCALE}",
                "train with bf16=True instead of fp16=True, or keep the trainable parameters in float32",
                _origin("parameters"),
            )
        )
    out.extend(_device_findings(args, model))
    out.extend(_optimizer_findings(optimizer, trainable))
    return out


def _device_findings(args: Any, model: torch.nn.Module) -> Iterable[Finding]:
    params = list(model.parameters())
    meta = [p for p in params if p.device.type == "meta"]
    if meta:
        yield _live(
            "parameters-on-meta-device",
            Severity.ERROR,
            f"{len(meta)} parameter tensors are still on the meta device (never loaded): the forward pass fails",
            "load the weights (from_pretrained without init_empty_weights, or load_state_dict(assign=True))",
            _origin("parameters"),
        )
    if getattr(model, "hf_device_map", None):  # placed by accelerate's device_map: spread on purpose
        return
    wanted = getattr(args, "device", None)
    kinds = {p.device.type for p in params if p.device.type != "meta"}
    if isinstance(wanted, torch.device) and kinds and kinds != {wanted.type}:
        where = ", ".join(sorted(kinds))
        yield _live(
            "parameters-off-device",
            Severity.ERROR,
            f"parameters are on {where} while the Trainer computes on {wanted}: "
            "a tensor on another device fails the forward pass",
            f"move the model to {wanted} (or let the Trainer place it: do not set place_model_on_device=False)",
            _origin("parameters"),
        )


def _optimizer_findings(optimizer: Any, trainable: list[torch.nn.Parameter]) -> Iterable[Finding]:
    inner = getattr(optimizer, "optimizer", optimizer)
    groups = getattr(inner, "param_groups", None)
    if not groups:
        return
    held = {id(p) for group in groups for p in group["params"]}
    missing = [p for p in trainable if id(p) not in held]
    if missing:
        yield _live(
            "trainable-not-optimized",
            Severity.WARNING,
            f"{len(missing)} trainable parameter tensors are not in the {type(inner).__name__} optimizer: "
            "they get gradients but never change",
            "create the optimizer after the model is final (adapters added, layers unfrozen)",
            _origin("optimizer", "optimizer"),
        )


def _live(name: str, severity: Severity, message: str, fix: str, origin: Origin) -> Finding:
    from ..rules.base import Fix

    return Finding(origin, message, Fix(fix), rule="live", name=name, severity=severity)


# --------------------------------------------------------------------------- the report


def where(origin: Origin) -> str:
    """``TrainingArguments.fp16``, ``model.torch_dtype``: the field a finding is about."""
    if origin.path in (ARGS, MODEL, "optimizer") and origin.key:
        return f"{origin.path}.{origin.key}"
    return origin.location() or str(origin)


def _fix_text(finding: Finding) -> str | None:
    fix = finding.fix
    if fix is None:
        return None
    edits = []
    for edit in fix.edits:
        if edit.path == ARGS:
            edits.append(f"remove {ARGS}.{edit.key}" if edit.remove else f"set {ARGS}({edit.key}={edit.value!r})")
        elif edit.path == MODEL and edit.key in ("torch_dtype", "dtype"):
            edits.append(f"load the model in torch.{edit.value} (from_pretrained(..., dtype=torch.{edit.value}))")
        else:
            edits.append(edit.describe())
    return f"{fix.description}: {'; '.join(edits)}" if edits else fix.description


def format_report(findings: Sequence[Finding], hardware: Hardware) -> str:
    lines = [f"precheck found problems with this training run (hardware: {hardware.describe()}):"]
    for finding in findings:
        lines.append(f"{where(finding.origin)}: {finding.rule} {finding.severity} {finding.message}")
        help_text = _fix_text(finding)
        if help_text:
            lines.append(f"  help: {help_text}")
    return "\n".join(lines)


def _hardware(value: Hardware | Sequence[str] | str | None) -> Hardware:
    if isinstance(value, Hardware):
        return value
    if isinstance(value, str):
        return from_specs([value], os.environ)
    if value:
        return from_specs(list(value), os.environ)
    from ..probe import probe_hardware

    return probe_hardware(os.environ)


class PrecheckCallback(TrainerCallback):  # type: ignore[misc]
    """Check the live run at ``on_train_begin``; raise (or warn) before the first step.

    ``hardware``: a :class:`~precheck.hardware.Hardware`, GPU specs as ``--gpu`` takes them
    (``"A100-80GB"``, ``["8xH100"]``), or None to probe this machine. ``select`` / ``ignore``
    choose rules as on the command line. ``fail_on``: the lowest severity that stops the run.
    """

    def __init__(
        self,
        hardware: Hardware | Sequence[str] | str | None = None,
        *,
        on_error: Literal["raise", "warn"] = "raise",
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        fail_on: str = "error",
    ):
        if on_error not in ("raise", "warn"):
            raise ValueError(f"on_error={on_error!r}: choose 'raise' or 'warn'")
        self.hardware = hardware
        self.on_error = on_error
        self.rules = select_rules(list(select) if select is not None else None, list(ignore or ()))
        self.fail_on = Severity.parse(fail_on)
        #: the findings of the last check (for tests and for code that wants them)
        self.findings: list[Finding] = []

    def check(self, args: Any, model: torch.nn.Module | None = None, optimizer: Any = None) -> list[Finding]:
        """The findings for these live objects, without raising."""
        hardware = _hardware(self.hardware)
        config = resolve.with_launch_env(config_from_arguments(args, model))
        versions = installed_versions()
        plan = resolve.resolve(config, hardware, versions)
        static = run_rules(Context(config, plan, hardware, versions), self.rules)
        device = getattr(args, "device", None)
        if self.hardware is None and isinstance(device, torch.device) and device.type == "cpu":
            # a probed CPU run: accelerate creates no GradScaler on the CPU, and the live
            # scaler check below sees the real one, so the GPU's scaler rules do not apply
            static = [f for f in static if f.rule not in _STATIC_FP16_SCALER | _STATIC_BF16_SCALER]
        self.findings = [*static, *live_findings(args, model, optimizer, static)]
        self._hardware_seen = hardware
        return self.findings

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> TrainerControl:
        findings = self.check(args, kwargs.get("model"), kwargs.get("optimizer"))
        failing = [f for f in findings if f.severity >= self.fail_on]
        if not findings:
            return control
        report = format_report(findings, self._hardware_seen)
        if failing and self.on_error == "raise":
            raise PrecheckCallbackError(report, failing)
        logger.warning("%s", report)
        control.should_training_stop = False
        return control


__all__ = ["PrecheckCallback", "PrecheckCallbackError", "config_from_arguments", "live_findings"]
