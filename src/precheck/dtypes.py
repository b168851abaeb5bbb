"""Floating-point dtypes as every framework spells them, normalised."""

from __future__ import annotations

from typing import Any, Literal

Dtype = Literal["float16", "bfloat16", "float32", "float64"]

_SPELLINGS: dict[str, Dtype] = {
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "16": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "32": "float32",
    "float64": "float64",
    "fp64": "float64",
    "double": "float64",
}


def parse_dtype(value: Any) -> Dtype | None:
    """``"torch.float16"``, ``"fp16"``, ``"half"`` → ``"float16"``; None when not a dtype."""
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip().lower()
    if text.startswith("torch."):
        text = text[len("torch.") :]
    return _SPELLINGS.get(text)


def parse_load_dtype(value: Any) -> str | None:
    """Like :func:`parse_dtype`, keeping ``"auto"`` (load the checkpoint's own dtype)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    return parse_dtype(value)
