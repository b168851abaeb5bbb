"""Shell scripts, Makefile recipes and command lines → one document per training launch.

The script is tokenised (:mod:`.shell_lexer`) and walked as ``sh`` would run it, without
running anything: variables assigned in the script are expanded (``X=1``, ``export X=...``,
``${X}``, ``$X``, ``${X:-default}``, arrays ``"${ARGS[@]}"``, unquoted expansions split into
words), ``export`` lines and ``VAR=x cmd`` prefixes give the run's environment
(``CUDA_VISIBLE_DEVICES``, ``ACCELERATE_MIXED_PRECISION``... each a node where it is set,
applying to the commands after it), prefixes (``nohup``, ``exec``, ``time``, ``env VAR=x``,
``nice``, ``sudo``, ``timeout``...) are passed over, ``sh -c '...'`` strings are read as
scripts, and each launch command (:mod:`.launchers`) becomes a :class:`Document`.

What cannot be known without running the script is left out, with a note: a variable the
script does not set (``$1``, ``$LR`` from the caller's environment), command substitution
``$(...)`` (never run), arithmetic on values it does not know (``$((...))`` over numbers the
script sets is evaluated: :mod:`.shell_arithmetic`). Here-documents are skipped; loops and conditions are
read straight through (every branch, once).

Makefiles: each recipe line (tab-indented under a target, ``\\`` continuations joined) is
read as its own shell script after make's expansion of ``$(VAR)``/``${VAR}`` from the
variables the Makefile sets (``=``, ``:=``, ``?=``, ``+=``; ``export`` ones reach the
recipes' environment) and ``$$`` → ``$``.

A command line (``precheck -- CMD ARGS...``) is read as a one-line script: the words
``shlex.join``-ed, so positions are columns on that line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..counts import decimal
from ..errors import InputError
from ..run_env import RUN_ENV
from .launch_args import Builder, Field, locate, program_name, shown
from .launchers import Found, Launch, label, match, named
from .makefile import make_expand, make_recipes
from .nodes import CUT_OFF, Document, Node, SourceNote
from .script_path import resolve_script
from .shell_arithmetic import evaluate
from .shell_fields import Fields, Holes
from .shell_lexer import Command, Lit, Param, Part, Src, Subst, Word, heredoc_parts, lex
from .slurm import sbatch_words, slurm_gpus_per_node
from .suppressions import scan as scan_suppressions

#: what shows where a command line's positions point (``precheck -- CMD``)
COMMAND_LINE = "<command line>"

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
#: reserved words that may start a command before the real one (bash "SHELL GRAMMAR")
#: builtins that declare variables (and may assign arrays: ``declare -a NAME=(...)``)
_DECLARING = frozenset({"export", "declare", "typeset", "local", "readonly"})
_KEYWORDS = {"if", "then", "elif", "else", "do", "while", "until", "!", "{", "}", "(", "time", "fi", "done", "esac"}
#: prefixes that run the rest of the line as the command: name → options that take a value
_PREFIXES: dict[str, set[str]] = {
    "nohup": set(),
    "exec": {"-a"},
    "time": set(),
    "command": set(),
    "builtin": set(),
    "nice": {"-n", "--adjustment"},
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"},
    "stdbuf": {"-i", "-o", "-e"},
    "taskset": set(),
    "numactl": set(),
    # Slurm's job step launcher: its options that take a separate value (``srun -N 1 --ntasks 8 cmd``)
    "srun": {
        *("-N", "-n", "-c", "-p", "-w", "-x", "-t", "-J", "-o", "-e", "-i", "-G", "-A", "-q", "-D", "-m", "-d", "-C"),
        *("--nodes", "--ntasks", "--ntasks-per-node", "--cpus-per-task", "--partition", "--nodelist", "--exclude"),
        *("--time", "--job-name", "--output", "--error", "--input", "--gpus", "--gres", "--gpus-per-node"),
        *("--gpus-per-task", "--mem", "--mem-per-cpu", "--mem-per-gpu", "--account", "--qos", "--chdir"),
        *("--distribution", "--dependency", "--constraint", "--mpi", "--cpu-bind", "--export", "--container-image"),
        *("--container-mounts", "--container-workdir", "--container-name", "--label", "--wait", "--signal"),
    },
    "caffeinate": set(),
}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}
#: the most characters the variable expansions of one file may produce: a launch script
#: expands to a few kilobytes, and doubling a variable 24 times must not take gigabytes
MAX_EXPANDED = 1_000_000
#: the most ``eval`` one ``eval`` runs inside it (a command that evals itself would never end)
MAX_EVALS = 8
#: the name ``eval`` reads an unknown value again as (:meth:`Shell.eval`)
_STAND_IN = re.compile(r"\$\{(__precheck_unknown_\d+)\}")
_DIRNAME_SCRIPT = re.compile(r'^\$\(dirname\s+"?\$(?:0|\{?BASH_SOURCE(?:\[0\])?\}?)"?\)(.*)$')


@dataclass(slots=True)
class Value:
    """A shell variable: its characters with their offsets; an array has ``elements``."""

    text: str
    at: list[int]
    unresolved: list[str] = field(default_factory=list)
    elements: list[Value] | None = None
    #: where in ``text`` each unknown value stands (None: over the whole text)
    holes: Holes | None = None

    def spans(self) -> Holes:
        """Its unknown values with where they stand."""
        if self.holes is not None:
            return self.holes
        return [(0, len(self.text), what) for what in self.unresolved]


def _joined(old: Value, new: Value) -> Value:
    """``old`` then ``new`` (``X+=...``, ``declare X+=...``)."""
    return Value(
        old.text + new.text,
        old.at + new.at,
        [*old.unresolved, *(u for u in new.unresolved if u not in old.unresolved)],
        holes=[*old.spans(), *((s + len(old.text), e + len(old.text), w) for s, e, w in new.spans())],
    )


#: the most ``bash other.sh`` launches one script's run follows, at every depth together
MAX_FOLLOWED = 32


class Shell:
    """Walks a script's commands, tracking variables and the environment, collecting runs."""

    def __init__(self, builder: Builder, bases: list[Path], runs: list[tuple[Found, str, list[SourceNote]]]):
        self.builder = builder
        self.bases = bases
        self.vars: dict[str, Value] = {}
        self.exported: set[str] = set()
        self.allexport = False
        #: run variables (RUN_ENV) exported by the script so far: name → node where set
        self.env: dict[str, Node] = {}
        self.runs = runs
        #: the flags and lines each cut-off note names so far (by the note's ``id``)
        self.cut: dict[int, tuple[list[str], list[int]]] = {}
        #: how many ``bash other.sh`` this script was reached through
        self.depth = 0
        #: characters variable expansions have produced in this file, shared with subshells
        self.expanded = [0]
        #: ``bash other.sh`` followed in this run, shared with subshells and followed scripts
        #: (one budget for the run: 30 launches a level, 5 levels deep, are 30**4 otherwise)
        self.followed = [0]
        #: the unknown values ``eval`` passes on, by the name that stands for each in the text
        #: it reads again: (the value as written, its offsets, what it is)
        self.opaque: dict[str, tuple[str, list[int], str]] = {}
        #: ``eval`` inside ``eval`` so far (``cmd='eval $cmd'; eval $cmd`` never ends)
        self.evals = 0

    def child(self) -> Shell:
        """A subshell (``sh -c``, a Makefile recipe line): the exported variables only."""
        shell = Shell(self.builder, list(self.bases), self.runs)
        shell.vars = {k: v for k, v in self.vars.items() if k in self.exported}
        shell.exported = set(self.exported)
        shell.env = dict(self.env)
        shell.expanded = self.expanded
        shell.followed = self.followed
        shell.opaque = self.opaque
        shell.cut = self.cut
        return shell

    # -- expansion -----------------------------------------------------------------------------

    def expand(self, word: Word) -> list[Field]:
        """The fields of ``word``. A plain word (one unquoted literal: most words of a launch
        line) is its own one field, made at once as :meth:`expand_parts` would make it."""
        parts = word.parts
        if len(parts) == 1:
            only = parts[0]
            if type(only) is Lit and not only.quoted and only.text and len(only.text) == len(only.at):
                return [Field(only.text, list(only.at), word.raw.text, only.at[0], False, [])]
        return self.expand_parts(word)

    def expand_parts(self, word: Word) -> list[Field]:
        """The fields of ``word``, part by part: expanded, unquoted expansions split."""
        fields = Fields(word)
        self._parts(word.parts, fields, split=True)
        out = fields.done()
        if self.opaque:  # a word ``eval`` read again shows the unknown values as they were written
            for one in out:
                if _STAND_IN.search(one.raw):
                    one.raw = _STAND_IN.sub(lambda m: self.opaque.get(m.group(1), (m.group(0),))[0], one.raw)
        return out

    def value_of(self, parts: list[Part]) -> Value:
        """An assignment's value: expanded, not split."""
        word = Word(parts, Src("", []))
        fields = Fields(word)
        self._parts(parts, fields, split=False)
        out = fields.done()
        if not out:
            return Value("", [])
        f = out[0]
        return Value(f.text, f.at, f.unresolved, holes=f.holes)

    def _parts(self, parts: list[Part], fields: Fields, split: bool) -> None:
        for part in parts:
            if isinstance(part, Lit):
                if part.quoted:
                    fields.mark_quoted()
                fields.add(part.text, part.at, False)
            elif isinstance(part, Subst):
                number = self._arithmetic(part.raw.text)
                if number is not None:  # ``$(( N * 2 ))`` over numbers the script set
                    if part.quoted:
                        fields.mark_quoted()
                    fields.add(number, [part.raw.at[0]] * len(number), split)
                    continue
                body = self._cat_heredoc(part)
                if body is not None:  # ``$(cat <<EOF ... EOF)``: the body, trailing newlines removed
                    if part.quoted:
                        fields.mark_quoted()
                    fields.add(body.text, body.at, split, body.spans())
                    continue
                what = "arithmetic on a value not known" if part.raw.text.startswith("$((") else "command substitution"
                raw = part.raw.text
                fields.add(raw, part.raw.at, False, [(0, len(raw), f"`{raw}` ({what}, not run)")])
            else:
                self._param(part, fields, split and not part.quoted)

    def _cat_heredoc(self, part: Subst) -> Value | None:
        """``$(cat <<EOF ... EOF)`` (or ``cat -``, ``cat <<'EOF'``): the here-document's body,
        as the substitution gives it (trailing newlines removed); None for any other command."""
        raw = part.raw
        if not raw.text.startswith("$(cat") or "<<" not in raw.text or raw.text.startswith("$(("):
            return None
        try:
            commands = lex(self.builder.path, raw.slice(2, len(raw.text) - 1), self.builder.text)
        except InputError:
            return None
        if len(commands) != 1 or commands[0].heredoc is None:
            return None
        words = [w.literal() for w in commands[0].words]
        if words not in (["cat"], ["cat", "-"]):
            return None
        body = self._input(commands[0])
        if body is None:
            return None
        end = len(body.text.rstrip("\n"))
        return _slice(body.text, body.at, body.spans(), 0, end)

    def _arithmetic(self, raw: str) -> str | None:
        if not (raw.startswith("$((") and raw.endswith("))")):
            return None

        def lookup(name: str) -> str | None:
            value = self.vars.get(name)
            return None if value is None or value.unresolved or value.elements is not None else value.text

        number = evaluate(raw[3:-2], lookup)
        return None if number is None else str(number)

    def _param(self, part: Param, fields: Fields, split: bool) -> None:
        if part.quoted:
            fields.mark_quoted()
        if part.name in self.opaque:  # an unknown value ``eval`` read again: still unknown
            text, at, what = self.opaque[part.name]
            fields.add(text, at, False, [(0, len(text), what)])
            return
        value = self.vars.get(part.name) if part.op != "other" else None
        if part.op in (":-", ":=", ":+", "-", "=", "+") and part.arg is not None:
            unset = value is None or (part.op.startswith(":") and not value.text and not value.elements)
            if part.op.endswith("+"):
                if not unset:
                    self._parts(part.arg, fields, split)
                return
            if unset:
                if part.op.endswith("="):
                    self.vars[part.name] = self.value_of(part.arg)
                self._parts(part.arg, fields, split)
                return
        if value is None or part.op not in (None, ":-", ":=", "-", "="):
            what = (
                "an argument of the script"
                if part.name and part.name[0] in "@*#?$!-0123456789"
                else (
                    f"`{part.name}`, not set in the script" if part.name else "an expansion precheck does not evaluate"
                )
            )
            raw = part.raw.text
            fields.add(raw, part.raw.at, False, [(0, len(raw), f"`{raw}` ({what})")])
            return
        size = len(value.text) + sum(len(e.text) for e in value.elements or [])
        self.expanded[0] += size
        if self.expanded[0] > MAX_EXPANDED:  # A1="$A0$A0", A2="$A1$A1"...: not built
            raw = part.raw.text
            what = f"`{raw}` (expands to more than {MAX_EXPANDED:,} characters in all: precheck's budget)"
            fields.add(raw, part.raw.at, False, [(0, len(raw), what)])
            return
        if value.elements is not None:
            if part.index in ("@", "*"):
                for n, element in enumerate(value.elements):
                    if n:
                        if part.quoted and part.index == "@":
                            fields.end(force=True)
                        else:
                            fields.add(" ", [element.at[0] if element.at else 0], split)
                    fields.add(element.text, element.at, split, element.spans())
                return
            index = (decimal(part.index) or 0) if part.index else 0
            value = value.elements[index] if index < len(value.elements) else Value("", [])
        fields.add(value.text, value.at, split, value.spans())

    # -- commands ------------------------------------------------------------------------------

    def run(self, commands: list[Command]) -> None:
        for command in commands:
            self.simple(command.words, command)
            for target in command.writes:
                self._wrote(target)

    def _wrote(self, target: Word) -> None:
        """The script wrote the file ``target`` names (a redirection's target): the commands
        after it may name it though it is not in the tree (``cat <<EOF > cfg.yaml``)."""
        fields = self.expand(target)
        if len(fields) == 1 and not fields[0].unresolved and fields[0].text:
            self.builder.wrote(fields[0].text)

    def simple(self, words: list[Word], command: Command | None = None) -> None:
        while words and words[0].literal() in _KEYWORDS:
            words = words[1:]
        if not words or words[0].literal() in ("for", "case", "select", "function", "[[", "[", "test"):
            return
        prefix: list[tuple[str, bool, Word, Value]] = []
        while words and (assignment := self._assignment(words[0])) is not None:
            prefix.append(assignment)
            words = words[1:]
        if not words:
            for name, append, word, value in prefix:
                self.assign(name, value, word, append=append, export=self.allexport or name in self.exported)
            return
        if words[0].literal() in _DECLARING:
            words = self._declared_arrays(words)
        argv = [f for w in words for f in self.expand(w)]
        if argv and argv[0].text == "read" and not argv[0].unresolved:
            ifs = next((value for name, _, _, value in reversed(prefix) if name == "IFS"), self.vars.get("IFS"))
            self.read(argv[1:], self._input(command), ifs, words[0])
            return
        env = dict(self.env)
        for name, _append, word, value in prefix:
            self._env_entry(env, name, value, word)
        self.command(argv, env)

    def _declared_arrays(self, words: list[Word]) -> list[Word]:
        """``declare -a NAME=(a b c)`` (also ``typeset``, ``local``, ``export``, ``readonly``):
        the builtin assigns an array as ``NAME=(a b c)`` does (bash(1) "declare"); the array words
        are assigned here, the others (options, scalar assignments) are left to :meth:`declare`."""
        options = [w.literal() or "" for w in words[1:] if (w.literal() or "").startswith("-")]
        export = words[0].literal() == "export" or any("x" in o for o in options)
        kept = [words[0]]
        for word in words[1:]:
            assignment = self._assignment(word) if word.array is not None else None
            if assignment is None:
                kept.append(word)
                continue
            name, append, _, value = assignment
            self.assign(name, value, word, append=append, export=export or self.allexport or name in self.exported)
        return kept

    def _input(self, command: Command | None) -> Value | None:
        """What a command reads from the script: its here-document or here-string (expanded);
        None when the script does not give it."""
        if command is None:
            return None
        if command.herestring is not None:
            value = self.value_of(command.herestring.parts)
            return Value(
                value.text + "\n", [*value.at, value.at[-1] if value.at else 0], value.unresolved, holes=value.holes
            )
        if command.heredoc is not None:
            parts = heredoc_parts(command.heredoc, self.builder.path, self.builder.text)
            if parts is None:
                body = command.heredoc.body
                what = "a here-document precheck cannot expand"
                return Value(body.text, list(body.at), [what], holes=[(0, len(body.text), what)])
            return self.value_of(parts)
        return None

    def read(self, args: list[Field], given: Value | None, ifs: Value | None, word: Word) -> None:
        """``read [-r] [-d DELIM] [-a NAME] NAME...`` from the script's own input (bash(1)
        "read"): a here-document read into a variable (``read -r -d '' cmd <<EOF``) holds the
        command it is expanded into later; the line (``-d ''``: all of it) is split on ``IFS``,
        each name takes a field, the last the rest; ``-a`` takes every field. Without ``-r``
        a backslash-newline joins lines and a backslash quotes the next character. Input the
        script does not give leaves the names unknown."""
        raw, delimiter = False, "\n"
        array: str | None = None
        names: list[str] = []
        i = 0
        while i < len(args):
            text = args[i].text
            if not names and text.startswith("-") and len(text) > 1:
                for j, option in enumerate(text[1:], start=1):
                    if option in "dapntNuie":
                        value = text[j + 1 :] if j + 1 < len(text) else (args[i + 1].text if i + 1 < len(args) else "")
                        i += 0 if j + 1 < len(text) else 1
                        if option == "d":
                            delimiter = value[:1]
                        elif option == "a":
                            array = value
                        break
                    raw = raw or option == "r"
                i += 1
                continue
            names.append(text)
            i += 1
        names = names or ([] if array else ["REPLY"])
        if given is None:
            for name in [*names, *([array] if array else [])]:
                what = f"`read {name}` (input the script does not give)"
                self.vars[name] = Value("", [], [what], holes=[(0, 0, what)])
            return
        text, at, holes = _line(given, delimiter, raw)
        separators = ifs.text if ifs is not None and not ifs.unresolved else " \t\n"
        if array is not None:
            spans = _ifs_split(text, separators, 0)
            self.vars[array] = Value("", [], elements=[_slice(text, at, holes, s, e) for s, e in spans])
        if names:
            spans = _ifs_split(text, separators, len(names))
            for n, name in enumerate(names):
                start, end = spans[n] if n < len(spans) else (len(text), len(text))
                self.assign(
                    name, _slice(text, at, holes, start, end), word, export=self.allexport or name in self.exported
                )

    def _assignment(self, word: Word) -> tuple[str, bool, Word, Value] | None:
        first = word.parts[0] if word.parts else None
        if not isinstance(first, Lit) or first.quoted:
            return None
        found = _ASSIGNMENT.match(first.text)
        if found is None:
            return None
        name, append = found.group(1), bool(found.group(2))
        if word.array is not None:
            elements = [Value(f.text, f.at, f.unresolved, holes=f.holes) for w in word.array for f in self.expand(w)]
            return name, append, word, Value("", [], elements=elements)
        rest = Lit(first.text[found.end() :], first.at[found.end() :], False)
        value = self.value_of([rest, *word.parts[1:]])
        if not value.at:
            value.at = [first.at[found.end() - 1] + 1] if first.at else []
        return name, append, word, value

    def assign(self, name: str, value: Value, word: Word, *, append: bool = False, export: bool = False) -> None:
        old = self.vars.get(name)
        if append and old is not None:
            if value.elements is not None or old.elements is not None:
                value = Value("", [], elements=[*(old.elements or [old]), *(value.elements or [value])])
            else:
                value = _joined(old, value)
        self.vars[name] = value
        if export:
            self.exported.add(name)
            self._env_entry(self.env, name, value, word)
        elif name in RUN_ENV:
            self.builder.note(
                "not-exported",
                f"`{name}` is set but not exported: the commands after it see it only if it is already in the "
                f"environment (write `export {name}=...`)",
                word.start,
                name,
            )

    def _env_entry(self, env: dict[str, Node], name: str, value: Value, word: Word) -> None:
        if name not in RUN_ENV:
            return
        if value.unresolved:
            env.pop(name, None)
            self.builder.note("unresolved", f"`{name}` depends on {', '.join(value.unresolved)}", word.start, name)
            return
        key_line, key_column = self.builder.where(word.start)
        line, column = self.builder.where(value.at[0]) if value.at else (key_line, key_column)
        raw = word.raw.text.partition("=")[2]
        env[name] = Node(value.text, line, column, name, key_line, key_column, raw=raw, quoted=raw[:1] in ("'", '"'))

    def command(self, argv: list[Field], env: dict[str, Node]) -> None:
        if not argv:
            return
        name = argv[0].text
        if name in ("export", "declare", "typeset", "local", "readonly"):
            self.declare(name, argv[1:])
        elif name == "unset":
            for arg in argv[1:]:
                self.vars.pop(arg.text, None)
                self.exported.discard(arg.text)
                self.env.pop(arg.text, None)
        elif name == "set":
            self.set_options([a.text for a in argv[1:]])
        elif name in ("cd", "pushd"):
            self.cd(argv[1:])
        elif name == "eval":
            self.eval(argv[1:])
        elif name.startswith("--") and len(name) > 2 and self.runs and not argv[0].unresolved:
            self._cut_off(argv)
        else:
            found = self.launch(argv, env)
            if found is not None:
                self.runs.append(found)

    def _cut_off(self, argv: list[Field]) -> None:
        """Flags that start a command of their own after a launch: bash ended the launch before
        them (a comment line or a blank line after a backslash ends a command), so they never
        reach it and the run goes without them; said once on the launch above, at the first
        such line (read, not used; PC908)."""
        line, column = self.builder.where(argv[0].offset())
        notes = self.runs[-1][2]
        flags = [a.text.partition("=")[0] for a in argv if a.text.startswith("--")]
        earlier = next((n for n in notes if n.kind == CUT_OFF), None)
        if earlier is None:
            earlier = SourceNote(CUT_OFF, "", line, column, flags[0])
            notes.append(earlier)
            self.cut[id(earlier)] = ([], [])
        cut_flags, lines = self.cut[id(earlier)]
        cut_flags.extend(flags)
        lines.append(line)
        shown_flags = ", ".join(f"`{f}`" for f in cut_flags[:4]) + (" ..." if len(cut_flags) > 4 else "")
        where = (
            f"line {lines[0]}"
            if len(lines) == 1
            else f"lines {', '.join(map(str, lines[:6]))}" + (" ..." if len(lines) > 6 else "")
        )
        earlier.message = (
            f"{shown_flags} on {where} never reach the launch above: bash ended it before them (a comment or a "
            "blank line after a backslash ends a command) and runs them as commands of their own, so the run "
            "does not get them"
        )

    def eval(self, args: list[Field]) -> None:
        """``eval "$cmd"`` / ``eval $cmd``: the words joined with spaces, read again as a command
        of this shell (positions where the characters were written, e.g. in ``cmd="torchrun
        ..."``). A value not known (``$LR`` unset, ``$(...)``) stays unknown in the words it
        falls in: it is read again as a name that stands for it, not as its text."""
        if not args:
            return
        first = args[0]
        if self.evals >= MAX_EVALS:
            self.builder.note("unresolved", f"`eval` nested {MAX_EVALS} deep: not followed further", first.offset())
            return
        if first.unresolved and (not first.holes or first.holes[0][0] == 0):
            unknown = ", ".join(first.unresolved)
            self.builder.note(
                "unresolved", f"`eval` of {unknown}: the command is not known, not followed", first.offset()
            )
            return
        text, at = "", list[int]()
        for arg in args:
            if text:
                text += " "
                at.append(at[-1] if at else arg.offset())
            offsets = arg.at if len(arg.at) == len(arg.text) else [arg.offset()] * len(arg.text)
            holes = arg.holes or ([(0, len(arg.text), w) for w in arg.unresolved[:1]] if arg.unresolved else [])
            done = 0
            for start, end, what in sorted(holes):
                if start < done or end <= start:
                    continue
                name = f"__precheck_unknown_{len(self.opaque)}"
                self.opaque[name] = (arg.text[start:end], offsets[start:end], what)
                stand_in = "${" + name + "}"
                text += arg.text[done:start] + stand_in
                at.extend(offsets[done:start] + [offsets[start]] * len(stand_in))
                done = end
            text += arg.text[done:]
            at.extend(offsets[done:])
        self.evals += 1
        try:
            self.run(lex(self.builder.path, Src(text, at), self.builder.text))
        finally:
            self.evals -= 1

    def set_options(self, args: list[str]) -> None:
        """``set -a`` / ``set -o allexport`` (and ``+``): export every later assignment."""
        for i, text in enumerate(args):
            following = args[i + 1] if i + 1 < len(args) else ""
            if text in ("-o", "+o") and following == "allexport":
                self.allexport = text == "-o"
            elif re.fullmatch(r"[-+][a-zA-Z]+", text) and "a" in text:
                self.allexport = text.startswith("-")

    def declare(self, name: str, args: list[Field]) -> None:
        export = name == "export"
        unexport = False
        for arg in args:
            if arg.text.startswith("-") and not _ASSIGNMENT.match(arg.text):
                export = export or "x" in arg.text
                unexport = name == "export" and "n" in arg.text
                continue
            found = _ASSIGNMENT.match(arg.text)
            if found is None:
                if unexport:
                    self.exported.discard(arg.text)
                    self.env.pop(arg.text, None)
                elif export:
                    self.exported.add(arg.text)
                    old = self.vars.get(arg.text)
                    if old is not None and old.at and arg.text in RUN_ENV and not old.unresolved:
                        self.env[arg.text] = self._node(arg.text, old, arg.offset())
                continue
            var = found.group(1)
            cut = found.end()
            holes = [(max(s - cut, 0), e - cut, w) for s, e, w in arg.holes if e > cut]
            value = Value(arg.text[cut:], arg.at[cut:], [w for _, _, w in holes] if arg.holes else arg.unresolved)
            value.holes = holes if arg.holes else None
            if not value.at:
                value.at = [arg.offset(found.end() - 1) + 1]
            if found.group(2) and var in self.vars:
                value = _joined(self.vars[var], value)
            self.vars[var] = value
            if export:
                self.exported.add(var)
                if var in RUN_ENV:
                    if value.unresolved:
                        self.env.pop(var, None)
                    else:
                        self.env[var] = self._node(var, value, arg.offset(), arg.raw.partition("=")[2])
            elif var in RUN_ENV and var not in self.exported:
                self.builder.note("not-exported", f"`{var}` is declared but not exported", arg.offset(), var)

    def _node(self, name: str, value: Value, key_at: int, raw: str | None = None) -> Node:
        key_line, key_column = self.builder.where(key_at)
        line, column = self.builder.where(value.at[0]) if value.at else (key_line, key_column)
        quoted = raw is not None and raw[:1] in ("'", '"')
        return Node(value.text, line, column, name, key_line, key_column, raw=raw, quoted=quoted)

    def cd(self, args: list[Field]) -> None:
        target = next((a for a in args if not a.text.startswith("-") or a.text == "-"), None)
        if target is None or not self.bases:
            return
        script_dir = self.bases[-1]
        if target.unresolved:
            match_dir = _DIRNAME_SCRIPT.match(target.text)
            if match_dir is not None:
                self.bases = [script_dir / match_dir.group(1).lstrip("/"), script_dir]
            else:
                self.builder.note("unresolved", f"`cd {target.raw}`: precheck cannot tell where", target.offset())
            return
        base = self.bases[0]
        try:
            given = Path(target.text).expanduser()
        except RuntimeError:  # ``cd ~nosuchuser``
            given = Path(target.text)
        self.bases = [given if given.is_absolute() else base / given, script_dir]

    def launch(self, argv: list[Field], env: dict[str, Node]) -> tuple[Found, str, list[SourceNote]] | None:
        argv, env = self._strip_prefixes(argv, env)
        if not argv:
            return None
        program = program_name(argv[0].text)
        if program in _SHELLS:
            if not self._shell_c(argv, env):
                self._follow(argv, env)
            return None
        if program == "sbatch":
            self._sbatch(argv, env)
            return None
        notes_before = len(self.builder.notes)
        entry, count = match(argv)
        wrapped = _after_separator(argv)
        if wrapped is not None and (entry is None or entry.words == ("python",)):
            # ``python submit.py --cluster x -- accelerate launch ...``, ``ray job submit -- python -m ...``:
            # a wrapper that runs the command after ``--``
            return self.launch(wrapped, env)
        if entry is None:
            return None
        head = argv[:count]
        launch = Launch(self.builder, head, argv[count:], env, self.bases, lambda rest, e: self._dispatch(rest, e))
        found = entry.handler(launch)
        notes = self.builder.notes[notes_before:]
        del self.builder.notes[notes_before:]
        if found is None:
            return None
        found.env = {**env, **found.env}
        found.cd = self.bases[0] if len(self.bases) > 1 else None
        return found, label(named(argv, count), self.builder), notes

    def _sbatch(self, argv: list[Field], env: dict[str, Node]) -> None:
        """``sbatch [options] --wrap "CMD"`` (the string run by ``sh -c``) or ``sbatch [options]
        script.sh ARGS`` (the script followed, its ``#SBATCH`` lines read); the options'
        GPUs per node as Slurm gives them (command-line options beat ``#SBATCH`` lines)."""
        takes = _PREFIXES["srun"]
        env = dict(env)
        i = 1
        while i < len(argv) and argv[i].text.startswith("-") and argv[i].text != "--":
            text = argv[i].text
            if text == "--wrap" or text.startswith("--wrap="):
                script = argv[i].tail(len("--wrap=")) if "=" in text else (argv[i + 1] if i + 1 < len(argv) else None)
                self._slurm_gpus([(a.text, a.offset()) for a in argv[1:i]], env)
                if script is not None and not script.unresolved:
                    shell = self.child()
                    shell.env = env
                    shell.run(lex(self.builder.path, Src(script.text, script.at), self.builder.text))
                elif script is not None:
                    self.builder.note(
                        "unresolved", f"`sbatch --wrap` of {', '.join(script.unresolved)}", script.offset()
                    )
                return
            i += 2 if text in takes else 1
        if i < len(argv):
            self._follow([argv[0], *argv[i:]], env, options=[(a.text, a.offset()) for a in argv[1:i]])

    def _dispatch(self, argv: list[Field], env: dict[str, Node]) -> Found | None:
        argv, env = self._strip_prefixes(argv, env)
        entry, count = match(argv)
        if entry is None:
            return None
        launch = Launch(self.builder, argv[:count], argv[count:], env, self.bases, self._dispatch)
        return entry.handler(launch)

    def _strip_prefixes(self, argv: list[Field], env: dict[str, Node]) -> tuple[list[Field], dict[str, Node]]:
        env = dict(env)
        while argv:
            program = program_name(argv[0].text)
            if program == "env":
                argv = self._env_command(argv[1:], env)
            elif program in _PREFIXES:
                takes = _PREFIXES[program]
                if program == "srun":
                    self._slurm_gpus([(a.text, a.offset()) for a in argv[1:]], env)
                i = 1
                while i < len(argv) and argv[i].text.startswith("-") and argv[i].text != "--":
                    i += 2 if argv[i].text in takes else 1
                if i < len(argv) and argv[i].text == "--":
                    i += 1
                argv = argv[i:]
            elif program == "timeout":
                i = 1
                while i < len(argv) and argv[i].text.startswith("-"):
                    i += 2 if argv[i].text in ("-s", "-k", "--signal", "--kill-after") else 1
                argv = argv[i + 1 :]
            elif program in ("uv", "poetry", "pipenv", "pixi") and len(argv) > 1 and argv[1].text == "run":
                i = 2
                while i < len(argv) and argv[i].text.startswith("-"):
                    i += 1
                argv = argv[i:]
            elif program in ("conda", "micromamba", "mamba") and len(argv) > 1 and argv[1].text == "run":
                i = 2
                while i < len(argv) and argv[i].text.startswith("-"):
                    i += 2 if argv[i].text in ("-n", "--name", "-p", "--prefix") else 1
                argv = argv[i:]
            else:
                break
        return argv, env

    def _slurm_gpus(self, words: list[tuple[str, int]], env: dict[str, Node]) -> None:
        """``--gres=gpu:8``, ``--gpus-per-node=8`` (or ``--gpus=8`` on one node) of an ``srun`` or an
        ``#SBATCH`` line: Slurm gives each node that many GPUs (``SLURM_GPUS_ON_NODE``)."""
        found = slurm_gpus_per_node(words)
        if found is not None:
            count, at = found
            line, column = self.builder.where(at)
            env["SLURM_GPUS_ON_NODE"] = Node(str(count), line, column, "SLURM_GPUS_ON_NODE", line, column)

    def _env_command(self, args: list[Field], env: dict[str, Node]) -> list[Field]:
        """``env [-i] [-u NAME] [NAME=value]... command``."""
        i = 0
        while i < len(args):
            text = args[i].text
            if text in ("-i", "--ignore-environment", "-"):
                env.clear()
                i += 1
            elif text in ("-u", "--unset") and i + 1 < len(args):
                env.pop(args[i + 1].text, None)
                i += 2
            elif text.startswith("--unset="):
                env.pop(text.partition("=")[2], None)
                i += 1
            elif text == "--":
                i += 1
                break
            elif (found := _ASSIGNMENT.match(text)) is not None and not found.group(2):
                name = found.group(1)
                arg = args[i]
                if name in RUN_ENV:
                    if arg.unresolved:
                        env.pop(name, None)
                    else:
                        value = Value(text[found.end() :], arg.at[found.end() :])
                        env[name] = self._node(name, value, arg.offset(), arg.raw.partition("=")[2])
                i += 1
            elif text.startswith("-"):
                i += 1
            else:
                break
        return args[i:]

    def _shell_c(self, argv: list[Field], env: dict[str, Node]) -> bool:
        """``bash -c 'script'``: the string is a script of its own (positions as written).
        False when the shell runs no ``-c`` string (it may run a script file)."""
        for i, arg in enumerate(argv[1:], start=1):
            if arg.text.startswith("-") and "c" in arg.text[1:] and not arg.text.startswith("--"):
                if i + 1 < len(argv):
                    script = argv[i + 1]
                    if script.unresolved:
                        return True
                    shell = self.child()
                    shell.env = dict(env)
                    shell.run(lex(self.builder.path, Src(script.text, script.at), self.builder.text))
                return True
            if not arg.text.startswith("-"):
                return False
        return False

    def _follow(self, argv: list[Field], env: dict[str, Node], options: list[tuple[str, int]] | None = None) -> None:
        """``bash run.sh ARGS``: the other script's launches are runs of this one, read with this
        script's exported environment (``$1``... stay unknown); their settings point into
        the other file (which is then checked as part of this run, not on its own).
        ``options``: ``sbatch``'s own, which beat the script's ``#SBATCH`` lines."""
        index = next((i for i, a in enumerate(argv[1:], start=1) if not a.text.startswith("-")), None)
        if index is None or argv[index].unresolved or self.depth >= 4 or not self.bases:
            return
        if self.followed[0] >= MAX_FOLLOWED:
            return
        self.followed[0] += 1
        target = locate(argv[index].text, self.bases)
        if target is None or target.suffix.lower() not in (".sh", ".bash", ".slurm", ".sbatch", ""):
            return
        from .reading import read_text  # the package imports this module lazily

        name = shown(target)
        try:
            text = read_text(target, name)
        except InputError:
            return
        builder = Builder(name, text)
        # it runs in this script's folder: where this script `cd`-ed to, if it did
        here = [self.bases[0]] if len(self.bases) > 1 else []
        shell = Shell(builder, [*here, target.parent], [])
        shell.depth = self.depth + 1
        shell.followed = self.followed
        shell.vars = {k: v for k, v in self.vars.items() if k in self.exported}
        shell.exported = set(self.exported)
        shell.env = dict(env)
        shell._slurm_gpus(sbatch_words(text), shell.env)
        if options:
            self._slurm_gpus(options, shell.env)
        shell.run(lex(name, Src.of(text), text))
        inherited = {id(node) for node in env.values()}
        for found, where, notes in shell.runs:
            for node in [*found.root.values(), *found.env.values()]:
                if id(node) not in inherited:
                    _mark(node, name)
            if found.script_path is None and found.script is not None:
                found.script_path = resolve_script(found.script, False, shell.bases)
            moved = [replace(n, path=n.path or name) for n in [*notes, *builder.notes]]
            self.runs.append((found, f"{name}: {where}", moved))


