"""The shell reader's fast paths give what the part-by-part paths give, on real scripts and
odd ones: a plain word taken at once by the lexer, a run of characters inside double quotes
taken at once, a plain word expanded at once."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

import pytest

from precheck.errors import InputError
from precheck.sources import launchers, shell_lexer
from precheck.sources.launch_args import Field, program_name
from precheck.sources.notebook import all_cells
from precheck.sources.notebook_commands import _BANG, _RUN, command_runs
from precheck.sources.shell_lexer import Command, Lexer, Lit, Param, Part, Src, Word, lex
from precheck.sources.shell_source import Shell, parse_script

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT.parent / "shared" / "projects"

ODD = [
    "python train.py --bf16 True --lr 1e-4\n",
    'ARGS=(--fp16 True --x 1)\ntorchrun train.py ${ARGS[@]} "${ARGS[@]}"\n',
    "X+=(a b)\nY=(\n  a # c\n  b\n)\npython t.py $X ${Y[1]}\n",
    "python train.py 2>&1 >log 3>>x <in | tee a>b\n",
    "python t.py --x \"a b $HOME `date` \\$ \\q \\\\ c\" 'q r' $'a\\tb' a\\ b\n",
    'python t.py --x "${X:-"a  b"}" ${Y:="c d"} ${Z:+"$X e"} "${W-"\\q x"}"\n',
    'export A="x y"\nB=${A}z\npython t.py --a $A --b "$A" --c ${B}\n',
    "cat <<EOF\nbody $X\nEOF\ncat <<-'E'\n\tx\n\tE\npython t.py --fp16\n",
    'python t.py --x "" --y \'\' --z ""a --w "a"b"c" --v a"$X"b\n',
    "a=1; b=2 && c=3 || d=4 & python t.py --x=$a$b --y=$((a+1))\n",
    "python t.py \\\n  --x 1 \\\n  --y 2 # --z 3\n",
    "f() { python t.py --x 1; }\n(python t.py --y 2)\n",
    'python t.py --x "a\\\nb" --y "\\"q\\""\n',
    "python t.py --x é --y 'ü' --z \"ß$X\"\n",
    "echo x)y\n",
    'python t.py --x "unterminated\n',
    "python t.py ${X:-\n",
]


@contextmanager
def part_by_part() -> Iterator[None]:
    """The reader without its fast paths (every word, quote and expansion read part by part)."""
    saved = Lexer.word, shell_lexer._QUOTED_PLAIN, Shell.expand
    Lexer.word = Lexer.parts_word  # type: ignore[method-assign]
    shell_lexer._QUOTED_PLAIN = re.compile(r'[^"\\$`]')  # one character at a time
    Shell.expand = Shell.expand_parts  # type: ignore[method-assign]
    try:
        yield
    finally:
        Lexer.word, shell_lexer._QUOTED_PLAIN, Shell.expand = saved  # type: ignore[method-assign]


def _merged(parts: list[Part]) -> list[object]:
    """Parts with neighbouring literals of the same quoting joined (expansion reads them as one)."""
    out: list[object] = []
    for part in parts:
        if isinstance(part, Lit):
            if out and isinstance(out[-1], Lit) and out[-1].quoted == part.quoted:
                out[-1] = Lit(out[-1].text + part.text, out[-1].at + part.at, part.quoted)
            else:
                out.append(Lit(part.text, list(part.at), part.quoted))
        elif isinstance(part, Param):
            arg = _merged(part.arg) if part.arg is not None else None
            out.append((part.name, part.op, arg, part.index, part.quoted, part.raw))
        else:
            out.append(part)
    return out


def _shape(commands: list[Command]) -> list[list[object]]:
    def word(w: Word) -> object:
        return (_merged(w.parts), w.raw, [word(e) for e in w.array] if w.array is not None else None)

    return [[word(w) for w in command.words] for command in commands]


def _read(path: str, text: str, kind: str) -> tuple[object, object]:
    try:
        return _shape(lex(path, Src.of(text), text)), parse_script(path, text, kind)
    except InputError as error:  # the same error, at the same place
        return str(error), (error.line, error.column)


def _both(text: str, kind: str = "shell", path: str = "t.sh") -> None:
    fast = _read(path, text, kind)
    with part_by_part():
        slow = _read(path, text, kind)
    assert fast == slow


@pytest.mark.parametrize("text", ODD)
def test_fast_paths_match_on_odd_scripts(text: str) -> None:
    _both(text)


def test_the_reference_really_reads_part_by_part() -> None:
    text = 'python t.py --x "abc" plain\n'
    with part_by_part():
        lexer = Lexer("t.sh", Src.of(text), text)
        words = [t for t in lexer.tokens() if isinstance(t, Word)]
    assert words[2].parts == [Lit("--x", [12, 13, 14], False)]
    lexer = Lexer("t.sh", Src.of('"${X:-"ab"}"'), '"${X:-"ab"}"')
    param = lexer.tokens()[0]
    assert isinstance(param, Word) and isinstance(param.parts[0], Param)
    assert [p.text for p in param.parts[0].arg or [] if isinstance(p, Lit)] == ["ab"]
    with part_by_part():
        lexer = Lexer("t.sh", Src.of('"${X:-"ab"}"'), '"${X:-"ab"}"')
        param = lexer.tokens()[0]
    assert isinstance(param, Word) and isinstance(param.parts[0], Param)
    assert [p.text for p in param.parts[0].arg or [] if isinstance(p, Lit)] == ["a", "b"]


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_fast_paths_match_on_real_scripts() -> None:
    files = sorted([*PROJECTS.rglob("*.sh"), *ROOT.glob("examples/**/*.sh"), *ROOT.glob("tests/fixtures/**/*.sh")])
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        _both(text, path=str(path))
    makefiles = sorted(PROJECTS.rglob("Makefile"))
    for path in makefiles:
        _both(path.read_text(encoding="utf-8", errors="replace"), "makefile", str(path))


NOTEBOOK_ROWS = ["!torchrun t.py", "  %sx ls", "%system ls", "%run -m pkg", "  %run t.py", "x = !ls", "%%bash", "# ! %"]


@pytest.mark.shared  # its sample is too small without ../shared
def test_notebook_command_rows_hold_a_bang_or_a_percent() -> None:
    """:func:`~precheck.sources.notebook_commands.command_runs` passes over a cell, or a row,
    without ``!`` and ``%``: no row the two patterns match lacks both."""
    rows = list(NOTEBOOK_ROWS)
    if PROJECTS.is_dir():
        for notebook in sorted(PROJECTS.rglob("*.ipynb")):
            text = notebook.read_text(encoding="utf-8", errors="replace")
            try:
                cells = all_cells(str(notebook), text)
            except InputError:
                continue
            rows += [row for cell in cells for row in cell.code.split("\n")]
    matched = [row for row in rows if _BANG.match(row) or _RUN.match(row)]
    assert len(matched) >= 6
    assert all("!" in row or "%" in row for row in matched)
    assert not [row for row in rows if ("!" in row or "%" in row) is False and (_BANG.match(row) or _RUN.match(row))]


def test_notebook_commands_found_in_cells_among_plain_ones() -> None:
    source = [
        "import torch\nx = 1\n",
        "!torchrun --nproc_per_node 2 t.py \\\n  --bf16 True --per_device_train_batch_size 4\n",
        "y = 2  # 100 percent\n",
        "%%bash\nexport X=1\naccelerate launch --mixed_precision fp16 t.py --fp16\n",
    ]
    cells = [{"cell_type": "code", "source": code, "metadata": {}, "outputs": []} for code in source]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    documents = command_runs("n.ipynb", text)
    assert [(d.label, d.root.line, d.root.column, d.root.plain()) for d in documents] == [
        ("`torchrun` in cell 2, line 1", 11, 55, {"bf16": True, "per_device_train_batch_size": 4}),
        ("`accelerate launch` in cell 4, line 3", 23, 53, {"mixed_precision": "fp16"}),
    ]


@pytest.mark.shared  # its sample is too small without ../shared
def test_program_name_is_the_posix_path_name() -> None:
    words = ["", ".", "..", "python", "/usr/bin/python3", "a/", "a/.", "./x", "//x", "/", "x//", "a/..", ". ", "\\x"]
    if PROJECTS.is_dir():
        for path in sorted(PROJECTS.rglob("*.sh")):
            text = path.read_text(encoding="utf-8", errors="replace")
            words += [w.raw.text for command in lex(str(path), Src.of(text), text) for w in command.words]
    assert len(words) > 1000
    assert [program_name(word) for word in words] == [PurePosixPath(word).name for word in words]


def _match_by_scan(argv: list[Field]) -> tuple[object, int]:
    """:func:`~precheck.sources.launchers.match` as a scan over every launcher."""
    program = program_name(argv[0].text)
    if launchers._PYTHON.fullmatch(program):
        return ("python",), 1
    for entry in launchers.launchers():
        words = entry.words
        if program != words[0] or len(argv) < len(words):
            continue
        if all(argv[i].text == words[i] for i in range(1, len(words))):
            return entry, len(words)
    return None, 0


def test_launchers_found_by_program_as_by_a_scan() -> None:
    lines = [" ".join(entry.words) + " x.py --bf16" for entry in launchers.launchers()]
    lines += [entry.words[0] for entry in launchers.launchers()] + ["accelerate", "accelerate config", "echo hi"]
    if PROJECTS.is_dir():
        for path in sorted(PROJECTS.rglob("*.sh")):
            lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    checked = 0
    for line in lines:
        try:
            commands = lex("t.sh", Src.of(line), line)
        except InputError:
            continue
        for command in commands:
            argv = [Field(w.raw.text, list(w.raw.at), w.raw.text, w.start) for w in command.words]
            entry, count = launchers.match(argv)
            expected = _match_by_scan(argv)
            assert (entry.words if entry is not None and expected[0] == ("python",) else entry, count) == expected
            checked += entry is not None
    assert checked > len(launchers.launchers())
