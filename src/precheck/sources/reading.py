"""Reading one file into a document: its bytes (bounded), its text (decoded), its parse.

The readers of scripts and launch lines read the files they follow through here, never
through the package (:mod:`precheck.sources` imports them lazily: they must not import it).
"""

from __future__ import annotations

from pathlib import Path

from ..bounded_read import Refused, TooLarge, read_bytes
from ..errors import FileTooLarge, InputError
from .interpolation import mark as mark_interpolations
from .json_source import parse_json
from .nodes import Document, position
from .suppressions import scan as scan_suppressions
from .yaml_source import parse_yaml

#: file suffix -> format
FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml", ".env": "env"}


def decode(path: str, data: bytes) -> str:
    """Text from bytes: UTF-8 (with or without BOM) or UTF-16 with a BOM."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError(path, "cannot decode as UTF-16") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", line, column) from None


def _binary(path: str, text: str, what: str) -> InputError:
    """A file with NUL bytes, pointed at the first one (UTF-16 without a BOM reads so too)."""
    line, column = position(text, text.index("\x00"))
    return InputError(path, f"binary file (contains NUL bytes), not {what}", line, column)


def parse(path: str, text: str, fmt: str) -> Document:
    if "\x00" in text:
        raise _binary(path, text, "a config")
    if fmt == "json":
        document = parse_json(path, text)
        mark_interpolations(document)  # ``${oc.env:X,bf16}``, ``${{ ... }}``: values left to run time
        return document
    if fmt == "toml":
        from .toml_source import parse_toml  # lazily, as the rarer formats

        document = parse_toml(path, text)
    elif fmt == "env":
        from .env_source import parse_env

        document = parse_env(path, text)
    else:
        document = parse_yaml(path, text)
    if fmt != "env":
        mark_interpolations(document)
    # ``# precheck: ignore[...]`` comments (see precheck.suppression)
    document.notes.extend(scan_suppressions(text, fmt))
    return document


def load(path: str | Path, display: str | None = None) -> Document:
    """Read and parse one file; ``display`` is the path as the user gave it."""
    shown = display if display is not None else str(path)
    file = Path(path)
    fmt = FORMATS.get(file.suffix.lower(), "yaml")
    return parse(shown, read_text(file, shown), fmt)


#: texts given for a path instead of its file (``precheck --stdin-filename NAME -``)
STDIN: dict[str, str] = {}


def read_text(file: Path, shown: str) -> str:
    """A file's text, refusing what is not a regular file or is too large to be a config
    (:mod:`precheck.bounded_read`: opened without blocking, checked after opening)."""
    if STDIN and str(file) in STDIN:
        return STDIN[str(file)]
    try:
        data = read_bytes(file)
    except TooLarge as exc:
        raise FileTooLarge(shown, exc.message) from None
    except Refused as exc:
        raise InputError(shown, exc.message) from None
    except FileNotFoundError:
        raise InputError(shown, "no such file") from None
    except IsADirectoryError:
        raise InputError(shown, "is a directory") from None
    except OSError as exc:
        raise InputError(shown, f"cannot read: {exc.strerror or exc}") from None
    return decode(shown, data)