def _after_separator(argv: list[Field]) -> list[Field] | None:
    """The launch a wrapper runs after its ``--`` (``python submit.py --cluster x -- accelerate
    launch ...``, ``ray job submit ... -- python -m pkg.train``); None when the words after
    the first ``--`` start no launcher precheck follows."""
    for i, arg in enumerate(argv[1:], start=1):
        if arg.text == "--" and not arg.quoted:
            rest = argv[i + 1 :]
            entry, _ = match(rest)
            return rest if entry is not None else None
    return None


def _line(given: Value, delimiter: str, raw: bool) -> tuple[str, list[int], Holes]:
    """What ``read`` takes from its input: up to ``delimiter`` (empty: all of it); without
    ``-r`` a backslash-newline is dropped and a backslash quotes the next character."""
    text, at = given.text, given.at
    out: list[str] = []
    offsets: list[int] = []
    kept: list[int] = []  # the input index of each character kept
    i = 0
    while i < len(text):
        c = text[i]
        if not raw and c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
                offsets.append(at[i + 1] if i + 1 < len(at) else 0)
                kept.append(i + 1)
            i += 2
            continue
        if delimiter and c == delimiter:
            break
        out.append(c)
        offsets.append(at[i] if i < len(at) else 0)
        kept.append(i)
        i += 1
    holes: Holes = []
    for start, end, what in given.spans():
        inside = [n for n, index in enumerate(kept) if start <= index < end]
        if inside:
            holes.append((inside[0], inside[-1] + 1, what))
        elif start == end == 0 or start < len(text):  # an unknown value that expanded to nothing
            holes.append((0, 0, what))
    return "".join(out), offsets, holes


