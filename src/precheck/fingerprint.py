"""A finding's identity across edits: what a baseline and GitLab's Code Quality report key on.

A fingerprint is a hash of the rule, the file, the key the finding points at and its headline
with line and column numbers taken out (``(line 6)``, ``train.yaml:6:1``), plus how many
findings before it in the same file had the same identity. Lines added or removed above a
finding, or moving a key within its file, keep its fingerprint; changing the key, the value
the headline quotes, the rule or the file's path makes it a new finding.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

from .report.headline import headline
from .rules.base import Finding

#: positions inside a message: ``(line 6)``, ``lines 6-7``, ``:6:1``, ``:6``
_POSITIONS = re.compile(r"\blines? \d+(?:[-–]\d+)?|:\d+(?::\d+)?\b")


def _same(path: str) -> str:
    return path


def identity(finding: Finding, path: Callable[[str], str] = _same) -> str:
    """The finding without its positions; ``path`` maps the shown path to the one to key on
    (a baseline keys on paths relative to its own folder, not to the current one)."""
    origin = finding.origin
    text = _POSITIONS.sub("", headline(finding.message))
    if origin.path:  # the headline may quote the path too
        text = text.replace(origin.path, path(origin.path))
    return "\0".join((finding.rule, path(origin.path) if origin.path else "", origin.key or "", text))


def fingerprints(findings: Iterable[Finding], path: Callable[[str], str] = _same) -> list[str]:
    """One fingerprint per finding, in order; unique within the list."""
    seen: dict[str, int] = {}
    out = []
    for finding in findings:
        base = identity(finding, path)
        index = seen.get(base, 0)
        seen[base] = index + 1
        out.append(hashlib.sha256(f"{base}\0{index}".encode("utf-8", "surrogatepass")).hexdigest()[:32])
    return out


__all__ = ["fingerprints", "identity"]
