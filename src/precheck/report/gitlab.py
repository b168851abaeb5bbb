"""``--format gitlab``: a GitLab Code Quality report (``artifacts: reports: codequality:``).

GitLab's documented format (docs.gitlab.com/ci/testing/code_quality/, "Code Quality report
format"), a subset of the Code Climate engine specification: a JSON array of issues, each
with ``description``, ``check_name``, ``fingerprint`` (unique; :mod:`precheck.fingerprint`,
so a finding keeps its identity when lines move), ``severity`` (``info``, ``minor``,
``major``, ``critical``, ``blocker``) and ``location`` (``path``, ``lines.begin``; precheck
adds ``positions.begin`` with the column). An error of precheck's (the run breaks) is
``critical``, a warning ``minor``, info ``info``; a file that cannot be read or parsed is a
``blocker`` issue of check ``precheck/input-error``. Written with ``json.dumps`` and ASCII
escapes: any text a file controls stays inside its JSON string (:mod:`precheck.escape`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..engine import Report
from ..escape import printable
from ..fingerprint import fingerprints
from ..rules.base import Finding, Severity
from .headline import headline

SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "minor", Severity.INFO: "info"}


def _issue(finding: Finding, fingerprint: str) -> dict[str, Any]:
    origin = finding.origin
    description = headline(finding.message) + (f" (help: {finding.fix.text()})" if finding.fix else "")
    line = origin.line or 1
    location: dict[str, Any] = {"path": printable(origin.path or ""), "lines": {"begin": line}}
    if origin.column:
        location["positions"] = {"begin": {"line": line, "column": origin.column}}
    return {
        "type": "issue",
        "check_name": f"{finding.rule} {finding.name}",
        "description": printable(description),
        "categories": ["Bug Risk"],
        "severity": SEVERITY[finding.severity],
        "fingerprint": fingerprint,
        "location": location,
    }


def render(report: Report) -> str:
    issues = [_issue(f, p) for f, p in zip(report.findings, fingerprints(report.findings), strict=True)]
    for error in report.errors:
        where = f"{error.path}\0{error.message}"
        issues.append(
            {
                "type": "issue",
                "check_name": "precheck/input-error",
                "description": printable(error.message),
                "categories": ["Bug Risk"],
                "severity": "blocker",
                "fingerprint": hashlib.sha256(where.encode("utf-8", "surrogatepass")).hexdigest()[:32],
                "location": {"path": printable(error.path), "lines": {"begin": error.line or 1}},
            }
        )
    return json.dumps(issues, indent=2)
