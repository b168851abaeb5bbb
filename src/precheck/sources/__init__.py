"""Stage 1 of the pipeline: read files into plain data with positions."""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..bounded_read import MAX_BYTES as MAX_BYTES
from ..bounded_read import read_bytes as read_bytes
from ..script_files import SCRIPTS, script_kind
from .nodes import Document, Node, SourceNote
from .reading import FORMATS as FORMATS
from .reading import STDIN as STDIN
from .reading import _binary
from .reading import decode as decode
from .reading import load as load
from .reading import parse as parse
from .reading import read_text as read_text
from .workflow_source import is_workflow, parse_workflow

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
        root = document.mapping()
        if document.format in ("yaml", "json") and "_target_" in document.text:
            from .front_end import targeted  # a Hydra block built as an HF/TRL argument class

            built = targeted(document)
            if built is not None:
                return [built]
        if document.format in ("yaml", "json") and any(isinstance(node.value, dict) for node in root.values()):
            from .front_end import front_end  # a block the repository's code hands to TrainingArguments

            handed = front_end(document, Path(path))
            if handed is not None:
                return [handed]
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
    if not runs and kind == "python":
        from .mmengine_config import config_document  # a config module: its settings, not a run's calls

        found = config_document(shown, text)
        runs = [found] if found is not None else []
    if kind == "notebook" and re.search(r"[!%]", text):
        from .notebook_commands import command_runs  # `!torchrun ...`, `%%bash` cells, `%run train.py`

        runs += command_runs(shown, text)
    return runs


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


def clear_caches() -> None:
    """Forget what earlier runs read of the scripts launch lines start (a long-lived process
    sees edited files); the engine calls it at the start of every check."""
    for name in ("script_schema", "script_path", "front_end", "launch_args"):  # imported only where one was read
        module = sys.modules.get(f"{__name__}.{name}")
        if module is not None:
            module.clear()
