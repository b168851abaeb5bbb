"""``--format concise``: one line per finding, ``path:line:col: CODE severity headline``.

Inputs that cannot be read are ``path:line:col: message`` lines (as in the text format);
nothing else is printed, so ``grep``, editors' error parsers and ``wc -l`` work on it.
"""

from __future__ import annotations

from ..engine import Report
from ..escape import printable
from ..rules.base import Finding
from .headline import headline


def line(finding: Finding) -> str:
    return printable(f"{finding.origin.location()}: {finding.rule} {finding.severity} {headline(finding.message)}")


def render(report: Report) -> str:
    lines = [printable(str(error)) for error in report.errors]
    lines.extend(line(finding) for finding in report.findings)
    return "\n".join(lines)
