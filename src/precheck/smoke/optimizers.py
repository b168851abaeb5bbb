"""The optimizer a config names, built for the smoke step.

- torch's own (``adamw_torch``, ``adamw_torch_fused``, ``sgd``, ``adagrad``, ``rmsprop``...) as
  transformers 5.23.0 ``trainer_optimizer.py`` maps TrainingArguments' ``optim`` names;
- transformers' ``Adafactor`` for ``adafactor``;
- bitsandbytes' 8-bit / paged optimizers when bitsandbytes is installed;
- ``adamw_bf16`` (``adam_bfloat16``), the optimizer a framework ships under that name:
  :class:`AdamWBF16`, written for precheck after that framework's
  ``helpers/training/adam_bfloat16/__init__.py`` (August 2024, the seed's version): at the
  first step of each parameter it runs
  ``assert p.dtype == torch.bfloat16, "only bfloat 16 is supported."``; its states
  (``exp_avg``, ``exp_avg_sq`` and the compensation ``shift``) are ``zeros_like(p)``
  (bf16), it updates them in place with whatever dtype the gradient has, and it writes
  weights and states back with stochastic rounding (``stochastic/__init__.py``: add a random
  16-bit integer to the float32 bits, keep the top 16). The framework compiles the update with
  ``torch.compile``; here it runs eagerly.

Any other name (optimi, prodigy, lion, came...) runs as torch AdamW and the run says so.
Imports torch: only :mod:`precheck.smoke.step` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch.optim import Optimizer

BF16_ONLY = ("adamw_bf16", "adam_bfloat16")
_TORCH: dict[str, Callable[[list[torch.nn.Parameter], float], Optimizer]] = {
    "adamw_torch": lambda p, lr: torch.optim.AdamW(p, lr=lr),
    "adamw_hf": lambda p, lr: torch.optim.AdamW(p, lr=lr),
    "adamw": lambda p, lr: torch.optim.AdamW(p, lr=lr),
    "adam": lambda p, lr: torch.optim.Adam(p, lr=lr),
    "adamw_torch_fused": lambda p, lr: torch.optim.AdamW(p, lr=lr, fused=True),
    "adamw_torch_xla": lambda p, lr: torch.optim.AdamW(p, lr=lr),
    "sgd": lambda p, lr: torch.optim.SGD(p, lr=lr),
    "adagrad": lambda p, lr: torch.optim.Adagrad(p, lr=lr),
    "rmsprop": lambda p, lr: torch.optim.RMSprop(p, lr=lr),
}


def _round_into(target: torch.Tensor, value: torch.Tensor) -> None:
    """Write float32 ``value`` into bf16 ``target`` with stochastic rounding."""
    bits = value.to(torch.float32).contiguous().view(torch.int32)
    noise = torch.randint_like(bits, low=0, high=1 << 16)
    rounded = (bits + noise).bitwise_and_(-65536).view(torch.float32)
    target.copy_(rounded)


class AdamWBF16(Optimizer):
    """``adamw_bf16``: AdamW for bf16 weights only (see the module docstring)."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        lr: float = 1e-4,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure: None = None) -> None:  # type: ignore[override]
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    assert p.dtype == torch.bfloat16, "only bfloat 16 is supported."
                    state["step"] = 0
                    for name in ("exp_avg", "exp_avg_sq", "shift"):
                        state[name] = torch.zeros_like(p, memory_format=torch.preserve_format)
                grad = p.grad
                state["step"] += 1
                exp_avg, exp_avg_sq, shift = state["exp_avg"], state["exp_avg_sq"], state["shift"]
                exp_avg.mul_(beta1)
                _round_into(exp_avg, exp_avg.float() + grad.float() * (1 - beta1))
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                correction = (1 - beta2 ** state["step"]) ** 0.5
                step = exp_avg.float() / exp_avg_sq.sqrt().add_(group["eps"]).float()
                _round_into(shift, shift.float() - lr * correction * step)
                before = p.clone()
                _round_into(p, p.float() + shift.float())
                _round_into(shift, shift.float() + (before - p).float())
                if group["weight_decay"]:
                    shift.add_(p, alpha=-group["weight_decay"] * lr)


def _bitsandbytes(name: str, params: list[torch.nn.Parameter], lr: float) -> Optimizer | None:
    try:
        import bitsandbytes as bnb  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    bits = 8 if "8bit" in name else 32
    paged = name.startswith("paged")
    cls = bnb.optim.Lion if "lion" in name else bnb.optim.AdamW
    optimizer: Optimizer = cls(params, lr=lr, optim_bits=bits, is_paged=paged)
    return optimizer


def make_optimizer(name: str | None, params: list[torch.nn.Parameter], lr: float) -> tuple[Optimizer, str | None]:
    """The optimizer ``name`` names, and a note when something else stands in for it."""
    key = (name or "adamw_torch").strip().lower().lstrip("-")
    if key in BF16_ONLY:
        return AdamWBF16(params, lr=lr), None
    if key in _TORCH:
        return _TORCH[key](params, lr), None
    if key == "adafactor":
        from transformers.optimization import Adafactor

        return Adafactor(params, lr=lr, scale_parameter=False, relative_step=False), None  # type: ignore[no-untyped-call]
    if "8bit" in key or key.startswith("paged") or "bnb" in key:
        found = _bitsandbytes(key, params, lr)
        if found is not None:
            return found, None
        return torch.optim.AdamW(params, lr=lr), f"`{name}` needs bitsandbytes (not installed): torch AdamW stands in"
    return torch.optim.AdamW(params, lr=lr), f"`{name}` is not built by the smoke run: torch AdamW stands in"
