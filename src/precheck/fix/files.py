"""Files: read each file the fixes edit, plan every applicable finding's edits in it, check
the result still parses, and write it (atomically, :mod:`precheck.fix.write`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .. import rules
from ..bounded_read import Refused, read_bytes
from ..errors import InputError
from ..escape import printable
from ..rules.base import Edit, Finding
from ..sources import parse
from .base import FixError, Replacement, apply_replacements
from .editors import editor_for, format_of
from .write import write_atomic


@dataclass
class SourceFile:
    path: str
    #: the file's text, its lines ending in ``\n`` (a file of CR-only lines is read as such)
    text: str
    bom: bool = False
    #: the file's lines end in a lone ``\r`` (classic Mac): written back so
    cr: bool = False

    @classmethod
    def read(cls, path: str) -> SourceFile:
        try:
            data = read_bytes(path)
        except OSError as exc:
            raise FixError(f"cannot read {path}: {exc.strerror or exc}") from None
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            text = data[3 if bom else 0 :].decode("utf-8")
        except UnicodeDecodeError:
            raise FixError(f"{path} is not UTF-8: fix it by hand") from None
        cr = "\r" in text and "\n" not in text  # the editors find lines by "\n"
        return cls(path, text.replace("\r", "\n") if cr else text, bom, cr)

    def encode(self, text: str) -> bytes:
        return (b"\xef\xbb\xbf" if self.bom else b"") + (text.replace("\n", "\r") if self.cr else text).encode("utf-8")


@dataclass
class FileChange:
    path: str
    source: SourceFile
    after: str
    #: the findings whose fixes this change makes
    findings: list[Finding] = field(default_factory=list)

    @property
    def before(self) -> str:
        return self.source.text

    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{printable(str(self.path))}",
            tofile=f"b/{printable(str(self.path))}",
        )
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


@dataclass
class FixPlan:
    changes: list[FileChange] = field(default_factory=list)
    #: fixable findings left alone, and why
    skipped: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def fixed(self) -> int:
        return len({id(f) for change in self.changes for f in change.findings})


def applicable(finding: Finding, unsafe: bool = False) -> bool:
    """Whether ``--fix`` (or ``--fix --unsafe-fixes``) applies this finding's fix: its own
    applicability, else its rule's (:func:`precheck.rules.applicable`)."""
    return rules.applicable(finding, unsafe)


def _key(path: str) -> str:
    return str(Path(path).resolve())


def plan_fixes(findings: Iterable[Finding], unsafe: bool = False) -> FixPlan:
    """Every applicable fix of ``findings``, as whole-file changes (nothing written)."""
    result = FixPlan()
    sources: dict[str, SourceFile] = {}
    accepted: dict[str, list[Replacement]] = {}
    owners: dict[str, list[Finding]] = {}
    formats: dict[str, str] = {}
    for finding in findings:
        if not applicable(finding, unsafe):
            continue
        assert finding.fix is not None
        try:
            wanted = _replacements(finding.fix.edits, sources, formats)
        except FixError as error:
            result.skipped.append((finding, str(error)))
            continue
        clash = any(r.overlaps(a) for key, reps in wanted.items() for r in reps for a in accepted.get(key, []))
        if clash:
            result.skipped.append((finding, "another fix changes the same place; run --fix again"))
            continue
        for key, reps in wanted.items():
            have = accepted.setdefault(key, [])
            have.extend(r for r in reps if r not in have)
            owners.setdefault(key, []).append(finding)
    for key, reps in accepted.items():
        source = sources[key]
        after = apply_replacements(source.text, reps)
        try:
            parse(source.path, after, formats[key])
        except InputError as error:
            result.skipped.extend((f, f"the fixed file would not parse ({error.message})") for f in owners[key])
            continue
        if after != source.text:
            result.changes.append(FileChange(source.path, source, after, owners[key]))
    return result


def _replacements(
    edits: Iterable[Edit], sources: dict[str, SourceFile], formats: dict[str, str]
) -> dict[str, list[Replacement]]:
    """Each file's replacements for ``edits``, by resolved path; ``formats`` learns the
    format of each file edited (its first edit's document format)."""
    out: dict[str, list[Replacement]] = {}
    for edit in edits:
        fmt = format_of(edit)
        editor = editor_for(fmt)
        if not editor.rewrites:  # refused before the file is read
            editor.plan("", edit)  # raises: it refuses every edit
        key = _key(edit.path)
        if key not in sources:
            sources[key] = SourceFile.read(edit.path)
        formats.setdefault(key, fmt)
        out.setdefault(key, []).extend(editor.plan(sources[key].text, edit))
    return out


def apply(fixes: FixPlan) -> list[InputError]:
    """Write each changed file (atomically). A file that cannot be written is that file's
    input error, at the first finding its fix was for (a read-only checkout is not a bug);
    the other files are still written."""
    failures = []
    for change in fixes.changes:
        try:
            write_atomic(change.path, change.source.encode(change.after))
        except OSError as exc:
            first = change.findings[0].origin if change.findings else None
            line = first.line if first is not None and first.path == change.path else None
            column = first.column if line is not None and first is not None else None
            reason = str(exc) if isinstance(exc, Refused) else (exc.strerror or str(exc))
            failures.append(InputError(change.path, f"cannot write the fix: {reason}", line, column))
    return failures


def sarif_changes(finding: Finding) -> dict[str, tuple[str, list[Replacement]]] | None:
    """One finding's fix as replacements: path as given → (the file's text, replacements).

    None when the fix names no edit or one that cannot be made in place.
    """
    if finding.fix is None or not finding.fix.edits:
        return None
    sources: dict[str, SourceFile] = {}
    try:
        by_key = _replacements(finding.fix.edits, sources, {})
    except FixError:
        return None
    return {sources[key].path: (sources[key].text, reps) for key, reps in by_key.items() if reps}
