"""Which files to check: explicit files as given, folders searched for config files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .sources import FORMATS, script_kind

if TYPE_CHECKING:
    from .ignore_patterns import Pattern

#: folders never searched (a user names a file inside them to check it)
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}

#: folders deeper than this below the searched one are not searched (and are said so):
#: real projects nest configs a dozen levels deep at most, and a search that a pull request
#: can make as deep as it likes must not run out of stack or time
MAX_DEPTH = 64


def walk(folder: Path, exclude: list[str] | None = None) -> tuple[list[Path], list[Path], list[Path]]:
    """Config files below ``folder``, the sub-folders that could not be read, and those too
    deep to search.

    ``.gitignore`` files met on the way and ``exclude`` patterns (gitignore syntax,
    relative to ``folder``) pass files and folders over. The search is iterative and stops
    at :data:`MAX_DEPTH` folders down (the run names the folders it did not search).
    Symlinks to folders are not followed, so link loops cannot trap it; a symlink to a file
    is taken only when its target lies inside ``folder`` (a pull request cannot make
    precheck read, or ``--fix`` rewrite, a file elsewhere); a dangling one is passed over.
    """
    from .ignore_patterns import compile_pattern, ignored, read_gitignore  # a run of named files needs none

    found: list[Path] = []
    unreadable: list[Path] = []
    too_deep: list[Path] = []
    base = [p for line in exclude or [] if (p := compile_pattern(line, PurePosixPath("."), "--exclude")) is not None]
    try:
        inside = folder.resolve()
    except (OSError, RuntimeError):
        inside = Path(os.path.abspath(folder))
    # (folder, its path relative to the searched one, its depth, the patterns in force there)
    pending: list[tuple[Path, PurePosixPath, int, list[Pattern]]] = [(folder, PurePosixPath("."), 0, base)]
    while pending:
        root, here, depth, inherited = pending.pop()
        try:
            with os.scandir(root) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            unreadable.append(root)
            continue
        patterns = inherited + read_gitignore(root, here)
        folders = []
        for entry in listed:
            name = entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if (
                    name not in SKIP_DIRS
                    and (not name.startswith(".") or _workflows(here / name))
                    and not (patterns and ignored(patterns, here / name, is_dir=True))
                ):
                    folders.append(entry)
                continue
            dot = name.rfind(".")  # Path(name).suffix: from the last dot, unless leading or trailing
            if not ((name[dot:].lower() if 0 < dot < len(name) - 1 else "") in FORMATS or script_kind(name)):
                continue
            if patterns and ignored(patterns, here / name, is_dir=False):  # (no pattern: not ignored)
                continue
            if entry.is_symlink() and not (_inside(Path(entry.path), inside) and _is_file(entry)):
                continue
            found.append(Path(entry.path))
        for entry in reversed(folders):  # popped in name order
            if depth + 1 > MAX_DEPTH:
                too_deep.append(Path(entry.path))
                continue
            pending.append((Path(entry.path), here / entry.name, depth + 1, patterns))
    return found, unreadable, too_deep


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _inside(link: Path, folder: Path) -> bool:
    """Whether a symlink's final target exists and lies inside ``folder``."""
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, a loop
        return False
    return target == folder or folder in target.parents


def iter_files(paths: list[str], exclude: list[str] | None = None) -> Iterator[tuple[Path, str, bool]]:
    """(file, path as shown, named by the user) for every file to check, in a stable order.

    A sub-folder that cannot be read is yielded as if named, so the run reports it. A file
    named on the command line is always checked, as ruff does. A folder too deep to search
    is yielded as not named: the run says it was passed over.
    """
    for given in paths:
        path = Path(given)
        if not os.path.isdir(path):  # False, not OSError, for a name too long
            yield path, given, True
            continue
        found, unreadable, too_deep = walk(path, exclude)
        for file in sorted(found + unreadable + too_deep):
            yield file, str(file), file in unreadable


def _workflows(folder: PurePosixPath) -> bool:
    """The one hidden folder searched: ``.github`` (its ``workflows`` hold launch commands)."""
    return folder.name == ".github"
