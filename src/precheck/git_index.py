"""The files a git repository tracks, read from its index (``.git/index``) without running git.

A pre-commit hook that stages one DeepSpeed file makes precheck look for the configs that
name it (:mod:`precheck.referrers`); listing the repository from its index costs one read
of one file, where walking the work tree costs a ``scandir`` per folder and a ``.gitignore``
per level (and ``git ls-files`` a process). The index format (git's
``Documentation/gitformat-index.txt``): a 12-byte header (``DIRC``, version 2, 3 or 4, the
entry count), then per entry 40 bytes of stat data (``mode`` at offset 24), the 20-byte
object name, 16 bits of flags (the name's length in the low 12; in version 3 and later an
``extended`` bit adds 16 bits more), and the path: NUL-padded to a multiple of 8 bytes in
versions 2 and 3, prefix-compressed in version 4 (a varint of bytes to drop from the
previous path, then the rest up to a NUL). Then extensions (4-byte signature, 4-byte size).

Anything this reader does not know answers None, and the caller walks the folder instead:
another version, a split index (``link``) or a sparse one (``sdir``, or a directory entry),
a truncated file, a ``.git`` file (a worktree or submodule: the index is elsewhere).
"""

from __future__ import annotations

import struct
from pathlib import Path

from .bounded_read import read_bytes

#: an index larger than this is not read (a repository of a million files): walk instead
MAX_INDEX = 64 * 1024 * 1024
_REGULAR = (0o100644, 0o100755)


def tracked(root: Path) -> list[bytes] | None:
    """The paths (relative, ``/``-separated bytes, in index order) of the regular files the
    index of the repository at ``root`` holds; None where it cannot be read here."""
    index = root / ".git" / "index"
    try:
        if not (root / ".git").is_dir():
            return None
        data = read_bytes(index, MAX_INDEX)
    except OSError:
        return None
    try:
        return _entries(data)
    except (struct.error, IndexError, ValueError):
        return None


def _entries(data: bytes) -> list[bytes] | None:
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        return None
    out: list[bytes] = []
    offset = 12
    previous = b""
    for _ in range(count):
        mode = struct.unpack_from(">I", data, offset + 24)[0]
        flags = struct.unpack_from(">H", data, offset + 60)[0]
        start = offset + 62
        if version >= 3 and flags & 0x4000:
            start += 2
        if version == 4:
            drop, start = _varint(data, start)
            end = data.index(b"\0", start)
            if drop > len(previous):
                return None
            path = previous[: len(previous) - drop] + data[start:end]
            offset = end + 1
        else:
            end = data.index(b"\0", start)
            path = data[start:end]
            offset += ((end - offset) + 8) & ~7  # the entry, padded with 1 to 8 NULs
        previous = path
        if mode == 0o040000:  # a sparse index's folder entry: not every file is listed
            return None
        if mode in _REGULAR and (flags >> 12) & 3 in (0, 2):  # stage 0, or "ours" in a conflict
            out.append(path)
    while offset + 8 <= len(data) - 20:  # extensions, then the checksum
        signature = data[offset : offset + 4]
        if signature in (b"link", b"sdir"):
            return None
        size = struct.unpack_from(">I", data, offset + 4)[0]
        offset += 8 + size
    return list(dict.fromkeys(out))


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    """git's offset varint (``varint.c``): the value and the offset after it."""
    byte = data[offset]
    offset += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[offset]
        offset += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, offset


__all__ = ["MAX_INDEX", "tracked"]
