"""The file a launch command starts (``python train.py``, ``torchrun -m pkg.train``), found as
the launcher would find it, and the repository files a script imports, without running anything."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..paths import within_checked

#: files that mark a repository's root (``python train.py`` run from there finds ``train.py``)
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt")


def resolve_script(name: str, module: bool, bases: list[Path]) -> Path | None:
    """The file a launcher starts, found as it would be: relative to the folder the shell
    script ``cd``-s to (else its own folder), then the repository's root (the closest folder
    above with ``.git``, ``pyproject.toml``, ``setup.py`` or ``requirements.txt``) and the
    current folder. ``-m pkg.train``: ``pkg/train.py`` or ``pkg/train/__main__.py``, also under
    ``src/``. None when no such file exists (the launch then runs elsewhere).

    Answered once per run for a name and folders (a script's launch lines, and the shell
    files of one folder, often start the same script)."""
    if not name or "$" in name:
        return None
    key = (name, module, tuple(map(str, bases)))  # as written: Windows paths compare ignoring case
    if key in _FOUND:
        return _FOUND[key]
    found = _resolve(name, module, bases)
    if len(_FOUND) >= 1024:
        _FOUND.clear()
    _FOUND[key] = found
    return found


#: (name, module, folders) → the file found (None: none)
_FOUND: dict[tuple[str, bool, tuple[str, ...]], Path | None] = {}


def _resolve(name: str, module: bool, bases: list[Path]) -> Path | None:
    relatives = [Path(name)]
    if module:
        dotted = Path(*name.split("."))
        relatives = [dotted.with_suffix(".py"), dotted / "__main__.py"]
        relatives += [Path("src") / r for r in relatives]
    folders = [*bases, *_roots(bases[-1] if bases else Path(".")), Path(".")]
    for folder in dict.fromkeys(folders):
        for relative in relatives:
            try:
                candidate = relative if relative.is_absolute() else folder / relative
                if candidate.is_file() and within_checked(candidate):  # outside: never shown
                    return candidate
            except (OSError, ValueError):
                continue
    return None


@lru_cache(maxsize=256)  # once per folder and run: every launch line of a folder asks (see clear)
def _roots(start: Path) -> tuple[Path, ...]:
    """Folders above ``start`` that look like a repository's root, closest first (at most 6 up)."""
    out: list[Path] = []
    folder = start
    for _ in range(6):
        try:
            listed = str(folder)
            if any(may_hold(listed, marker) and (folder / marker).exists() for marker in _ROOT_MARKERS):
                out.append(folder)
        except OSError:
            break
        if folder.parent == folder or folder == Path("."):
            break
        folder = folder.parent
    return tuple(out)


def module_file(importer: Path, module: str | None, level: int, root: Path | None) -> Path | None:
    """The repository file an import in ``importer`` names (``from X import``, ``import X``):
    beside the importer (or ``level`` folders up), else under the folders between it and
    ``root`` (:mod:`.script_schema` follows it)."""
    key = (importer.parent, module, level, root)
    candidates = _CANDIDATES.get(key)
    if candidates is None:
        if len(_CANDIDATES) >= 4096:
            _CANDIDATES.clear()
        candidates = _CANDIDATES[key] = _candidates(importer, module, level, root)
    for candidate in candidates:
        if _is_file(candidate):
            found = Path(candidate)
            if found != importer:
                return found
    return None


def _candidates(importer: Path, module: str | None, level: int, root: Path | None) -> tuple[str, ...]:
    """The files :func:`module_file` looks for, in order (the same for every module of a
    folder: asked once per run), as strings (a path object each took longer to build than
    looking the file up), less those whose first name under the folder the folder's listing
    lacks (:func:`may_hold`)."""
    parts = module.split(".") if module else []
    folder = importer.parent
    bases = _BASES.get((folder, level, root))
    if bases is None:
        if len(_BASES) >= 1024:
            _BASES.clear()
        bases = _BASES[(folder, level, root)] = _bases(folder, level, root)
    candidates: list[str] = []
    for base in bases:
        stem = os.path.join(base, *parts)
        if parts and may_hold(base, parts[0] + ".py" if len(parts) == 1 else parts[0]):
            candidates.append(stem + ".py")
        if may_hold(base, parts[0] if parts else "__init__.py"):
            candidates.append(os.path.join(stem, "__init__.py"))
    return tuple(candidates)


