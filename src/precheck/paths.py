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


def clear() -> None:
    """Forget earlier runs' answers (a long-lived process: links and folders change)."""
    resolved.cache_clear()
    _resolved_folder.cache_clear()
    _real_folder.cache_clear()
