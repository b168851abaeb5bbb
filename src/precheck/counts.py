"""Whole numbers read from text a pull request controls: a device count, an index, a stage.

``str.isdigit()`` is true of ``"²"``, which ``int()`` refuses; ``str.isdecimal()`` of a
5,000-digit number, which ``int()`` refuses past Python's digit limit (3.11+), and of
``100000000``, a device count that would build a list of a hundred million devices. So
every such number is read by :func:`decimal`: decimal digits (as ``int()`` reads them,
full-width ones too), at most 18 of them, at most ``limit``; else None (not a number the
run can mean).
"""

from __future__ import annotations

#: more devices than any machine has (the most a device count, an index or a launch's
#: worker count may say)
MAX_DEVICES = 4096


def decimal(text: str, limit: int | None = None) -> int | None:
    """``text`` (blanks around it allowed) as a whole number, or None: not decimal digits,
    more than 18 of them, or over ``limit``."""
    text = text.strip()
    if not text.isdecimal() or len(text) > 18:
        return None
    value = int(text)
    return value if limit is None or value <= limit else None


__all__ = ["MAX_DEVICES", "decimal"]
