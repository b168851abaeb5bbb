"""Every fix that names edits really fixes: apply them and the rule goes quiet."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import replace

import pytest

from helpers import Case, findings_for, run_case
from precheck.rules.base import Edit
from test_registry import _cases


def _scalar(value: object, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def apply(text: str, fmt: str, edits: tuple[Edit, ...]) -> str:
    """A small, line-based editor: enough for the snippets the rule tests use."""
    lines = textwrap.dedent(text).lstrip("\n").splitlines()
    for edit in sorted(edits, key=lambda e: -(e.line or 0)):
        leaf = edit.key.split(".")[-1]
        if edit.line is not None:
            index = edit.line - 1
            if edit.remove:
                del lines[index]
                continue
            pattern = rf'("?{re.escape(leaf)}"?\s*:\s*)([^,}}\n]+)'
            value = _scalar(edit.value, fmt)
            if fmt == "py":  # a keyword argument: fp16=False, torch_dtype=torch.float32
                pattern = rf"(\b{re.escape(leaf)}\s*=\s*)([^,)\n]+)"
                value = edit.assignment().split("=", 1)[1]
            assert re.search(pattern, lines[index]), (edit, lines[index])
            lines[index] = re.sub(pattern, lambda m, v=value: m.group(1) + v, lines[index], count=1)
        elif fmt == "json":
            document = json.loads("\n".join(lines))
            document[edit.key] = edit.value
            lines = json.dumps(document, indent=2).splitlines()
        else:
            lines.append(f"{edit.key}: {_scalar(edit.value, fmt)}")
    return "\n".join(lines) + "\n"


FIXABLE = [c for c in _cases() if c.expect]


@pytest.mark.parametrize("case", FIXABLE, ids=lambda c: f"{c.code} {c.name}")
def test_fix_fixes(case: Case) -> None:
    findings = run_case(case)
    edits = tuple(edit for finding in findings if finding.fix for edit in finding.fix.edits)
    if not edits:
        pytest.skip("the fix is outside the file (environment, hardware) or a choice left to the user")
    fixed = replace(case, text=apply(case.text, case.fmt, edits), expect=set())
    assert findings_for(fixed) == set(), fixed.text
