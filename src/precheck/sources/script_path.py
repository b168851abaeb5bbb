"""The file a launch command starts (``python train.py``, ``torchrun -m pkg.train``), found as
the launcher would find it, the files a run names (``--deepspeed ./scripts/zero3.json``,
``deepspeed: ds_z3.json``), and the repository files a script imports, without running anything.

A relative path is opened from the folder the launch runs in, and a launch script is run from
the repository's root in almost every README (``bash scripts/train.sh``). So a path is tried
against (:func:`search_folders`), in order:

1. the folder the shell script ``cd``-s to, when it does;
2. the repository root: the closest folder above with ``.git``; without git, the closest folders
   above with a project file (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``requirements.txt``);
3. the naming file's own folder;
4. the folders between it and the root (``cd train && bash scripts/run.sh``), closest first;
   with no root, up to six folders above it (which holds the folder precheck was given).

Never the current folder: a report does not change with where precheck runs. A path that no
candidate holds is missing (PC904); one found says where (:func:`find_file`'s reason)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..paths import within_checked

#: files that mark a repository's root (``python train.py`` run from there finds ``train.py``)
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt")


def resolve_script(name: str, module: bool, bases: list[Path]) -> Path | None:
    """The file a launcher starts, found as it would be (``bases``: the folder the shell script
    ``cd``-s to, if it does, then its own folder), in the folders :func:`search_folders` lists.
    ``-m pkg.train``: ``pkg/train.py`` or ``pkg/train/__main__.py``, also under ``src/``. None
    when no such file exists (the launch then runs elsewhere).

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
    own = bases[-1] if bases else Path(".")
    folders = [folder for folder, _ in search_folders(own, bases[0] if len(bases) > 1 else None)]
    for folder in folders:
        for relative in relatives:
            try:
                candidate = relative if relative.is_absolute() else folder / relative
                if candidate.is_file() and within_checked(candidate):  # outside: never shown
                    return candidate
            except (OSError, ValueError):
                continue
    return None


#: the reasons :func:`search_folders` gives
CD_FOLDER = "the folder the script `cd`-s to"
REPOSITORY_ROOT = "the repository root"
OWN_FOLDER = "the naming file's folder"
FOLDER_ABOVE = "a folder above the naming file"


def search_folders(folder: Path, cd: Path | None = None) -> list[tuple[Path, str]]:
    """The folders a relative path named in a file in ``folder`` is looked for in, in order,
    each with its reason (the module's docstring); ``cd``: where the script ``cd``-s to."""
    roots, above = _search(folder)
    out = [(cd, CD_FOLDER)] if cd is not None else []
    out += [(root, REPOSITORY_ROOT) for root in roots]
    out.append((folder, OWN_FOLDER))
    out += [(f, FOLDER_ABOVE) for f in above]
    seen: set[Path] = set()
    kept = []
    for candidate, why in out:
        if candidate not in seen:
            seen.add(candidate)
            kept.append((candidate, why))
    return kept


@lru_cache(maxsize=256)
def _search(folder: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(the repository roots above ``folder``, the folders from its parent up to the outermost
    root), once per folder and run."""
    git = _git_root(folder)
    roots = (git,) if git is not None else _roots(folder)
    top = git if git is not None else (roots[-1] if roots else None)
    above: list[Path] = []
    for current in _ancestors(folder, 32 if top is not None else _MAX_ABOVE):
        if current == top:
            break
        above.append(current)
    return roots, tuple(above)


@lru_cache(maxsize=1024)
def _parent(folder: Path) -> Path | None:
    """The folder above ``folder``, written as it is (a relative folder's parents are relative:
    ``../x`` → ``..`` → ``../..``); None at the file system's root."""
    absolute = os.path.abspath(folder)
    if os.path.dirname(absolute) == absolute:
        return None
    return folder / ".." if folder.name in ("", "..") else folder.parent


def _ancestors(folder: Path, limit: int) -> list[Path]:
    """``folder`` and the folders above it, closest first (``limit`` in all)."""
    out = [folder]
    parent = _parent(folder)
    while parent is not None and len(out) < limit:
        out.append(parent)
        parent = _parent(parent)
    return out


@lru_cache(maxsize=1024)
def _git_root(folder: Path) -> Path | None:
    """The closest folder at or above ``folder`` with ``.git`` (a folder's answer is its
    parent's unless it has one: asked once per folder and run)."""
    try:
        if may_hold(str(folder), ".git") and (folder / ".git").exists():
            return folder
    except OSError:
        return None
    parent = _parent(folder)
    return _git_root(parent) if parent is not None else None


#: folders above the naming file tried when no repository root bounds them
_MAX_ABOVE = 6


def find_file(value: str, folder: Path, cd: Path | None = None, *, folders: bool = False) -> tuple[Path, str] | None:
    """The file a relative (or absolute, or ``~``) path names, and which folder it was found
    relative to (:func:`search_folders`); None when no candidate is a file (``folders``: or a
    folder, as a local model's is)."""
    exists = Path.exists if folders else Path.is_file
    try:
        given = Path(value).expanduser()
        if given.is_absolute():
            return (given, "an absolute path") if exists(given) else None
        first = given.parts[0] if given.parts else ""
        for base, why in search_folders(folder, cd):
            if first not in ("", ".", "..") and not may_hold(str(base), first):
                continue  # the folder's listing has no such name: no stat call
            candidate = base / given
            if exists(candidate):
                return candidate, f"relative to {why}" + ("" if why == OWN_FOLDER else f" ({base})")
    except (OSError, ValueError, RuntimeError):  # a name too long, a NUL, ``~nosuchuser``: names no file
        return None
    return None


def searched(folder: Path, cd: Path | None = None) -> str:
    """Where :func:`find_file` looked, for a message (the folders above the naming file as one)."""
    folders = search_folders(folder, cd)
    named = [f"{why} ({base})" for base, why in folders if why != FOLDER_ABOVE]
    if any(why == FOLDER_ABOVE for _, why in folders):
        roots = any(why == REPOSITORY_ROOT for _, why in folders)
        named[-1] += " and the folders above it" + (" up to the repository root" if roots else "")
    return ", ".join(named)


@lru_cache(maxsize=256)  # once per folder and run: every launch line of a folder asks (see clear)
def _roots(start: Path) -> tuple[Path, ...]:
    """Folders above ``start`` that look like a repository's root, closest first (at most 6 up)."""
    out: list[Path] = []
    for folder in _ancestors(start, 6):
        try:
            listed = str(folder)
            if any(may_hold(listed, marker) and (folder / marker).exists() for marker in _ROOT_MARKERS):
                out.append(folder)
        except OSError:
            break
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
    _search.cache_clear()
    _parent.cache_clear()
    _git_root.cache_clear()
    _FOUND.clear()
    _LISTINGS.clear()
    _FILES.clear()
    _CANDIDATES.clear()
    _BASES.clear()
