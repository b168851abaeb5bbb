"""Every rule is declared, documented and tested the same way."""

import importlib
import re
from pathlib import Path

import pytest

from precheck.errors import UsageError
from precheck.rules import RULES, get, resolve_selector, select_rules
from precheck.rules.base import DOC_SECTIONS

FAMILY_TESTS = sorted((Path(__file__).parent / "rules").glob("test_pc*.py"))


def _cases():
    for path in FAMILY_TESTS:
        module = importlib.import_module(f"rules.{path.stem}")
        yield from module.CASES


def test_codes_and_names_are_unique_and_well_formed() -> None:
    names = [r.name for r in RULES.values()]
    assert len(set(names)) == len(names)
    for code, item in RULES.items():
        assert re.fullmatch(r"PC\d{3}", code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", item.name)


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_has_the_doc_sections(code: str) -> None:
    doc = RULES[code].doc
    for section in DOC_SECTIONS:
        assert section in doc, f"{code} lacks {section}"
    assert RULES[code].summary, f"{code} has no summary line"


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_has_a_failing_and_a_passing_case(code: str) -> None:
    cases = [c for c in _cases() if c.code == code]
    assert any(c.expect for c in cases), f"{code}: no case that triggers it"
    assert any(not c.expect for c in cases), f"{code}: no fixed twin that passes"


def test_selectors() -> None:
    assert [r.code for r in resolve_selector("PC10")] == ["PC101", "PC102", "PC103", "PC104", "PC105", "PC106"]
    assert [r.code for r in resolve_selector("fp16-slow-gpu")] == ["PC102"]
    assert len(resolve_selector("ALL")) == len(RULES)
    assert [r.code for r in select_rules(["PC10"], ["PC102,PC103", "PC104", "PC105", "PC106"])] == ["PC101"]
    assert get("pc101").code == "PC101"
    with pytest.raises(UsageError):
        resolve_selector("PC0")
    with pytest.raises(UsageError):
        get("nope")
