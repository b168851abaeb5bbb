"""Low-rank adapters on the tiny model, the way peft's LoRA layers compute them.

peft is not a dependency, so the smoke run adds its own adapters with the behaviour that
matters for precision (peft ``tuners/lora/layer.py`` ``Linear.forward``): the frozen base
layer runs first, the input is cast to the adapter weights' dtype, ``B(A(x)) * scaling``
is added, and the sum is cast back to the base layer's output dtype. The adapter dtype is
the plan's ``param_dtype`` (peft >= 0.12 upcasts adapters to float32; older peft, and
frameworks that cast them, keep the base dtype). B starts at zero, as in peft.

Imports torch: only :mod:`precheck.smoke.step` imports this module.
"""

from __future__ import annotations

import torch
from torch import nn

#: attention projections peft's default ``target_modules`` pick per family
#: (peft ``utils/constants.py`` TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING)
TARGETS = ("q_proj", "v_proj", "c_attn", "q", "v", "qkv_proj", "query_key_value", "Wqkv")
RANK = 4
ALPHA = 8


class LoraAdapter(nn.Module):
    """``base(x) + B(A(x)) * alpha / r`` around a frozen linear layer (nn.Linear or GPT-2's Conv1D)."""

    def __init__(self, base: nn.Module, in_features: int, out_features: int, dtype: torch.dtype):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(in_features, RANK, bias=False, dtype=dtype)
        self.lora_B = nn.Linear(RANK, out_features, bias=False, dtype=dtype)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=5**0.5)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = ALPHA / RANK

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = self.base_layer(x)
        result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(x)) * self.scaling
        return result.to(result_dtype)


def _features(module: nn.Module) -> tuple[int, int] | None:
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        return None
    if isinstance(module, nn.Linear):
        return module.in_features, module.out_features
    if type(module).__name__ == "Conv1D":  # transformers' GPT-2 layer: weight is (in, out)
        return int(weight.shape[0]), int(weight.shape[1])
    return None


def add_adapters(model: nn.Module, dtype: torch.dtype) -> list[str]:
    """Freeze ``model`` and wrap its attention projections with adapters in ``dtype``; their names."""
    for param in model.parameters():
        param.requires_grad_(False)
    candidates = [(name, m) for name, m in model.named_modules() if _features(m) is not None]
    chosen = [(n, m) for n, m in candidates if n.rsplit(".", 1)[-1] in TARGETS]
    if not chosen:  # a family with other names: every linear layer but the output head
        chosen = [(n, m) for n, m in candidates if not n.endswith(("lm_head", "embed_out"))]
    wrapped = []
    for name, module in chosen:
        features = _features(module)
        assert features is not None
        device = next(module.parameters()).device
        adapter = LoraAdapter(module, *features, dtype=dtype).to(device)
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, adapter)
        wrapped.append(name)
    return wrapped
