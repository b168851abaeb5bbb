"""The registry: a document's format -> its :class:`~precheck.fix.base.Editor`.

An edit carries the format of the document its key was read from
(:attr:`precheck.rules.base.Edit.format`, from ``Document.format``); the editor is chosen
by it. :func:`format_from_path` is the one fallback, for an edit built without its
document."""

from __future__ import annotations

from pathlib import Path

from ..rules.base import Edit
from ..sources import FORMATS, script_kind
from ..sources.workflow_source import is_workflow
from .base import Editor, FixError
from .env import EnvEditor
from .json import JsonEditor
from .shell import ScriptEditor
from .toml import TomlEditor
from .yaml import YamlEditor

EDITORS: dict[str, Editor] = {
    editor.format: editor
    for editor in (
        YamlEditor(),
        JsonEditor(),
        TomlEditor(),
        EnvEditor(),
        ScriptEditor("shell"),
        ScriptEditor("makefile"),
        ScriptEditor("python"),
        ScriptEditor("notebook"),
    )
}


def format_from_path(path: str | Path) -> str:
    """The format precheck reads a file at ``path`` in, from its name alone (a script's
    kind, ``shell`` for a workflow, else by suffix, YAML when none fits, as
    :func:`precheck.sources.load` reads it). Only for an edit built without its document
    (``Edit.format`` None): every other edit names its document's format."""
    kind = script_kind(path)
    if kind is not None:
        return kind
    if is_workflow(str(path)):
        return "shell"  # its runs are its steps' launch commands
    return FORMATS.get(Path(path).suffix.lower(), "yaml")


def format_of(edit: Edit) -> str:
    """The format of the document ``edit`` changes."""
    return edit.format if edit.format is not None else format_from_path(edit.path)


def editor_for(fmt: str) -> Editor:
    editor = EDITORS.get(fmt)
    if editor is None:
        raise FixError(f"precheck cannot edit {fmt} files; change it by hand")
    return editor
