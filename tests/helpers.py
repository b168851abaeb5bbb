"""Run rules on config snippets, yamllint-style: results are (code, line, column)."""

from __future__ import annotations

import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from precheck import dialects, resolve
from precheck.config import TrainingConfig
from precheck.engine import run_rules
from precheck.hardware import Hardware, from_specs, no_hardware
from precheck.references import attach
from precheck.resolve.plan import PrecisionPlan
from precheck.rules import RULES
from precheck.rules.base import Context, Finding
from precheck.sources import load_runs, parse
from precheck.versions import VersionInfo, Versions


@dataclass
class Case:
    """A config snippet and what one rule must report on it (empty: nothing)."""

    name: str
    code: str
    text: str
    gpus: list[str] = field(default_factory=list)
    expect: set[tuple[int, int]] = field(default_factory=set)
    fmt: str = "yaml"
    env: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    #: other files of the run (a DeepSpeed JSON the config names), by path relative to it
    files: dict[str, str] = field(default_factory=dict)


def hardware_for(gpus: list[str], env: dict[str, str]) -> Hardware:
    return from_specs(gpus, env) if gpus else no_hardware("none")


def run_case(case: Case) -> list[Finding]:
    """The findings of ``case.code`` on the snippet, through the real pipeline stages.

    The snippet is read from ``config.<fmt>`` in a scratch folder holding ``case.files``,
    so references between them are followed as the engine does.
    """
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name, text in case.files.items():
            write(folder, name, text)
        return _run_case(case, folder)


def _run_case(case: Case, folder: Path) -> list[Finding]:
    path = f"config.{case.fmt}"
    if case.fmt in ("py", "ipynb", "sh"):  # a script: its (first) run, read as the engine does
        script = write(folder, path, case.text)
        doc = load_runs(script, path, hardware_for(case.gpus, case.env))[0]
    else:
        doc = parse(path, textwrap.dedent(case.text).lstrip("\n"), case.fmt)
    dialect = dialects.detect(doc)
    assert dialect is not None, f"{case.name}: no dialect recognises the snippet"
    config = dialect.read(doc, case.env)
    attach(config, folder / path, case.env)
    versions = Versions({n: VersionInfo(n, v, "flag") for n, v in case.versions.items()})
    hardware = hardware_for(case.gpus, case.env)
    config = resolve.with_launch_env(config)
    plan = resolve.resolve(config, hardware, versions)
    return run_rules(Context(config, plan, hardware, versions), [RULES[case.code]])


def findings_for(case: Case) -> set[tuple[str, int, int]]:
    return {(f.rule, f.origin.line or 0, f.origin.column or 0) for f in run_case(case)}


def check_case(case: Case) -> None:
    expected = {(case.code, line, column) for line, column in case.expect}
    assert findings_for(case) == expected, case.name


def write(tmp: Path, name: str, text: str) -> Path:
    target = tmp / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return target


def read_as(
    dialect_name: str, text: str, env: dict[str, str] | None = None, fmt: str = "yaml", path: str = ""
) -> TrainingConfig:
    """The snippet read by the dialect that must recognise it (asserted)."""
    doc = parse(path or f"config.{fmt}", textwrap.dedent(text).lstrip("\n"), fmt)
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == dialect_name, dialect and dialect.name
    return dialect.read(doc, env or {})


def plan_for(
    config: TrainingConfig, gpus: list[str] | None = None, versions: dict[str, str] | None = None
) -> PrecisionPlan:
    """The resolved plan of ``config`` on ``gpus`` with the framework versions given."""
    known = Versions({n: VersionInfo(n, v, "flag") for n, v in (versions or {}).items()})
    return resolve.resolve(config, hardware_for(gpus or [], {}), known)
