"""Which files to check: explicit files as given, folders searched for config files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .sources import FORMATS

#: folders never searched (a user names a file inside them to check it)
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}


def walk(folder: Path) -> tuple[list[Path], list[Path]]:
    """Config files below ``folder``, and the sub-folders that could not be read.

    Symlinks to folders are not followed, so link loops cannot trap the search.
    """
    found: list[Path] = []
    unreadable: list[Path] = []

    def note(error: OSError) -> None:
        unreadable.append(Path(error.filename or folder))

    for root, dirs, files in os.walk(folder, onerror=note, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found.extend(Path(root) / name for name in files if Path(name).suffix.lower() in FORMATS)
    return found, unreadable


def iter_files(paths: list[str]) -> Iterator[tuple[Path, str, bool]]:
    """(file, path as shown, named by the user) for every file to check, in a stable order.

    A sub-folder that cannot be read is yielded as if named, so the run reports it.
    """
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            yield path, given, True
            continue
        found, unreadable = walk(path)
        for file in sorted(found + unreadable):
            yield file, str(file), file in unreadable
