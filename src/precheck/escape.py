"""Text from untrusted files made safe to print: one helper every output format uses.

Keys, values, file names and GPU names come from files a pull request controls (or from
``nvidia-smi``). Printed raw, an ESC sequence clears the screen or sets the window title,
a carriage return or newline forges a line of ``concise`` output, and a lone surrogate
(``"\\udc00"`` in JSON, a file name that is not UTF-8) makes printing fail. So:

- :func:`printable` writes control characters (C0 but tab, DEL, C1), the bidirectional
  overrides that reorder what a reader sees, and lone surrogates as ``\\xNN`` / ``\\uNNNN``
  escapes; everything else passes unchanged;
- :func:`shorten` cuts a quoted value to a bound (a 500 KB key quoted 20,000 times must not
  take gigabytes);
- :func:`safe_output` is the output boundary: every byte precheck writes to stdout or stderr
  passes it (:func:`install` wraps both streams when the process starts, so every format,
  ``explain``, ``--diff``, ``--fix``'s lines, warnings and error messages, and whatever
  formats are added later). It escapes what :func:`printable` escapes but newlines, tabs and
  precheck's own colour codes (SGR, ``ESC [ digits m``), and neutralises a line that starts
  (after blanks) with ``::`` or ``##[``: GitHub Actions reads such a line of stdout or stderr
  as a workflow command (``::warning``, ``::add-mask``, ``::stop-commands``), and a pull
  request controls file names, keys and values. Its first character is written ``\x3a`` /
  ``\x23``. Only ``--format github`` writes workflow commands, inside
  :func:`workflow_commands`, and escapes their data itself (``report/github.py``).

A newline inside one value still has to be escaped where the value is put in a line
(:func:`printable`): the boundary sees whole lines, not where a value starts.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TextIO

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


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_safe(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with lone surrogates, DEL, C1
    controls and bidi overrides written as ``\\uNNNN`` escapes: json.dumps leaves them raw,
    and they can only sit inside strings, where the escape means the same."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: a control character but newline and tab, or one of precheck's colour codes (kept)
_OUTPUT_UNSAFE = re.compile(
    "\x1b\\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
#: a line GitHub Actions reads as a workflow command (the runner trims leading blanks)
_COMMAND = re.compile(r"^([ \t]*)(::|##\[)", re.MULTILINE)
_commands_allowed = False


def _output_escape(match: re.Match[str]) -> str:
    text = match.group()
    return text if len(text) > 1 else _escape(match)


def _neutralise(match: re.Match[str]) -> str:
    mark = match.group(2)
    return f"{match.group(1)}\\x{ord(mark[0]):02x}{mark[1:]}"


def safe_output(text: str) -> str:
    """``text`` as precheck writes it to a stream: controls but newline, tab and colour codes
    escaped, and no line a CI runner reads as a workflow command."""
    if _OUTPUT_UNSAFE.search(text):
        text = _OUTPUT_UNSAFE.sub(_output_escape, text)
    if not _commands_allowed and ("::" in text or "##[" in text):
        text = _COMMAND.sub(_neutralise, text)
    return text


@contextlib.contextmanager
def workflow_commands() -> Iterator[None]:
    """Within: lines starting ``::`` pass (``--format github``, whose data is escaped)."""
    global _commands_allowed
    before, _commands_allowed = _commands_allowed, True
    try:
        yield
    finally:
        _commands_allowed = before


class SafeStream:
    """A text stream whose every write passes :func:`safe_output` (the rest is the stream's).

    A write is escaped whole; a workflow command split over two writes (``print("::", end="")``)
    is caught too: a write that does not end a line is held until one does."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._held = ""

    def write(self, text: str) -> int:
        if self._held:
            text, self._held = self._held + text, ""
        cut = text.rfind("\n") + 1
        if cut < len(text):  # a partial last line: held (a prompt or progress has none)
            text, self._held = text[:cut], text[cut:]
        if text:
            self._stream.write(safe_output(text))
        return len(text) + len(self._held)

    def flush(self) -> None:
        if self._held:
            held, self._held = self._held, ""
            self._stream.write(safe_output(held))
        self._stream.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def install() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`SafeStream` (once)."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, SafeStream):
            setattr(sys, name, SafeStream(stream))


__all__ = [
    "QUOTE_LIMIT",
    "SafeStream",
    "install",
    "json_safe",
    "printable",
    "safe_output",
    "shorten",
    "workflow_commands",
]
