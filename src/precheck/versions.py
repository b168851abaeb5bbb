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
import fnmatch
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .bounded_read import read_text
from .errors import UsageError
from .paths import clear as clear_paths
from .paths import resolved, working_folder
from .pins import PIN_FILES, canonical, first_pins_in

if TYPE_CHECKING:
    from packaging.version import Version

_ASSUME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][^\s*]*)\s*$")
_MAX_PARENTS = 8


def version_key(version: str) -> Version:
    """A release as pip orders it (PEP 440): ``3.3.1rc1`` < ``3.3.1`` < ``3.3.1.post1``. A
    string PEP 440 cannot read keeps its leading release numbers (``v2.6.0+git`` → 2.6.0)."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version.strip())
    except InvalidVersion:
        release = re.match(r"\d+(?:\.\d+)*", version.strip().lstrip("vV"))
        return Version(release.group(0) if release else "0")


def is_exact(version: str) -> bool:
    """Whether ``version`` names one release (``3.2.2``), not a range (``>=3.0,<3.4``)."""
    return version[:1].isdigit()


_SPECIFIER = re.compile(r"^(~=|===|==|!=|<=|>=|<|>)([0-9][0-9A-Za-z.!+_*-]*)$")


def _specifiers(spec: str) -> list[tuple[str, str]]:
    """(operator, version) of each item of a PEP 440 specifier list; an unreadable list
    reads as no constraint (any release: the newest behaviour, "some" of a span)."""
    items = [_SPECIFIER.match(part.strip()) for part in spec.split(",")]
    pairs = [(m.group(1), m.group(2)) for m in items if m]
    valid = all(items) and all(
        ("*" not in v or (op in ("==", "!=") and v.endswith(".*") and "*" not in v[:-2]))
        and (op != "~=" or "." in v.split("+")[0])
        for op, v in pairs
    )
    return pairs if valid else []


def _bounds(spec: str) -> tuple[Version | None, bool, Version | None, bool]:
    """(lowest, inclusive, highest, inclusive) release a PEP 440 specifier set allows; None:
    unbounded. ``!=`` only removes points and is left out."""
    from packaging.version import Version

    low: tuple[Version, bool] | None = None
    high: tuple[Version, bool] | None = None

    def raise_low(v: Version, inclusive: bool) -> None:
        nonlocal low
        if low is None or v > low[0] or (v == low[0] and not inclusive):
            low = (v, inclusive)

    def cut_high(v: Version, inclusive: bool) -> None:
        nonlocal high
        if high is None or v < high[0] or (v == high[0] and not inclusive):
            high = (v, inclusive)

    for op, text in _specifiers(spec):
        if op in ("==", "===") and text.endswith(".*"):
            parts = [int(p) for p in re.findall(r"\d+", text[:-2])] or [0]
            raise_low(Version(text[:-2]), True)
            cut_high(Version(".".join(map(str, [*parts[:-1], parts[-1] + 1])) + ".dev0"), False)
        elif op in ("==", "==="):
            raise_low(version_key(text), True)
            cut_high(version_key(text), True)
        elif op == "~=":
            raise_low(version_key(text), True)
            prefix = [int(p) for p in re.findall(r"\d+", ".".join(text.split(".")[:-1]))]
            cut_high(Version(".".join(map(str, [*prefix[:-1], prefix[-1] + 1])) + ".dev0"), False)
        elif op in (">=", ">"):
            raise_low(version_key(text), op == ">=")
        elif op in ("<=", "<"):
            cut_high(version_key(text), op == "<=")
    return (
        low[0] if low else None,
        low[1] if low else True,
        high[0] if high else None,
        high[1] if high else True,
    )


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """One package's version and where precheck learned it."""

    name: str
    version: str
    #: "flag", "project config", "FILE:LINE" of a pin, or "installed"
    source: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class VersionRange:
    """Where a behaviour holds: ``low <= version < high`` (either bound optional)."""

    package: str
    low: str | None = None
    high: str | None = None

    def contains(self, version: str) -> bool:
        """Whether ``version`` behaves so; for a range (``>=3.0,<3.4``), whether the newest
        release it allows does (what a fresh install within it gets)."""
        if not is_exact(version):
            _, _, high, inclusive = _bounds(version)
            if high is None:
                return self.high is None
            if inclusive:
                return self.contains(str(high))
            above_low = self.low is None or high > version_key(self.low)
            return above_low and (self.high is None or high <= version_key(self.high))
        key = version_key(version)
        if self.low is not None and key < version_key(self.low):
            return False
        return not (self.high is not None and key >= version_key(self.high))

    def coverage(self, version: str) -> str:
        """For an exact release "all" or "none"; for a range, whether "all", "some" or "none"
        of the releases it allows behave so."""
        if is_exact(version):
            return "all" if self.contains(version) else "none"
        low, _, high, high_in = _bounds(version)
        span_low = version_key(self.low) if self.low is not None else None
        span_high = version_key(self.high) if self.high is not None else None
        below = high is not None and span_low is not None and (high < span_low or (high == span_low and not high_in))
        above = low is not None and span_high is not None and low >= span_high
        if below or above:
            return "none"
        starts_inside = span_low is None or (low is not None and low >= span_low)
        ends_inside = span_high is None or (
            high is not None and (high < span_high or (high == span_high and not high_in))
        )
        return "all" if starts_inside and ends_inside else "some"

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

    def holds(self, span: VersionRange) -> tuple[bool, str]:
        """Whether the run's release of ``span.package`` behaves as ``span`` says (the newest
        release when the version is not known), and a note that says which release that was."""
        info = self.get(span.package)
        if info is None:
            return True, f"{span.package} version not known: newest behaviour"
        found = span.contains(info.version)
        if not is_exact(info.version) and span.coverage(info.version) == "some":
            return found, f"{span.package}{info.version} ({info.source}) allows releases either side of {span}: newest"
        return found, f"{span.package} {info.version} ({info.source})"

    def older_than(self, package: str, release: str) -> str:
        """Whether the run's release of ``package`` is older than ``release``: "all" (an exact
        release, or a range whose every allowed release is), "some" (a range that allows
        releases on both sides: its newest is not older), "none" (not older, or not known: the
        newest release). Never compare a pin's text as a version: a range (``>=2.6.1``) has
        no leading release number and would read as 0."""
        info = self.get(package)
        if info is None:
            return "none"
        return VersionRange(package, None, release).coverage(info.version)

    def range_note(self, package: str, release: str) -> str:
        """The assumption of a finding that only releases older than ``release`` allowed by
        the run's range of ``package`` have (DESIGN.md, "Findings rest on facts")."""
        info = self.get(package)
        spec = f"{info.version} ({info.source})" if info is not None else ""
        return (
            f"{package} {spec} allows releases before {release}, which behave so, and later ones, which do not: "
            f"pin the exact release ({package}==VERSION) or pass --assume-version {package}==VERSION"
        )

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
def _folders_from(start: Path, reach: int = _MAX_PARENTS) -> tuple[Path, ...]:
    """The config's folder, then each folder above it up to the repository root (at most
    ``reach`` folders). A folder's answer is shared by the folders below it."""
    if reach <= 1 or (start / ".git").exists() or start.parent == start:
        return (start,)
    return (start, *_folders_from(start.parent, reach - 1))


