"""Writing a fixed file: atomically, keeping its owner, mode and links, inside the repository."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from ..bounded_read import Refused
from ..paths import within_checked


def repository_root(path: str | Path) -> Path:
    """The folder ``--fix`` may write in for ``path``: the nearest folder above it (as
    written, links not followed, none a link itself) that holds ``.git``, else its own folder."""
    start = Path(os.path.abspath(path)).parent
    for folder in (start, *start.parents):
        if not os.path.islink(folder) and (folder / ".git").exists():  # not a link to a sibling checkout
            return folder.resolve()
    return start.resolve()


def write_atomic(path: str | Path, data: bytes) -> None:
    """Replace the file's content at once: a temporary file beside it, then ``os.replace``.

    Only a regular file is written, and only inside the repository (:func:`repository_root`
    of the path as written) and the folders the run checks
    (:func:`precheck.paths.within_checked`), links resolved: not through a link (of the file
    or of a folder above it) to a sibling checkout, nor ``../shared/ds.json`` a config names.
    A symlink's target inside is rewritten (the link stays); a file with several hard links
    is refused (replacing it would split the link), as is a read-only one (its mode says
    not to write it; replacing it by rename would ignore that); the file keeps its mode, and
    its owner and group (a file another user owns is refused when they cannot be kept).
    Raises ``OSError`` (a :class:`Refused` with the reason for what it will not write).
    """
    root = repository_root(path)
    target = Path(path).resolve()
    if (target != root and root not in target.parents) or not within_checked(target):
        raise Refused(f"is {target}, outside the repository checked ({root}): not rewritten")
    info = target.stat()
    if not stat.S_ISREG(info.st_mode):
        raise Refused("not a regular file: not rewritten")
    if not info.st_mode & stat.S_IWUSR:
        raise Refused("is read-only: not rewritten")
    if info.st_nlink > 1:
        raise Refused(f"has {info.st_nlink} hard links: replacing it would split them; fix it by hand")
    mode = stat.S_IMODE(info.st_mode)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".precheck", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        made = os.stat(temporary)
        if (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:
                raise Refused("belongs to another user: rewriting it would change its owner") from None
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
