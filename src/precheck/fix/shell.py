"""Scripts: shell launch scripts, Makefiles, GitHub Actions workflows' ``run:`` steps,
Python training scripts and notebooks. precheck reads the runs they configure, but an edit
of a command line or a call is not one value's characters (quoting, line continuations,
variables, code), so it never rewrites them: every edit is refused, and says so."""

from __future__ import annotations

from ..rules.base import Edit
from .base import FixError, Replacement

NOT_REWRITTEN = "precheck does not rewrite scripts, workflows or notebooks; change the argument by hand"


class ScriptEditor:
    """The :class:`~precheck.fix.base.Editor` of one script format: it refuses every edit."""

    rewrites = False

    def __init__(self, format: str):
        self.format = format

    def plan(self, text: str, edit: Edit) -> list[Replacement]:
        raise FixError(NOT_REWRITTEN)
