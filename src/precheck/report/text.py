"""Text output, shaped as ruff's: the finding's place, code and headline, the source line with
a caret under the key, and the fix::

    configs/train.yaml:5:7: PC902 warning [*] `yes` is read as the boolean True (YAML 1.1)
      |
    5 | bf16: yes
      |       ^^^
      |
      = help: write true or false

``[*]`` marks a finding ``--fix`` fixes. The headline is the message's first clause
(:mod:`precheck.report.headline`); the full message is in ``--format json`` and
``precheck explain``. Then an info line (no GPU known), the summary line, and how many
findings ``--fix`` would fix. Colour (ANSI) when :func:`precheck.report.use_color` says so.
Every string from the user's files passes through :func:`shown` once, where it is printed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from ..engine import Report
from ..errors import InputError
from ..escape import printable
from ..rules.base import Finding, Severity
from .headline import headline

#: a shown source line is cut to this many characters around the caret
WIDTH = 100

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_BLUE = "\x1b[1;34m"
_GREEN = "\x1b[1;32m"
_CYAN = "\x1b[36m"
_SEVERITY = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.INFO: "\x1b[1;36m"}
_TOKEN = re.compile(r"[\w.\-]+")


def shown(text: str) -> str:
    """A string from the user's files or environment, as printed: control characters
    escaped (:func:`precheck.escape.printable`), so a config cannot drive the terminal."""
    return printable(text)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def fixable(finding: Finding, unsafe: bool = False) -> bool:
    """Whether ``--fix`` (``unsafe``: ``--fix --unsafe-fixes``) makes this finding's fix
    (:func:`precheck.fix.applicable`, without importing the fix writer)."""
    from ..rules import applicable
    from ..sources import script_kind
    from ..sources.workflow_source import is_workflow

    if finding.fix is None or not finding.fix.edits or (finding.origin.path or "").startswith("<"):
        return False  # none to make, or a command line (`precheck -- CMD`): no file to write
    if any(script_kind(e.path) is not None or is_workflow(e.path) for e in finding.fix.edits):
        return False  # precheck does not rewrite scripts, workflows or notebooks (precheck.fix)
    return applicable(finding, unsafe)


class Paint:
    """ANSI styles, or none."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if self.color and text else text


