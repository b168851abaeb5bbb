"""Each framework's rule module imported first, in a fresh interpreter: it imports, and the
rule registry built afterwards holds every rule (a rule module imports ``precheck.rules.base``,
which runs the registry's package ``__init__`` while the module is still half-imported)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from precheck.frameworks import FRAMEWORKS
from precheck.rules import RULES

FRAMEWORK_RULE_MODULES = sorted(name for framework in FRAMEWORKS for name in framework.rules)

_PROGRAM = """
import importlib, json, sys
module = importlib.import_module(sys.argv[1])
from precheck.rules import RULES
own = sorted(v.code for v in vars(module).values() if type(v).__name__ == "Rule")
print(json.dumps({"registry": sorted(RULES), "own": own}))
"""


def test_every_framework_has_its_rule_modules_listed() -> None:
    assert len(FRAMEWORK_RULE_MODULES) >= 8
    assert len(set(FRAMEWORK_RULE_MODULES)) == len(FRAMEWORK_RULE_MODULES)


@pytest.mark.parametrize("module", FRAMEWORK_RULE_MODULES)
def test_rule_module_imported_first(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, module], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["own"], f"{module} defines no rule"
    assert set(seen["own"]) <= set(seen["registry"])
    assert seen["registry"] == sorted(RULES)
