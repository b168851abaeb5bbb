"""``--format github``: GitHub Actions workflow commands, one annotation per finding.

``::error file=PATH,line=L,col=C,title=PC101 bf16-unsupported-gpu::MESSAGE`` — errors are
``error``, warnings ``warning``, info ``notice``. Escaping follows the Actions toolkit
(``@actions/core`` ``command.ts``): in the message ``%``, ``\\r`` and ``\\n`` become
``%25``, ``%0D`` and ``%0A``; in properties ``:`` and ``,`` also become ``%3A`` and ``%2C``.
The message is the finding's headline, the fix its second line. The summary line closes the output, as plain text.
"""

from __future__ import annotations

from ..engine import Report
from ..escape import printable
from ..rules.base import Finding, Severity
from .headline import headline
from .text import summary

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The toolkit's escapes, then any other control character as ``\\xNN`` (:mod:`precheck.escape`)."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: object) -> str:
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(finding: Finding) -> str:
    origin = finding.origin
    message = headline(finding.message) + (f"\nhelp: {finding.fix.text()}" if finding.fix else "")
    message += "".join(f"\nassumed: {a}" for a in finding.assumptions)
    return command(
        LEVEL[finding.severity],
        message,
        file=origin.path,
        line=origin.line,
        col=origin.column,
        title=f"{finding.rule} {finding.name}",
    )


def render(report: Report) -> str:
    lines = [
        command("error", error.message, file=error.path, line=error.line, col=error.column, title="precheck")
        for error in report.errors
    ]
    lines.extend(annotation(finding) for finding in report.findings)
    if report.hardware_note:
        lines.append(command("notice", report.hardware_note, title="precheck"))
    lines.append(summary(report))
    return "\n".join(lines)
