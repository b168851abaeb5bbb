"""Stage 5: render a report for people or machines."""

from __future__ import annotations

import os
import sys

from ..engine import Report
from . import json_report, text

FORMATS = ("text", "json")


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def emit(report: Report, fmt: str) -> None:
    if fmt == "json":
        print(json_report.render(report))
    else:
        text.print_report(report, use_color())


__all__ = ["FORMATS", "emit"]
