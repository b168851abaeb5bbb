"""Which files to check: explicit files as given, folders searched for config files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from .ignore_patterns import compile_pattern, ignored, read_gitignore
from .sources import FORMATS, script_kind

#: folders never searched (a user names a file inside them to check it)
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}


def walk(folder: Path, exclude: list[str] | None = None) -> tuple[list[Path], list[Path]]:
    """Config files below ``folder``, and the sub-folders that could not be read.

    ``.gitignore`` files met on the way and ``exclude`` patterns (gitignore syntax,
    relative to ``folder``) pass files and folders over. Symlinks to folders are not
    followed, so link loops cannot trap the search.
    """
    found: list[Path] = []
    unreadable: list[Path] = []
    patterns = [p for line in exclude or [] if (p := compile_pattern(line, PurePosixPath("."))) is not None]

    def note(error: OSError) -> None:
        unreadable.append(Path(error.filename or folder))

    for root, dirs, files in os.walk(folder, onerror=note, followlinks=False):
        here = PurePosixPath(Path(root).relative_to(folder).as_posix())
        patterns = patterns + read_gitignore(Path(root), here)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIP_DIRS
            and (not d.startswith(".") or _workflows(here / d))
            and not ignored(patterns, here / d, is_dir=True)
        )
        found.extend(
            Path(root) / name
            for name in files
            if (Path(name).suffix.lower() in FORMATS or script_kind(name))
            and not ignored(patterns, here / name, is_dir=False)
        )
    return found, unreadable


def iter_files(paths: list[str], exclude: list[str] | None = None) -> Iterator[tuple[Path, str, bool]]:
    """(file, path as shown, named by the user) for every file to check, in a stable order.

    A sub-folder that cannot be read is yielded as if named, so the run reports it. A file
    named on the command line is always checked, as ruff does.
    """
    for given in paths:
        path = Path(given)
        if not os.path.isdir(path):  # False, not OSError, for a name too long
            yield path, given, True
            continue
        found, unreadable = walk(path, exclude)
        for file in sorted(found + unreadable):
            yield file, str(file), file in unreadable


def _workflows(folder: PurePosixPath) -> bool:
    """The one hidden folder searched: ``.github`` (its ``workflows`` hold launch commands)."""
    return folder.name == ".github"
