"""How the PC6xx findings quote a setting: its key, its value as written, where it is."""

from __future__ import annotations

from typing import Any

from ..provenance import Sourced


def located(item: Sourced[Any] | None) -> str:
    """`` (file:line:col)`` when ``item`` came from a file, else nothing."""
    origin = item.origin if item is not None else None
    return f" ({origin.location()})" if origin is not None and origin.in_file else ""


def key_of(item: Sourced[Any]) -> str:
    return item.origin.key or "?"


def shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def spelled(item: Sourced[Any]) -> str:
    """The value as its file spells it (``yes``), else as precheck writes it."""
    origin = item.origin
    return origin.written if origin.kind == "file" and origin.written else shown(item.value)


def described(item: Sourced[Any]) -> str:
    """The other side of a disagreement, as the user wrote it or as the default it is."""
    origin = item.origin
    if origin.in_file and origin.key:
        return f"`{origin.key}: {spelled(item)}` ({origin.location()})"
    if origin.kind == "env":
        return f"{origin.key}={shown(item.value)}"
    return origin.detail or str(origin)


__all__ = ["described", "key_of", "located", "shown", "spelled"]
