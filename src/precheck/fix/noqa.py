"""``--add-noqa``: silence today's findings where they are, as ruff's ``--add-noqa`` does.

For each finding, a ``# precheck: ignore[CODE]`` comment at the end of the line it points at
(codes of the same line merged into one comment, an existing ``# precheck: ignore[...]``
there extended). A comment is added only where the format's own comment scanner
(:mod:`precheck.sources.suppressions`) then finds it on that line and the file still parses
as before: never inside a string, a YAML block scalar or after a shell line continuation.
Where no comment can hold it (JSON files and notebooks have no comments; a continued shell
line), the project configuration gets a ``per-file-ignores`` entry for that file and rule
instead: ``[tool.precheck.per-file-ignores]`` in the ``pyproject.toml`` (or
``[per-file-ignores]`` in the ``.precheck.toml``) that governs the file, else a new
``.precheck.toml`` at the repository root (the closest folder above with ``.git``).
Files are written atomically, as ``--fix`` writes them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..rules.base import Finding
from ..sources.suppressions import LINE, scan
from .base import FixError
from .editors import format_from_path
from .files import SourceFile
from .write import repository_root, write_atomic

#: precheck's format of a file → the comment scanner that reads its suppressions
_SCANNER = {"yaml": "yaml", "toml": "toml", "env": "env", "shell": "env", "makefile": "env", "python": "python"}
_EXISTING = re.compile(r"#\s*precheck:\s*ignore\[([^\]]*)\]\s*$")


@dataclass
class Added:
    """What ``--add-noqa`` did."""

    comments: int = 0
    files: set[str] = field(default_factory=set)
    #: (project configuration, glob) → codes
    ignores: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.comments or self.ignores)

    def summary(self) -> str:
        text = f"{self.comments} comment{'' if self.comments == 1 else 's'} in {len(self.files)} file"
        text += "" if len(self.files) == 1 else "s"
        entries = len(self.ignores)
        if entries:
            text += f" and {entries} per-file-ignores entr{'y' if entries == 1 else 'ies'}"
        return text


def add_noqa(findings: Iterable[Finding]) -> Added:
    done = Added()
    lines: dict[str, dict[int, set[str]]] = {}
    whole: dict[str, set[str]] = {}  # files no comment can silence: path → codes
    for finding in findings:
        origin = finding.origin
        if not origin.path or origin.path.startswith("<") or not os.path.isfile(origin.path):
            continue
        if origin.line is None or _scanner(origin.path) is None:
            whole.setdefault(origin.path, set()).add(finding.rule)
        else:
            lines.setdefault(origin.path, {}).setdefault(origin.line, set()).add(finding.rule)
    for path, wanted in lines.items():
        left = _comment_file(path, wanted, done)
        for codes in left.values():
            whole.setdefault(path, set()).update(codes)
    for path, codes in whole.items():
        _per_file_ignore(path, codes, done)
    return done


def _scanner(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    return _SCANNER.get(format_from_path(path))


def _comment_file(path: str, wanted: dict[int, set[str]], done: Added) -> dict[int, set[str]]:
    """Add the comments to one file; the lines that could not hold one (→ per-file-ignores)."""
    scanner = _scanner(path)
    assert scanner is not None
    try:
        source = SourceFile.read(path)
    except FixError as error:
        done.messages.append(f"not silenced: {error}")
        return {}
    text_lines = source.text.splitlines(keepends=True)
    left: dict[int, set[str]] = {}
    added = 0
    for line, codes in sorted(wanted.items()):
        if line > len(text_lines):
            left[line] = codes
            continue
        candidate = _with_comment(text_lines[line - 1], codes)
        if candidate is None or candidate == text_lines[line - 1]:
            if candidate is None:
                left[line] = codes
            continue
        trial = text_lines[:]
        trial[line - 1] = candidate
        if _holds(scanner, "".join(trial), line, codes, source.text):
            text_lines = trial
            added += 1
        else:
            left[line] = codes
    after = "".join(text_lines)
    if after != source.text:
        try:
            write_atomic(path, source.encode(after))
        except OSError as error:
            done.messages.append(f"not silenced: cannot write {path}: {error}")
            return {}
        done.comments += added
        done.files.add(path)
    return left


def _with_comment(text: str, codes: set[str]) -> str | None:
    """The line with a suppression of ``codes``; None where a comment cannot end it."""
    body = text.rstrip("\r\n")
    ending = text[len(body) :]
    existing = _EXISTING.search(body)
    if existing:
        have = {c.strip() for c in existing.group(1).split(",") if c.strip()}
        merged = ", ".join(sorted(have | codes))
        return body[: existing.start()] + f"# precheck: ignore[{merged}]" + ending
    if body.rstrip().endswith("\\"):  # a continued line: a comment would end the command
        return None
    return f"{body}  # precheck: ignore[{', '.join(sorted(codes))}]{ending}"


def _holds(scanner: str, text: str, line: int, codes: set[str], before: str) -> bool:
    """Whether the format's scanner reads a suppression of ``codes`` on ``line``, and the file
    means the same otherwise (it parses as it did)."""
    notes = [n for n in scan(text, scanner) if n.kind == LINE and n.line == line]
    if not any(codes <= set(n.message.split(",")) for n in notes):
        return False
    if scanner in ("yaml", "toml"):
        from ..sources import parse

        try:
            old = parse("x", before, scanner).root.plain()
        except InputError:
            return True  # it did not parse before either: the comment changes nothing
        try:
            return bool(parse("x", text, scanner).root.plain() == old)
        except InputError:
            return False
    if scanner == "python":
        import ast

        try:
            return ast.dump(ast.parse(text)) == ast.dump(ast.parse(before))
        except SyntaxError:
            return False
    return True


def _per_file_ignore(path: str, codes: set[str], done: Added) -> None:
    from ..project import for_path

    config = for_path(path)
    target = Path(config.path) if config.path is not None else repository_root(path) / ".precheck.toml"
    folder = os.path.abspath(target.parent)
    glob = Path(os.path.relpath(os.path.abspath(path), folder)).as_posix()
    if glob.startswith(".."):
        done.messages.append(f"not silenced: {path} is outside the folder of {target}")
        return
    try:
        text = target.read_text(encoding="utf-8") if target.is_file() else ""
        new = with_per_file_ignore(text, glob, codes, target.name == "pyproject.toml")
    except (OSError, ValueError) as error:
        done.messages.append(f"not silenced: {path}: {error}")
        return
    if new is None:
        done.messages.append(f'not silenced: {path}: write `"{glob}" = [...]` under per-file-ignores in {target}')
        return
    if new != text:
        write_atomic(target, new.encode("utf-8"))
        done.ignores[(str(target), glob)] = codes
        done.files.add(str(target))


def with_per_file_ignore(text: str, glob: str, codes: set[str], pyproject: bool) -> str | None:
    """``text`` (a project configuration) with ``glob`` ignoring ``codes``; None where it
    cannot be written by adding a line (the table written inline)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    document = tomllib.loads(text)
    table = document.get("tool", {}).get("precheck", {}) if pyproject else document
    current = table.get("per-file-ignores")
    if current is not None and not isinstance(current, dict):
        return None
    have = set(current.get(glob, ())) if current else set()
    merged = sorted(have | codes)
    quoted = '"' + glob.replace("\\", "\\\\").replace('"', '\\"') + '"'
    entry = f"{quoted} = [{', '.join(chr(34) + c + chr(34) for c in merged)}]\n"
    header = "[tool.precheck.per-file-ignores]" if pyproject else "[per-file-ignores]"
    lines = text.splitlines(keepends=True)
    where = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if where is None:
        if current is not None:  # written inline (`per-file-ignores = {...}`)
            return None
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}{header}\n{entry}"
    if have:  # replace the glob's own line
        for i in range(where + 1, len(lines)):
            if lines[i].lstrip().startswith("["):
                break
            try:
                key = next(iter(tomllib.loads(lines[i])), None)
            except tomllib.TOMLDecodeError:
                continue
            if key == glob:
                lines[i] = entry
                return "".join(lines)
        return None
    lines.insert(where + 1, entry)
    return "".join(lines)


__all__ = ["Added", "add_noqa", "with_per_file_ignore"]
