"""``--format json``: the versioned document of DESIGN.md's contract (see README).

Written with :mod:`json` alone. Its declaration is the pydantic model in
:mod:`precheck.report_model` (never imported here), which generates the JSON Schema shipped
as ``schema/precheck-report.schema.json``; a test validates real reports against both.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine import FileResult, Report
from ..hardware import Hardware
from ..rules.base import Severity
from .headline import headline
from .text import fixable

#: ``version``: :data:`precheck.report_model.VERSION` (a test keeps them equal)
SCHEMA_VERSION = 1


def hardware_json(hardware: Hardware, note: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "source": hardware.source,
        "devices": [
            {
                "index": d.index,
                "name": d.name,
                "compute_capability": d.model.compute_capability,
                "memory_gib": d.memory_gib,
                "bf16": d.bf16,
            }
            for d in hardware.devices
        ],
    }
    if note:
        out["note"] = note
    return out


def _file(result: FileResult) -> dict[str, Any]:
    out: dict[str, Any] = {"path": result.path, "dialect": result.dialect}
    if result.attached:
        out["reads"] = result.attached
    if result.part_of is not None:
        out["part_of"] = result.part_of
    if result.names:  # found by searching the repository for the configs that name a file given alone
        out["names"] = result.names
    if result.named and result.skipped:
        out["skipped"] = result.skipped
    if result.unused and result.part_of is None:
        out["unused"] = [u.as_json() for u in result.unused]
    return out


def render(report: Report) -> str:
    counts = report.counts()
    document = {
        "version": SCHEMA_VERSION,
        "hardware": hardware_json(report.hardware, report.hardware_note),
        "files": [_file(f) for f in report.files if f.error is None],
        "versions": {n: {"version": v.version, "source": v.source} for n, v in sorted(report.versions().items())},
        "findings": [
            {
                "rule": f.rule,
                "name": f.name,
                "severity": str(f.severity),
                "path": f.origin.path,
                "line": f.origin.line,
                "column": f.origin.column,
                "key": f.origin.shown_key,
                "message": f.message,
                "headline": headline(f.message),
                "fix": f.fix.text() if f.fix else None,
                "fixable": fixable(f),
                "assumptions": list(f.assumptions),
            }
            for f in report.findings
        ],
        "errors": [{"path": e.path, "line": e.line, "column": e.column, "message": e.message} for e in report.errors]
        + [
            {"path": e.path, "line": None, "column": None, "message": f"internal error: {e}"}
            for e in report.internal_errors
        ],
        "summary": {
            "errors": counts[Severity.ERROR],
            "warnings": counts[Severity.WARNING],
            "info": counts[Severity.INFO],
        },
    }
    return json.dumps(document, indent=2)


def statistics(report: Report) -> str:
    """``--statistics --format json``: findings counted by rule, as ruff's ``--statistics``."""
    from collections import Counter

    from ..rules import RULES

    counts = Counter(f.rule for f in report.findings)
    fixes = Counter(f.rule for f in report.findings if fixable(f))
    rows = [
        {"code": code, "name": RULES[code].name if code in RULES else None, "count": count, "fixable": fixes[code]}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return json.dumps(rows, indent=2)
