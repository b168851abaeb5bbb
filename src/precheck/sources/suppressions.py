"""Read ``# precheck: ignore[...]`` comments into notes (see :mod:`precheck.suppression`).

Only real comments count: each format's comments are found by a scanner that knows its
strings (YAML's scalars from PyYAML's own scanner, TOML's four kinds of strings, shell
quotes, Python's tokenizer), so ``note: 'text # precheck: ignore-file'`` in a string or
a block scalar silences nothing. A comment that starts like a suppression but is not one
(``# precheck: ignore-file[`` with no ``]``) silences nothing either: it becomes a note of
kind :data:`MALFORMED`, which PC907 reports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .nodes import SourceNote

LINE = "suppression"
FILE = "suppression-file"
MALFORMED = "suppression-malformed"

#: the start of a comment that means to be a suppression (``#`` excluded)
_INTENT = re.compile(r"\s*precheck\s*:\s*(?P<kind>ignore-file|ignore)(?![\w-])", re.IGNORECASE)
_CODES = re.compile(r"\[(?P<codes>[^\]\n]*)\]")
_CANDIDATE = re.compile(r"#[ \t]*precheck[ \t]*:", re.IGNORECASE)
_COMMENTED = {"yaml", "toml", "env", "python"}

#: (offset of the "#") -> whether it starts a real comment
Comments = Callable[[str, list[int]], set[int]]


def scan(text: str, fmt: str, where: Callable[[tuple[int, int]], tuple[int, int]] | None = None) -> list[SourceNote]:
    """The suppression comments of a file, as notes (line and column of the ``#``).

    ``fmt``: ``yaml``, ``toml``, ``env`` (env files and shell scripts) or ``python``;
    ``where`` maps a (line, 0-based column) of ``text`` to the file's (line, column) when
    ``text`` is not the file itself (a notebook's code)."""
    if fmt not in _COMMENTED:
        return []
    candidates = [m.start() for m in _CANDIDATE.finditer(text)]
    if not candidates:
        return []
    real = _SCANNERS[fmt](text, candidates)
    notes = []
    starts = _line_starts(text)
    for offset in candidates:
        if offset not in real:
            continue
        line, column0 = _place(starts, offset)
        end = text.find("\n", offset)
        note = _note(text[offset + 1 : len(text) if end < 0 else end])
        if note is None:
            continue
        line, column = where((line, column0)) if where is not None else (line, column0 + 1)
        note.line, note.column = line, column
        notes.append(note)
    return notes


def _note(comment: str) -> SourceNote | None:
    """The note for one comment's text (after the ``#``), or None when it is no suppression."""
    intent = _INTENT.match(comment)
    if intent is None:
        return None
    kind = FILE if intent.group("kind").lower() == "ignore-file" else LINE
    rest = comment[intent.end() :]
    codes = ""
    if rest.lstrip(" \t").startswith("[") and not rest.startswith("["):
        return SourceNote(
            MALFORMED, f"`# {comment.strip()}`: write the codes right after `{intent.group('kind')}`", 0, 0
        )
    if rest.startswith("["):
        found = _CODES.match(rest)
        if found is None:
            return SourceNote(MALFORMED, f"`# {comment.strip()}` has no closing `]`: it silences nothing", 0, 0)
        codes = ",".join(c.strip().upper() for c in found.group("codes").split(",") if c.strip())
        if not codes:
            return SourceNote(MALFORMED, f"`# {comment.strip()}` names no rule: it silences nothing", 0, 0)
    return SourceNote(kind, codes, 0, 0)


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer("\n", text))]


def _place(starts: list[int], offset: int) -> tuple[int, int]:
    """1-based line and 0-based column of ``offset``."""
    import bisect

    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index]


def _after_space(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1] in " \t\r\n"


def _yaml(text: str, candidates: list[int]) -> set[int]:
    """A ``#`` after whitespace, outside every scalar PyYAML's scanner finds (quoted, plain
    or block)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    try:
        for token in yaml.scan(text, Loader=loader):
            if isinstance(token, yaml.ScalarToken):
                start, end = token.start_mark, token.end_mark
                spans.append(((start.line, start.column), (end.line, end.column)))
    except yaml.YAMLError:  # the parser would have said so first; nothing is silenced
        return set()
    starts = _line_starts(text)
    out = set()
    for offset in candidates:
        if not _after_space(text, offset):
            continue
        line, column = _place(starts, offset)
        here = (line - 1, column)
        if not any(start <= here < end for start, end in spans):
            out.add(offset)
    return out


_TOML_TOKEN = re.compile(
    r'"""(?:\\.|[^\\])*?"""(?!")|\'\'\'[\s\S]*?\'\'\'(?!\')|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'|#[^\n]*'
)


def _toml(text: str, candidates: list[int]) -> set[int]:
    """A ``#`` outside TOML's basic, literal and multi-line strings."""
    return {m.start() for m in _TOML_TOKEN.finditer(text) if m.group().startswith("#")} & set(candidates)


_SHELL_TOKEN = re.compile(
    r"\\.|'[^']*'|\"(?:\\.|[^\"\\])*\"|\$\(\("
    r"|(?<!<)<<(?P<strip>-?)[ \t]*(?:'(?P<single>[^'\n]*)'|\"(?P<double>[^\"\n]*)\"|\\?(?P<word>[\w.-]+))"
    r"|(?:^|(?<=[\s;&|(]))#[^\n]*|\n",
    re.MULTILINE,
)


def _shell(text: str, candidates: list[int]) -> set[int]:
    """A ``#`` that starts a word, outside quotes (env files, shell scripts, Makefiles), and
    outside what bash reads as no comment: a here-document's body (its lines are the
    command's input) and an arithmetic expansion ``$((...))``."""
    out: set[int] = set()
    pending: list[tuple[str, bool]] = []  # here-documents whose bodies start at the next line
    pos = 0
    while (match := _SHELL_TOKEN.search(text, pos)) is not None:
        token, pos = match.group(), match.end()
        if token == "\n":
            for delimiter, strip in pending:  # skip each body, up to its delimiter line
                while pos < len(text):
                    end = text.find("\n", pos)
                    end = len(text) if end < 0 else end
                    line = text[pos:end].rstrip("\r")
                    pos = end + 1
                    if (line.lstrip("\t") if strip else line) == delimiter:
                        break
            pending.clear()
        elif token == "$((":
            pos = _arithmetic_end(text, pos)
        elif token.startswith("<<"):
            pending.append(
                (
                    match.group("single") or match.group("double") or match.group("word") or "",
                    bool(match.group("strip")),
                )
            )
        elif token.startswith("#"):
            out.add(match.start())
    return out & set(candidates)


def _arithmetic_end(text: str, pos: int) -> int:
    """Past the ``))`` that closes a ``$((`` ending at ``pos`` (nested parentheses counted)."""
    depth = 2
    for index in range(pos, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _python(text: str, candidates: list[int]) -> set[int]:
    """Python's own tokenizer: its COMMENT tokens."""
    import io
    import tokenize

    starts = _line_starts(text)
    out = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                line, column = token.start
                out.add(starts[line - 1] + column)
    except (tokenize.TokenError, SyntaxError, IndexError):
        pass  # the comments read up to the error still count
    return out & set(candidates)


_SCANNERS: dict[str, Comments] = {"yaml": _yaml, "toml": _toml, "env": _shell, "python": _python}


def malformed(notes: list[SourceNote]) -> Iterator[SourceNote]:
    """The notes of comments that look like suppressions but are not."""
    return (n for n in notes if n.kind == MALFORMED)
