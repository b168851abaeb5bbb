"""Text output: ``path:line:col: CODE severity message`` and the fix under it."""

from __future__ import annotations

from ..engine import Report
from ..rules.base import Finding, Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def finding_lines(finding: Finding) -> tuple[str, str | None]:
    origin = finding.origin
    head = f"{origin.location()}: {finding.rule} {finding.severity} {finding.message}"
    return head, f"  help: {finding.fix.text()}" if finding.fix else None


def summary(report: Report) -> str:
    counts = report.counts()
    checked = [f for f in report.files if f.dialect]
    named = sum(1 for f in checked if f.part_of is not None)
    parts = [
        _plural(counts[Severity.ERROR], "error"),
        _plural(counts[Severity.WARNING], "warning"),
        f"{counts[Severity.INFO]} info",
    ]
    where = f"in {_plural(len(checked) - named, 'config')}"
    if named:
        where += f" and {_plural(named, 'file')} they name"
    skipped = len(report.files) - len(checked) - len(report.errors) - len(report.internal_errors)
    if skipped:
        where += f" ({skipped} other file{'' if skipped == 1 else 's'} skipped: not a known training config)"
    hardware = report.hardware
    source = getattr(report, "hardware_from", None) or ("--gpu" if hardware.source == "profile" else hardware.source)
    target = hardware.describe() + (f", from {source}" if hardware.known else "")
    return f"{', '.join(parts)} {where}; hardware: {target}"


def notes(report: Report) -> list[str]:
    """Files named on the command line that were passed over (they do not parse and are no
    training config), and configs checked because they name a file given alone."""
    out = [f"{f.path}: note: skipped, {f.skipped}" for f in report.files if f.named and f.skipped]
    out += [f"{f.path}: note: checked too, it names {', '.join(f.names)}" for f in report.files if f.names]
    return out


def render_plain(report: Report) -> list[str]:
    lines: list[str] = []
    for error in report.errors:
        lines.append(f"{error}")
    lines.extend(notes(report))
    for finding in report.findings:
        head, help_line = finding_lines(finding)
        lines.append(head)
        if help_line:
            lines.append(help_line)
    if report.hardware_note:
        lines.append(f"info: {report.hardware_note}")
    lines.append(summary(report))
    return lines


def print_report(report: Report, color: bool) -> None:
    if not color:
        print("\n".join(render_plain(report)))
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    for error in report.errors:
        console.print(f"[bold]{escape(error.location())}[/]: [bold red]error[/] {escape(error.message)}")
    for line in notes(report):
        console.print(escape(line), style="dim")
    for finding in report.findings:
        style = _STYLE[finding.severity]
        console.print(
            f"[bold]{escape(finding.origin.location())}[/]: [{style}]{finding.rule}[/] "
            f"[{style}]{finding.severity}[/] {escape(finding.message)}"
        )
        if finding.fix:
            console.print(f"  [green]help[/]: {escape(finding.fix.text())}")
    if report.hardware_note:
        console.print(f"[cyan]info[/]: {escape(report.hardware_note)}")
    console.print(summary(report), style="dim")
