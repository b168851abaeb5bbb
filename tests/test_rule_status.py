"""Rule status as data (stable, opt-in, deprecated, removed, since a release) and fix
applicability per fix: what selection, the engine, ``--fix`` and the docs make of them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import plan_for, read_as
from precheck import __version__, rule_pages, rules
from precheck.engine import run_rules
from precheck.errors import UsageError
from precheck.fix import plan_fixes
from precheck.hardware import no_hardware
from precheck.provenance import Origin
from precheck.report.text import fixable, fixable_line
from precheck.rules import RULES, applicability, resolve_selector, select_rules
from precheck.rules.base import Context, Edit, Finding, Fix, FixSafety, Rule, RuleStatus, Severity, rule
from precheck.versions import Versions

ROOT = Path(__file__).resolve().parents[1]


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_declares_a_status_since_a_release_not_after_this_one(code: str) -> None:
    item = RULES[code]
    assert isinstance(item.status, RuleStatus)
    assert _release(item.since) <= _release(__version__.split("+")[0].split(".dev")[0])


def test_the_default_selection_is_the_stable_rules_and_pc907_stays_opt_in() -> None:
    default = {r.code for r in select_rules(None, None)}
    assert default == {c for c, r in RULES.items() if r.status is RuleStatus.STABLE}
    assert RULES["PC907"].status is RuleStatus.OPT_IN and "PC907" not in default
    assert default | {"PC907"} == set(RULES)  # today every other rule is stable
    for selector in ("PC907", "unused-suppression", "PC9", "PC90", "ALL"):
        assert "PC907" in {r.code for r in resolve_selector(selector)}, selector
    assert {r.code for r in select_rules(None, None, ["PC907"])} == default | {"PC907"}
    assert {r.code for r in select_rules(None, ["PC907"], ["ALL"])} == default


def _quiet(_ctx: Context) -> Iterator[Finding]:
    """
    A rule for the test.

    ## What it does
    Nothing.
    """
    return iter(())


@pytest.fixture
def lifecycle(monkeypatch: pytest.MonkeyPatch) -> dict[str, Rule]:
    """The registry plus a deprecated PC998 and a removed PC999."""
    deprecated = rule("PC998", "old-rule", Severity.WARNING, status=RuleStatus.DEPRECATED)(_quiet)
    removed = rule("PC999", "gone-rule", Severity.ERROR, status=RuleStatus.REMOVED, since="0.1.0")(_quiet)
    registry = {**RULES, "PC998": deprecated, "PC999": removed}
    monkeypatch.setattr(rules, "RULES", registry)
    monkeypatch.setattr(rules, "BY_NAME", {r.name: r for r in registry.values()})
    return registry


def test_deprecated_rules_run_only_when_named_and_removed_ones_never(lifecycle: dict[str, Rule]) -> None:
    codes = lambda found: {r.code for r in found}  # noqa: E731
    assert not {"PC998", "PC999"} & codes(select_rules(None, None))
    assert not {"PC998", "PC999"} & codes(resolve_selector("ALL")) | codes(resolve_selector("PC99"))
    assert codes(resolve_selector("PC998")) == {"PC998"} == codes(resolve_selector("old-rule"))
    assert "PC998" in codes(select_rules(["PC9", "PC998"], None))
    for selector in ("PC999", "gone-rule"):
        with pytest.raises(UsageError, match=r"PC999 \(gone-rule\) was removed in precheck 0\.1\.0"):
            resolve_selector(selector)
    assert rules.get("PC999").status is RuleStatus.REMOVED  # its documentation stays readable


def _yaml_config(tmp_path: Path) -> tuple[Context, Path]:
    path = tmp_path / "train.yaml"
    path.write_text("model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\nfp16: true\n")
    config = read_as("hf-trainer", path.read_text(), path=str(path))
    hardware = no_hardware("none")
    return Context(config, plan_for(config), hardware, Versions({})), path


def test_the_engine_never_runs_a_removed_rule(tmp_path: Path) -> None:
    context, path = _yaml_config(tmp_path)

    def loud(_ctx: Context) -> Iterator[Finding]:
        """A rule that always reports."""
        yield Finding(Origin("file", str(path), 1, 1), "always")

    running = rule("PC998", "loud-rule", Severity.WARNING)(loud)
    gone = rule("PC999", "loud-gone", Severity.WARNING, status=RuleStatus.REMOVED)(loud)
    assert [f.rule for f in run_rules(context, [running, gone])] == ["PC998"]


def test_a_fix_carries_its_own_applicability_else_its_rules(tmp_path: Path) -> None:
    """One rule declared unsafe yields a fix that says it is safe and one that says nothing:
    ``--fix`` applies the first, ``--unsafe-fixes`` the second too; ``[*]`` marks the first."""
    context, path = _yaml_config(tmp_path)

    def two(_ctx: Context) -> Iterator[Finding]:
        """Two fixes of different applicability."""
        safe = Edit(str(path), "learning_rate", 2.0e-5, 3)
        unsafe = Edit(str(path), "fp16", False, 4)
        yield Finding(Origin("file", str(path), 3, 1), "a", Fix("lr", (safe,), applicability=FixSafety.SAFE))
        yield Finding(Origin("file", str(path), 4, 1), "b", Fix("fp16", (unsafe,)))

    declared = rule("PC998", "two-fixes", Severity.WARNING, fix_safety=FixSafety.UNSAFE)(two)
    first, second = run_rules(context, [declared])
    assert first.fix is not None and first.fix.applicability is FixSafety.SAFE
    assert second.fix is not None and second.fix.applicability is FixSafety.UNSAFE  # the rule's, filled in
    assert [applicability(f) for f in (first, second)] == [FixSafety.SAFE, FixSafety.UNSAFE]
    assert [fixable(f) for f in (first, second)] == [True, False]
    assert [fixable(f, unsafe=True) for f in (first, second)] == [True, True]
    assert fixable_line([first, second]) == "[*] 1 fixable with --fix (1 more with --unsafe-fixes)"
    safe_only = plan_fixes([first, second])
    assert safe_only.fixed == 1 and "learning_rate: 2.0e-05" in safe_only.changes[0].after
    assert "fp16: true" in safe_only.changes[0].after
    both = plan_fixes([first, second], unsafe=True)
    assert both.fixed == 2 and "fp16: false" in both.changes[0].after


def test_a_finding_made_outside_the_engine_takes_its_rules_applicability() -> None:
    edit = Edit("a.yaml", "precision", "16-mixed", 4)
    made = Finding(Origin("file", "a.yaml", 4, 3), "m", Fix("write 16-mixed", (edit,)), rule="PC704")
    assert RULES["PC704"].fix_safety is FixSafety.SAFE and applicability(made) is FixSafety.SAFE
    unknown = Finding(Origin("file", "a.yaml", 4, 3), "m", Fix("x", (edit,)), rule="live")
    assert applicability(unknown) is FixSafety.MANUAL and not rules.applicable(unknown, unsafe=True)


def test_listing_and_pages_show_the_status() -> None:
    from precheck.rule_docs import rule_json

    listed = rule_json(RULES["PC907"])
    assert (listed["status"], listed["since"]) == ("opt-in", "0.1.0")
    assert rule_json(RULES["PC101"])["status"] == "stable"
    assert "- **Status:** opt-in since 0.1.0: runs only when selected" in rule_pages.page(RULES["PC907"])
    assert "- **Status:** stable since 0.1.0: runs by default" in rule_pages.page(RULES["PC101"])
    assert "| info (opt-in) |" in rule_pages.index()
    assert json.loads(json.dumps(listed))["since"] == "0.1.0"


def test_a_bad_since_is_refused() -> None:
    with pytest.raises(ValueError, match="not a release"):
        rule("PC998", "bad-since", Severity.INFO, since="soon")(_quiet)