class Lines:
    """Source lines of the files findings point at, each file read once (never over the
    size limit; a file that cannot be read shows no line). A file is kept as its text and
    a table of line starts, not split into lines: a finding in a file of millions of lines
    costs one list of integers, not millions of strings."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[str, list[int]] | None] = {}

    def get(self, path: str | None, line: int | None) -> str | None:
        if not path or not line:
            return None
        if path not in self._files:
            self._files[path] = self._read(path)
        read = self._files[path]
        if read is None:
            return None
        text, starts = read
        if not 1 <= line <= len(starts):
            return None
        end = starts[line] - 1 if line < len(starts) else len(text)
        return text[starts[line - 1] : end].rstrip("\r")

    @staticmethod
    def _read(path: str) -> tuple[str, list[int]] | None:
        from ..paths import within_checked
        from ..sources import read_text
        from ..sources.nodes import line_starts

        if not path.startswith("<") and not within_checked(path):  # never shown (paths.within_checked)
            return None
        try:
            text = read_text(Path(path), path)
        except InputError:
            return None
        return text, line_starts(text)


def caret(source: str, column: int, key: str | None) -> tuple[str, int, int]:
    """The line as shown (tabs as spaces, cut to :data:`WIDTH` around the column), and the
    caret's start and width there: the key as written when it starts at the column, else
    the word there."""
    text = source.replace("\t", " ")
    start = max(0, min(column - 1, len(text)))
    width = 1
    rest = text[start:]
    names = [k for k in (key, key.rsplit(".", 1)[-1] if key else None, f'"{key}"' if key else None) if k]
    for name in names:
        if rest.startswith(name) or rest.startswith(f'"{name}"'):
            width = len(name) + (2 if rest.startswith(f'"{name}"') else 0)
            break
    else:
        match = _TOKEN.match(rest)
        if match:
            width = len(match.group(0))
    if len(text) > WIDTH:
        left = max(0, min(start - WIDTH // 3, len(text) - WIDTH))
        right = left + WIDTH
        head = "…" if left else ""
        tail = "…" if right < len(text) else ""
        start = start - left + len(head)
        text = head + text[left:right] + tail
        width = max(1, min(width, len(text) - start))
    return text.rstrip(), start, width


def frame(
    paint: Paint, lines: Lines, path: str | None, line: int | None, column: int | None, key: str | None, style: str
) -> list[str]:
    source = lines.get(path, line)
    if source is None or line is None or not source.strip():
        return []
    text, start, width = caret(source, column or 1, key)
    gutter = " " * len(str(line))
    bar = paint(_BLUE, "|")
    return [
        f"{gutter} {bar}",
        f"{paint(_BLUE, str(line))} {bar} {shown(text)}",
        f"{gutter} {bar} {' ' * start}{paint(style, '^' * width)}",
        f"{gutter} {bar}",
    ]


def finding_lines(finding: Finding, paint: Paint, lines: Lines) -> list[str]:
    origin = finding.origin
    style = _SEVERITY[finding.severity]
    mark = f" {paint(_CYAN, '[*]')}" if fixable(finding) else ""
    where = paint(_BOLD, shown(origin.location()))
    out = [
        f"{where}: {paint(style, finding.rule)} {paint(style, str(finding.severity))}{mark} "
        f"{shown(headline(finding.message))}"
    ]
    if origin.key or (origin.line, origin.column) != (1, 1):  # 1:1 with no key: about the whole file
        out.extend(frame(paint, lines, origin.path, origin.line, origin.column, origin.key, style))
    lead = " " * (len(str(origin.line)) + 1) if out[1:] else "  "
    if finding.fix:
        out.append(f"{lead}= {paint(_GREEN, 'help')}: {shown(help_text(finding))}")
    for assumption in finding.assumptions:  # why this is not an error, and how to say more
        out.append(f"{lead}= {paint(_CYAN, 'assumed')}: {shown(assumption)}")
    return out


def help_text(finding: Finding) -> str:
    """The fix, its edits in the finding's own file by line only (``set `fp16: true` (line 6)``);
    edits in other files keep their path."""
    assert finding.fix is not None
    text = finding.fix.text()
    path = finding.origin.path
    if path:
        text = text.replace(f" ({path}:", " (line ").replace(f" (in {path})", "")
    return text


def error_lines(error: InputError, paint: Paint, lines: Lines) -> list[str]:
    out = [f"{paint(_BOLD, shown(error.location()))}: {shown(error.message)}"]
    out.extend(frame(paint, lines, error.path, error.line, error.column, None, _SEVERITY[Severity.ERROR]))
    return out


def summary(report: Report) -> str:
    counts = report.counts()
    checked = [f for f in report.files if f.dialect]
    named = sum(1 for f in checked if f.part_of is not None)
    parts = [
        _plural(counts[Severity.ERROR], "error"),
        _plural(counts[Severity.WARNING], "warning"),
        f"{counts[Severity.INFO]} info",
    ]
    where = f"in {_plural(len(checked) - named, 'config')}"
    if named:
        where += f" and {_plural(named, 'file')} they name"
    skipped = len(report.files) - len(checked) - len(report.errors) - len(report.internal_errors)
    if skipped:
        where += f" ({skipped} other file{'' if skipped == 1 else 's'} skipped: not a known training config)"
    hardware = report.hardware
    source = getattr(report, "hardware_from", None) or ("--gpu" if hardware.source == "profile" else hardware.source)
    target = shown(hardware.describe()) + (f", from {shown(source)}" if hardware.known else "")
    return f"{', '.join(parts)} {where}; hardware: {target}"


def notes(report: Report) -> list[str]:
    """Files named on the command line that were passed over (they do not parse and are no
    training config), templates (named or found in a folder), and configs checked because they
    name a file given alone."""
    from ..templates import NOTES

    out = [
        f"{f.path}: note: skipped, {f.skipped}" for f in report.files if f.skipped and (f.named or f.skipped in NOTES)
    ]
    out += [f"{f.path}: note: checked too, it names {', '.join(f.names)}" for f in report.files if f.names]
    return out


def fixable_line(findings: Iterable[Finding]) -> str | None:
    """``[*] N fixable with --fix (M more with --unsafe-fixes)``, or None when neither."""
    safe = unsafe = 0
    for finding in findings:
        if fixable(finding):
            safe += 1
        elif fixable(finding, unsafe=True):
            unsafe += 1
    if not safe and not unsafe:
        return None
    if not safe:
        return f"[*] {unsafe} fixable with --fix --unsafe-fixes"
    return f"[*] {safe} fixable with --fix" + (f" ({unsafe} more with --unsafe-fixes)" if unsafe else "")


def render_plain(report: Report, color: bool = False, quiet: bool = False) -> list[str]:
    paint = Paint(color)
    lines = Lines()
    out: list[str] = []
    for error in report.errors:
        out.extend(error_lines(error, paint, lines))
    out.extend(shown(note) for note in notes(report))
    for finding in report.findings:
        out.extend(finding_lines(finding, paint, lines))
    if quiet:
        return out
    if report.hardware_note and not report.hardware_rules_skipped:  # else: a warning on stderr
        out.append(f"{paint(_SEVERITY[Severity.INFO], 'info')}: {shown(report.hardware_note)}")
    out.append(paint(_DIM, summary(report)))
    more = fixable_line(report.findings)
    if more:
        out.append(more)
    return out


def statistics(report: Report, color: bool = False) -> list[str]:
    """``--statistics``: findings counted by rule, most first, then the summary."""
    from ..rules import RULES

    paint = Paint(color)
    counts = Counter(f.rule for f in report.findings)
    fixes = {f.rule for f in report.findings if fixable(f)}
    out = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = RULES.get(code)
        name = rule.name if rule is not None else ""
        mark = paint(_CYAN, "[*]") if code in fixes else "   "
        out.append(f"{count:>5}  {paint(_BOLD, code)}  {mark} {name}".rstrip())
    if report.errors:
        out.append(f"{len(report.errors):>5}  {paint(_BOLD, 'input')}      files that could not be read or parsed")
    out.append(paint(_DIM, summary(report)))
    return out


def print_report(report: Report, color: bool, quiet: bool = False, write: Callable[[str], object] = print) -> None:
    lines = render_plain(report, color, quiet)
    if lines:
        write("\n".join(lines))
