"""Makefiles: the recipe lines (read as shell scripts by :mod:`.shell_source`) after make's own
expansion of the variables the Makefile sets."""

from __future__ import annotations

import re

from .shell_lexer import Src

_MAKE_ASSIGN = re.compile(
    r"^(?P<export>export\s+|override\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)\s*(?P<op>[:+?!]*=)(?P<value>.*)$"
)
_MAKE_REF = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]|\$\$")


def make_recipes(text: str) -> tuple[list[Src], dict[str, Src], dict[str, int]]:
    """The recipe lines of a Makefile (continuations joined, not yet expanded), its variables
    (as written: make expands recipes when it runs them, with the file's final values) and
    its exported names (→ where each is named)."""
    variables: dict[str, Src] = {}
    exported: dict[str, int] = {}
    recipes: list[Src] = []
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    in_rule = False
    i = 0
    while i < len(lines):
        line, start = lines[i], offsets[i]
        if line.startswith("\t") and in_rule:
            src = Src.of(line[1:].rstrip("\r\n"), start + 1)
            while src.text.endswith("\\") and i + 1 < len(lines):
                i += 1
                nxt = lines[i]
                strip = 1 if nxt.startswith("\t") else 0
                joined = Src(" ", [offsets[i]]) + Src.of(nxt[strip:].rstrip("\r\n"), offsets[i] + strip)
                src = src.slice(0, len(src.text) - 1) + joined
            recipes.append(_strip_recipe_prefix(src))
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        assignment = _MAKE_ASSIGN.match(stripped)
        if assignment is not None:
            raw_value = assignment.group("value")
            value_text = raw_value.strip()
            value_start = start + indent + assignment.start("value") + (len(raw_value) - len(raw_value.lstrip()))
            value = Src.of(value_text, value_start)
            name, op = assignment.group("name"), assignment.group("op")
            if op == "+=" and name in variables:
                variables[name] = variables[name] + Src(" ", [value_start]) + value
            elif op != "?=" or name not in variables:
                variables[name] = value
            if assignment.group("export"):
                exported[name] = start + indent + assignment.start("name")
            in_rule = False
        elif stripped.startswith("export ") and "=" not in stripped:
            for found in re.finditer(r"\S+", line[indent + len("export ") :]):
                exported[found.group()] = start + indent + len("export ") + found.start()
        elif re.match(r"^[^\s#=][^=]*:(?!=)", line):
            in_rule = True
        elif stripped and not stripped.startswith("#"):
            in_rule = False
        i += 1
    return recipes, variables, exported


def _strip_recipe_prefix(src: Src) -> Src:
    i = 0
    while i < len(src.text) and src.text[i] in "@-+ \t":
        i += 1
    return src.slice(i, len(src.text))


def make_expand(src: Src, variables: dict[str, Src], depth: int = 0) -> Src:
    """make's expansion before the shell sees the line: ``$(VAR)``, ``${VAR}``, ``$$``."""
    out = Src("", [])
    last = 0
    for found in _MAKE_REF.finditer(src.text):
        out = out + src.slice(last, found.start())
        if found.group(0) == "$$":
            out = out + src.slice(found.start() + 1, found.end())
        else:
            name = found.group(1)
            if name in variables and depth < 10:
                out = out + make_expand(variables[name], variables, depth + 1)
            elif name in variables:
                out = out + variables[name]
            else:  # from make's environment: the shell's ``${NAME}`` (unknown to precheck too)
                at = src.at[found.start()]
                out = out + Src("${" + name + "}", [at] * (len(name) + 3))
        last = found.end()
    return out + src.slice(last, len(src.text))
