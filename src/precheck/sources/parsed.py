"""Python source parsed once per run: a training script is both checked on its own
(:mod:`.python_source`) and read as the script a launch line starts (:mod:`.script_schema`).

The trees are kept for the last :data:`KEPT` texts parsed, keyed on the exact text (the
same text gives the same tree, whatever file it came from); the readers never change a
tree. A text that does not parse is not kept: its error is raised again on the next ask.
"""

from __future__ import annotations

import ast
import warnings

#: how many trees are kept (memory stays flat over a large repository)
KEPT = 16

_TREES: dict[str, ast.Module] = {}


def parse(code: str, filename: str) -> ast.Module:
    """``ast.parse(code)``, remembered; without the warnings (``invalid escape sequence``...)
    the compiler prints for odd source: they are the script's business, not the check's."""
    tree = _TREES.pop(code, None)
    if tree is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(code, filename=filename)
        if len(_TREES) >= KEPT:
            _TREES.pop(next(iter(_TREES)))
    _TREES[code] = tree  # the latest last
    return tree


def clear() -> None:
    """Forget the trees of earlier runs."""
    _TREES.clear()


__all__ = ["KEPT", "clear", "parse"]
