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

import re
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
    reads = _reads(path)
    for dest, option in schema.options.items():
        places = _defined(option, reads.get(dest, ()))
        given = _given(root, dest)
        if given is not None:
            given.through = (*given.through, *((p, n) for p, n in places if (p, n) not in given.through))
        elif _plain(option.default) and option.default is not None:
            _put_default(root, dest, option, places)
    return path


#: ``args.ds.param_dtype`` read (not assigned) in the entry module: ``param_dtype=args.ds.param_dtype,``
_READ = re.compile(r"(?<![\w.])args((?:\.\w+)+)(?!\s*=(?!=))(?!\w)")


def _reads(path: Path) -> dict[str, tuple[int, ...]]:
    """The lines of the entry module that read each option off its parsed ``args`` (dotted
    names as written, ``args.ds.param_dtype`` → ``ds.param_dtype``); comments left out."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, list[int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        for found in _READ.finditer(code):
            parts = found.group(1).lstrip(".").split(".")
            for end in range(len(parts), 0, -1):  # args.ds.param_dtype.lower → ds.param_dtype too
                out.setdefault(".".join(parts[:end]), []).append(number)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def _defined(option: Option, reads: tuple[int, ...]) -> tuple[tuple[str | None, int], ...]:
    """The places an option's value passes in the entry module: where its name is defined and
    the lines that read it (a flag's value goes through each; a default too, at its own line)."""
    where = shown(option.path)
    lines = (option.name_line or option.line, *reads)
    return tuple((where, n) for n in dict.fromkeys(lines))


def _given(root: dict[str, Node], dest: str) -> Node | None:
    """The launch's own node for ``dest`` (a flag it gives), dotted names nested."""
    current: Any = root
    node: Node | None = None
    for part in [p for p in dest.split(".") if p] or [dest]:
        if not isinstance(current, dict) or part not in current:
            return None
        node = current[part]
        current = node.value
    return node if node is not None and node.path is None and not isinstance(node.value, dict) else None


def _plain(value: Any) -> bool:
    return value is not MISSING and (value is None or isinstance(value, (bool, int, float, str)))


def _put_default(
    root: dict[str, Node], dest: str, option: Option, places: tuple[tuple[str | None, int], ...] = ()
) -> None:
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
    node.through = tuple(p for p in places if p != (where, line))
    current[parts[-1]] = node


__all__ = ["source_defaults"]
