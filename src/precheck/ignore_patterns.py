"""``.gitignore``-style patterns: which files a folder search passes over.

gitignore(5) as git's ``wildmatch`` reads it: ``#`` comments, ``!`` negation (the last
matching pattern wins), ``\\`` escapes, trailing spaces dropped, a trailing ``/`` for
folders only, a leading or inner ``/`` anchoring the pattern to the folder that holds it,
``*``/``?``/``[...]`` (``[!...]``, ranges, ``[:alpha:]`` classes) within a name and ``**``
across folders. Patterns from ``--exclude``, the project's ``exclude`` and
``per-file-ignores`` behave like a ``.gitignore`` in the current folder.

Matching is linear in the path's length times the pattern's (a set of positions in the
pattern advanced one character at a time, never backtracking): a pull request cannot slow
the search down with ``*a*a*a*a*a*ab`` or twenty-five ``**/``. A pattern git cannot use (an
unclosed ``[``, a trailing ``\\``) matches nothing, as in git, and is reported once.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .bounded_read import read_text
from .escape import printable

# tokens of a compiled pattern
_LITERAL, _ONE, _STAR, _CLASS, _DIRS, _ALL = range(6)

#: POSIX classes git's wildmatch knows inside brackets
_CLASSES: dict[str, Callable[[str], bool]] = {
    "alnum": str.isalnum,
    "alpha": str.isalpha,
    "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
    "digit": lambda c: "0" <= c <= "9",
    "graph": lambda c: c.isprintable() and not c.isspace(),
    "lower": str.islower,
    "print": str.isprintable,
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace(),
    "space": str.isspace,
    "upper": str.isupper,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}


class Unusable(ValueError):
    """A pattern git's wildmatch gives up on (it then matches nothing)."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class CharClass:
    """A bracket expression of a pattern (``[a-z]``, ``[!0-9]``, ``[[:alpha:]]``)."""

    negated: bool
    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    named: tuple[str, ...]

    def matches(self, char: str) -> bool:
        if char == "/":
            return False
        hit = (
            char in self.chars
            or any(low <= char <= high for low, high in self.ranges)
            or any(_CLASSES[name](char) for name in self.named)
        )
        return hit != self.negated


Token = tuple[int, object]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Pattern:
    """A gitignore-style pattern (a .gitignore line, an --exclude or per-file-ignores glob), read into tokens."""

    tokens: tuple[Token, ...]
    negated: bool
    dirs_only: bool
    #: the folder the pattern is relative to (the .gitignore's)
    base: PurePosixPath
    #: the line as written
    text: str = ""
    #: the same pattern as a regular expression, for patterns that cannot backtract much
    #: (one ``*`` at most, ``**`` only in front or at the end): faster in the common case
    fast: re.Pattern[str] | None = None

    def match(self, path: str) -> bool:
        """Whether ``path`` (relative to ``base``) or one of the folders in it matches."""
        if self.fast is not None:
            return self.fast.fullmatch(path) is not None
        return _run(self.tokens, path)


