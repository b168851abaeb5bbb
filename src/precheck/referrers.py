"""The configs that name a file: a reverse-reference index, built only when it is needed.

pre-commit names only the staged files. When that is a DeepSpeed, FSDP or accelerate
file alone (``ds.json``), what it means depends on the config that names it (the YAML
whose ``deepspeed: ds.json`` runs it, with ``"auto"`` filled from that YAML's keys), and
the contradiction between the two is only seen with both. So the files of its repository
are searched as a folder search would (the same ``.gitignore`` and ``exclude`` rules), and
each one's raw bytes are scanned for the file's name before anything is parsed: only the
few files whose text mentions it are parsed and checked, and the engine keeps those whose
references really lead to the file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .bounded_read import read_bytes
from .discovery import walk
from .paths import resolved

#: dialects of files that other configs name rather than run on their own
NAMED_DIALECTS = frozenset({"deepspeed", "fsdp", "accelerate"})
#: a config that names another file does it near its top; larger files are scanned this far
SCAN_BYTES = 1024 * 1024
#: files scanned at most per repository (a monorepo of datasets is not searched to the end)
MAX_FILES = 50_000
_MAX_PARENTS = 32


def repository(path: Path) -> Path:
    """The root of the git repository holding ``path``, else the folder it is in."""
    folder = path.resolve().parent
    for parent in [folder, *folder.parents][:_MAX_PARENTS]:
        if (parent / ".git").exists():
            return parent
    return folder


def _shown(path: Path) -> str:
    """The path as findings show it: relative to the current folder where it is below it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except (OSError, ValueError):
        return str(path)


def candidates(targets: list[Path], skip: set[str], exclude: list[str] | None = None) -> list[tuple[Path, str]]:
    """(file, path as shown) for the files of the targets' repositories whose text mentions
    a target's file name, in a stable order; ``skip`` holds resolved paths already checked."""
    by_root: dict[Path, set[str]] = {}
    for target in targets:
        by_root.setdefault(repository(target), set()).add(target.name)
    found: list[tuple[Path, str]] = []
    for root, names in sorted(by_root.items()):
        pattern = re.compile(b"|".join(re.escape(os.fsencode(n)) for n in sorted(names)))
        files, _, _ = walk(root, exclude)
        for file in sorted(files)[:MAX_FILES]:
            if str(resolved(file)) in skip or not _mentions(file, pattern):
                continue
            found.append((file, _shown(file)))
    return found


def _mentions(file: Path, pattern: re.Pattern[bytes]) -> bool:
    """Whether the first :data:`SCAN_BYTES` of a regular file hold the pattern (a FIFO or a
    device named ``x.yaml`` is never opened: reading it could block)."""
    try:
        if file.is_symlink():
            return False
        return pattern.search(read_bytes(file)[:SCAN_BYTES]) is not None
    except OSError:  # bounded_read.Refused / TooLarge too
        return False
