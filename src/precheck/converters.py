"""How precheck reads a file's scalar as a bool, an int or a float (model layer).

The frameworks' own parsers decide what a value means; these converters accept only the
spellings every one of them agrees on and answer None for anything else, so that a value
precheck cannot read is never taken for a setting."""

from __future__ import annotations

from typing import Any

from .counts import decimal
from .provenance import Sourced


def to_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def to_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return decimal(value)  # None past 18 digits: the framework's int() of more is no count
    return None


def to_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past the float range
        return None


def is_on(item: Sourced[Any] | None) -> bool:
    """A setting that is there and reads as true."""
    return item is not None and bool(to_bool(item.value))
