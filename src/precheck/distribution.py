"""Where precheck comes from: its distribution name and its one web address.

The command and the import package are ``precheck``; the distribution on the package
index is ``precheck-ml`` (``precheck`` there is an unrelated project). Every install hint
says :data:`NAME`; the rule pages, SARIF ``helpUri`` and ``project.urls`` derive from
:data:`REPOSITORY` (a test checks pyproject.toml against it).
"""

from __future__ import annotations

#: the distribution name: ``pip install precheck-ml``
NAME = "precheck-ml"
#: the source repository (not published under a fixed address yet: OWNER is a placeholder)
REPOSITORY = "https://github.com/OWNER/precheck"
#: the generated rule pages (docs/rules/CODE.md) on the default branch
RULES_URL = f"{REPOSITORY}/blob/main/docs/rules"
#: what to install for --deep, precheck smoke and the Trainer callback
INSTALL_HF = f"pip install '{NAME}[hf]'"


def rule_url(code: str) -> str:
    """The page of one rule: ``…/docs/rules/PC201.md``."""
    return f"{RULES_URL}/{code}.md"
