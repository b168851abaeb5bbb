"""Every version boundary and upstream quote a rule relies on comes from data/facts.json,
which scripts/verify_facts.py checks against the released artifacts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from precheck.facts import FACTS_FILE, all_facts, quote, span
from precheck.versions import version_key

SRC = Path(__file__).resolve().parent.parent / "src" / "precheck"
ACCESSORS = ("span", "quote", "fact")


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def test_every_fact_is_checkable() -> None:
    facts = all_facts()
    assert facts, FACTS_FILE
    for item in facts.values():
        assert item.package and item.file and item.pattern, item.id
        assert item.present_in or item.absent_in or "not on PyPI" in item.cite, f"{item.id}: nothing to check"
        for bound in (item.low, item.high, *item.present_in, *item.absent_in):
            if bound is not None:
                assert str(version_key(bound)) == bound or version_key(bound) > version_key("0"), (item.id, bound)
        assert item.message.startswith(item.pattern.strip()), item.id


def test_no_version_boundary_outside_the_facts_table() -> None:
    """``VersionRange("pkg", "1.2.0")`` with a literal release anywhere but in facts.py is a
    boundary nobody verifies: take it from :func:`precheck.facts.span`."""
    found = []
    for path, tree in _modules():
        if path.name in ("facts.py", "versions.py"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "VersionRange":
                literal = [a for a in node.args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if literal:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_every_fact_a_rule_names_exists() -> None:
    facts = all_facts()
    named = set()
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ACCESSORS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    assert first.value in facts, f"{path.relative_to(SRC)}:{node.lineno}: {first.value}"
                    named.add(first.value)
    assert named, "no rule reads the facts table"


def test_quotes_are_not_copied_beside_the_table() -> None:
    """An upstream message the table holds is used through quote(), never pasted in code."""
    patterns = [f.pattern.strip() for f in all_facts().values() if len(f.pattern.strip()) >= 30]
    copies = []
    for path, tree in _modules():
        docs = {
            id(owner.body[0].value)
            for owner in ast.walk(tree)
            if isinstance(owner, ast.Module | ast.FunctionDef | ast.ClassDef)
            and owner.body
            and isinstance(owner.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                copies += [f"{path.relative_to(SRC)}:{node.lineno}" for p in patterns if p in node.value]
    assert copies == []


@pytest.mark.parametrize(
    ("fact_id", "inside", "outside"),
    [
        ("deepspeed.bf16_fp32_accum_refused", "0.18.5", "0.18.4"),
        ("deepspeed.amp_removed", "0.19.8", "0.19.7"),
        ("deepspeed.loss_scale_negative", "0.18.8", "0.18.7"),
        ("deepspeed.loss_scale_window", "0.19.3", "0.19.2"),
        ("ms-swift.overrides_flags", "3.3.0.post1", "3.3.1"),
        ("peft.adapters_upcast", "0.12.0", "0.11.1"),
    ],
)
def test_boundaries_as_verified(fact_id: str, inside: str, outside: str) -> None:
    assert span(fact_id).contains(inside) and not span(fact_id).contains(outside)


def test_quote_is_the_printed_message() -> None:
    assert quote("deepspeed.amp_removed").endswith("'torch_autocast' instead.")
