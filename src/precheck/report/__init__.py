"""Stage 5: render a report for people or machines (one module per format, imported when
that format is asked for: the command line prints one)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..escape import printable, workflow_commands

if TYPE_CHECKING:
    from ..engine import Report

FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "junit")
COLORS = ("auto", "always", "never")


def use_color(mode: str | None = "auto", stream: object = None) -> bool:
    """``--color always|never``; ``auto``: ``NO_COLOR`` (set and not empty) says no,
    ``FORCE_COLOR`` (set and not empty) says yes, else colour on a terminal that is not dumb
    (https://no-color.org, https://force-color.org)."""
    mode = mode or "auto"
    if mode not in COLORS:
        raise UsageError(f"--color {mode!r}: choose one of {', '.join(COLORS)}")
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    out = sys.stdout if stream is None else stream
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def render(report: Report, fmt: str) -> str:
    """The report in a machine format, or plain text (no colour)."""
    if fmt == "json":
        from . import json_report

        return json_report.render(report)
    if fmt == "sarif":
        from . import sarif

        return sarif.render(report)
    if fmt == "github":
        from . import github

        return github.render(report)
    if fmt == "gitlab":
        from . import gitlab

        return gitlab.render(report)
    if fmt == "junit":
        from . import junit

        return junit.render(report)
    if fmt == "concise":
        from . import concise

        return concise.render(report)
    from . import text

    return "\n".join(text.render_plain(report))


def emit(report: Report, fmt: str, color: str | None = "auto", quiet: bool = False, statistics: bool = False) -> None:
    """Print the report: ``quiet`` leaves out the summary and info lines (text); ``statistics``
    prints findings counted by rule instead of the findings (text and json)."""
    if statistics and fmt == "json":
        from .json_report import statistics as counted

        print(counted(report))
        return
    if statistics and fmt != "text":
        raise UsageError(f"--statistics prints text or json, not --format {fmt}")
    if fmt == "text":
        from . import text

        if statistics:
            print("\n".join(text.statistics(report, use_color(color))))
        else:
            text.print_report(report, use_color(color), quiet)
        return
    output = render(report, fmt)
    if output:
        with workflow_commands() if fmt == "github" else contextlib.nullcontext():
            print(output, flush=True)  # its own commands, their data escaped (github.py)
    # stdout keeps one line per finding; no GPU known: check_command warns on stderr instead
    if fmt == "concise" and report.hardware_note and not report.hardware_rules_skipped and not quiet:
        print(f"precheck: info: {printable(report.hardware_note)}", file=sys.stderr)


__all__ = ["COLORS", "FORMATS", "emit", "render", "use_color"]
