"""A finding's headline: what is wrong and where, in the user's terms, under ~120 characters.

A rule's message is written as *headline*, then the evidence: ``HEADLINE: the error the
framework raises (where in its code)``, ``HEADLINE; why it matters``, ``HEADLINE. More.``,
and a version note ``[FRAMEWORK 3.2.2 (requirements.txt:2)]`` at the end. The headline is
the text up to the first ``: ``, ``; `` or ``. `` outside backticks, quotes, parentheses
and brackets; the rest is the detail, which ``precheck explain``, JSON ``message`` and
SARIF keep in full. tests/test_headlines.py holds every rule's headline on the examples,
the corpus and the projects to the length bound and keeps framework internals out of it.
"""

from __future__ import annotations

#: what the headline is held to (tests/test_headlines.py)
LIMIT = 120

_OPEN = {"(": ")", "[": "]", "{": "}"}
_QUOTES = '`"'
#: a cut is not made before this many characters: "error: ..." keeps its first clause
_MIN = 24
#: a first clause that ends in ``:`` shorter than this names only the subject
_SHORT = 48


def headline(message: str) -> str:
    """The first clause of ``message``; while that is over :data:`LIMIT`, its longest
    parenthesis goes too (``(from the DeepSpeed config ...)``)."""
    text, _note = _version_note(message.strip())
    cut = _first_cut(text)
    if cut is not None and text[cut] == ":" and cut < _SHORT:
        # ``CUDA_VISIBLE_DEVICES='1': entry '1' names no device``: the subject, then what is wrong
        after = _first_cut(text, cut + 2)
        if (after or len(text)) <= LIMIT:
            cut = after
    head = text if cut is None else text[:cut].rstrip(" .;:,")
    while len(head) > LIMIT:
        shorter = _without_longest_group(head)
        if shorter == head:
            break
        head = shorter
    return head


def _without_longest_group(text: str) -> str:
    """``text`` less its longest top-level ``(...)`` of over 12 characters."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char == "(":
            if depth == 0:
                start = index
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, index + 1))
    spans = [s for s in spans if s[1] - s[0] > 12]
    if not spans:
        return text
    begin, end = max(spans, key=lambda s: s[1] - s[0])
    return (text[:begin].rstrip() + text[end:]).replace(" ,", ",").strip()


def _version_note(text: str) -> tuple[str, str]:
    """A closing ``[framework VERSION (source)]`` note, apart."""
    if not text.endswith("]"):
        return text, ""
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        if char == "]":
            depth += 1
        elif char == "[":
            depth -= 1
            if depth == 0:
                if index == 0 or text[index - 1] != " ":
                    return text, ""
                return text[:index].rstrip(), text[index:]
    return text, ""


def _first_cut(text: str, start: int = 0) -> int | None:
    closers: list[str] = []
    quote: str | None = None
    for index in range(start, len(text)):
        char = text[index]
        if quote is not None:
            if char == quote:
                quote = None
            continue
        if char in _QUOTES:
            quote = char
        elif char in _OPEN:
            closers.append(_OPEN[char])
        elif closers and char == closers[-1]:
            closers.pop()
        elif (
            not closers
            and char in ":;."
            and index >= _MIN
            and text[index + 1 : index + 2] == " "
            and not _inside_word(text, index)
        ):
            return index
    return None


def _inside_word(text: str, index: int) -> bool:
    """``e.g. ``, ``vs. ``, ``sm_8.0 `` and the like are not a sentence's end."""
    if text[index] != ".":
        return False
    start = text.rfind(" ", 0, index) + 1
    word = text[start:index].lower()
    return word in ("e.g", "i.e", "vs", "etc", "cf") or (len(word) <= 1)
