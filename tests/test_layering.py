"""Issue 31: one way down. Every module of ``src/precheck`` belongs to a stage, and imports
only from its own stage or those below, at module level and inside functions alike:

    model <- sources <- dialects <- resolve <- rules <- frameworks <- engine <- interface

``frameworks`` (the registry) composes dialects, resolvers, launch parsers and rules; it
hands the stages below what they must know of the frameworks through their
``registered`` tables, so none of them imports it. Imports under ``if TYPE_CHECKING:``
count for the direction (a type is knowledge of a stage) but not for cycles (they never
run). ``importlib.import_module`` / ``__import__`` calls are allowed only in the registry.
ARCHITECTURE.md names the stages; a test keeps its packages real.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import precheck

SRC = Path(precheck.__file__).parent
ROOT = SRC.parent.parent

#: the stages, lowest first
STAGES = ("model", "sources", "dialects", "resolve", "rules", "frameworks", "engine", "interface")

#: module (or package prefix) → stage; the longest prefix wins, anything else is the model
PLACES = {
    "precheck": "interface",  # the package's lazy ``check`` / ``Report`` (the API)
    "precheck.sources": "sources",
    "precheck.sources.nodes": "model",  # the plain data the sources produce (Node, Document), held by the config
    "precheck.dialects": "dialects",
    "precheck.resolve": "resolve",
    "precheck.resolve.plan": "model",  # re-exports precheck.plan
    "precheck.rules": "rules",
    "precheck.frameworks": "frameworks",
    "precheck.engine": "engine",
    "precheck.discovery": "engine",
    "precheck.references": "engine",
    "precheck.referrers": "engine",
    "precheck.premises": "engine",
    "precheck.suppression": "engine",
    "precheck.project": "engine",
    "precheck.deep": "engine",
    "precheck.fix": "engine",
    "precheck.explain": "interface",
    "precheck.explain_view": "interface",
    "precheck.explain_memory": "interface",
    "precheck.api": "interface",
    "precheck.check_command": "interface",
    "precheck.baseline": "interface",  # --baseline / --write-baseline
    "precheck.fingerprint": "interface",  # a finding's identity for baselines and GitLab reports
    "precheck.init_command": "interface",  # precheck init
    "precheck.launch_check": "interface",
    "precheck.cli": "interface",
    "precheck.entry": "interface",
    "precheck.__main__": "interface",
    "precheck.options": "interface",
    "precheck.config_model": "interface",
    "precheck.report": "interface",
    "precheck.report_model": "interface",
    "precheck.rule_docs": "interface",
    "precheck.rule_pages": "interface",
    "precheck.probe": "interface",
    "precheck.probe_report": "interface",
    "precheck.smoke": "interface",
    "precheck.integrations": "interface",
}

#: (importer, imported) pairs that go up, each with the reason it must; keep this short
EXCEPTIONS: dict[tuple[str, str], str] = {}

#: import cycles allowed, each with its reason; at the top (interface) only, none below it
CYCLE_EXCEPTIONS: dict[frozenset[str], str] = {
    frozenset({"precheck.cli", "precheck.entry"}): (
        "entry is the console script's fast path and loads typer's app (cli) only for a subcommand;"
        " cli re-exports entry.main as the app's entry point"
    ),
}

#: the modules that may load modules by name: the registry, loading its frameworks' modules
DYNAMIC_IMPORTERS = frozenset({"precheck.frameworks", "precheck.frameworks.base"})


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    typing_only: bool


def modules() -> dict[str, Path]:
    """Every module under src/precheck by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def stage(module: str) -> str:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        place = PLACES.get(".".join(parts[:end]))
        if place is not None:
            return place if end > 1 or module == "precheck" else "model"
    return "model"


