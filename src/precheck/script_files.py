"""Which files are scripts, by name: a fact of the model layer (the sources read them, rules
and reports tell a script's command line from a config file by it)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SCRIPTS", "script_kind"]

#: files that configure runs in commands or code rather than in a config: suffix (or
#: whole name) -> kind. One file may hold several runs (two launch commands in a
#: script), or none; each reader lives in its own module, imported when first needed.
SCRIPTS = {
    ".sh": "shell",
    ".bash": "shell",
    # Slurm batch scripts: bash with ``#SBATCH`` directives (sbatch runs them with their shebang)
    ".slurm": "shell",
    ".sbatch": "shell",
    "makefile": "makefile",
    ".py": "python",
    ".ipynb": "notebook",
}


def script_kind(path: str | Path) -> str | None:
    """``shell``, ``makefile``, ``python`` or ``notebook`` for a script precheck reads, else None."""
    if isinstance(path, str):
        # the last part as pathlib names it, without building a path: a part that is not
        # "" (a trailing slash) or "." (both dropped by pathlib), with no drive or backslash
        name = path[path.rfind("/") + 1 :]
        if not name or name == "." or "\\" in name or ":" in name:
            name = Path(path).name
    elif isinstance(path, Path):
        name = path.name
    else:
        name = Path(path).name
    dot = name.rfind(".")  # pathlib's suffix: from the last dot, unless leading or trailing
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""
    return SCRIPTS.get(name.lower()) or SCRIPTS.get(suffix.lower())
