"""Text from untrusted files made safe to print: one helper every output format uses.

Keys, values, file names and GPU names come from files a pull request controls (or from
``nvidia-smi``). Printed raw, an ESC sequence clears the screen or sets the window title,
a carriage return or newline forges a line of ``concise`` output, and a lone surrogate
(``"\\udc00"`` in JSON, a file name that is not UTF-8) makes printing fail. So:

- :func:`printable` writes control characters (C0 but tab, DEL, C1), the bidirectional
  overrides that reorder what a reader sees, and lone surrogates as ``\\xNN`` / ``\\uNNNN``
  escapes; everything else passes unchanged;
- :func:`shorten` cuts a quoted value to a bound (a 500 KB key quoted 20,000 times must not
  take gigabytes).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

#: the most characters of a key or value quoted in a message
QUOTE_LIMIT = 80


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters, bidi overrides and lone surrogates escaped."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (``…`` and the count of the rest marks the cut)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def json_safe(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with lone surrogates written as
    ``\\uNNNN`` escapes: they can only sit inside strings, where the escape means the same."""
    return re.sub("[\ud800-\udfff]", _escape, text)


__all__ = ["QUOTE_LIMIT", "json_safe", "printable", "shorten"]
