"""PC907 after all findings, as ruff's ``noqa`` checker: the engine runs every other rule once,
tells which suppression comments their findings use, and PC907 reads only that."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import plan_for, read_as
from precheck import engine
from precheck.hardware import from_specs
from precheck.provenance import Origin
from precheck.rules import RULES
from precheck.rules.base import Context, Finding, Rule, SuppressionComment, Suppressions
from precheck.versions import Versions

HYGIENE = Path(__file__).resolve().parents[1] / "src" / "precheck" / "rules" / "hygiene.py"


def test_the_hygiene_rules_import_neither_the_engine_nor_the_sources() -> None:
    imported = set()
    for node in ast.walk(ast.parse(HYGIENE.read_text())):  # inside functions too
        if isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
            imported.update(f"{'.' * node.level}{node.module or ''}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    banned = ("engine", "sources", "suppression", "dialects", "resolve")
    assert not [name for name in imported if any(part in banned for part in name.strip(".").split("."))], imported


TEXT = (
    "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"
    "bf16: yes  # precheck: ignore[PC902]\n"  # used
    "fp16: false  # precheck: ignore[PC101, PC999]\n"  # PC101 quiet (GPU known), PC999 no rule
    "# precheck: ignore[PC205\n"  # malformed
)


def _context() -> Context:
    config = read_as("hf-trainer", TEXT, path="train.yaml")
    hardware = from_specs(["A100"], {})
    return Context(config, plan_for(config, ["A100"]), hardware, Versions({}))


def _counting(calls: list[str]) -> dict[str, Rule]:
    """The registry, each rule noting in ``calls`` when it runs."""

    def counted(rule: Rule) -> Rule:
        def check(ctx: Context) -> Iterator[Finding]:
            calls.append(rule.code)
            return rule.check(ctx)

        return replace(rule, check=check)

    return {code: counted(r) for code, r in RULES.items()}


def test_every_other_rule_runs_once_when_pc907_is_selected(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    wrapped = _counting(calls)
    monkeypatch.setattr(engine, "RULES", wrapped)
    found = engine.run_rules(_context(), [wrapped["PC902"], wrapped["PC907"]])
    ran = {c for c, r in wrapped.items() if not r.suppressions and not r.frameworks}
    assert ran <= set(calls) and len(calls) == len(set(calls)), calls  # each other rule once, none twice
    assert [(f.rule, f.origin.line) for f in found] == [("PC902", 4), ("PC907", 6), ("PC907", 5)]
    assert "PC999 is not a rule" in found[2].message and "PC101 reports nothing on this line" in found[2].message


def test_without_a_comment_only_the_selected_rules_run(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    wrapped = _counting(calls)
    monkeypatch.setattr(engine, "RULES", wrapped)
    config = read_as("hf-trainer", "model_name_or_path: m\noutput_dir: out\nbf16: true\n", path="t.yaml")
    context = Context(config, plan_for(config), from_specs(["A100"], {}), Versions({}))
    assert engine.run_rules(context, [wrapped["PC101"], wrapped["PC907"]]) == []
    assert calls == ["PC101", "PC907"]


def test_pc907_reads_only_what_the_engine_says() -> None:
    rule = RULES["PC907"]
    assert list(rule.check(_context())) == []  # outside the engine's pass: nothing to weigh
    at = Origin("file", "a.yaml", 3, 7)
    said = Suppressions(
        comments=(
            SuppressionComment(at, "# precheck: ignore[PC101, PC102]", False, ("PC101", "PC102"), frozenset({"PC101"})),
            SuppressionComment(at, "# precheck: ignore-file", True, (), frozenset()),
            SuppressionComment(at, "# precheck: ignore", False, (), frozenset({"PC103"})),
        ),
        malformed=((at, "`# precheck: ignore[PC2` has no closing `]`: it silences nothing"),),
        codes=frozenset({"PC101", "PC102", "PC103"}),
    )
    found = list(rule.check(replace(_context(), suppressions=said)))
    assert [f.message for f in found] == [
        "`# precheck: ignore[PC2` has no closing `]`: it silences nothing",
        "unused suppression `# precheck: ignore[PC101, PC102]`: PC102 reports nothing on this line",
        "`# precheck: ignore-file` silences nothing in this file",
    ]
    undecided = list(rule.check(replace(_context(), suppressions=replace(said, undecided=frozenset({"PC102"})))))
    assert len(undecided) == 1  # a rule that could not run may use any comment
