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
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .bounded_read import read_text
from .errors import UsageError
from .paths import clear as clear_paths
from .paths import resolved, working_folder
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


@lru_cache(maxsize=1024)
def _folders_from(start: Path) -> tuple[Path, ...]:
    """The config's folder, then each folder above it up to the repository root."""
    folders: list[Path] = []
    folder = start
    for _ in range(_MAX_PARENTS):
        folders.append(folder)
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
    return tuple(folders)


@lru_cache(maxsize=1024)
def _pins_in_folder(folder: Path) -> tuple[tuple[Path, str, str, int], ...]:
    """Every exact pin in one folder's pin files (read once per run: many configs share them)."""
    pins: list[tuple[Path, str, str, int]] = []
    for pattern in PIN_FILES:
        with contextlib.suppress(OSError):
            for pin_file in sorted(folder.glob(pattern)):
                pins.extend(pins_in(pin_file))
    return tuple(pins)


@lru_cache(maxsize=1024)
def _display(path: Path) -> str:
    try:
        return str(resolved(path).relative_to(working_folder()))
    except (ValueError, OSError):
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


def _installed_here(search_path: tuple[str, ...], names: tuple[str, ...]) -> dict[str, str]:
    """This environment's versions, as ``importlib.metadata.version(name)`` finds them: the
    first ``NAME-*.dist-info`` / ``NAME*.egg-info`` along ``sys.path`` whose name matches
    after normalisation, its ``Version`` header. Read from a listing of each entry made once
    per run instead of through ``importlib.metadata``, whose import alone (email, zipfile,
    csv...) costs more than checking a small config. A path entry that is a zip file is left
    to ``importlib.metadata`` itself."""
    index = _metadata_index(search_path)
    found: dict[str, str] = {}
    for name in names:
        with contextlib.suppress(Exception):  # a broken dist-info must not stop the check
            version = _version_of(index, name)
            if version is not None:
                found[name] = version
    return found


@lru_cache(maxsize=8)
def _metadata_index(search_path: tuple[str, ...]) -> tuple[dict[str, list[tuple[int, Path]]], bool]:
    """Name → the metadata folders that match it, each with its ``sys.path`` position
    (importlib.metadata's ``Lookup``: ``.dist-info``/``.egg-info`` by normalised name, an
    ``.egg`` entry's ``EGG-INFO`` by legacy name, keyed ``egg:NAME``), and whether some
    entry is an archive this listing cannot read."""
    index: dict[str, list[tuple[int, Path]]] = {}
    archives = False
    for position, entry in enumerate(search_path):
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:
            archives = archives or os.path.isfile(root)
            continue
        base = os.path.basename(root).lower()
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                key = _normalise(low.rpartition(".")[0].partition("-")[0])
                index.setdefault(key, []).append((position, Path(root, child)))
            elif base.endswith(".egg") and low == "egg-info":
                key = "egg:" + base.rpartition(".")[0].partition("-")[0].replace("-", "_")
                index.setdefault(key, []).append((position, Path(root, child)))
    return index, archives


