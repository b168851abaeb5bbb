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


def test_lazy_resolvers_name_the_functions_they_stand_for() -> None:
    """A framework's resolver named by its module (imported on the first run of its files)
    is the module's function, and a call goes to it with the run's arguments."""
    import importlib

    from precheck.frameworks import FRAMEWORKS
    from precheck.frameworks.base import LazyResolver

    lazy = [f for f in FRAMEWORKS if isinstance(f.resolver, LazyResolver)]
    assert len(lazy) >= 10
    calls: list[tuple[object, ...]] = []

    def record(*args: object) -> str:
        calls.append(args)
        return "plan"

    for framework in lazy:
        resolver = framework.resolver
        assert isinstance(resolver, LazyResolver)
        function = getattr(importlib.import_module(resolver.module), resolver.name)
        assert (
            callable(function) and resolver.module == f"{framework.dialect_class.__module__.rsplit('.', 1)[0]}.resolve"
        )
        module = importlib.import_module(resolver.module)
        saved, resolver._function = resolver._function, None
        try:
            setattr(module, resolver.name, record)  # the module's function, looked up on the first call
            assert resolver(1, 2, 3) == "plan" and calls[-1] == (1, 2, 3)  # type: ignore[arg-type,comparison-overlap]
        finally:
            setattr(module, resolver.name, function)
            resolver._function = saved


def test_checking_one_frameworks_config_loads_no_other_frameworks_resolver() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = (
        "import sys\n"
        "from precheck.cli import main\n"
        "try:\n"
        "    main(['--gpu', 'V100', 'examples/configs/ms-swift-v100/fp16-false-ignored.yaml'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "names = sorted(m for m in sys.modules if m.startswith('precheck.frameworks.') and m.endswith('.resolve'))\n"
        "print('RESOLVERS', names)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60)
    # simpletuner's package reads its resolver's optimizer list for its traits
    loaded = "['precheck.frameworks.ms_swift.resolve', 'precheck.frameworks.simpletuner.resolve']"
    assert f"RESOLVERS {loaded}" in result.stdout, result.stdout + result.stderr