def _typing_blocks(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:``."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return inside


def imports(module: str, path: Path, known: dict[str, Path]) -> tuple[list[Import], list[int]]:
    """Every import of a precheck module ``module`` makes, at any depth, and the lines of
    its calls that import by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing = _typing_blocks(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    dynamic: list[int] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]
        elif isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name in ("import_module", "__import__"):
                dynamic.append(node.lineno)
        for name in names:
            if name.split(".")[0] == "precheck" and name != module:
                while name not in known:  # ``from .x import name`` of a name x defines
                    name = name.rpartition(".")[0]
                found.append(Import(module, name, node.lineno, id(node) in typing))
    return found, dynamic


def all_imports() -> tuple[list[Import], dict[str, list[int]]]:
    known = modules()
    edges: list[Import] = []
    dynamic: dict[str, list[int]] = {}
    for module, path in known.items():
        found, calls = imports(module, path, known)
        edges += found
        if calls:
            dynamic[module] = calls
    return edges, dynamic


def upward(edges: list[Import]) -> list[str]:
    return [
        f"{e.importer} ({stage(e.importer)}) imports {e.imported} ({stage(e.imported)}) at line {e.line}"
        for e in edges
        if STAGES.index(stage(e.imported)) > STAGES.index(stage(e.importer))
        and (e.importer, e.imported) not in EXCEPTIONS
    ]


def cycles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), counting every
    import that runs, inside functions too."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.typing_only:
            graph.setdefault(e.importer, set()).add(e.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_import_goes_down() -> None:
    edges, _ = all_imports()
    assert len(edges) > 500
    bad = upward(edges)
    assert not bad, "\n".join(bad)


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    edges, _ = all_imports()
    found = [c for c in cycles(edges) if frozenset(c) not in CYCLE_EXCEPTIONS]
    assert not found, found


def test_only_the_registry_imports_by_name() -> None:
    _, dynamic = all_imports()
    assert dynamic, "the registry's lazy imports are found"
    assert set(dynamic) <= DYNAMIC_IMPORTERS, dynamic


def test_what_the_registry_imports_by_name_is_its_own() -> None:
    """The names the registry loads lazily (resolvers, launch parsers, rule modules) are all
    modules of framework packages: never a lower stage's (which it may import plainly)."""
    from precheck import frameworks
    from precheck.frameworks.base import LazyResolver

    names = [f.launch for f in frameworks.FRAMEWORKS if f.launch]
    names += [f.resolver.module for f in frameworks.FRAMEWORKS if isinstance(f.resolver, LazyResolver)]
    names += [m.__name__ for m in frameworks.rule_modules()]
    assert names
    assert all(stage(name) == "frameworks" for name in names), names


def test_the_registry_fills_every_table_below_it() -> None:
    from precheck import frameworks
    from precheck.dialects import registered as dialects_table
    from precheck.resolve import registered as resolve_table
    from precheck.rules import registered as rules_table
    from precheck.sources import registered as sources_table

    assert frameworks.FRAMEWORKS
    for table in (sources_table, dialects_table, resolve_table, rules_table):
        for name in table.__annotations__:
            getattr(table, name)  # a LookupError names one the registry left unset


def test_the_check_catches_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    """The checker itself: a lazy import of the registry from a reader, and a cycle made by
    imports inside functions, are both caught."""
    fake = tmp_path / "launchers.py"
    fake.write_text("def f():\n    from .. import frameworks\n    from ..frameworks import detect\n", encoding="utf-8")
    known = {**modules(), "precheck.sources.launchers": fake}
    found, _ = imports("precheck.sources.launchers", fake, known)
    assert [e.imported for e in found] == ["precheck.frameworks", "precheck.frameworks"]
    assert len(upward(found)) == 2
    back = Import("precheck.frameworks", "precheck.sources.launchers", 1, False)
    assert cycles([*found, back]) == [["precheck.frameworks", "precheck.sources.launchers"]]
    assert cycles([*found, Import("precheck.frameworks", "precheck.sources.launchers", 1, True)]) == []
    assert stage("precheck.frameworks.axolotl.launch") == "frameworks"
    assert stage("precheck.config") == "model"
    assert stage("precheck.report.sarif") == "interface"


def test_architecture_names_only_real_packages_and_every_stage() -> None:
    """ARCHITECTURE.md's module names (``precheck/...`` paths) exist, and it names each stage."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(precheck/[\w/.]+?)/?`", text))
    assert len(named) >= 10
    missing = [name for name in named if not (SRC.parent / name).exists()]
    assert not missing, missing
    for place in STAGES:
        assert f"**{place}**" in text, place


@pytest.mark.parametrize("package", sorted({p for p in PLACES if p.count(".") == 1}))
def test_every_placed_module_exists(package: str) -> None:
    assert package in modules(), package
