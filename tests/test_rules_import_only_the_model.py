"""Issue 19: rules read only the model. No rule module (``rules/*.py`` and every framework
package's rule modules) imports the sources, the dialects, the resolvers, the framework
registry or the engine, at module level or inside a function; none reads an override's prose."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import precheck
from precheck.frameworks import rule_modules

SRC = Path(precheck.__file__).parent
FORBIDDEN = ("sources", "dialects", "resolve", "engine", "frameworks")
RULE_FILES = sorted(p for p in (SRC / "rules").glob("*.py") if p.name != "__init__.py") + sorted(
    Path(str(m.__file__)) for m in rule_modules()
)


def _imported(path: Path) -> list[str]:
    """Every module an import statement in ``path`` names, made absolute within precheck."""
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names.extend([module] + [f"{module}.{alias.name}" for alias in node.names])
    return names


def _forbidden(name: str, path: Path) -> bool:
    parts = name.split(".")
    if parts[0] != "precheck" or len(parts) < 2:
        return False
    if parts[1:3] == ["sources", "nodes"]:  # the model's plain data (Node, SourceNote): see tests/test_layering.py
        return False
    if parts[1] == "frameworks":  # a framework's own constants module is data, its dialect/resolver are not
        own = path.parent.name
        return not (len(parts) >= 4 and parts[2] == own and parts[3] not in ("dialect", "resolve", "launch"))
    return parts[1] in FORBIDDEN


def test_rule_files_are_found() -> None:
    assert len(RULE_FILES) >= 20
    assert any("frameworks" in p.parts for p in RULE_FILES)


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_rule_module_imports_only_the_model(path: Path) -> None:
    bad = sorted({name for name in _imported(path) if _forbidden(name, path)})
    assert not bad, f"{path.relative_to(SRC)} imports {bad}"


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_rule_module_never_reads_override_prose(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reads = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "reason"]
    assert not reads, f"{path.relative_to(SRC)} reads `.reason` at lines {reads}"


def test_the_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    """The checker itself: a rule module that imports a dialect inside a function is caught."""
    fake = SRC / "rules" / "_probe_for_test.py"
    assert _forbidden("precheck.dialects.base", fake)
    assert _forbidden("precheck.engine", fake)
    assert _forbidden("precheck.frameworks", fake)
    assert not _forbidden("precheck.config", fake)
    own = SRC / "frameworks" / "lightning" / "rules.py"
    assert not _forbidden("precheck.frameworks.lightning.modes", own)
    assert _forbidden("precheck.frameworks.lightning.dialect", own)
    assert _forbidden("precheck.frameworks.torchtune.modes", own)
    sample = tmp_path / "rule.py"
    sample.write_text("def f():\n    from ..dialects import base\n", encoding="utf-8")
    tree_names = [
        n.module for n in ast.walk(ast.parse(sample.read_text(encoding="utf-8"))) if isinstance(n, ast.ImportFrom)
    ]
    assert tree_names == ["dialects"]
