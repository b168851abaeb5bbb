"""The configs that name a file: a reverse-reference index, built only when it is needed.

pre-commit names only the staged files. When that is a DeepSpeed, FSDP or accelerate
file alone (``ds.json``), what it means depends on the config that names it (the YAML
whose ``deepspeed: ds.json`` runs it, with ``"auto"`` filled from that YAML's keys), and
the contradiction between the two is only seen with both. So the files of its repository
that could name it are searched, cheaply, once per run for every such file:

- in a git repository, the files are the ones its index tracks (:mod:`precheck.git_index`:
  one read of ``.git/index``, no process, no walk), filtered as a folder search filters
  (the formats precheck reads, no hidden or virtualenv folder, ``exclude``); elsewhere, or
  where the index cannot be read, a folder search lists them (``.gitignore`` honoured);
- each file's first :data:`SCAN_BYTES` are read in one ``read`` (never the rest) and searched
  for the bytes of the file names (``bytes.find``, one pass per name), before anything is
  parsed or a path resolved: only the few files whose text mentions a name are parsed and
  checked, and the engine keeps those whose references really lead to the file.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .bounded_read import read_head
from .discovery import SKIP_DIRS, walk
from .git_index import tracked
from .paths import resolved
from .script_files import SCRIPTS
from .sources import FORMATS

if TYPE_CHECKING:
    from .ignore_patterns import Pattern

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
        words = [os.fsencode(n) for n in sorted(names)]
        try:
            device = os.stat(root).st_dev
        except OSError:
            continue
        for name in _files(root, exclude)[:MAX_FILES]:
            if not _mentions(name, words, device):
                continue
            file = Path(name)
            if str(resolved(file)) not in skip:
                found.append((file, _shown(file)))
    return found


def _files(root: Path, exclude: list[str] | None) -> list[str]:
    """The files of the repository at ``root`` a folder search would read, in a stable order
    (as path strings: a ``Path`` per file of a large repository costs more than reading it):
    from the git index where there is one, else from a walk."""
    listed = tracked(root)
    if listed is None:
        files, _, _ = walk(root, exclude)
        return sorted(str(f) for f in files)
    patterns = None
    if exclude:
        from .ignore_patterns import compile_pattern

        patterns = [p for line in exclude if (p := compile_pattern(line, PurePosixPath("."), "--exclude")) is not None]
    base = str(root)
    out = []
    for raw in listed:
        if _wanted(raw):
            relative = os.fsdecode(raw)
            if not (patterns and _excluded(patterns, relative)):
                out.append(os.path.join(base, relative))
    return sorted(out)


#: the suffixes of the files a folder search reads (configs and scripts), as index bytes
_SUFFIXES = tuple(s.encode() for s in (*FORMATS, *(k for k in SCRIPTS if k.startswith("."))))
_NAMES = frozenset(k.encode() for k in SCRIPTS if not k.startswith("."))
_SKIP = frozenset(d.encode() for d in SKIP_DIRS)


def _wanted(relative: bytes) -> bool:
    """A file a folder search reads (a format precheck reads, as the walk tells them: by the
    last part's suffix, or its whole name), not in a hidden folder (but ``.github``) nor a
    virtualenv's; on the index's bytes, without decoding the paths it passes over."""
    slash = relative.rfind(b"/")
    name = relative[slash + 1 :].lower()
    if not ((name.endswith(_SUFFIXES) and 0 < name.rfind(b".") < len(name) - 1) or name in _NAMES):
        return False
    return slash < 0 or not any(f in _SKIP or (f[:1] == b"." and f != b".github") for f in relative[:slash].split(b"/"))


def _excluded(patterns: list[Pattern], relative: str) -> bool:
    from .ignore_patterns import ignored

    path = PurePosixPath(relative)
    # a pattern may name the file or any folder above it, as the walk would have passed it over
    folders = list(path.parents)[:-1]
    return any(ignored(patterns, f, is_dir=True) for f in reversed(folders)) or ignored(patterns, path, is_dir=False)


def _mentions(file: str, words: list[bytes], device: int) -> bool:
    """Whether the first :data:`SCAN_BYTES` of a regular file of the repository hold one of
    ``words`` (a FIFO, a device or a symlink named ``x.yaml`` is never read)."""
    try:
        head = read_head(file, SCAN_BYTES, device)
    except OSError:  # bounded_read.Refused too
        return False
    return any(word in head for word in words)
