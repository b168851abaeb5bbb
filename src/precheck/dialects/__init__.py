"""Stage 2: recognise each file's framework and map it onto ``TrainingConfig``.

Each framework's dialect lives in its package (:mod:`precheck.frameworks`); the registry
there lists them and detects. This package holds the dialect base and the dialects of the
files a run attaches (DeepSpeed, accelerate, FSDP). ``DIALECTS``, ``BY_NAME`` and
:func:`detect` are the registry's, re-exported for existing callers.
"""

from __future__ import annotations

from typing import Any

from ..sources import Document
from .base import Dialect


def detect(doc: Document) -> Dialect | None:
    """The registry's :func:`precheck.frameworks.detect`."""
    from ..frameworks import detect as registry_detect  # the registry imports the dialect base

    return registry_detect(doc)


def __getattr__(name: str) -> Any:
    if name in ("DIALECTS", "BY_NAME"):
        from .. import frameworks  # the registry imports the dialect base

        return getattr(frameworks, name)
    raise AttributeError(name)


__all__ = ["BY_NAME", "DIALECTS", "Dialect", "detect"]
