"""Stage 5: render a report for people or machines (one module per format)."""

from __future__ import annotations

import os
import sys

from ..engine import Report
from . import concise, github, json_report, sarif, text

FORMATS = ("text", "concise", "json", "sarif", "github")


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def render(report: Report, fmt: str) -> str:
    """The report in a machine format, or plain text (no colour)."""
    if fmt == "json":
        return json_report.render(report)
    if fmt == "sarif":
        return sarif.render(report)
    if fmt == "github":
        return github.render(report)
    if fmt == "concise":
        return concise.render(report)
    return "\n".join(text.render_plain(report))


def emit(report: Report, fmt: str) -> None:
    if fmt == "text":
        text.print_report(report, use_color())
        return
    output = render(report, fmt)
    if output:
        print(output)
    if fmt == "concise" and report.hardware_note:  # stdout keeps one line per finding
        print(f"precheck: info: {report.hardware_note}", file=sys.stderr)


__all__ = ["FORMATS", "emit", "render"]
