"""``--format junit``: JUnit XML, as CI systems read test reports (GitLab ``reports: junit``,
Jenkins, Azure Pipelines, CircleCI).

The common shape (the ``junit-10.xsd`` JUnit/Ant schema Jenkins and GitLab read): one
``<testsuites>``; one ``<testsuite name=PATH>`` per checked file, with ``tests``,
``failures`` and ``errors`` counts; one ``<testcase classname=PATH name="CODE name"
file=PATH line=N>`` per finding with a ``<failure type=SEVERITY message=HEADLINE>`` whose
text is ``path:line:col``, the message and the fix; a file with no finding has one passing
testcase, so that a clean run still lists what it checked. A file that cannot be read or
parsed is a testcase with an ``<error>``. XML 1.0 cannot hold most control characters even
as references: every text is made printable first (:mod:`precheck.escape`), then escaped.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from ..engine import Report
from ..errors import InputError
from ..escape import printable
from ..rules.base import Finding
from .headline import headline

#: not characters in XML 1.0 even as references, and passed over by :func:`printable`
_NOT_XML = re.compile("[\ufffe\uffff]")


def _safe(text: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(str(text)))


def _attr(text: object) -> str:
    return quoteattr(_safe(text))


def _text(*lines: str) -> str:
    """Lines of an element's text: each made printable (its own newlines escaped), then joined."""
    return "\n".join(escape(_safe(line)) for line in lines)


def _failure(finding: Finding) -> str:
    origin = finding.origin
    body = [f"{origin.location()}: {finding.message}"] + ([f"help: {finding.fix.text()}"] if finding.fix else [])
    line = f" line={_attr(origin.line)}" if origin.line else ""
    return (
        f"    <testcase classname={_attr(origin.path or '')} name={_attr(f'{finding.rule} {finding.name}')}"
        f" file={_attr(origin.path or '')}{line}>\n"
        f"      <failure type={_attr(finding.severity)} message={_attr(headline(finding.message))}>"
        f"{_text(*body)}</failure>\n"
        "    </testcase>"
    )


def _error(error: InputError) -> str:
    return (
        f'    <testcase classname={_attr(error.path)} name="precheck" file={_attr(error.path)}>\n'
        f'      <error type="input-error" message={_attr(error.message)}>{_text(str(error))}</error>\n'
        "    </testcase>"
    )


def render(report: Report) -> str:
    by_path: dict[str, list[Finding]] = {}
    for result in report.files:
        if result.dialect and result.part_of is None and result.error is None:
            by_path.setdefault(result.path, [])
    for finding in report.findings:
        by_path.setdefault(finding.origin.path or "", []).append(finding)
    errors: dict[str, list[InputError]] = {}
    for error in report.errors:
        errors.setdefault(error.path, []).append(error)
    suites = []
    total = failed = broken = 0
    for path in sorted(set(by_path) | set(errors)):
        findings, bad = by_path.get(path, []), errors.get(path, [])
        cases = [_failure(f) for f in findings] + [_error(e) for e in bad]
        if not cases:
            cases = [f'    <testcase classname={_attr(path)} name="precheck" file={_attr(path)}/>']
        tests = len(cases)
        total, failed, broken = total + tests, failed + len(findings), broken + len(bad)
        suites.append(
            f'  <testsuite name={_attr(path)} tests="{tests}" failures="{len(findings)}" errors="{len(bad)}">\n'
            + "\n".join(cases)
            + "\n  </testsuite>"
        )
    head = f'<testsuites name="precheck" tests="{total}" failures="{failed}" errors="{broken}">'
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, *suites, "</testsuites>"])
