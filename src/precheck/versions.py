"""Which version of each framework a run uses, and where precheck learnt it.

First match wins: ``--assume-version NAME==VERSION``; ``[tool.precheck] versions`` in the
project config; exact pins beside the config or in a folder above it, up to the
repository root (``requirements*.txt`` with their ``-r`` includes, ``pyproject.toml``,
``uv.lock``, ``poetry.lock``, conda ``environment.yml``); the distribution installed in
the environment precheck runs in, or in the one ``--python PATH`` names (read from
metadata, never imported). Anything else leaves the version unknown, and
version-dependent rules say so.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from .errors import UsageError
from .pins import PIN_FILES, canonical, pins_in
from .project import for_folder

_ASSUME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][^\s]*)\s*$")
_MAX_PARENTS = 8


def version_key(version: str) -> tuple[int, ...]:
    """A sortable key for a release: ``2.6.0.dev1`` → (2, 6, 0)."""
    release = re.match(r"\d+(?:\.\d+)*", version.strip().lstrip("v"))
    return tuple(int(p) for p in release.group(0).split(".")) if release else ()


@dataclass(frozen=True, slots=True)
class VersionInfo:
    name: str
    version: str
    #: "flag", "project config", "FILE:LINE" of a pin, or "installed"
    source: str


@dataclass(frozen=True, slots=True)
class VersionRange:
    """Where a behaviour holds: ``low <= version < high`` (either bound optional)."""

    package: str
    low: str | None = None
    high: str | None = None

    def contains(self, version: str) -> bool:
        key = version_key(version)
        if self.low is not None and key < version_key(self.low):
            return False
        return not (self.high is not None and key >= version_key(self.high))

    def __str__(self) -> str:
        parts = []
        if self.low:
            parts.append(f">={self.low}")
        if self.high:
            parts.append(f"<{self.high}")
        return self.package + ",".join(parts)


class Versions:
    def __init__(self, known: dict[str, VersionInfo] | None = None):
        self.known = dict(known or {})

    def get(self, name: str) -> VersionInfo | None:
        return self.known.get(canonical(name))

    def as_dict(self) -> dict[str, dict[str, str]]:
        return {n: {"version": v.version, "source": v.source} for n, v in sorted(self.known.items())}


def parse_assumptions(values: Iterable[str]) -> dict[str, VersionInfo]:
    out: dict[str, VersionInfo] = {}
    for value in values:
        match = _ASSUME.match(value)
        if not match:
            raise UsageError(f"--assume-version {value!r}: expected NAME==VERSION, e.g. trl==0.19.0")
        name = canonical(match.group(1))
        out[name] = VersionInfo(name, match.group(2), "flag")
    return out


def _folders(config_path: Path) -> list[Path]:
    """The config's folder, then each folder above it up to the repository root."""
    folders: list[Path] = []
    folder = config_path.resolve().parent
    for _ in range(_MAX_PARENTS):
        folders.append(folder)
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
    return folders


@lru_cache(maxsize=1024)
def _pins_in_folder(folder: Path) -> tuple[tuple[Path, str, str, int], ...]:
    """Every exact pin in one folder's pin files (read once per run: many configs share them)."""
    pins: list[tuple[Path, str, str, int]] = []
    for pattern in PIN_FILES:
        with contextlib.suppress(OSError):
            for pin_file in sorted(folder.glob(pattern)):
                pins.extend(pins_in(pin_file))
    return tuple(pins)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


_METADATA_SCRIPT = """
import json, sys
from importlib import metadata
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = metadata.version(name)
    except Exception:
        pass
print(json.dumps(found))
"""


def installed_in(python: str | None, names: tuple[str, ...]) -> dict[str, str]:
    """Versions from distribution metadata, never importing the packages: this
    environment's, or that of the interpreter ``python`` (``--python PATH``)."""
    if python is not None:
        return _ask_interpreter(python, names)
    return _installed_here(tuple(sys.path), names)


@lru_cache(maxsize=256)
def _installed_here(search_path: tuple[str, ...], names: tuple[str, ...]) -> dict[str, str]:
    """This environment's versions (cached per ``sys.path``: a lookup scans every entry)."""
    found: dict[str, str] = {}
    for name in names:
        with contextlib.suppress(Exception):  # a broken dist-info must not stop the check
            found[name] = metadata.version(name)
    return found


@lru_cache(maxsize=64)
def _ask_interpreter(python: str, names: tuple[str, ...]) -> dict[str, str]:
    try:
        command = [python, "-c", _METADATA_SCRIPT, *names]
        done = subprocess.run(command, capture_output=True, text=True, timeout=15, check=False)
        data = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        data = None
    if not isinstance(data, dict):
        raise UsageError(f"--python {python}: not a Python interpreter precheck can ask for package versions")
    return {str(k): str(v) for k, v in data.items()}


def collect(
    config_path: str,
    wanted: Iterable[str],
    assumed: dict[str, VersionInfo],
    python: str | None = None,
) -> Versions:
    """The versions of ``wanted`` frameworks for the run configured at ``config_path``."""
    known: dict[str, VersionInfo] = {}
    names = {canonical(n) for n in wanted}
    for name in names & assumed.keys():
        known[name] = assumed[name]
    project = for_folder(Path(config_path).resolve().parent)
    for name, version in project.versions.items():
        key = canonical(name)
        if key in names:
            known.setdefault(key, VersionInfo(key, version, "project config"))
    missing = names - known.keys()
    if missing:
        for folder in _folders(Path(config_path)):
            for source, name, version, line in _pins_in_folder(folder):
                if name in missing:
                    known[name] = VersionInfo(name, version, f"{_display(source)}:{line}")
                    missing.discard(name)
            if not missing:
                break
    if missing:
        for name, version in installed_in(python, tuple(sorted(missing))).items():
            known[name] = VersionInfo(name, version, "installed")
    return Versions(known)
