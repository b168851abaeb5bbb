"""precheck: catch mixed-precision misconfigurations before they burn GPU hours.

``precheck.check(paths, hardware=...)`` (or ``precheck.check(CheckOptions(...))``) returns
a :class:`Report` (see README, "Python API"); they are imported on first use, so
``import precheck`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .api import Report, check
    from .options import CheckOptions

__all__ = ["CheckOptions", "Report", "__version__", "check"]


def __getattr__(name: str) -> Any:
    if name in ("check", "Report", "CheckOptions"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'precheck' has no attribute {name!r}")
