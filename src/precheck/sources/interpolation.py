"""Values a config leaves to run time: OmegaConf/Hydra interpolations (``${oc.env:PRECISION,bf16}``,
``${now:...}``, ``${..key}``) and template expressions (``${{ matrix.dtype }}``, ``${BF16}``).

Recipes read through OmegaConf (Hydra and the frameworks built on it) have their ``${...}``, which OmegaConf
resolves when the value is used (``oc.env``: ``omegaconf/resolvers/oc/__init__.py:25-43@2.4.0``,
``env(key, default)`` returns the variable, else ``str(default)`` (None stays None), else
raises). precheck does not run them, so:

* a reference to a key of the same file (``${model.dtype}``, an absolute key path) is a
  fact, left as written for the dialects that follow it (they name both places);
* ``${oc.env:NAME,DEFAULT}`` (and ``${env:...}``, its older spelling) takes the default, and
  the value is an assumption: a finding about it is at most a warning that says so;
* anything else is unknown: the value is left out (read as null: the framework's default
  stands in for it, and the key's value is an assumption too).

Each such value gets a note (:data:`INTERPOLATED`) at its key: ``premises`` treats the
precision keys among them as values set at run time, and the engine caps the findings that
point at one of them (DESIGN.md, "Findings rest on facts"). Applied to every YAML, JSON and
TOML document, whatever its keys.
"""

from __future__ import annotations

import re

from .nodes import Document, Node, SourceNote

#: the note kind of a value left to run time
INTERPOLATED = "interpolated"
_REFERENCE = re.compile(r"^\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*$")
_PART = re.compile(r"\$\{([^{}]*)\}")
_ENV = re.compile(r"^\$\{\s*(?:oc\.env|env)\s*:\s*([A-Za-z_]\w*)\s*(?:,\s*(.*?)\s*)?\}$", re.S)
_MAX_DEPTH = 64


def mark(document: Document) -> None:
    """Resolve or mark the interpolated scalars of ``document`` (in place)."""
    if "${" not in document.text:  # the plain scan first: most files have none
        return
    _walk(document, document.root, 0)


def _walk(document: Document, node: Node, depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    value = node.value
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        if not isinstance(child, Node):
            continue
        if isinstance(child.value, str) and "${" in child.value:
            _resolve(document, child)
        elif isinstance(child.value, (dict, list)):
            _walk(document, child, depth + 1)


def _resolve(document: Document, node: Node) -> None:
    written = node.value
    parts = _PART.findall(written)
    if parts and "{{" not in written and all(_is_reference(document, part) for part in parts):
        return  # keys of the same file (``${base}/model``): facts, which the dialects that read OmegaConf follow
    env = _ENV.match(written)
    line, column = node.anchor
    key = node.key
    if env is not None and env.group(2) is not None:
        default = _scalar(env.group(2))
        node.value = default
        message = (
            f"`{key}` is `{written}`, set at run time from ${env.group(1)}: precheck took its default "
            f"`{env.group(2).strip(chr(39) + chr(34))}`; export {env.group(1)} or write the value to state it"
        )
    else:
        node.value = None
        message = (
            f"`{key}` is `{written}`, known only at run time (an interpolation precheck does not "
            f"resolve): its value is left out; write the value to state it"
        )
    document.notes.append(SourceNote(INTERPOLATED, message, line, column, key, node.path))


def _is_reference(document: Document, inner: str) -> bool:
    """``inner`` (what ``${...}`` holds) names a key of the same file."""
    reference = _REFERENCE.match(inner)
    return reference is not None and _lookup(document.root, reference.group(1)) is not None


def _lookup(root: Node, dotted: str) -> Node | None:
    node: Node | None = root
    for part in dotted.split("."):
        node = node.get(part) if node is not None else None
    return node


def _scalar(text: str) -> str | None:
    """An ``oc.env`` default as ``env`` returns it: ``str(default)`` of the value the grammar
    reads (quoted text as it is, ``true`` → ``"True"``, ``16`` → ``"16"``), None for null."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("true", "false"):
        return str(lowered == "true")
    if lowered in ("null", ""):
        return None
    return text


__all__ = ["INTERPOLATED", "mark"]
