"""The shell commands a notebook runs: ``!torchrun ...`` lines, ``%%bash``/``%%sh`` cells and
``%run script.py args`` (IPython runs the file as ``python script.py args`` would, with
``sys.argv`` set; ``-m module`` runs a module).

They are gathered into one shell script, a line of it per command line (a ``%%bash`` cell's
lines in order, so its variables and ``cd`` carry over as in the cell; each ``!`` line is a
shell of its own, as IPython starts one per line), read by :mod:`.shell_source`, and every
position is moved back to the character's line and column in the ``.ipynb`` file.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .nodes import Document, Node, SourceNote
from .notebook import Cell, all_cells

#: a line IPython hands to the shell: ``!cmd`` (not ``x = !cmd``, whose output is captured) or ``%sx``/``%system``
_BANG = re.compile(r"^(\s*)(?:!|%(?:sx|system)\s+)")
_RUN = re.compile(r"^(\s*)%run\s+")
_SHELL_CELLS = ("bash", "sh", "script bash", "script sh")


def command_runs(path: str, text: str) -> list[Document]:
    """One document per training launch the notebook's shell commands hold."""
    lines: list[str] = []
    #: per script line: the cell, its 1-based line, and how many characters were dropped in front
    origin: list[tuple[Cell, int, int]] = []
    for cell in all_cells(path, text):
        code = cell.code
        if "!" not in code and "%" not in code:
            continue  # no `!` line, `%run`, `%sx` or `%%bash` (each needs one of the two)
        rows = code.split("\n")
        first = rows[0].strip() if rows else ""
        if first.startswith("%%"):
            if first[2:].strip() in _SHELL_CELLS:
                if lines:
                    lines.append("")  # a cell is a shell of its own: a fresh line, not a continuation
                    origin.append((cell, 1, 0))
                for number, row in enumerate(rows[1:], start=2):
                    lines.append(row)
                    origin.append((cell, number, 0))
            continue
        continued = False
        for number, row in enumerate(rows, start=1):
            if not continued and "!" not in row and "%" not in row:
                continue  # neither pattern can match (and `continued` stays False)
            bang, run = _BANG.match(row), _RUN.match(row)
            if continued:  # IPython joins a command's `\`-ended lines before the shell sees them
                lines.append(row)
                origin.append((cell, number, 0))
            elif bang is not None:
                lines.append(row[bang.end() :])
                origin.append((cell, number, bang.end()))
            elif run is not None:
                rest = row[run.end() :]
                if rest.startswith("-m "):
                    command, dropped = "python " + rest, run.end() - len("python ")
                else:  # `%run [-i|-e|-t|-d|-p|-n] script.py args`
                    flags = re.match(r"((?:-[a-zA-Z]\s+)*)", rest)
                    skip = flags.end() if flags else 0
                    command, dropped = "python " + rest[skip:], run.end() + skip - len("python ")
                lines.append(command)
                origin.append((cell, number, dropped))
            else:
                continue
            continued = row.endswith("\\")
    if not lines:
        return []
    from .shell_source import parse_script

    documents = parse_script(path, "\n".join(lines), "shell")
    return [_moved(d, origin, text) for d in documents]


def _moved(document: Document, origin: list[tuple[Cell, int, int]], text: str) -> Document:
    """The document with every position moved from the gathered script into the notebook file."""

    def place(line: int | None, column: int | None) -> tuple[int | None, int | None]:
        if line is None or column is None or not 1 <= line <= len(origin):
            return line, column
        cell, cell_line, dropped = origin[line - 1]
        return cell.where(cell_line, column - 1 + dropped)

    def move(node: Node) -> Node:
        if node.path is not None:  # a config file the command names keeps its own positions
            return node
        line, column = place(node.line, node.column)
        key_line, key_column = place(node.key_line, node.key_column)
        value = node.value
        if isinstance(value, dict):
            value = {k: move(v) if isinstance(v, Node) else v for k, v in value.items()}
        elif isinstance(value, list):
            value = [move(v) if isinstance(v, Node) else v for v in value]
        return replace(node, value=value, line=line or 1, column=column or 1, key_line=key_line, key_column=key_column)

    def note(item: SourceNote) -> SourceNote:
        if item.path is not None:
            return item
        line, column = place(item.line, item.column)
        return replace(item, line=line or 1, column=column or 1)

    label = document.label
    if label is not None:
        found = re.search(r" at line (\d+)$", label)
        if found is not None and 1 <= int(found.group(1)) <= len(origin):
            cell, cell_line, _ = origin[int(found.group(1)) - 1]
            label = f"{label[: found.start()]} in cell {cell.number}, line {cell_line}"
    return replace(
        document,
        root=move(document.root),
        env={k: move(v) for k, v in document.env.items()},
        notes=[note(n) for n in document.notes],
        text=text,
        label=label,
    )
