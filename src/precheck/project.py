"""Project configuration: ``[tool.precheck]`` in ``pyproject.toml`` or ``.precheck.toml``.

Found by walking up from each checked file to the repository root; the closest wins,
and ``.precheck.toml`` beats a ``pyproject.toml`` in the same folder. Files are not
merged. Keys (see README, "Project configuration"):

- ``versions``: framework → exact version;
- ``select``, ``extend-select``, ``ignore``: rule selectors (code, prefix, name or ALL);
- ``per-file-ignores``: gitignore-style glob (relative to the config's folder) → selectors;
- ``severity``: selector → ``error`` | ``warning`` | ``info``;
- ``exclude``: gitignore-style globs of files never checked (also when named);
- ``fail-on``: the lowest severity that fails the run;
- ``gpus``: the target hardware (``["8xA100-80GB"]``), used when no ``--gpu`` or
  ``--hardware`` is given, before probing.

An invalid value raises :class:`~precheck.errors.InputError` with the file, line and key.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from .bounded_read import read_text
from .errors import InputError, PrecheckError
from .ignore_patterns import Pattern, compile_pattern, ignored
from .paths import resolved
from .sources.nodes import Node

KNOWN_KEYS = (
    "versions",
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "severity",
    "exclude",
    "fail-on",
    "gpus",
)
SEVERITIES = ("error", "warning", "info")
_MAX_PARENTS = 12


@dataclass(frozen=True)
class ProjectConfig:
    """precheck's settings for a folder (its .precheck.toml, or pyproject.toml's [tool.precheck])."""

    path: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    #: None: the default selection
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    #: (compiled glob, rule codes) in file order
    per_file_ignores: tuple[tuple[Pattern, frozenset[str]], ...] = ()
    #: rule code → "error" | "warning" | "info"
    severity: dict[str, str] = field(default_factory=dict)
    exclude: tuple[Pattern, ...] = ()
    fail_on: str | None = None
    gpus: tuple[str, ...] = ()

    @property
    def folder(self) -> Path | None:
        return Path(self.path).resolve().parent if self.path else None

    def relative(self, path: str | Path) -> PurePosixPath | None:
        """``path`` relative to this configuration's folder, or None when outside it."""
        folder = self.folder
        if folder is None:
            return None
        try:
            return PurePosixPath(Path(path).resolve().relative_to(folder).as_posix())
        except ValueError:
            return None

    def excludes(self, path: str | Path) -> bool:
        relative = self.relative(path)
        return relative is not None and ignored(list(self.exclude), relative, is_dir=False)

    def ignored_codes(self, path: str | Path) -> frozenset[str]:
        """The codes ``per-file-ignores`` turns off for ``path``."""
        relative = self.relative(path)
        if relative is None:
            return frozenset()
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if ignored([pattern], relative, is_dir=False):
                out |= codes
        return frozenset(out)


def _table(path: Path) -> dict[str, Node] | None:
    """The keys of precheck's table in one file, or None when the file has none.

    The TOML readers load here: a run without a configuration file imports neither, a run
    whose pyproject.toml holds no precheck table no position-keeping TOML reader."""
    try:
        text = read_text(path, errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"cannot read precheck's configuration: {exc}") from None
    if path.name == "pyproject.toml":
        from .sources.toml_source import loads

        try:  # bounded: a pull request's pyproject.toml can be hostile
            data = loads(str(path), text)
        except InputError:
            # a broken pyproject is its owner's business, unless it holds precheck's table:
            # then the settings CI relies on (gpus, fail-on) would silently be lost
            if not re.search(r"^\s*\[\s*tool\s*\.\s*precheck\b", text, re.MULTILINE):
                return None
            raise
        tool = data.get("tool")
        if not isinstance(tool, dict) or "precheck" not in tool:
            return None
    from .sources.toml_source import parse_toml

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


def _strings(path: Path, node: Node, key: str, what: str) -> tuple[str, ...]:
    if not isinstance(node.value, list) or not all(isinstance(item.value, str) for item in node.value):
        raise _fail(path, node, f"`{key}` must be a list of {what} (strings)")
    return tuple(item.value for item in node.value)


def _resolve(path: Path, node: Node, key: str, selector: str) -> frozenset[str]:
    """The codes one selector names; an unknown selector is an error at its key."""
    from .rules import resolve_selector

    try:
        return frozenset(r.code for r in resolve_selector(selector))
    except PrecheckError as error:
        raise _fail(path, node, f"`{key}`: {error}") from None


def _codes(path: Path, node: Node, key: str) -> tuple[str, ...]:
    """Rule selectors, each checked."""
    selectors = _strings(path, node, key, "rule selectors")
    for selector in selectors:
        _resolve(path, node, key, selector)
    return selectors


