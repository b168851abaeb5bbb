"""``precheck explain``: the resolved precision plan with where each value came from."""

from __future__ import annotations

import json
from typing import Any

from .engine import Report
from .explain_memory import memory_of as memory_of
from .provenance import Origin
from .report.json_report import hardware_json
from .resolve.plan import PLAN_FIELDS

SCHEMA_VERSION = 1


def render_text(report: Report) -> str:
    """The plain-text picture (:mod:`precheck.explain_view`; rich on a terminal)."""
    from .explain_view import render_plain

    return render_plain(report)


def origin_json(origin: Origin) -> dict[str, Any]:
    """Where a value came from, for programs: kind file|env|default|derived and its place."""
    out: dict[str, Any] = {"kind": origin.kind}
    for name in ("path", "line", "column", "key", "detail"):
        value = getattr(origin, name)
        if value is not None:
            out[name] = value
    if origin.through:  # the other lines the value flows through
        out["through"] = [{"path": path, "line": line} for path, line in origin.through]
    return out


def render_json(report: Report) -> str:
    runs = []
    for result in report.files:
        if result.plan is None or result.config is None or result.part_of is not None:
            continue
        runs.append(
            {
                "path": result.path,
                "run": result.label,
                "dialect": result.dialect,
                "framework": result.config.framework,
                "versions": result.versions.as_dict() if result.versions else {},
                "reads": [
                    {"path": a.path, "role": role, "dialect": a.dialect, "found_in": a.found_in}
                    for role, a in result.config.attached.items()
                ]
                + [
                    {"path": p, "role": "model", "dialect": None}
                    for p in result.attached
                    if not any(a.path == p for a in result.config.attached.values())
                ],
                "plan": {
                    name: {"value": item.value, "source": str(item.origin), "origin": origin_json(item.origin)}
                    for name, item in result.plan.fields().items()
                },
                "memory": memory_of(result),
                "findings": [
                    {
                        "rule": f.rule,
                        "severity": str(f.severity),
                        "path": f.origin.path,
                        "line": f.origin.line,
                        "column": f.origin.column,
                        "message": f.message,
                        "fix": f.fix.text() if f.fix else None,
                    }
                    for f in result.findings
                ],
                "overridden": [
                    {
                        "field": o.field,
                        "value": o.loser.value,
                        "source": str(o.loser.origin),
                        "origin": origin_json(o.loser.origin),
                        "by": str(o.winner.origin),
                        "reason": o.reason,
                    }
                    for o in result.plan.overrides
                ],
                # read, not used (see precheck.unused: `file`, not `path`, and no FILE:LINE in `why`)
                "unused": [u.as_json() for u in result.unused],
            }
        )
    document = {
        "version": SCHEMA_VERSION,
        "hardware": hardware_json(report.hardware, report.hardware_note),
        "fields": PLAN_FIELDS,
        "runs": runs,
        "errors": [{"path": e.path, "line": e.line, "column": e.column, "message": e.message} for e in report.errors],
    }
    return json.dumps(document, indent=2)
