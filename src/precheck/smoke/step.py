"""One real training step of the tiny model with the plan's precision settings.

The order is a training loop's (HF Trainer / accelerate, and the frameworks' own loops):
build → ``model.to(load dtype)`` → adapters (or the whole model) in the trainable dtype →
for each micro-batch: forward under ``torch.autocast`` → ``scaler.scale(loss).backward()``
(→ gradients cast as a framework's ``gradient_precision`` does:
``param.grad.data = param.grad.data.to(torch.float32)``) → ``scaler.unscale_(optimizer)``
(accelerate's ``clip_grad_norm_`` does it first, so does torch's ``scaler.step``) →
``clip_grad_norm_`` → ``scaler.step(optimizer)`` / ``optimizer.step()`` → ``scaler.update()``.

The first exception the training libraries raise (``RuntimeError``, ``ValueError``,
``TypeError``, ``AssertionError``, ``NotImplementedError``, ``ImportError``) is kept with the
phase it came from; non-finite loss, gradients or weights are reported too. Any other
exception is a bug in precheck and propagates (the CLI reports it as an internal error).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from .lora import add_adapters
from .optimizers import make_optimizer
from .setup import Setup
from .tiny_model import VOCAB, Architecture, build

BATCH = 2
SEQUENCE = 16


@dataclass
class Failure:
    phase: str
    exception: str
    message: str


@dataclass
class Outcome:
    """What the step did."""

    device: str
    arch: Architecture | None = None
    failure: Failure | None = None
    #: non-finite values found: ("loss" | "gradients" | "weights", detail)
    non_finite: list[tuple[str, str]] = field(default_factory=list)
    loss: float | None = None
    parameters: int = 0
    trainable: int = 0
    #: the dtypes the trainable parameters and their gradients really had
    trainable_dtypes: list[str] = field(default_factory=list)
    grad_dtypes: list[str] = field(default_factory=list)
    optimizer: str | None = None
    #: the GradScaler skipped the step (inf/NaN in the scaled gradients)
    skipped_step: bool = False
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    phases: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.failure is None and not self.non_finite


def _dtype(name: str) -> torch.dtype:
    value = getattr(torch, name)
    assert isinstance(value, torch.dtype)
    return value


def _names(tensors: Sequence[torch.Tensor]) -> list[str]:
    return sorted({str(t.dtype).removeprefix("torch.") for t in tensors})


def _batch(encoder_decoder: bool, device: str) -> dict[str, torch.Tensor]:
    ids = torch.randint(3, VOCAB, (BATCH, SEQUENCE), device=device)
    if encoder_decoder:
        return {"input_ids": ids, "labels": ids.flip(-1)}
    return {"input_ids": ids, "labels": ids}


class _Phase:
    """Records which phase is running, so that an exception is placed."""

    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        self.current = "build"

    def __call__(self, name: str) -> None:
        self.current = name
        if name not in self.outcome.phases:
            self.outcome.phases.append(name)


def run(setup: Setup, device: str = "cpu", seed: int = 0) -> Outcome:
    """Run the step; exceptions of the training libraries end up in ``Outcome.failure``."""
    started = time.perf_counter()
    outcome = Outcome(device)
    phase = _Phase(outcome)
    torch.manual_seed(seed)
    try:
        _step(setup, device, outcome, phase)
    except (RuntimeError, ValueError, TypeError, AssertionError, NotImplementedError, ImportError) as error:
        outcome.failure = Failure(phase.current, type(error).__name__, str(error).strip().splitlines()[0])
    outcome.seconds = time.perf_counter() - started
    return outcome


def _step(setup: Setup, device: str, outcome: Outcome, phase: _Phase) -> None:
    phase("build")
    model, arch, encoder_decoder = build(setup.arch, setup.attention)
    outcome.arch = arch
    model.train()
    phase("load")
    model.to(device=device, dtype=_dtype(setup.load_dtype))
    phase("trainable")
    if setup.adapters:
        add_adapters(model, _dtype(setup.param_dtype))
    elif setup.param_dtype != setup.load_dtype:
        model.to(dtype=_dtype(setup.param_dtype))
    if setup.gradient_checkpointing:
        # transformers 5 renamed it (the old name warns); 4.x has only gradient_checkpointing_enable
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable()
        if setup.adapters:
            model.enable_input_require_grads()  # what peft's prepare / HF Trainer do for a frozen base
    trainable = [p for p in model.parameters() if p.requires_grad]
    outcome.parameters = sum(p.numel() for p in model.parameters())
    outcome.trainable = sum(p.numel() for p in trainable)
    outcome.trainable_dtypes = _names(trainable)
    phase("optimizer-init")
    optimizer, note = make_optimizer(setup.optimizer, trainable, setup.lr)
    outcome.optimizer = type(optimizer).__name__
    if note:
        outcome.notes.append(note)
    scaler = torch.amp.GradScaler(device, init_scale=setup.init_scale, enabled=setup.grad_scaler)
    autocast = _dtype(setup.autocast) if setup.autocast else None
    for _ in range(setup.micro_batches):
        phase("forward")
        with torch.autocast(device, dtype=autocast or torch.float32, enabled=autocast is not None):
            loss = model(**_batch(encoder_decoder, device)).loss / setup.micro_batches
        value = float(loss.detach().float())
        outcome.loss = value if outcome.loss is None else outcome.loss + value
        if not math.isfinite(value):
            outcome.non_finite.append(("loss", f"loss = {value}"))
            return
        phase("backward")
        scaler.scale(loss).backward()
        if setup.grad_cast:
            for p in trainable:
                if p.grad is not None:
                    p.grad.data = p.grad.data.to(_dtype(setup.grad_cast))
    outcome.grad_dtypes = _names([p.grad for p in trainable if p.grad is not None])
    phase("unscale")
    scaler.unscale_(optimizer)
    bad = [p for p in trainable if p.grad is not None and not torch.isfinite(p.grad).all()]
    if bad:
        if setup.grad_scaler:
            outcome.skipped_step = True
            outcome.notes.append(
                f"the GradScaler found inf/NaN in {len(bad)} scaled gradients at scale {setup.init_scale:g} "
                "and skips this step (dynamic loss scaling lowers the scale: normal on first steps)"
            )
        else:
            outcome.non_finite.append(("gradients", f"{len(bad)} of {len(trainable)} gradients hold inf/NaN"))
            return
    if setup.max_grad_norm:
        phase("clip")
        torch.nn.utils.clip_grad_norm_(trainable, setup.max_grad_norm)
    phase("optimizer-step")
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    broken = [p for p in trainable if not torch.isfinite(p).all()]
    if broken:
        outcome.non_finite.append(("weights", f"{len(broken)} of {len(trainable)} trainable tensors hold inf/NaN"))
