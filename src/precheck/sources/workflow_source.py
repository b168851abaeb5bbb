"""GitHub Actions workflows: the launch commands in their ``run:`` steps.

A workflow (``.github/workflows/*.yml``) is YAML whose steps hold shell scripts. Each
step's ``run:`` text is read by :mod:`precheck.sources.shell_source` where it stands in the
file, so findings point at the flag's own line and column: every other line of the file is
blanked, and a block scalar's lines (``run: |``) are kept as they are, indentation included
(leading blanks mean nothing to the shell).

The step sees the ``env:`` of the workflow, of its job and of itself (the innermost
wins, and the script's own ``export`` beats them all), wherever they stand in the step;
each step is read on its own, so no step's variables leak into the next. GitHub
expressions (``${{ matrix.gpu }}``) are known only when the workflow runs: they become
unset shell variables of the same length, so a flag whose value is one is left out with
a note, as any unknown variable is.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import yaml

from .nodes import Document, Node

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


def is_workflow(path: str) -> bool:
    """A GitHub Actions workflow file: ``.github/workflows/NAME.yml``."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return len(parts) >= 3 and parts[-3:-1] == (".github", "workflows") and path.lower().endswith((".yml", ".yaml"))


def parse_workflow(path: str, text: str) -> list[Document]:
    """One document per launch command in the workflow's ``run:`` steps ([] when none)."""
    from .shell_source import parse_script

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)  # nodes only: nothing is constructed
    except (yaml.YAMLError, RecursionError):
        return []  # the YAML reader reports a broken file when it is read as a config
    lines = text.splitlines(keepends=True)
    documents: list[Document] = []
    for env_nodes, run in _steps(root):
        blank = ["\n" if line.endswith("\n") else "" for line in lines]
        if not _script(blank, lines, run):
            continue
        for document in parse_script(path, "".join(blank), "shell"):
            # the script's own exports win; then the step's env, the job's, the workflow's
            for key, value in reversed(env_nodes):
                if isinstance(value.value, str) and not _EXPRESSION.search(value.value):
                    document.env.setdefault(str(key.value), _node(key, value))
            documents.append(document)
    return documents


def _node(key: yaml.ScalarNode, value: yaml.ScalarNode) -> Node:
    return Node(
        value.value,
        value.start_mark.line + 1,
        value.start_mark.column + 1,
        str(key.value),
        key.start_mark.line + 1,
        key.start_mark.column + 1,
        raw=value.value,
    )


def _mapping(node: yaml.Node | None) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode) and isinstance(k.value, str)}


def _env(node: yaml.Node | None) -> list[tuple[yaml.ScalarNode, yaml.ScalarNode]]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return [(k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)]


def _steps(root: yaml.Node | None) -> list[tuple[list[tuple[yaml.ScalarNode, yaml.ScalarNode]], yaml.ScalarNode]]:
    """(the env the step sees, outermost first; its ``run:`` scalar) for every step."""
    workflow = _mapping(root)
    out = []
    for job in _mapping(workflow.get("jobs")).values():
        fields = _mapping(job)
        steps = fields.get("steps")
        if not isinstance(steps, yaml.SequenceNode):
            continue
        for step in steps.value:
            own = _mapping(step)
            run = own.get("run")
            if isinstance(run, yaml.ScalarNode) and isinstance(run.value, str):
                env = [*_env(workflow.get("env")), *_env(fields.get("env")), *_env(own.get("env"))]
                out.append((env, run))
    return out


def _script(blank: list[str], lines: list[str], run: yaml.ScalarNode) -> bool:
    """Copy the step's script into ``blank`` where it stands; False when it cannot be placed."""
    start, end = run.start_mark, run.end_mark
    if run.style in ("|", ">"):
        last = end.line if end.column > 0 else end.line - 1
        for index in range(start.line + 1, min(last, len(lines) - 1) + 1):
            blank[index] = _unexpressed(lines[index])
        return True
    if run.style is None and start.line == end.line and start.line < len(lines):
        line = lines[start.line]
        newline = "\n" if line.endswith("\n") else ""
        blank[start.line] = " " * start.column + _unexpressed(line[start.column : end.column]) + newline
        return True
    return False  # a quoted or folded plain scalar: its characters are not the file's


def _unexpressed(text: str) -> str:
    return _EXPRESSION.sub(lambda m: "$" + "_" * (len(m.group(0)) - 1), text)