def _ifs_split(text: str, ifs: str, limit: int) -> list[tuple[int, int]]:
    """``read``'s fields of ``text`` split on ``ifs`` (its blanks run together and are trimmed);
    with ``limit`` names, the last takes the rest of the line."""
    blank = {c for c in ifs if c in " \t\n"}
    other = set(ifs) - blank
    spans: list[tuple[int, int]] = []
    n, i = len(text), 0
    while i < n and text[i] in blank:
        i += 1
    while i < n:
        if limit and len(spans) == limit - 1:
            end = n
            while end > i and text[end - 1] in blank:
                end -= 1
            spans.append((i, end))
            break
        j = i
        while j < n and text[j] not in blank and text[j] not in other:
            j += 1
        spans.append((i, j))
        while j < n and text[j] in blank:
            j += 1
        if j < n and text[j] in other:
            j += 1
            while j < n and text[j] in blank:
                j += 1
        i = j
    return spans


def _slice(text: str, at: list[int], holes: Holes, start: int, end: int) -> Value:
    """The characters ``start:end`` of a read line as a variable's value, with the unknown
    values that fall in them."""
    inside = [(max(s, start) - start, min(e, end) - start, w) for s, e, w in holes if s < end and e > start]
    inside += [(0, 0, w) for s, e, w in holes if s == e == 0 and start == 0]
    return Value(text[start:end], at[start:end], list(dict.fromkeys(w for _, _, w in inside)), holes=inside)


