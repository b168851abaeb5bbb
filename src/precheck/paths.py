"""Resolved paths, cached for one run: many configs share a folder, and resolving a path
costs a system call per component."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=4096)  # several asks per file checked (a large repository's files fit)
def resolved(path: str | Path) -> Path:
    """``Path(path).resolve()``, its folder part resolved once per run."""
    text = os.fspath(path)
    try:
        split = _folder_and_name(text)
        if split is None:
            return Path(text).resolve()
        return _resolved_folder(split[0]) / split[1]
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError up to Python 3.12): reading it tells
        return Path(os.path.abspath(text))


@lru_cache(maxsize=4096)
def _resolved_folder(folder: str) -> Path:
    return Path(folder or ".").resolve()


def real(path: str) -> str:
    """``os.path.realpath(path)``, its folder part resolved once per run: a system call for
    the name (is it a link?) instead of one per component."""
    split = _folder_and_name(path)
    if split is None:
        return os.path.realpath(path)
    return os.path.join(_real_folder(split[0]), split[1])


def _folder_and_name(text: str) -> tuple[str, str] | None:
    """(folder, name) of a path whose last part is a plain name, not a link: it resolves to
    its folder's resolution joined with the name (one ``lstat``); None when the whole path
    must be resolved."""
    head, name = os.path.split(text)
    if not name or name in (".", "..") or os.path.islink(text):
        return None
    return head, name


@lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def working_folder() -> Path:
    """The resolved current folder."""
    return _resolved_folder(os.getcwd())


#: the folders a run checks (:func:`check_within`): each named path's repository
_CHECKED: list[Path] = []


def check_within(names: list[str]) -> None:
    """Set the folders this run checks: for each path named on the command line, the
    repository holding it (the closest folder above it, as written, with ``.git``), else the
    current folder when it is inside that, else the folder named (a file's own folder); the
    current folder when none is named."""
    roots = []
    here = working_folder()
    for name in names or ["."]:
        if name.startswith("<"):  # ``<command line>``, ``<stdin>``: the current folder
            name = "."
        start = Path(os.path.abspath(name))
        if not os.path.isdir(start):  # False for a name too long
            start = start.parent
        root = _repository(start) or _resolved_folder(str(start))
        # no repository: a launch runs from the current folder, which configs name files from
        roots.append(here if root == here or here in root.parents else root)
    _CHECKED[:] = dict.fromkeys(roots)


@lru_cache(maxsize=256)
def _repository(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        # a folder that is a link (to a sibling checkout) is no repository of what is below it
        if not os.path.islink(folder) and (folder / ".git").exists():
            return _resolved_folder(str(folder))
    return None


def within_checked(path: str | Path) -> bool:
    """Whether ``path``, links resolved, lies inside a folder this run checks
    (:func:`check_within`; the current folder's repository, or the current folder, when
    unset). The one boundary for content precheck may print: a file a config names, a
    script a launch line starts, a code frame, a file ``--fix`` writes. A config can name
    ``~/.aws/credentials`` or link ``ds.json`` there; read, its lines would be printed in a
    public CI log."""
    if not _CHECKED:  # no run set them: a library call on files it was given
        return True
    target = resolved(path)
    return any(target == root or root in target.parents for root in _CHECKED)


def check_anywhere() -> None:
    """Forget the folders checked (:func:`within_checked` is then true of any path)."""
    _CHECKED.clear()


def clear() -> None:
    """Forget earlier runs' answers (a long-lived process: links and folders change)."""
    resolved.cache_clear()
    _resolved_folder.cache_clear()
    _real_folder.cache_clear()
    _repository.cache_clear()  # the folders checked stay (check_within sets them for each run)
