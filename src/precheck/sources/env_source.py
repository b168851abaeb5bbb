"""``config.env``: shell variable assignments (``export KEY=value``), as a framework's
launcher sources them (``. config/config.env`` in ``train.sh``).

Each assignment becomes a key of the top-level mapping, with its line and column. Values
are unquoted as the shell would (``shlex``); a value that refers to another variable
(``$BASE_DIR/models``) is expanded from the assignments above it, as ``sh`` does, and
left as written when the variable is not set in the file. Anything else (``if`` blocks,
commands) is not an assignment and is passed over.
"""

from __future__ import annotations

import re
import shlex

from ..errors import InputError
from .nodes import Document, Node, SourceNote

_ASSIGNMENT = re.compile(r"^(?P<indent>\s*)(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")
_REFERENCE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def _unquote(path: str, raw: str, line: int) -> str:
    try:
        words = shlex.split(raw, comments=True, posix=True)
    except ValueError as exc:
        raise InputError(path, f"cannot read the shell value ({exc})", line) from None
    return " ".join(words)


def parse_env(path: str, text: str) -> Document:
    root: dict[str, Node] = {}
    notes: list[SourceNote] = []
    seen: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _ASSIGNMENT.match(line)
        if match is None:
            continue
        key = match.group("key")
        column = len(match.group("indent")) + (line[len(match.group("indent")) :].find(key)) + 1
        raw = match.group("value").strip()
        value = _unquote(path, raw, number)
        if not raw.startswith("'"):
            value = _REFERENCE.sub(lambda m: seen.get(m.group(1) or m.group(2), m.group(0)), value)
        if key in root:
            first = root[key]
            notes.append(
                SourceNote(
                    "duplicate-key",
                    f"`{key}` is assigned again (first on line {first.line}); the shell keeps this one",
                    number,
                    column,
                    key,
                )
            )
        seen[key] = value
        value_column = column + len(key) + 1
        root[key] = Node(value, number, value_column, key, number, column, raw=raw, quoted=raw[:1] in ("'", '"'))
    return Document(path, "env", Node(root, 1, 1), text, notes)