def _class(glob: str, start: int) -> tuple[CharClass, int]:
    """The bracket expression opening at ``glob[start] == "["``, and the index after it."""
    i = start + 1
    negated = i < len(glob) and glob[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    named: list[str] = []
    first = True
    while i < len(glob):
        char = glob[i]
        if char == "]" and not first:
            return CharClass(negated, frozenset(chars), tuple(ranges), tuple(named)), i + 1
        first = False
        if char == "[" and glob.startswith("[:", i):
            end = glob.find(":]", i + 2)
            if end < 0:
                raise Unusable("an unclosed [: class")
            name = glob[i + 2 : end]
            if name not in _CLASSES:
                raise Unusable(f"an unknown class [:{name}:]")
            named.append(name)
            i = end + 2
            continue
        if char == "\\":
            i += 1
            if i >= len(glob):
                break
            char = glob[i]
        if i + 2 < len(glob) and glob[i + 1] == "-" and glob[i + 2] != "]":
            high_at = i + 2
            if glob[high_at] == "\\":
                high_at += 1
                if high_at >= len(glob):
                    break
            # git tests the first end on its own before the range: [z-a] matches "z" only
            chars.add(char)
            ranges.append((char, glob[high_at]))
            i = high_at + 1
            continue
        chars.add(char)
        i += 1
    raise Unusable("an unclosed [")


def _tokens(glob: str) -> tuple[Token, ...]:
    out: list[Token] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            run = i
            while i < len(glob) and glob[i] == "*":
                i += 1
            double = i - run >= 2 and (run == 0 or glob[run - 1] == "/")
            if double and glob.startswith("/", i):  # **/ : zero or more folders
                out.append((_DIRS, None))
                i += 1
            elif double and i == len(glob):  # a/** : everything inside a
                out.append((_ALL, None))
            elif not out or out[-1][0] != _STAR:
                out.append((_STAR, None))
            continue
        if char == "?":
            out.append((_ONE, None))
        elif char == "[":
            klass, i = _class(glob, i)
            out.append((_CLASS, klass))
            continue
        elif char == "\\":
            i += 1
            if i >= len(glob):
                raise Unusable("a trailing backslash")
            out.append((_LITERAL, glob[i]))
        else:
            out.append((_LITERAL, char))
        i += 1
    return tuple(out)


def _closure(tokens: tuple[Token, ...], states: set[int]) -> set[int]:
    """Add the positions reachable without reading a character: past ``*``, ``**`` and,
    from its start only, past ``**/`` (inside it, only a ``/`` leads on; that state is
    ``~index``)."""
    pending = list(states)
    while pending:
        state = pending.pop()
        if 0 <= state < len(tokens) and tokens[state][0] in (_STAR, _DIRS, _ALL) and state + 1 not in states:
            states.add(state + 1)
            pending.append(state + 1)
    return states


def _run(tokens: tuple[Token, ...], text: str) -> bool:
    """Simulate the pattern on ``text``: at most 2*len(tokens)+1 positions per character.
    True when the whole text, or a part of it ending before a ``/`` (a folder), matches."""
    end = len(tokens)
    states = _closure(tokens, {0})
    for char in text:
        if char == "/" and end in states:
            return True
        following: set[int] = set()
        for state in states:
            if state < 0:  # inside a **/: any characters, then a "/" ends the folders
                following.add(state)
                if char == "/":
                    following.add(~state + 1)
                continue
            if state == end:
                continue
            kind, value = tokens[state]
            if kind == _LITERAL:
                if value == char:
                    following.add(state + 1)
            elif kind == _ONE:
                if char != "/":
                    following.add(state + 1)
            elif kind == _CLASS:
                assert isinstance(value, CharClass)
                if value.matches(char):
                    following.add(state + 1)
            elif kind == _STAR:
                if char != "/":
                    following.add(state)
            elif kind == _DIRS:
                following.add(~state)
                if char == "/":
                    following.add(state + 1)
            else:  # _ALL
                following.add(state)
        if not following:
            return False
        states = _closure(tokens, following)
    return end in states


def _strip(line: str) -> str:
    """The pattern without its line end and its unescaped trailing spaces."""
    text = line.rstrip("\r\n")
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    return text


#: patterns reported as unusable in this process: each once
_REPORTED: set[tuple[str, str]] = set()


def compile_pattern(line: str, base: PurePosixPath, source: str | None = None) -> Pattern | None:
    """A pattern, or None for a blank line, a comment or a pattern git cannot use (reported
    once on standard error, naming ``source``: the file or option it came from)."""
    text = _strip(line)
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated or text.startswith(("\\#", "\\!")):  # \# and \! stand for themselves
        text = text[1:]
    dirs_only = text.endswith("/") and not text.endswith("\\/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    try:
        tokens = _tokens(text)
    except Unusable as why:
        _report(source or "exclude pattern", line.rstrip("\r\n"), str(why))
        return None
    if not anchored:  # a name: at any depth
        tokens = ((_DIRS, None), *tokens)
    return Pattern(tokens, negated, dirs_only, base, line.rstrip("\r\n"), _fast(tokens))


def _fast(tokens: tuple[Token, ...]) -> re.Pattern[str] | None:
    """A regular expression for a pattern that cannot make it backtrack more than linearly."""
    kinds = [kind for kind, _ in tokens]
    inner = kinds[1:-1] if len(kinds) > 2 else []
    if _CLASS in kinds or kinds.count(_STAR) > 1 or _DIRS in inner or _ALL in inner or _DIRS in kinds[-1:]:
        return None
    if kinds[:1] == [_ALL] and len(kinds) > 1:
        return None
    out = []
    for kind, value in tokens:
        if kind == _LITERAL:
            out.append(re.escape(str(value)))
        elif kind == _ONE:
            out.append("[^/]")
        elif kind == _STAR:
            out.append("[^/]*")
        elif kind == _DIRS:
            out.append("(?:.*/)?")
        else:
            out.append(".*")
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


def _report(source: str, line: str, why: str) -> None:
    if (source, line) in _REPORTED:
        return
    _REPORTED.add((source, line))
    shown = line.encode("unicode_escape", errors="backslashreplace").decode("ascii")
    message = f"precheck: warning: {printable(source)}: pattern `{shown}` has {why}; git ignores it, so does precheck"
    print(message, file=sys.stderr)


def read_gitignore(folder: Path, base: PurePosixPath) -> list[Pattern]:
    """The patterns of ``folder/.gitignore`` (none when it is missing or not a regular
    file of at most the size limit)."""
    path = folder / ".gitignore"
    try:
        text = read_text(path)
    except OSError:
        return []
    shown = (base / ".gitignore").as_posix()
    return [p for line in text.splitlines() if (p := compile_pattern(line, base, shown)) is not None]


def ignored(patterns: list[Pattern], relative: PurePosixPath, is_dir: bool) -> bool:
    """Whether ``relative`` (to the searched folder) is excluded; the last match decides.

    A pattern that matches a folder above the path excludes the path too."""
    verdict = False
    for pattern in patterns:
        try:
            inside = relative.relative_to(pattern.base)
        except ValueError:
            continue
        if _matches(pattern, inside.parts, is_dir):
            verdict = not pattern.negated
    return verdict


def _matches(pattern: Pattern, parts: tuple[str, ...], is_dir: bool) -> bool:
    """The path itself, or one of the folders above it (only those for a folder pattern
    and a file)."""
    if pattern.dirs_only and not is_dir:
        parts = parts[:-1]
    return bool(parts) and pattern.match("/".join(parts))
