"""The one way precheck reads a file from the repository: regular files only, bounded.

Every file under check is untrusted input (a pull request adds it). A FIFO or a
character device (``requirements.txt -> /dev/zero``) would hang the run or fill its
memory, and files under ``/proc`` and ``/sys`` claim a size of 0 and then block
(``/proc/kmsg``) or never end. So a file is opened with ``O_NONBLOCK`` (opening a FIFO
does not wait for a writer), checked with ``fstat`` *after* opening (no swap between
check and use), refused unless it is a regular file outside the kernel's pseudo file
systems, and read up to a size limit (more than that is refused, not truncated).

Side files (pins, lock files, ignore files, the project configuration, hardware files,
installed packages' ``METADATA``) go through the same reader and the same limit as the
configs themselves.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .paths import real

#: files larger than this are refused with a clear message rather than read: the largest
#: real config is tens of kilobytes. What a file within it may cost to read is bounded by
#: the value budget (``sources.nodes.MAX_VALUES``): 16 MiB of ``[1,1,...]`` is 8 million values
MAX_BYTES = 16 * 1024 * 1024

#: pseudo file systems whose files lie about their size or block on read
_PSEUDO = ("/proc", "/sys", "/dev")


class Refused(OSError):
    """A file precheck will not read: not a regular file, a kernel pseudo file, too large.

    An :class:`OSError`, so readers of side files that treat an unreadable file as
    "no evidence" treat a refused one the same way."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class TooLarge(Refused):
    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"file is {describe_size(size)}, over the {describe_size(limit)} limit")
        self.size = size
        self.limit = limit


def describe_size(size: int) -> str:
    """``16 MiB``, ``16.95 MiB``, ``512 KiB``, or bytes: a size over a limit never reads
    as equal to it."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale:
            if size % scale == 0:
                return f"{size // scale} {unit}"
            shown = f"{size / scale:.2f}"
            if shown.endswith(".00"):  # 16.00 MiB: too close to the whole number to tell
                return f"{size} bytes"
            return f"{shown} {unit}"
    return f"{size} bytes"


def _pseudo(path: str) -> bool:
    try:
        target = real(path)
    except (OSError, ValueError):
        return False
    return any(target == root or target.startswith(root + "/") for root in _PSEUDO)


#: opened for reading, never blocking on a FIFO, never becoming a terminal's controller
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_regular(path: str | Path) -> tuple[int, os.stat_result]:
    """An open handle on a regular file and its ``fstat``, checked after opening (a kernel or
    device file, a pipe, a socket: :class:`Refused`; a folder: ``IsADirectoryError``)."""
    text = os.fspath(path)
    if _pseudo(text):
        raise Refused("a kernel or device file, not a config; not read")
    handle = os.open(text, _FLAGS)
    try:
        info = os.fstat(handle)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "is a directory", text)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file (a pipe, socket or device); not read")
    except BaseException:
        os.close(handle)
        raise
    return handle, info


def read_bytes(path: str | Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises :class:`TooLarge` or :class:`Refused` (both ``OSError``) for what it will not
    read, and ``OSError`` (``FileNotFoundError``, ``IsADirectoryError``...) for what it cannot.
    """
    handle, info = _open_regular(path)
    try:
        if info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        chunks: list[bytes] = []
        total = 0
        while True:  # a file that grows while read is cut off at the limit, not followed
            chunk = os.read(handle, min(1024 * 1024, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TooLarge(total, limit)
        return b"".join(chunks)
    finally:
        os.close(handle)


def read_head(path: str, size: int, device: int) -> bytes:
    """The first ``size`` bytes of a regular file on the filesystem ``device`` (a folder's
    ``st_dev``), for a search that only looks for a word: opened without following a symlink
    (``O_NOFOLLOW``) and without blocking, checked with ``fstat`` (a file on another
    filesystem, such as ``/proc`` or ``/sys`` behind a replaced folder, is refused); one
    ``read``, never the rest. Raises ``OSError`` (:class:`Refused` included)."""
    handle = os.open(path, _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_dev != device:
            raise Refused("not a regular file of the repository; not read")
        return os.read(handle, size)
    finally:
        os.close(handle)


def read_ends(path: str | Path, size: int) -> bytes:
    """The first and the last ``size`` bytes of a regular file of any size (a sample of a
    file too large to read: a config may hide behind megabytes of comment); raises as
    :func:`read_bytes` does for what is no regular file."""
    handle, info = _open_regular(path)
    try:
        head = os.read(handle, size)
        if info.st_size <= 2 * size:
            return head + os.read(handle, size)
        os.lseek(handle, info.st_size - size, os.SEEK_SET)
        return head + b"\n" + os.read(handle, size)
    finally:
        os.close(handle)


def read_text(path: str | Path, limit: int = MAX_BYTES, errors: str = "replace") -> str:
    """A side file's text (UTF-8, BOM dropped); see :func:`read_bytes` for what it raises."""
    return read_bytes(path, limit).decode("utf-8-sig", errors=errors)


__all__ = ["MAX_BYTES", "Refused", "TooLarge", "describe_size", "read_bytes", "read_ends", "read_head", "read_text"]
