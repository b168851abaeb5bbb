"""A framework entry module's own option defaults, read from its source where the checked
repository holds that module.

``python -m openrlhf.cli.train_sft --ds.zero_stage 3`` run inside OpenRLHF's own repository
starts ``openrlhf/cli/train_sft.py`` of that checkout: its ``parser.add_argument(
"--ds.param_dtype", default="bf16")`` decides what a flag the launch leaves out means, for the
version checked out, not the one precheck's framework table was written for. Each option no
flag sets becomes a run key at its ``default=`` line (dotted names nest, as the framework's
``hierarchize`` nests them); a module precheck cannot find or read adds nothing (the
framework's known defaults then apply, as before).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .launch_args import shown
from .nodes import Node
from .script_path import resolve_script
from .script_schema import MISSING, Option, read_schema


def source_defaults(root: dict[str, Node], name: str, module: bool, bases: list[Path]) -> Path | None:
    """Fill ``root`` (the launch's flags, dotted names nested) with the entry module's own
    defaults for the options it leaves out; the module's file, or None when it is not here."""
    path = resolve_script(name, module, bases)
    schema = read_schema(path) if path is not None else None
    if path is None or schema is None or not schema.known:
        return None
    for dest, option in schema.options.items():
        if _plain(option.default) and option.default is not None:
            _put_default(root, dest, option)
    return path


def _plain(value: Any) -> bool:
    return value is not MISSING and (value is None or isinstance(value, (bool, int, float, str)))


def _put_default(root: dict[str, Node], dest: str, option: Option) -> None:
    """``dest``'s default under ``root`` unless a flag (or a file the launch merged) set it."""
    where = shown(option.path)
    # the line of its ``default=`` where the schema reader records it, else the definition's
    line: int = getattr(option, "default_line", None) or option.line
    column = 1
    parts = [p for p in dest.split(".") if p] or [dest]
    current = root
    for part in parts[:-1]:
        child = current.get(part)
        if child is None:
            child = Node({}, line, column, part, line, column)
            child.path = where
            current[part] = child
        elif not isinstance(child.value, dict):
            return  # a flag set the parent itself: not ours to nest under
        current = child.value
    if parts[-1] in current:
        return
    node = Node(option.default, line, column, f"--{dest}", line, column, raw=repr(option.default))
    node.path = where
    current[parts[-1]] = node


__all__ = ["source_defaults"]