@lru_cache(maxsize=1024)
def _pins_in_folder(folder: Path) -> tuple[tuple[Path, str, str, int], ...]:
    """The pins in one folder's pin files, the first of each name first (read once per run:
    many configs share them; only the first pin of a name is ever used)."""
    pins: list[tuple[Path, str, str, int]] = []
    try:  # one listing, matched as ``sorted(folder.glob(pattern))`` for each pattern
        names = os.listdir(folder)
    except OSError:
        return ()
    for pattern in PIN_FILES:
        for name in sorted(fnmatch.filter(names, pattern)):
            pins.extend(first_pins_in(folder / name))
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


@lru_cache(maxsize=256)  # the same few names asked for each folder of configs
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


@lru_cache(maxsize=256)
def _metadata_version(where: Path) -> str | None:
    """The ``Version`` header of ``METADATA`` (or ``PKG-INFO``, or the ``.egg-info`` file
    itself), parsed as the email parser importlib.metadata uses reads it (once per run:
    every folder of configs asks)."""
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


#: a folder's project-configuration ``versions`` (``[tool.precheck.versions]``)
ProjectVersions = Callable[[Path], Mapping[str, str]]


def collect(
    config_path: str,
    wanted: Iterable[str],
    assumed: dict[str, VersionInfo],
    python: str | None = None,
    project: ProjectVersions | None = None,
) -> Versions:
    """The versions of ``wanted`` frameworks for the run configured at ``config_path``;
    ``project``: the project configuration's versions for a folder (None: no project
    configuration is read — ``--isolated``, or ``--config``'s own, which the caller gives).

    Configs in one folder share the answer (it depends on the folder, not the file): it is
    worked out once per folder and run, and the same :class:`Versions` is returned."""
    names = frozenset(canonical(n) for n in wanted)
    return _collect(resolved(config_path).parent, names, tuple(sorted(assumed.items())), python, project)


