"""Which files to check: explicit files as given, folders searched for config files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .sources import FORMATS

#: folders never searched (a user names a file inside them to check it)
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}


def iter_files(paths: list[str]) -> Iterator[tuple[Path, str]]:
    """(file, path as shown) for every file to check, in a stable order."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = []
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                for name in files:
                    if Path(name).suffix.lower() in FORMATS:
                        found.append(Path(root) / name)
            for file in sorted(found):
                yield file, str(file)
        else:
            yield path, given
