"""Which version of each framework a run uses, and where precheck learnt it.

First match wins: ``--assume-version NAME==VERSION``; exact pins (``name==X``) in
``requirements*.txt`` beside the config or in a folder above it, up to the repository
root; the distribution installed in the environment precheck runs in (read from its
metadata, never imported). Anything else leaves the version unknown, and
version-dependent rules say so.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .errors import UsageError

_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([0-9][^\s;#,]*)\s*(?:[;#].*)?$")
_ASSUME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][^\s]*)\s*$")
_PIN_FILES = "requirements*.txt"
_MAX_PARENTS = 8


def canonical(name: str) -> str:
    """PEP 503 normalisation: ``MS_Swift`` → ``ms-swift``."""
    return re.sub(r"[-_.]+", "-", name).lower()


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


def _pin_files(config_path: Path) -> list[Path]:
    files: list[Path] = []
    folder = config_path.resolve().parent
    for _ in range(_MAX_PARENTS):
        with contextlib.suppress(OSError):
            files.extend(sorted(folder.glob(_PIN_FILES)))
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
    return files


def read_pins(path: Path, shown: str) -> dict[str, VersionInfo]:
    """Exact pins in one requirements file; ranges, URLs and options are skipped."""
    out: dict[str, VersionInfo] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    for number, line in enumerate(lines, start=1):
        match = _PIN.match(line)
        if match:
            name = canonical(match.group(1))
            out.setdefault(name, VersionInfo(name, match.group(2), f"{shown}:{number}"))
    return out


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def collect(config_path: str, wanted: Iterable[str], assumed: dict[str, VersionInfo]) -> Versions:
    """The versions of ``wanted`` frameworks for the run configured at ``config_path``."""
    known: dict[str, VersionInfo] = {}
    names = {canonical(n) for n in wanted}
    for name in names:
        if name in assumed:
            known[name] = assumed[name]
    missing = names - known.keys()
    if missing:
        for pin_file in _pin_files(Path(config_path)):
            pins = read_pins(pin_file, _display(pin_file))
            for name in missing & pins.keys():
                known.setdefault(name, pins[name])
            missing = names - known.keys()
            if not missing:
                break
    for name in sorted(missing):
        try:
            known[name] = VersionInfo(name, metadata.version(name), "installed")
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # a broken dist-info must not stop the check
            continue
    return Versions(known)
