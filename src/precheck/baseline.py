"""``--write-baseline FILE`` and ``--baseline FILE``: adopt precheck on a repository that has
findings today, and fail only on new ones.

The baseline is a JSON document (``{"version": 1, "findings": [...]}``) with one entry per
finding: its fingerprint (:mod:`precheck.fingerprint`), and for people reading a diff of it,
the rule, the path, the line and the key. A finding is *in the baseline* when its
fingerprint is: the rule, the file (its path relative to the baseline's own folder, so the
baseline works from any current folder), the key it points at and its headline without line
or column numbers, plus its rank among the findings of the same file that share all of
that. So lines added or removed above a finding, a key moved within its file, or a run from
another folder keep it in the baseline; a finding about another key or value, or in another
file, is new. Line numbers are recorded, never compared.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from .bounded_read import Refused, read_text
from .errors import InputError
from .fingerprint import fingerprints
from .rules.base import Finding

VERSION = 1


def _relative_to(folder: Path) -> Callable[[str], str]:
    base = os.path.abspath(folder)

    def relative(path: str) -> str:
        if path.startswith("<"):  # <command line>, <stdin>
            return path
        try:
            return Path(os.path.relpath(os.path.abspath(path), base)).as_posix()
        except ValueError:  # another drive
            return path

    return relative


def _prints(findings: list[Finding], baseline: Path) -> list[str]:
    return fingerprints(findings, _relative_to(baseline.parent))


def write(findings: list[Finding], baseline: Path) -> int:
    """Write ``findings`` as the baseline; how many."""
    relative = _relative_to(baseline.parent)
    entries = [
        {
            "fingerprint": fingerprint,
            "rule": f.rule,
            "path": relative(f.origin.path) if f.origin.path else None,
            "line": f.origin.line,
            "key": f.origin.shown_key,
        }
        for f, fingerprint in zip(findings, _prints(findings, baseline), strict=True)
    ]
    text = json.dumps({"version": VERSION, "findings": entries}, indent=1) + "\n"
    tmp = baseline.with_name(baseline.name + ".precheck-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, baseline)
    return len(entries)


def load(baseline: Path) -> set[str]:
    """The fingerprints a baseline holds; a clear input error for anything else."""
    shown = str(baseline)
    try:
        text = read_text(baseline, errors="strict")
    except FileNotFoundError:
        raise InputError(shown, "no such baseline: write one with --write-baseline FILE") from None
    except (OSError, Refused, UnicodeDecodeError) as error:
        raise InputError(shown, f"cannot read the baseline: {error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(shown, f"not a baseline (invalid JSON: {error.msg})", error.lineno, error.colno) from None
    findings = document.get("findings") if isinstance(document, dict) else None
    if not isinstance(findings, list) or document.get("version") != VERSION:
        raise InputError(shown, f'not a precheck baseline: expected {{"version": {VERSION}, "findings": [...]}}')
    prints = {f.get("fingerprint") for f in findings if isinstance(f, dict)}
    return {p for p in prints if isinstance(p, str)}


def new(findings: list[Finding], baseline: Path, known: set[str]) -> list[Finding]:
    """The findings that are not in the baseline, in order."""
    return [f for f, p in zip(findings, _prints(findings, baseline), strict=True) if p not in known]


__all__ = ["VERSION", "load", "new", "write"]
