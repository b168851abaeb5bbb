"""Stage 1 of the pipeline: read files into plain data with positions."""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..bounded_read import MAX_BYTES, Refused, TooLarge, read_bytes
from ..errors import FileTooLarge, InputError
from ..script_files import SCRIPTS, script_kind
from .interpolation import mark as mark_interpolations
from .json_source import parse_json
from .nodes import Document, Node, SourceNote, position
from .suppressions import scan as scan_suppressions
from .workflow_source import is_workflow, parse_workflow
from .yaml_source import parse_yaml

if TYPE_CHECKING:
    from ..hardware import Hardware

__all__ = [
    "FORMATS",
    "MAX_BYTES",
    "SCRIPTS",
    "Document",
    "Node",
    "SourceNote",
    "clear_caches",
    "load",
    "load_runs",
    "parse",
    "script_kind",
]

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
        mark_interpolations(document)
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
        mark_interpolations(document)  # ``${oc.env:X,bf16}``, ``${{ ... }}``: values left to run time
    # ``# precheck: ignore[...]`` comments (see precheck.suppression)
    document.notes.extend(scan_suppressions(text, fmt))
    return document


def load(path: str | Path, display: str | None = None) -> Document:
    """Read and parse one file; ``display`` is the path as the user gave it."""
    shown = display if display is not None else str(path)
    file = Path(path)
    fmt = FORMATS.get(file.suffix.lower(), "yaml")
    return parse(shown, read_text(file, shown), fmt)


def load_runs(path: str | Path, display: str | None = None, hardware: Hardware | None = None) -> list[Document]:
    """The runs one file configures: one document for a config file; for a script, one
    per launch command or training call it holds (none when it holds none).

    ``hardware`` is the target the run will get: code that asks the runtime
    (``is_bfloat16_supported()``) is read as it would answer there."""
    kind = script_kind(path)
    if kind is None:
        document = load(path, display)
        if document.format == "yaml" and is_workflow(document.path):
            # a GitHub Actions workflow: the launch commands of its steps
            return parse_workflow(document.path, document.text)
        return [document]
    shown = display if display is not None else str(path)
    text = read_text(Path(path), shown)
    if "\x00" in text:
        raise _binary(shown, text, "a script")
    if kind in ("shell", "makefile"):
        from .shell_source import parse_script

        with _paused_collection():
            return parse_script(shown, text, kind)
    from .python_source import parse_code

    runs = parse_code(shown, text, kind, hardware)
    if kind == "notebook" and re.search(r"[!%]", text):
        from .notebook_commands import command_runs  # `!torchrun ...`, `%%bash` cells, `%run train.py`

        runs += command_runs(shown, text)
    return runs


#: texts given for a path instead of its file (``precheck --stdin-filename NAME -``)
STDIN: dict[str, str] = {}


@contextmanager
def _paused_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while a reader builds many small objects that all
    live until it returns: its full passes over them are most of the time of a large script
    (a 5 MB launch command: 14 s with it, 5 s without), and nothing is freed by them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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


def clear_caches() -> None:
    """Forget what earlier runs read of the scripts launch lines start (a long-lived process
    sees edited files); the engine calls it at the start of every check."""
    for name in ("script_schema", "script_path"):  # imported only where a launch was read
        module = sys.modules.get(f"{__name__}.{name}")
        if module is not None:
            module.clear()