#: distribution → the framework distribution it is released with, under the same version
#: numbers (a pin of either is the framework's version): each framework's ``pinned_as``,
#: filled in by the framework registry when it loads
RELEASED_AS: dict[str, str] = {}


@lru_cache(maxsize=1024)
def _collect(
    folder: Path,
    names: frozenset[str],
    assumed_items: tuple[tuple[str, VersionInfo], ...],
    python: str | None,
    project: ProjectVersions | None,
) -> Versions:
    known: dict[str, VersionInfo] = {}
    assumed = dict(assumed_items)
    for name in names & assumed.keys():
        known[name] = assumed[name]
    for name, version in (project(folder) if project is not None else {}).items():
        key = canonical(name)
        if key in names:
            known.setdefault(key, VersionInfo(key, version, "project config"))
    missing = set(names - known.keys())
    if missing:
        for parent in _folders_from(folder):
            for source, pinned, version, line in _pins_in_folder(parent):
                name = RELEASED_AS.get(pinned, pinned)
                if name in missing:
                    known[name] = VersionInfo(name, version, f"{_display(source)}:{line}")
                    missing.discard(name)
            if not missing:
                break
    ranges = {name for name, info in known.items() if info.source not in ("flag", "project config")}
    ranges = {name for name in ranges if not is_exact(known[name].version)}
    if missing or ranges:
        for name, version in installed_in(python, tuple(sorted(missing | ranges))).items():
            if name in missing:
                known[name] = VersionInfo(name, version, "installed")
            elif allows(known[name].version, version):
                known[name] = VersionInfo(name, version, f"installed, within {known[name].source}")
    return Versions(known)


def allows(spec: str, version: str) -> bool:
    """Whether the installed ``version`` lies in the range ``spec`` (pre-releases included)."""
    items = _specifiers(spec)
    if not items:
        return False
    key = version_key(version)
    public = version.split("+")[0]
    for op, text in items:
        if text.endswith(".*"):
            prefix = text[:-2]
            inside = public == prefix or public.startswith(prefix + ".")
            if inside != (op == "=="):
                return False
            continue
        other = version_key(text)
        if op == "~=":
            ceiling = _bounds(f"~={text}")[2]
            ok = key >= other and (ceiling is None or key < ceiling)
        else:
            ok = {
                "==": key == other,
                "===": version == text,
                "!=": key != other,
                ">=": key >= other,
                "<=": key <= other,
                ">": key > other,
                "<": key < other,
            }[op]
        if not ok:
            return False
    return True


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
        _metadata_version,
        _installed_here,
        _ask_interpreter,
        _collect,
    ):
        cached.cache_clear()