def _expand(path: Path, node: Node, key: str) -> frozenset[str]:
    return frozenset(code for s in _codes(path, node, key) for code in _resolve(path, node, key, s))


def _glob(path: Path, node: Node, key: str, text: str) -> Pattern:
    pattern = compile_pattern(text, PurePosixPath("."))
    if pattern is None:
        raise _fail(path, node, f"`{key}`: {text!r} is not a glob")
    return pattern


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
    select = _codes(path, table["select"], "select") if "select" in table else None
    extend = _codes(path, table["extend-select"], "extend-select") if "extend-select" in table else ()
    ignore = _codes(path, table["ignore"], "ignore") if "ignore" in table else ()
    per_file: list[tuple[Pattern, frozenset[str]]] = []
    block = table.get("per-file-ignores")
    if block is not None:
        if not isinstance(block.value, dict):
            raise _fail(path, block, '`per-file-ignores` must be a table of "GLOB" = ["CODE", ...]')
        for glob, item in block.value.items():
            key = f"per-file-ignores.{glob}"
            per_file.append((_glob(path, item, key, glob), _expand(path, item, key)))
    severity: dict[str, str] = {}
    block = table.get("severity")
    if block is not None:
        if not isinstance(block.value, dict):
            raise _fail(path, block, '`severity` must be a table of CODE = "error" | "warning" | "info"')
        for selector, item in block.value.items():
            key = f"severity.{selector}"
            if not isinstance(item.value, str) or item.value.strip().lower() not in SEVERITIES:
                raise _fail(path, item, f"`{key}`: expected one of {', '.join(SEVERITIES)}, not {item.value!r}")
            for code in _resolve(path, item, key, selector):
                severity[code] = item.value.strip().lower()
    exclude: tuple[Pattern, ...] = ()
    if "exclude" in table:
        node = table["exclude"]
        exclude = tuple(_glob(path, node, "exclude", g) for g in _strings(path, node, "exclude", "globs"))
    fail_on = None
    if "fail-on" in table:
        node = table["fail-on"]
        if not isinstance(node.value, str) or node.value.strip().lower() not in SEVERITIES:
            raise _fail(path, node, f"`fail-on`: expected one of {', '.join(SEVERITIES)}, not {node.value!r}")
        fail_on = node.value.strip().lower()
    gpus: tuple[str, ...] = ()
    if "gpus" in table:
        node = table["gpus"]
        gpus = _strings(path, node, "gpus", 'GPU names such as "8xA100-80GB"')
        from .hardware import expand_specs

        try:
            expand_specs(list(gpus))
        except PrecheckError as error:
            raise _fail(path, node, f"`gpus`: {error}") from None
    return ProjectConfig(str(path), versions, select, extend, ignore, tuple(per_file), severity, exclude, fail_on, gpus)


@lru_cache(maxsize=256)
def for_folder(folder: Path) -> ProjectConfig:
    """The closest project configuration at or above ``folder``.

    Each folder on the way up is looked at once per run (:func:`_in_folder`, cached): the
    folders of a repository share their parents, so a run over many folders stats each
    parent's candidate files once, not once per folder below it."""
    current = folder
    for _ in range(_MAX_PARENTS):
        config, last = _in_folder(current)
        if config is not None:
            return config
        if last:
            break
        current = current.parent
    return ProjectConfig()


@lru_cache(maxsize=512)
def _in_folder(folder: Path) -> tuple[ProjectConfig | None, bool]:
    """The configuration in ``folder`` itself (None: none), and whether the search upward
    stops there (a repository's root, or the file system's)."""
    for name in (".precheck.toml", "pyproject.toml"):
        candidate = folder / name
        if candidate.is_file():
            try:
                config = load(candidate)
            except InputError as error:  # an error about that file (:func:`broken`), not the run's end
                _BROKEN.setdefault(error.path, error)
                return ProjectConfig(), True
            if config.path is not None:
                return config, True
    return None, (folder / ".git").exists() or folder.parent == folder


#: project configurations that could not be read this run, by path
_BROKEN: dict[str, InputError] = {}


def broken() -> list[InputError]:
    """The project configurations found this run that could not be read: each governs its
    folder with precheck's defaults, and is its own error in the report."""
    return list(_BROKEN.values())


def clear_caches() -> None:
    """Forget the configurations read (a long-lived process sees edited configs)."""
    for_folder.cache_clear()
    _in_folder.cache_clear()
    _BROKEN.clear()


def for_path(path: str | Path) -> ProjectConfig:
    """The configuration that governs a file or folder given on the command line."""
    full = resolved(path)  # cached per run: every checked file asks
    return for_folder(full if os.path.isdir(full) else full.parent)  # False for a name too long
