"""``--format sarif``: a SARIF 2.1.0 log for code-scanning tools (GitHub, Azure DevOps, IDEs).

One run; ``tool.driver`` describes precheck (``informationUri``: its repository) and the
rules its results refer to (id, name, short and full description and help from the rule's
documentation, ``helpUri``: the rule's page under docs/rules, default level). Each
finding is a result with its rule, level (error/warning/note), message, and the physical
location of the key (``uri`` relative to the current folder, 1-based line and column,
``columnKind`` unicodeCodePoints). A fix precheck can make in the file (its edits) is a
``fixes`` entry with the replacements; its ``properties.safety`` says whether ``--fix``
makes it (``safe``), makes it with ``--unsafe-fixes`` (``unsafe``) or leaves it to the user
as one choice of several (``manual``). Every fix's text is also the message's second line,
since viewers show messages and rarely fixes. Files that could not be read are
``toolExecutionNotifications`` of the invocation, which then did not succeed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..distribution import REPOSITORY, RULES_URL, rule_url
from ..engine import Report
from ..escape import json_safe
from ..rules import RULES, applicability
from ..rules.base import Finding, Rule, Severity
from ..sources.nodes import position

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def uri(path: str) -> str:
    """A relative URI reference for a path under the current folder, else a file: URI."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.resolve().relative_to(Path.cwd().resolve())
        except (OSError, ValueError):
            return candidate.as_uri()
    # os.fsencode: a file name that is not UTF-8 (lone surrogates here) is percent-encoded as its bytes
    return quote(os.fsencode(candidate.as_posix().removeprefix("./")), safe="/-._~")


def section(doc: str, title: str) -> str:
    """The text of one ``## title`` section of a rule's documentation."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", doc, re.MULTILINE | re.DOTALL)
    return match.group(1).strip() if match else ""


def descriptor(rule: Rule) -> dict[str, Any]:
    full = section(rule.doc, "What it does") or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "helpUri": rule_url(rule.code),
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": [rule.family, "precision"], "fix": rule.fix_safety.value},
    }


def _location(path: str, line: int | None, column: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(path)}}
    if line:
        region: dict[str, Any] = {"startLine": line}
        if column:
            region["startColumn"] = column
        physical["region"] = region
    return {"physicalLocation": physical}


def _fixes(finding: Finding) -> list[dict[str, Any]]:
    from ..fix import sarif_changes

    if finding.fix is None:
        return []
    changes = sarif_changes(finding)
    if not changes:
        return []
    artifact_changes = []
    for path, (text, replacements) in changes.items():
        items = []
        for item in replacements:
            start_line, start_column = position(text, item.start)
            end_line, end_column = position(text, item.end)
            region = {
                "startLine": start_line,
                "startColumn": start_column,
                "endLine": end_line,
                "endColumn": end_column,
            }
            items.append({"deletedRegion": region, "insertedContent": {"text": item.new}})
        artifact_changes.append({"artifactLocation": {"uri": uri(path)}, "replacements": items})
    how = applicability(finding)
    safety = how.value if how is not None else "manual"
    # "safe": `precheck --fix` applies it; "unsafe": with --unsafe-fixes; "manual": one choice of several
    return [
        {
            "description": {"text": finding.fix.text()},
            "artifactChanges": artifact_changes,
            "properties": {"safety": safety},
        }
    ]


def result(finding: Finding, index: int) -> dict[str, Any]:
    message = finding.message + (f"\nhelp: {finding.fix.text()}" if finding.fix else "")
    out: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": LEVEL[finding.severity],
        "message": {"text": message},
    }
    if finding.origin.path:
        out["locations"] = [_location(finding.origin.path, finding.origin.line, finding.origin.column)]
    related = [o for o in finding.related if o.path]
    if related:
        out["relatedLocations"] = [
            {**_location(o.path or "", o.line, o.column), "id": n, "message": {"text": str(o)}}
            for n, o in enumerate(related, start=1)
        ]
    fixes = _fixes(finding)
    if fixes:
        out["fixes"] = fixes
    return out


def document(report: Report) -> dict[str, Any]:
    codes = sorted({f.rule for f in report.findings if f.rule in RULES})
    index = {code: n for n, code in enumerate(codes)}
    notifications = [
        {
            "level": "error",
            "message": {"text": error.message},
            "locations": [_location(error.path, error.line, error.column)],
        }
        for error in report.errors
    ] + [{"level": "error", "message": {"text": f"internal error: {e}"}} for e in report.internal_errors]
    invocation: dict[str, Any] = {"executionSuccessful": not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "precheck",
                        "version": __version__,
                        "informationUri": REPOSITORY,
                        "properties": {"rulesUri": RULES_URL},
                        "rules": [descriptor(RULES[code]) for code in codes],
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": [result(f, index.get(f.rule, -1)) for f in report.findings],
            }
        ],
    }


def render(report: Report) -> str:
    return json_safe(json.dumps(document(report), indent=2, ensure_ascii=False))


__all__ = ["document", "render", "uri"]