def _bases(folder: Path, level: int, root: Path | None) -> tuple[str, ...]:
    """The folders a module is looked for under from a module in ``folder``: ``level``
    folders up (a relative import), else it and up to three above, stopping at ``root``."""
    if level:
        base = folder
        for _ in range(level - 1):
            base = base.parent
        return (str(base),)
    bases = []
    for _ in range(4):
        bases.append(str(folder))
        if root is not None and folder == root:
            break
        if folder.parent == folder:
            break
        folder = folder.parent
    return tuple(bases)


def _is_file(path: str) -> bool:
    """``os.path.isfile(path)``, asked once per run: the modules of one folder import the same
    names (``torch``, ``transformers``), each looked for beside them and in the folders above."""
    known = _FILES.get(path)
    if known is None:
        known = os.path.isfile(path)
        if len(_FILES) >= 4096:
            _FILES.clear()
        _FILES[path] = known
    return known


_FILES: dict[str, bool] = {}
#: (importing folder, level, root) → the folders modules are looked for under
_BASES: dict[tuple[Path, int, Path | None], tuple[str, ...]] = {}
#: (importing folder, module, level, root) → the files looked for, in order
_CANDIDATES: dict[tuple[Path, str | None, int, Path | None], tuple[str, ...]] = {}


def may_hold(folder: str, name: str) -> bool:
    """Whether ``folder`` may have an entry ``name``; False only where looking it up could
    find nothing (``os.path.isfile`` and ``Path.exists`` would say False, raising nothing):
    answered from the folder's listing, read once per run, instead of a stat call per name.

    Only a folder whose path is short (no name under it can be too long), that can be searched
    (``folder/.`` can be looked up) and holds at most :data:`MAX_LISTED` entries, all ASCII, is
    listed; an ASCII name is looked up ignoring case, so a case-insensitive file system (which
    may match ``Utils.py`` to ``utils.py``, or ``\u212a`` to ``k``) is never answered No
    wrongly. Any other folder, or a name that is not ASCII, is always Maybe (stat decides)."""
    if folder in _LISTINGS:
        names = _LISTINGS[folder]
    else:
        names = _listing(folder)
        if len(_LISTINGS) >= 1024:
            _LISTINGS.clear()
        _LISTINGS[folder] = names
    return names is None or not name.isascii() or name.lower() in names


def _listing(folder: str) -> frozenset[str] | None:
    """The lower-cased names in ``folder``; None where :func:`may_hold` must not rely on it."""
    names: list[str] = []
    try:
        if len(os.fsencode(folder)) > MAX_FOLDER_BYTES:
            return None
        os.stat(os.path.join(folder, "."))  # searchable: a name under it is looked up, not refused
        with os.scandir(folder) as entries:
            for entry in entries:
                if len(names) >= MAX_LISTED or not entry.name.isascii():
                    return None
                names.append(entry.name.lower())
    except (OSError, ValueError):
        return None
    return frozenset(names)


#: a folder with more entries is not listed (its files are looked up one by one)
MAX_LISTED = 1024
#: a folder with a longer path (encoded) is not listed: a name under it might be too long to look up
MAX_FOLDER_BYTES = 200
#: folder → its lower-cased entries (None: not listed)
_LISTINGS: dict[str, frozenset[str] | None] = {}


def clear() -> None:
    """Forget the folders and files of earlier runs (a long-lived process)."""
    _roots.cache_clear()
    _FOUND.clear()
    _LISTINGS.clear()
    _FILES.clear()
    _CANDIDATES.clear()
    _BASES.clear()
