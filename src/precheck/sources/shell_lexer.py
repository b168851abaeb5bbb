"""POSIX/bash shell tokenisation with positions: a script → simple commands of words.

Only what finding launch commands needs, but shell-correct where it matters for them
(bash(1) "QUOTING", "EXPANSION", "REDIRECTION", "Here Documents"):

- quoting: ``'...'`` literal, ``"..."`` (a backslash escapes only ``$ ` " \\`` and newline),
  ``$'...'`` (ANSI-C escapes), a backslash outside quotes escapes the next character, and
  backslash-newline is removed everywhere but inside single quotes (a line continuation);
- comments: ``#`` at the start of a word, to the end of the line;
- operators end a simple command: newline ``;`` ``&`` ``&&`` ``||`` ``|`` ``|&`` ``;;``
  ``(`` ``)``; redirections (``> log``, ``2>&1``, ``&>>log``, ``<<<word``) take their
  target word out of the command; a here-document (``<<EOF`` / ``<<-EOF`` / ``<<'EOF'``)
  and a here-string (``<<<word``) become the command's input (:attr:`Command.heredoc`,
  :attr:`Command.herestring`), the body read up to its delimiter line and expanded only
  when a command reads it (:func:`heredoc_parts`: ``$X``, ``${...}``, ``$(...)`` and the
  backslash escapes of an unquoted delimiter's body; a quoted delimiter's body as written);
- expansions are kept as parts of the word for :mod:`.shell_source` to expand:
  ``$name``, ``${...}`` (with its operator: ``${X:-default}``), ``$(...)``, backquotes and
  ``$((...))`` (matched with nesting and quotes, so ``$(date +%s)`` stays one word);
- ``NAME=(a b c)`` array assignments.

Input is a :class:`Src`: text whose every character remembers its offset in the file, so a
Makefile recipe after ``$(VAR)`` expansion, or the string of ``bash -c '...'``, is lexed
with the positions of the characters as they were written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import FileTooLarge, InputError
from .nodes import position


@dataclass(slots=True)
class Src:
    """Text whose characters know their offsets in the file (``at[i]`` for ``text[i]``)."""

    text: str
    at: list[int]

    @classmethod
    def of(cls, text: str, start: int = 0) -> Src:
        return cls(text, list(range(start, start + len(text))))

    def __add__(self, other: Src) -> Src:
        return Src(self.text + other.text, self.at + other.at)

    def slice(self, start: int, end: int) -> Src:
        return Src(self.text[start:end], self.at[start:end])


@dataclass(slots=True)
class Lit:
    """Literal characters; ``quoted``: written inside quotes or escaped."""

    text: str
    at: list[int]
    quoted: bool


@dataclass(slots=True)
class Param:
    """``$name`` / ``${name...}``: ``op`` is the operator after the name (``:-``, ``-``, ``:=``,
    ``=``, ``:+``, ``+``), ``other`` for anything precheck does not evaluate (``${#X}``,
    ``${X%.*}``), and ``arg`` the word after it; ``index`` the array subscript."""

    name: str
    op: str | None
    arg: list[Part] | None
    index: str | None
    quoted: bool
    raw: Src


@dataclass(slots=True)
class Subst:
    """``$(...)``, backquotes or ``$((...))``: never run; kept as written."""

    raw: Src
    quoted: bool


Part = Lit | Param | Subst
#: adds literal characters to the word being read
LitAdder = Callable[[str, list[int], bool], None]


@dataclass(slots=True)
class Word:
    """One shell word: its parts (literals, parameters, substitutions) and its text as written."""

    parts: list[Part]
    #: the word as written (quotes included)
    raw: Src
    #: ``NAME=(...)``: the array's elements
    array: list[Word] | None = None

    @property
    def start(self) -> int:
        return self.raw.at[0] if self.raw.at else 0

    def literal(self) -> str | None:
        """The word's value when it has no expansion (quotes removed)."""
        if len(self.parts) == 1 and type(self.parts[0]) is Lit:  # most words: one literal
            return self.parts[0].text
        if all(isinstance(p, Lit) for p in self.parts):
            return "".join(p.text for p in self.parts if isinstance(p, Lit))
        return None

    @property
    def quoted(self) -> bool:
        return any(getattr(p, "quoted", False) for p in self.parts)


@dataclass(slots=True, eq=False)
class Heredoc:
    """A here-document: its body's characters (tabs stripped for ``<<-``), and whether its
    delimiter was quoted (the body is then taken as written, nothing expanded)."""

    quoted: bool
    strip_tabs: bool
    delimiter: str
    body: Src = field(default_factory=lambda: Src("", []))


@dataclass(slots=True)
class Command:
    """One simple command: its words (redirections removed), in order, and its input when
    the script gives it (the last here-document or here-string)."""

    words: list[Word] = field(default_factory=list)
    heredoc: Heredoc | None = None
    herestring: Word | None = None
    #: the files its output is redirected into (``> f``, ``>> f``, ``>| f``, ``&> f``): they
    #: exist for the commands after it (``cat <<EOF > cfg.yaml``, then ``train.py cfg.yaml``)
    writes: list[Word] = field(default_factory=list)


#: operators, longest first
_OPERATORS = (
    ";;&",
    "&>>",
    "<<<",
    "<<-",
    ";;",
    ";&",
    "&&",
    "||",
    "|&",
    "&>",
    ">>",
    ">&",
    ">|",
    "<<",
    "<&",
    "<>",
    ";",
    "&",
    "|",
    "(",
    ")",
    "<",
    ">",
)
_REDIRECTIONS = {"&>>", "<<<", "&>", ">>", ">&", ">|", "<&", "<>", "<", ">"}
_HEREDOCS = {"<<", "<<-"}
#: the redirections that write their target file (``>&`` and ``<&`` duplicate a descriptor)
_WRITES = {">", ">>", ">|", "&>", "&>>"}
_META = set(";&|()<> \t\r\n")
#: characters a word takes as they are (not an operator, a blank, a quote, an escape or an expansion)
_PLAIN = re.compile(r"[^;&|()<> \t\r\n\\'\"$`]+")
#: what may follow a plain run for it to be a whole word (``(``, ``<``, ``>`` may make it an
#: array assignment or an IO number: :meth:`Lexer.parts_word` reads those)
_WORD_END = frozenset(";&|) \t\r\n")
#: characters that stand for themselves inside double quotes (not ``"``, ``\\``, ``$``, a backquote)
_QUOTED_PLAIN = re.compile(r'[^"\\$`]+')
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = set("@*#?$!-0123456789")
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v"}


#: ``${X:-${Y:-...}}`` nested deeper than this is an input error (real scripts nest two or three)
MAX_NESTING = 50
#: the most words and operators one text (a script, a recipe, a ``-c`` string) may hold: a
#: long launch script has a few thousand; reading a 4 MB one-line command would take minutes
MAX_TOKENS = 100_000


class Lexer:
    def __init__(self, path: str, src: Src, text: str, depth: int = 0):
        self.path = path
        #: how many ``${X:-...}`` this lexer's text sits inside
        self.depth = depth
        self.src = src
        #: the whole file's text, for line/column of error messages
        self.text = text
        self.i = 0
        self.heredocs: list[Heredoc] = []

    # -- errors ------------------------------------------------------------------------------

    def error(self, message: str, index: int) -> InputError:
        offset = self.src.at[min(index, len(self.src.at) - 1)] if self.src.at else 0
        line, column = position(self.text, offset)
        return InputError(self.path, message, line, column)

    # -- commands ----------------------------------------------------------------------------

    def commands(self) -> list[Command]:
        out: list[Command] = []
        current = Command()
        target_next = herestring_next = write_next = False
        for token in self.tokens():
            if isinstance(token, Word):
                if herestring_next:
                    current.herestring, current.heredoc = token, None
                if write_next:
                    current.writes.append(token)
                if target_next:
                    target_next = herestring_next = write_next = False
                else:
                    current.words.append(token)
                continue
            if isinstance(token, Heredoc):
                current.heredoc, current.herestring = token, None
                continue
            if token in _REDIRECTIONS:
                target_next = True
                herestring_next = token == "<<<"
                write_next = token in _WRITES
                continue
            if token in _HEREDOCS:
                continue
            target_next = herestring_next = write_next = False
            if current.words:
                out.append(current)
            current = Command()
        if current.words:
            out.append(current)
        return out

    def tokens(self) -> list[Word | Heredoc | str]:
        text, n = self.src.text, len(self.src.text)
        out: list[Word | Heredoc | str] = []
        append = out.append
        i = self.i  # self.i is kept up to date around the calls that read it
        while i < n:
            c = text[i]
            if c in " \t\r":
                i += 1
            elif c == "\\" and text.startswith("\n", i + 1):
                i += 2
            elif c == "\n":
                append("\n")
                i += 1
                if self.heredocs:
                    self.i = i
                    self.skip_heredocs()
                    i = self.i
            elif c == "#":
                end = text.find("\n", i)
                i = n if end < 0 else end
            elif c in _META:
                op = next(o for o in _OPERATORS if text.startswith(o, i))
                i += len(op)
                append(op)
                if op in _HEREDOCS:
                    self.i = i
                    append(self.heredoc(op == "<<-"))
                    i = self.i
            else:
                self.i = i
                word = self.word()
                i = self.i
                if word is not None:
                    append(word)
                    if len(out) > MAX_TOKENS:  # refused for its size: reported in a folder search too
                        error = self.error(
                            f"more than {MAX_TOKENS:,} words and operators: larger than any launch script; not read",
                            i - 1,
                        )
                        raise FileTooLarge(error.path, error.message, error.line, error.column)
        self.i = i
        return out

    # -- here-documents ------------------------------------------------------------------------

    def heredoc(self, strip_tabs: bool) -> Heredoc:
        text = self.src.text
        while self.i < len(text) and text[self.i] in " \t":
            self.i += 1
        start = self.i
        word = self.word()
        if word is None:
            raise self.error("a here-document needs a delimiter word after <<", start)
        delimiter = "".join(p.text if isinstance(p, Lit) else p.raw.text for p in word.parts)
        quoted = any(c in word.raw.text for c in "'\"\\")  # bash: any quoting of the word
        doc = Heredoc(quoted, strip_tabs, delimiter)
        self.heredocs.append(doc)
        return doc

    def skip_heredocs(self) -> None:
        """After the newline that ends a command: each pending here-document's body, up to
        its delimiter line."""
        text, at = self.src.text, self.src.at
        for doc in self.heredocs:
            chars: list[str] = []
            offsets: list[int] = []
            while self.i < len(text):
                start = self.i
                end = text.find("\n", self.i)
                stop = len(text) if end < 0 else end + 1
                self.i = stop
                if doc.strip_tabs:
                    while start < stop and text[start] == "\t":
                        start += 1
                if text[start : stop - (end >= 0)] == doc.delimiter:
                    break
                chars.append(text[start:stop])
                offsets.extend(at[start:stop])
            doc.body = Src("".join(chars), offsets)
        self.heredocs = []

    # -- words -----------------------------------------------------------------------------------

    def word(self) -> Word | None:
        """The word at ``self.i``. A run of plain characters up to a blank or an operator (most
        words of a launch script: ``torchrun``, ``--bf16``, ``True``) is taken at once, as
        :meth:`parts_word` would take it (one unquoted :class:`Lit`); a ``(`` (``NAME=(``),
        ``<`` or ``>`` (``2>``) after it, and any other word, is read part by part."""
        text, start = self.src.text, self.i
        plain = _PLAIN.match(text, start)
        if plain is not None:
            end = plain.end()
            if end == len(text) or text[end] in _WORD_END:
                at = self.src.at
                self.i = end
                chars = text[start:end]
                return Word([Lit(chars, at[start:end], False)], Src(chars, at[start:end]))
        return self.parts_word()

    def parts_word(self) -> Word | None:
        """The word at ``self.i``, read part by part (quotes, escapes, expansions)."""
        text, n = self.src.text, len(self.src.text)
        start = self.i
        parts: list[Part] = []

        def lit(chars: str, at: list[int], quoted: bool) -> None:
            if parts and isinstance(parts[-1], Lit) and parts[-1].quoted == quoted:
                parts[-1].text += chars
                parts[-1].at.extend(at)
            else:
                parts.append(Lit(chars, list(at), quoted))

        while self.i < n:
            c = text[self.i]
            if c in _META:
                if c == "(" and self.array_start(parts):
                    elements = self.array()
                    return Word(parts, self.src.slice(start, self.i), elements)
                if c in "<>" and _io_number(parts):
                    return None  # an IO number (``2>``): part of the redirection
                break
            if c == "\\":
                if self.i + 1 >= n:
                    self.i += 1
                    break
                if text[self.i + 1] == "\n":
                    self.i += 2
                    continue
                lit(text[self.i + 1], [self.src.at[self.i + 1]], True)
                self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise self.error("unterminated single quote", self.i)
                lit(text[self.i + 1 : end], self.src.at[self.i + 1 : end], True)
                if end == self.i + 1:
                    lit("", [], True)
                self.i = end + 1
            elif c == '"':
                self.double_quoted(parts, lit)
            elif c == "$" and text.startswith("'", self.i + 1):
                self.ansi_c(lit)
            elif c == "$" or c == "`":
                part = self.expansion(quoted=False)
                if part is None:
                    lit("$", [self.src.at[self.i]], False)
                    self.i += 1
                else:
                    parts.append(part)
            else:  # a run of plain characters, taken at once
                end = _PLAIN.match(text, self.i).end()  # type: ignore[union-attr]  # c is one
                lit(text[self.i : end], self.src.at[self.i : end], False)
                self.i = end
        if self.i == start:
            return None
        return Word(parts, self.src.slice(start, self.i))

    def array_start(self, parts: list[Part]) -> bool:
        if len(parts) != 1 or not isinstance(parts[0], Lit) or parts[0].quoted:
            return False
        return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?=", parts[0].text) is not None

    def array(self) -> list[Word]:
        """``NAME=(...)``: the words up to the closing parenthesis (comments and newlines allowed)."""
        text, n = self.src.text, len(self.src.text)
        opening = self.i
        self.i += 1
        elements: list[Word] = []
        while self.i < n:
            c = text[self.i]
            if c in " \t\r\n":
                self.i += 1
            elif c == "\\" and text.startswith("\n", self.i + 1):
                self.i += 2
            elif c == "#":
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c == ")":
                self.i += 1
                return elements
            elif c in _META:
                raise self.error(f"unexpected `{c}` in an array assignment", self.i)
            else:
                word = self.word()
                if word is None:  # pragma: no cover - a word always starts here
                    self.i += 1
                else:
                    elements.append(word)
        raise self.error("unterminated array assignment: no closing `)`", opening)

    def double_quoted(self, parts: list[Part], lit: LitAdder) -> None:
        text, n = self.src.text, len(self.src.text)
        opening = self.i
        self.i += 1
        empty = True
        while self.i < n:
            c = text[self.i]
            if c == '"':
                self.i += 1
                if empty:
                    lit("", [], True)
                return
            empty = False
            if c == "\\" and self.i + 1 < n and text[self.i + 1] in '$`"\\\n':
                if text[self.i + 1] != "\n":
                    lit(text[self.i + 1], [self.src.at[self.i + 1]], True)
                self.i += 2
            elif c == "$" or c == "`":
                part = self.expansion(quoted=True)
                if part is None:
                    lit("$", [self.src.at[self.i]], True)
                    self.i += 1
                else:
                    parts.append(part)
            else:  # a run of characters that are only themselves inside double quotes, at once
                end = _QUOTED_PLAIN.match(text, self.i)
                stop = self.i + 1 if end is None else end.end()  # None: a backslash kept as it is
                lit(text[self.i : stop], self.src.at[self.i : stop], True)
                self.i = stop
        raise self.error("unterminated double quote", opening)

    def ansi_c(self, lit: LitAdder) -> None:
        """``$'...'``: backslash escapes as in C."""
        text, n = self.src.text, len(self.src.text)
        opening = self.i
        self.i += 2
        while self.i < n:
            c = text[self.i]
            if c == "'":
                self.i += 1
                return
            if c == "\\" and self.i + 1 < n:
                nxt = text[self.i + 1]
                lit(_ANSI.get(nxt, nxt), [self.src.at[self.i]], True)
                self.i += 2
            else:
                lit(c, [self.src.at[self.i]], True)
                self.i += 1
        raise self.error("unterminated $'...' quote", opening)

    # -- expansions ------------------------------------------------------------------------------

    def expansion(self, quoted: bool) -> Part | None:
        """The expansion at ``self.i`` (``$`` or a backquote), or None for a literal ``$``."""
        text, n = self.src.text, len(self.src.text)
        start = self.i
        if text[start] == "`":
            end = start + 1
            while end < n and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= n:
                raise self.error("unterminated backquote command substitution", start)
            self.i = end + 1
            return Subst(self.src.slice(start, self.i), quoted)
        nxt = text[start + 1] if start + 1 < n else ""
        if nxt == "(":
            self.i = self.matching(start + 1, "(", ")")
            return Subst(self.src.slice(start, self.i), quoted)
        if nxt == "{":
            close = self.matching(start + 1, "{", "}")
            self.i = close
            return self.braced(start, close, quoted)
        match = _NAME.match(text, start + 1)
        if match is not None:
            self.i = match.end()
            return Param(match.group(), None, None, None, quoted, self.src.slice(start, self.i))
        if nxt and nxt in _SPECIAL:
            self.i = start + 2
            return Param(nxt, None, None, None, quoted, self.src.slice(start, self.i))
        return None

    def matching(self, opening_at: int, opening: str, closing: str) -> int:
        """The index after the bracket that closes the one at ``opening_at`` (quotes respected)."""
        text, n = self.src.text, len(self.src.text)
        depth, i = 0, opening_at
        while i < n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == "'" and closing == ")":
                end = text.find("'", i + 1)
                i = n if end < 0 else end + 1
                continue
            if c == '"':
                i += 1
                while i < n and text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
                i += 1
                continue
            if c == opening:
                depth += 1
            elif c == closing:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        kind = "command substitution $(" if opening == "(" else "parameter expansion ${"
        raise self.error(f"unterminated {kind}: no closing `{closing}`", opening_at - 1)

    def braced(self, start: int, end: int, quoted: bool) -> Part:
        """``${...}`` from ``start`` (the ``$``) to ``end`` (after the ``}``)."""
        inner_start, inner_end = start + 2, end - 1
        text = self.src.text
        raw = self.src.slice(start, end)
        match = _NAME.match(text, inner_start, inner_end) or re.compile(r"[@*#?$!0-9-]").match(
            text, inner_start, inner_end
        )
        if match is None or (text.startswith("#", inner_start) and match.end() < inner_end):
            return Param("", "other", None, None, quoted, raw)  # ${#X}, ${!X}: not evaluated
        name, i = match.group(), match.end()
        index = None
        if i < inner_end and text[i] == "[":
            close = text.find("]", i, inner_end)
            if close < 0:
                return Param(name, "other", None, None, quoted, raw)
            index, i = text[i + 1 : close], close + 1
        if i == inner_end:
            return Param(name, None, None, index, quoted, raw)
        op = next((o for o in (":-", ":=", ":+", ":?", "-", "=", "+", "?") if text.startswith(o, i)), None)
        if op is None:
            return Param(name, "other", None, index, quoted, raw)
        if self.depth >= MAX_NESTING:
            raise self.error(f"parameter expansions nested deeper than {MAX_NESTING} levels; not read", start)
        sub = Lexer(self.path, self.src.slice(i + len(op), inner_end), self.text, self.depth + 1)
        arg = sub.default_word(quoted)
        return Param(name, op, arg, index, quoted, raw)

    def default_word(self, quoted: bool) -> list[Part]:
        """The word of ``${X:-word}``: quotes and expansions as in a word, spaces kept."""
        text, n = self.src.text, len(self.src.text)
        parts: list[Part] = []

        def lit(chars: str, at: list[int], q: bool) -> None:
            parts.append(Lit(chars, list(at), q))

        while self.i < n:
            c = text[self.i]
            if c == "\\" and self.i + 1 < n:
                lit(text[self.i + 1], [self.src.at[self.i + 1]], True)
                self.i += 2
            elif c == "'" and not quoted:
                end = text.find("'", self.i + 1)
                end = n if end < 0 else end
                lit(text[self.i + 1 : end], self.src.at[self.i + 1 : end], True)
                self.i = end + 1
            elif c == '"':
                self.double_quoted(parts, lit)
            elif c in "$`":
                part = self.expansion(quoted)
                if part is None:
                    lit("$", [self.src.at[self.i]], quoted)
                    self.i += 1
                else:
                    parts.append(part)
            else:
                lit(c, [self.src.at[self.i]], quoted)
                self.i += 1
        return parts


def heredoc_parts(doc: Heredoc, path: str, text: str) -> list[Part] | None:
    """A here-document's body as the command reading it gets it: a quoted delimiter's body as
    written; otherwise expanded as inside double quotes, but a ``"`` is only itself (bash(1)
    "Here Documents": a backslash escapes only ``$``, a backquote, ``\\`` and newline). None
    when an expansion in it is malformed (an unterminated ``$(``): its value is not known."""
    body = doc.body
    if doc.quoted:
        return [Lit(body.text, list(body.at), True)]
    lexer = Lexer(path, body, text)
    parts: list[Part] = []

    def lit(chars: str, at: list[int], quoted: bool) -> None:
        if parts and isinstance(parts[-1], Lit):
            parts[-1].text += chars
            parts[-1].at.extend(at)
        else:
            parts.append(Lit(chars, list(at), quoted))

    source, n = body.text, len(body.text)
    try:
        while lexer.i < n:
            c = source[lexer.i]
            if c == "\\" and lexer.i + 1 < n and source[lexer.i + 1] in "$`\\\n":
                if source[lexer.i + 1] != "\n":
                    lit(source[lexer.i + 1], [body.at[lexer.i + 1]], True)
                lexer.i += 2
            elif c in "$`":
                part = lexer.expansion(quoted=True)
                if part is None:
                    lit("$", [body.at[lexer.i]], True)
                    lexer.i += 1
                else:
                    parts.append(part)
            else:
                stop = lexer.i + 1
                while stop < n and source[stop] not in "\\$`":
                    stop += 1
                lit(source[lexer.i : stop], body.at[lexer.i : stop], True)
                lexer.i = stop
    except InputError:
        return None
    return parts


def _io_number(parts: list[Part]) -> bool:
    """The word so far is all digits, unquoted: ``2`` in ``2>&1``."""
    if not parts or not all(isinstance(p, Lit) and not p.quoted for p in parts):
        return False
    return "".join(p.text for p in parts if isinstance(p, Lit)).isdigit()


def lex(path: str, src: Src, text: str) -> list[Command]:
    """The simple commands of ``src`` (a whole script, a Makefile recipe, a ``-c`` string)."""
    return Lexer(path, src, text).commands()