def _mark(node: Node, path: str) -> None:
    """A node read from another script (and what is under it) points into that file."""
    if node.path is not None:
        return
    node.path = path
    children = (
        node.value.values() if isinstance(node.value, dict) else node.value if isinstance(node.value, list) else ()
    )
    for child in children:
        if isinstance(child, Node):
            _mark(child, path)


# -- entry points -------------------------------------------------------------------------------


def parse_script(path: str, text: str, kind: str) -> list[Document]:
    """One document per launch command in a shell script (``kind`` "shell") or a Makefile."""
    builder = Builder(path, text)
    folder = Path(path).parent if path != COMMAND_LINE else Path(".")
    runs: list[tuple[Found, str, list[SourceNote]]] = []
    shell = Shell(builder, [folder], runs)
    if kind == "makefile":
        recipes, variables, exported = make_recipes(text)
        for name, at in exported.items():
            if name in variables:
                value = make_expand(variables[name], variables)
                shell.vars[name] = Value(value.text, value.at)
                shell.exported.add(name)
                if name in RUN_ENV:
                    shell.env[name] = shell._node(name, shell.vars[name], at)
        for recipe in recipes:
            shell.child().run(lex(path, make_expand(recipe, variables), text))
    else:
        shell._slurm_gpus(sbatch_words(text), shell.env)  # a Slurm batch script's allocation
        shell.run(lex(path, Src.of(text), text))
    suppressions = scan_suppressions(text, "env")
    documents = []
    for found, where, notes in runs:
        line, column = _start(found, builder)
        documents.append(
            Document(
                path,
                "shell",
                Node(found.root, line, column),
                text,
                [*notes, *builder.notes, *suppressions],
                dialect=found.dialect,
                env=found.env,
                label=where,
                script_keys=found.script_keys,
                script_closed=found.script_closed,
                script_own_loop=found.script_own_loop,
                script=found.script,
                script_path=str(found.script_path) if found.script_path is not None else None,
                cd=str(found.cd) if found.cd is not None else None,
            )
        )
    return [d for d in documents if d.dialect is not None or _known(d)]


def _start(found: Found, builder: Builder) -> tuple[int, int]:
    lines = [(n.key_line or n.line, n.key_column or n.column) for n in found.root.values() if n.path is None]
    return min(lines) if lines else (1, 1)


def _known(document: Document) -> bool:
    from . import registered  # the registry's table (the registry imports the sources)

    return registered.detect(document) is not None


def command_text(argv: list[str]) -> str:
    """The command line as one shell line (what positions on ``<command line>`` count in)."""
    return shlex.join(argv)


def parse_command(argv: list[str], display: str = COMMAND_LINE) -> list[Document]:
    """The runs a command line (``precheck -- CMD ARGS...``) starts."""
    return parse_script(display, command_text(argv), "shell")


__all__ = ["COMMAND_LINE", "command_text", "parse_command", "parse_script"]
