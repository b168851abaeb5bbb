"""Version pins in the files projects keep them in, each with its file and line.

A pin is an exact release (``==X``, a lock file's resolved version, conda's ``=X``) or, in
``requirements*.txt`` and PEP 621 dependency lists, a PEP 440 range (``>=3.0,<3.4``,
``~=3.2``, ``==3.3.*``), as pip reads it: extras, environment markers, ``\\`` continuation
lines and ``--hash`` options of pip-compile output, ``-r``/``-c`` includes. URLs and
unreadable files say nothing and are skipped. Nothing here raises: a broken pin file is
simply not evidence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from .bounded_read import read_text

#: (canonical name, version, 1-based line)
Pin = tuple[str, str, int]

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([<>=!~][^;]*?)\s*(?:;(.*))?$")
_EXACT = re.compile(r"^===?([0-9][0-9A-Za-z.!+_-]*)$")
#: a PEP 440 specifier list, whitespace removed (checked by packaging when it is compared)
_SPEC = r"(?:~=|===?|!=|<=|>=|<|>)[0-9][0-9A-Za-z.!+_*-]*"
_SPECIFIERS = re.compile(rf"^{_SPEC}(?:,{_SPEC})*$")
_OPTION = re.compile(r"\s--?[A-Za-z][\w-]*(?:[ =]\S+)?")
_QUOTED_REQ = re.compile(r"""["']\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([0-9][^\s;"',]*)""")
_QUOTED = re.compile(r"""["']([^"']+)["']""")
_POETRY_DEP = re.compile(
    r"""^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*(?:\{[^}]*version\s*=\s*)?["']=?=?\s*([0-9][^"'\s,*^~<>]*)["']"""
)
_LOCK_NAME = re.compile(r'^name\s*=\s*"([^"]+)"')
_LOCK_VERSION = re.compile(r'^version\s*=\s*"([^"]+)"')
_CONDA = re.compile(r"^\s*-\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(==?)\s*([0-9][^\s=#]*)")
_INCLUDE = re.compile(r"^\s*-(?:r|c)\s+(\S+)|^\s*--(?:requirement|constraint)[ =](\S+)")

PIN_FILES = ("requirements*.txt", "pyproject.toml", "uv.lock", "poetry.lock", "environment.yml", "environment.yaml")


@lru_cache(maxsize=1024)  # a pure function, asked for the same few names by every run's configs
def canonical(name: str) -> str:
    """PEP 503 normalisation: ``Flash_Attn`` → ``flash-attn``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _lines(path: Path) -> list[str]:
    try:  # a FIFO, a device or /proc file, or an oversized file is no evidence
        return read_text(path).splitlines()
    except OSError:
        return []


def requirements(path: Path, seen: set[Path] | None = None) -> Iterator[tuple[Path, str, str, int]]:
    """Pins of a requirements file, following ``-r``/``-c`` includes once each. A pin whose
    environment marker is false here comes after the others (first match wins)."""
    seen = set() if seen is None else seen
    later: list[tuple[Path, str, str, int]] = []
    for item in _requirement_lines(path, seen):
        if isinstance(item, Path):
            yield from requirements(item, seen)
            continue
        number, name, version, marker = item
        if marker is None or marker_holds(marker):
            yield path, name, version, number
        else:
            later.append((path, name, version, number))
    yield from later


#: a pin as written: (file, canonical name, version, 1-based line, environment marker or None)
RawPin = tuple[Path, str, str, int, str | None]


def raw_requirements(path: Path, seen: set[Path] | None = None) -> Iterator[RawPin]:
    """The pins of a requirements file in line order (an include's where it is), markers
    unevaluated. :func:`requirements` moves the pins whose marker is false to the end of
    their file: that changes which pin of a name comes first only where the name is pinned
    more than once, so a reader that takes the first pin of each name evaluates markers
    (and imports ``packaging.markers``) only there."""
    seen = set() if seen is None else seen
    for item in _requirement_lines(path, seen):
        if isinstance(item, Path):
            yield from raw_requirements(item, seen)
        else:
            number, name, version, marker = item
            yield path, name, version, number, marker


def _requirement_lines(path: Path, seen: set[Path]) -> Iterator[Path | tuple[int, str, str, str | None]]:
    """A requirements file's includes (their paths) and pins (line, name, version, marker),
    in line order; nothing for a file already read."""
    try:
        key = path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, up to Python 3.12
        return
    if key in seen:
        return
    seen.add(key)
    for number, line in _logical_lines(_lines(path)):
        include = _INCLUDE.match(line)
        if include:
            yield path.parent / (include.group(1) or include.group(2))
            continue
        parsed = _parsed(line)
        if parsed is not None:
            yield number, *parsed


def _logical_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """pip's reading: a line ending in ``\\`` continues on the next; ``#`` comments go.
    Each logical line keeps the number of its first physical line."""
    start, parts = 0, list[str]()
    for number, line in enumerate(lines, start=1):
        text = re.sub(r"(^|\s)#.*$", "", line)
        if not parts:
            start = number
        if text.endswith("\\"):
            parts.append(text[:-1])
            continue
        parts.append(text)
        yield start, " ".join(parts)
        parts = []
    if parts:
        yield start, " ".join(parts)


def requirement(line: str, markers: bool = True) -> tuple[str, str, bool] | None:
    """(canonical name, exact version or PEP 440 range, whether its marker holds here) of
    one requirement line; None for anything else (URLs, options, unreadable text).
    ``markers=False`` leaves environment markers unevaluated (taken as holding)."""
    parsed = _parsed(line)
    if parsed is None:
        return None
    name, version, marker = parsed
    return name, version, not markers or marker is None or marker_holds(marker)


def _parsed(line: str) -> tuple[str, str, str | None] | None:
    """(canonical name, exact version or PEP 440 range, environment marker or None)."""
    text = _OPTION.sub("", " " + line).strip()  # --hash=..., --install-option ...
    match = _REQ.match(text)
    if match is None or "@" in match.group(2):
        return None
    text = re.sub(r"\s+", "", match.group(2))
    if not _SPECIFIERS.match(text):
        return None  # not PEP 440 (poetry's ^1.2, a URL): not evidence
    marker = (match.group(3) or "").strip() or None
    exact = _EXACT.match(text)
    return canonical(match.group(1)), exact.group(1) if exact else text, marker


def marker_holds(marker: str) -> bool:
    """Whether a PEP 508 environment marker holds for the interpreter precheck runs in
    (an unreadable marker holds: the pin is not discarded on a guess)."""
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    try:
        return Marker(marker).evaluate()
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


def pyproject(path: Path) -> Iterator[Pin]:
    """PEP 621 dependency strings and Poetry dependency tables. Optional extras
    (``[project.optional-dependencies]``), dependency groups and Poetry's dev/group tables
    are not the run's pins: they say what the package needs for a feature, a test or a
    tool (precheck's own ``hf = ["torch>=2.1", ...]`` says nothing about a config in its
    ``examples/``), and whether a run installs them is not known."""
    for pin, optional in _pyproject(path):
        if not optional:
            yield pin


def _pyproject(path: Path) -> Iterator[tuple[Pin, bool]]:
    section = ""
    for number, line in enumerate(_lines(path), start=1):
        header = re.match(r"^\s*\[([^\]]+)\]", line)
        if header:
            section = header.group(1).strip()
            continue
        if section.startswith("tool.poetry") and "dependencies" in section:
            match = _POETRY_DEP.match(line)
            if match and match.group(1) != "python":
                optional = "group" in section or "dev-dependencies" in section
                yield (canonical(match.group(1)), match.group(2), number), optional
                continue
        if section.startswith(("project", "dependency-groups")) and not line.lstrip().startswith("requires-python"):
            optional = section != "project"
            for quoted in _QUOTED.finditer(line):
                parsed = requirement(quoted.group(1), markers=False)
                if parsed is not None:
                    yield (parsed[0], parsed[1], number), optional
            continue
        for match in _QUOTED_REQ.finditer(line):
            yield (canonical(match.group(1)), match.group(2), number), False


def lock(path: Path) -> Iterator[Pin]:
    """``uv.lock`` / ``poetry.lock``: ``[[package]]`` tables with ``name`` and ``version``."""
    name: str | None = None
    for number, line in enumerate(_lines(path), start=1):
        if line.startswith("[[package]]"):
            name = None
            continue
        found = _LOCK_NAME.match(line)
        if found:
            name = found.group(1)
            continue
        version = _LOCK_VERSION.match(line)
        if version and name:
            yield canonical(name), version.group(1), number
            name = None


def conda(path: Path) -> Iterator[Pin]:
    """conda ``environment.yml``: ``- trl==0.18.2`` (that release) and ``- trl=0.18`` (the
    range ``==0.18.*``: conda's single ``=`` matches the releases that start so)."""
    for number, line in enumerate(_lines(path), start=1):
        match = _CONDA.match(line)
        if match:
            version = match.group(3)
            if match.group(2) == "=":  # conda's ``=2.1`` is every 2.1.x release (MatchSpec's fuzzy match)
                version = "==" + (version if version.endswith("*") else version.rstrip(".") + ".*")
            yield canonical(match.group(1)), version, number


def pins_in(path: Path) -> Iterator[tuple[Path, str, str, int]]:
    """Every exact pin in one file, with the file it was read from (includes differ)."""
    if _is_requirements(path.name):
        yield from requirements(path)
        return
    yield from _other_pins(path)


def first_pins_in(path: Path) -> Iterator[tuple[Path, str, str, int]]:
    """The pins of one file in an order whose first pin of each name is the first of
    :func:`pins_in` (the order of the other pins may differ): environment markers are
    evaluated only for a name pinned more than once with a marker."""
    if not _is_requirements(path.name):
        yield from _other_pins(path)
        return
    raw = list(raw_requirements(path))
    twice = {name for name, count in Counter(name for _, name, _, _, _ in raw).items() if count > 1}
    if any(marker is not None and name in twice for _, name, _, _, marker in raw):
        yield from requirements(path)  # a marker decides which pin of a name comes first
        return
    for source, name, version, number, _ in raw:
        yield source, name, version, number


def _is_requirements(name: str) -> bool:
    return name.startswith("requirements") and name.endswith(".txt")


def _other_pins(path: Path) -> Iterator[tuple[Path, str, str, int]]:
    name = path.name
    reader = {"pyproject.toml": pyproject, "uv.lock": lock, "poetry.lock": lock}.get(name)
    if reader is None and name in ("environment.yml", "environment.yaml"):
        reader = conda
    if reader is not None:
        for pin_name, version, number in reader(path):
            yield path, pin_name, version, number
