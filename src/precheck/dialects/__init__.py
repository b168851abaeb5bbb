"""Stage 2: recognise each file's framework and map it onto ``TrainingConfig``.

Each framework's dialect lives in its package (:mod:`precheck.frameworks`); the registry
there lists them and detects. This package holds the dialect base and the dialects of the
files a run attaches (DeepSpeed, accelerate, FSDP). ``DIALECTS``, ``BY_NAME`` and
:func:`detect` are the registry's, read from the table it hands down
(:mod:`.registered`): this package never imports the registry.
"""

from __future__ import annotations

from typing import Any

from ..sources import Document
from .base import Dialect


def detect(doc: Document) -> Dialect | None:
    """The registry's :func:`precheck.frameworks.detect`."""
    from . import registered

    return registered.detect(doc)


def __getattr__(name: str) -> Any:
    if name not in ("DIALECTS", "BY_NAME"):
        raise AttributeError(name)
    from . import registered

    return registered.dialects if name == "DIALECTS" else registered.by_name


__all__ = ["BY_NAME", "DIALECTS", "Dialect", "detect"]
