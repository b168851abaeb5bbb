"""Project configuration: ``[tool.precheck]`` in ``pyproject.toml`` or ``.precheck.toml``.

Found by walking up from each checked file to the repository root; the closest wins,
and ``.precheck.toml`` beats a ``pyproject.toml`` in the same folder. Files are not
merged. Keys so far: ``versions`` (framework → exact version).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .errors import InputError
from .sources.nodes import Node
from .sources.toml_source import parse_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KNOWN_KEYS = ("versions",)
_MAX_PARENTS = 12


@dataclass(frozen=True)
class ProjectConfig:
    path: str | None = None
    versions: dict[str, str] = field(default_factory=dict)


def _table(path: Path) -> dict[str, Node] | None:
    """The keys of precheck's table in one file, or None when the file has none."""
    text = path.read_text(encoding="utf-8")
    if path.name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None  # a broken pyproject is its owner's business unless it names precheck
        tool = data.get("tool")
        if not isinstance(tool, dict) or "precheck" not in tool:
            return None
    document = parse_toml(str(path), text)
    node: Node | None = document.root
    if path.name == "pyproject.toml":
        tool_node = document.root.get("tool")
        node = tool_node.get("precheck") if tool_node is not None else None
    if node is None or not isinstance(node.value, dict):
        raise InputError(str(path), "[tool.precheck] must be a table")
    return node.value


def _fail(path: Path, node: Node, message: str) -> InputError:
    line, column = node.anchor
    return InputError(str(path), message, line, column)


def load(path: Path) -> ProjectConfig:
    table = _table(path)
    if table is None:
        return ProjectConfig()
    for key, node in table.items():
        if key not in KNOWN_KEYS:
            raise _fail(path, node, f"unknown key `{key}` in precheck's configuration (known: {', '.join(KNOWN_KEYS)})")
    versions: dict[str, str] = {}
    block = table.get("versions")
    if block is not None:
        if not isinstance(block.value, dict):
            raise _fail(path, block, '`versions` must be a table of NAME = "VERSION"')
        for name, item in block.value.items():
            if not isinstance(item.value, str) or not item.value[:1].isdigit():
                raise _fail(path, item, f'versions.{name}: expected an exact version string such as "0.19.0"')
            versions[name] = item.value
    return ProjectConfig(str(path), versions)


@lru_cache(maxsize=256)
def for_folder(folder: Path) -> ProjectConfig:
    """The closest project configuration at or above ``folder``."""
    current = folder
    for _ in range(_MAX_PARENTS):
        for name in (".precheck.toml", "pyproject.toml"):
            candidate = current / name
            if candidate.is_file():
                config = load(candidate)
                if config.path is not None:
                    return config
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    return ProjectConfig()