def _normalise(name: str) -> str:
    """importlib.metadata's ``Prepared.normalize``: PEP 503 with underscores."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _version_of(index: tuple[dict[str, list[tuple[int, Path]]], bool], name: str) -> str | None:
    folders, archives = index
    found = folders.get(_normalise(name), []) + folders.get("egg:" + name.lower().replace("-", "_"), [])
    if found:
        return _metadata_version(min(found, key=lambda item: item[0])[1])
    if archives:
        from importlib import metadata

        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(name)
    return None


def _metadata_version(where: Path) -> str | None:
    """The ``Version`` header of ``METADATA`` (or ``PKG-INFO``, or the ``.egg-info`` file
    itself), parsed as the email parser importlib.metadata uses reads it."""
    for candidate in (where / "METADATA", where / "PKG-INFO", where):
        try:
            text = read_text(candidate, errors="strict")
        except (OSError, UnicodeDecodeError):  # missing, a folder, a FIFO, too large: no answer
            continue
        if text:
            return _header(text, "version")
    return None


def _header(text: str, wanted: str) -> str | None:
    """The first ``wanted`` header of an RFC 822 header block (continuation lines joined)."""
    value: str | None = None
    for line in text.splitlines():
        if value is not None:
            if line[:1] in (" ", "\t"):
                value += "\n" + line
                continue
            return value
        if not line.strip():
            return None
        name, colon, rest = line.partition(":")
        if colon and name.lower() == wanted:
            value = rest.lstrip(" \t")
    return value


#: how long ``--python`` may take to answer, and the most output read from it
INTERPRETER_TIMEOUT_S = 10
INTERPRETER_OUTPUT_BYTES = 1024 * 1024
#: interpreters that failed to answer in this run: asked once, not once per file
_FAILED: dict[str, str] = {}


def check_interpreter(python: str) -> None:
    """Raise :class:`UsageError` once, before any file is checked, when ``--python`` cannot
    answer (a missing path, not a Python, too slow)."""
    _ask_interpreter(python, ())


@lru_cache(maxsize=64)
def _ask_interpreter(python: str, names: tuple[str, ...]) -> dict[str, str]:
    """Ask ``python`` for versions: in isolated mode (``-I``: no current folder or script
    folder on ``sys.path``, so a ``json.py`` in the repository is not imported; no
    ``PYTHON*`` variables, no user site), from a neutral folder, in its own process group,
    killed with everything it started after :data:`INTERPRETER_TIMEOUT_S`."""
    import json
    import signal
    import subprocess
    import tempfile

    if python in _FAILED:
        raise UsageError(_FAILED[python])
    data = None
    why = ""
    try:
        with tempfile.TemporaryFile() as output:
            process = subprocess.Popen(
                [python, "-I", "-c", _METADATA_SCRIPT, *names],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.DEVNULL,
                cwd=tempfile.gettempdir(),
                start_new_session=True,
            )
            try:
                code = process.wait(timeout=INTERPRETER_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                code = None
                why = f" (no answer in {INTERPRETER_TIMEOUT_S} s)"
            finally:  # its children too: nothing it started outlives the check
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            output.seek(0)
            text = output.read(INTERPRETER_OUTPUT_BYTES)
        data = json.loads(text) if code == 0 else None
    except OSError as exc:
        why = f" ({exc.strerror or exc})"
    except ValueError:
        data = None
    if not isinstance(data, dict):
        _FAILED[python] = f"--python {python}: not a Python interpreter precheck can ask for package versions{why}"
        raise UsageError(_FAILED[python])
    return {str(k): str(v) for k, v in data.items()}


def collect(
    config_path: str,
    wanted: Iterable[str],
    assumed: dict[str, VersionInfo],
    python: str | None = None,
) -> Versions:
    """The versions of ``wanted`` frameworks for the run configured at ``config_path``.

    Configs in one folder share the answer (it depends on the folder, not the file): it is
    worked out once per folder and run, and the same :class:`Versions` is returned."""
    names = frozenset(canonical(n) for n in wanted)
    return _collect(resolved(config_path).parent, names, tuple(sorted(assumed.items())), python)


@lru_cache(maxsize=1024)
def _collect(
    folder: Path,
    names: frozenset[str],
    assumed_items: tuple[tuple[str, VersionInfo], ...],
    python: str | None,
) -> Versions:
    known: dict[str, VersionInfo] = {}
    assumed = dict(assumed_items)
    for name in names & assumed.keys():
        known[name] = assumed[name]
    project = for_folder(folder)
    for name, version in project.versions.items():
        key = canonical(name)
        if key in names:
            known.setdefault(key, VersionInfo(key, version, "project config"))
    missing = set(names - known.keys())
    if missing:
        for parent in _folders_from(folder):
            for source, name, version, line in _pins_in_folder(parent):
                if name in missing:
                    known[name] = VersionInfo(name, version, f"{_display(source)}:{line}")
                    missing.discard(name)
            if not missing:
                break
    if missing:
        for name, version in installed_in(python, tuple(sorted(missing))).items():
            known[name] = VersionInfo(name, version, "installed")
    return Versions(known)


def clear_caches() -> None:
    """Forget what earlier runs read: a long-lived process (the Python API) sees edited pins,
    project configurations and installs. The engine calls it at the start of every check."""
    clear_paths()
    _FAILED.clear()
    for cached in (
        _folders_from,
        _display,
        _pins_in_folder,
        _metadata_index,
        _ask_interpreter,
        _collect,
    ):
        cached.cache_clear()
