"""``.gitignore``-style patterns: which files a folder search passes over.

The subset of gitignore(5) configs need: ``#`` comments, ``!`` negation (the last
matching pattern wins), a trailing ``/`` for folders only, a leading or inner ``/``
anchoring the pattern to the folder that holds it, ``*``/``?``/``[...]`` within a name
and ``**`` across folders. Patterns from ``--exclude`` behave like a ``.gitignore`` in the
current folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


@dataclass(frozen=True, slots=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    dirs_only: bool
    #: the folder the pattern is relative to (the .gitignore's)
    base: PurePosixPath


def _translate(glob: str) -> str:
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 1)) > i:
            out.append("[" + glob[i + 1 : end].replace("!", "^", 1) + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def compile_pattern(line: str, base: PurePosixPath) -> Pattern | None:
    text = line.rstrip("\n").rstrip()
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    dirs_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    body = _translate(text)
    regex = re.compile(("^" if anchored else "^(?:.*/)?") + body + "(?:/.*)?$")
    return Pattern(regex, negated, dirs_only, base)


def read_gitignore(folder: Path, base: PurePosixPath) -> list[Pattern]:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [p for line in text.splitlines() if (p := compile_pattern(line, base)) is not None]


def ignored(patterns: list[Pattern], relative: PurePosixPath, is_dir: bool) -> bool:
    """Whether ``relative`` (to the searched folder) is excluded; the last match decides."""
    verdict = False
    for pattern in patterns:
        try:
            inside = relative.relative_to(pattern.base)
        except ValueError:
            continue
        text = inside.as_posix()
        if pattern.dirs_only and not is_dir:
            # "build/" also excludes files below a build folder
            parent = inside.parent.as_posix()
            if parent == "." or not pattern.regex.match(parent):
                continue
        elif not pattern.regex.match(text):
            continue
        verdict = not pattern.negated
    return verdict
