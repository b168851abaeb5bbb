"""``--fix`` and ``--diff``: apply the findings' edits in the user's own files.

Each :class:`~precheck.rules.base.Edit` (set a key, add it, or remove it) becomes a
:class:`Replacement` of a span of the file's text: the value's characters when a value
changes, the key's lines when a key goes, new lines after the mapping's last entry when a
key is added. Nothing else in the file changes, byte for byte: comments, key order,
quoting, indentation, line endings, a UTF-8 byte-order mark. The spans come from the
files' own positions (PyYAML's composer marks for YAML, a position-keeping scan for JSON,
key lines for TOML and env files); no file is ever re-serialised.

Which fixes apply: a finding's fix is applied when its rule's ``fix_safety`` is ``safe``
(``unsafe`` ones with ``--unsafe-fixes``; ``manual`` ones never). An edit that cannot be
made without touching more than the value (an anchor or alias, a block scalar, a key that
shares its line with others, a mapping that would be left empty) is skipped and reported.
Two fixes that change the same span: the first wins; the next ``--fix`` run looks again.
After the edits the file must still parse, or none of that file's edits is written.

Writes are atomic: a temporary file in the same folder, flushed, then ``os.replace``d
over the original (whose permission bits it copies); on any failure the temporary file is
removed and the original is untouched.

The package: :mod:`.base` (the :class:`Editor` protocol: a document's text and one edit
in, replacements out), one editor per format (:mod:`.yaml`, :mod:`.json`, :mod:`.toml`,
:mod:`.env`; :mod:`.shell` refuses edits of scripts), :mod:`.editors` (format -> editor:
an edit carries its document's format), :mod:`.files` (read, plan, check, write) and
:mod:`.write` (the atomic write).
"""

from __future__ import annotations

from ..rules.base import Edit
from .base import Editor, FixError, Replacement, apply_replacements
from .editors import EDITORS, editor_for, format_from_path
from .files import FileChange, FixPlan, SourceFile, applicable, apply, plan_fixes, sarif_changes
from .write import repository_root, write_atomic


def plan(text: str, fmt: str, edit: Edit) -> list[Replacement]:
    """The replacements that make ``edit`` in ``text``, a document of format ``fmt``
    (raises :class:`FixError`)."""
    return editor_for(fmt).plan(text, edit)


__all__ = [
    "EDITORS",
    "Editor",
    "FileChange",
    "FixError",
    "FixPlan",
    "Replacement",
    "SourceFile",
    "applicable",
    "apply",
    "apply_replacements",
    "editor_for",
    "format_from_path",
    "plan",
    "plan_fixes",
    "repository_root",
    "sarif_changes",
    "write_atomic",
]
