"""Templates are not configs: files that a tool renders into a config, never read as one.

- **A Helm chart's templates**: a file under ``templates/`` in a folder that holds
  ``Chart.yaml`` (Helm's chart layout: ``helm create`` writes ``Chart.yaml``, ``values.yaml``
  and ``templates/``). Whatever it holds (``{{ .Values.precision }}``, ``fp16``), it is Go
  template text, rendered by ``helm template``; skipped before it is parsed.
- **Go or Jinja template markers in a file that does not parse**: ``{{ ... }}``,
  ``{%- ... %}``, ``{# ... #}`` (Ansible, cookiecutter, Kustomize-less charts, Jinja-rendered
  configs). A config that parses is read even when a value holds markers: a chat template
  (``chat_template: "{% for message in messages %}..."``) is a value, and the file a config.

Both are skipped with a note, in a folder search and when named (a pre-commit hook names
every staged YAML file).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

HELM_NOTE = "a Helm chart template (templates/ beside Chart.yaml), not a config"
MARKERS_NOTE = "a template (Go/Jinja markers such as `{{ ... }}`), not a config"

#: ``{{ x }}`` / ``{{- x -}}`` (Go, Jinja), ``{% x %}`` (Jinja statements), ``{# x #}`` (Jinja comments)
_MARKER = re.compile(r"\{\{-?[^{}\n]*-?\}\}|\{%-?[^\n]*?-?%\}|\{#[^\n]*?#\}")
#: the notes of a skipped template (shown in a folder search too)
NOTES = frozenset({HELM_NOTE, MARKERS_NOTE})
_CONFIG_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".toml"})


def helm_template(path: Path) -> bool:
    """Whether ``path`` lies under a Helm chart's ``templates/`` folder (at any depth below it)."""
    if path.suffix.lower() not in _CONFIG_SUFFIXES and path.suffix.lower() != ".tpl":
        return False
    for folder in Path(os.path.abspath(path)).parents:
        chart = folder.parent
        if folder.name == "templates" and ((chart / "Chart.yaml").is_file() or (chart / "Chart.yml").is_file()):
            return True
        if folder == folder.parent:
            break
    return False


def has_markers(text: str) -> bool:
    """Whether ``text`` holds Go/Jinja template markers."""
    return ("{{" in text or "{%" in text or "{#" in text) and _MARKER.search(text) is not None


def config_format(path: Path) -> bool:
    return path.suffix.lower() in _CONFIG_SUFFIXES


__all__ = ["HELM_NOTE", "MARKERS_NOTE", "NOTES", "config_format", "has_markers", "helm_template"]
