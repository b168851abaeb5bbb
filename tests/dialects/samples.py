"""Read a real file the way the engine does, and show a mapped field with its provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from precheck import frameworks
from precheck.config import TrainingConfig
from precheck.hardware import from_specs
from precheck.provenance import Sourced
from precheck.sources import load_runs

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = ROOT / "examples"


def read_file(path: Path, dialect: str, env: dict[str, str] | None = None) -> TrainingConfig:
    """The first run of ``path``, read by the dialect that must recognise it (asserted)."""
    document = load_runs(path, str(path), from_specs(["A100"], {}))[0]
    detected = frameworks.detect(document)
    assert detected is not None and detected.name == dialect, detected and detected.name
    return detected.read(document, env or {})


def at(item: Sourced[Any] | None) -> tuple[Any, int | None, str | None]:
    """A mapped value, the line it was read from and the key as written there."""
    assert item is not None
    return item.value, item.origin.line, item.origin.key
