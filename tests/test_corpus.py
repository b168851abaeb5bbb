"""Real configs from public framework repositories: read all, no false errors, right dialect."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from precheck import engine
from precheck.engine import Report
from precheck.hardware import from_specs
from precheck.rules.base import Severity

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")

#: MANIFEST framework → the dialects that read it
DIALECT_FOR = {
    "hf-trainer": ("hf-trainer", "trl"),
    "simpletuner": ("simpletuner",),
    "deepspeed": ("deepspeed",),
    "accelerate": ("accelerate",),
    "fsdp": ("fsdp",),
    "axolotl": ("axolotl",),
    "llama-factory": ("llama-factory",),
    "torchtune": ("torchtune",),
    "lightning": ("lightning",),
}
#: "other" rows precheck has a dialect for; the rest (verl, ai-toolkit) it must pass over
OTHER = {
    "h2oai__h2o-llmstudio": ("h2o-llmstudio",),
    "modelscope__ms-swift": ("ms-swift",),
    "EleutherAI__gpt-neox": ("gpt-neox",),
}
#: the share of MANIFEST rows that must be read by the right dialect (issue 5: at least 95 %)
REQUIRED = 0.95


@lru_cache(maxsize=1)
def corpus_report() -> Report:
    return engine.run([str(CORPUS)], from_specs(["8xH100"], {}), env={})


def test_corpus_reads_without_errors_and_raises_no_false_error() -> None:
    report = corpus_report()
    assert report.errors == [] and report.internal_errors == []
    errors = [(f.rule, f.origin.location()) for f in report.findings if f.severity >= Severity.ERROR]
    assert errors == []


def expected_dialects(path: str, framework: str) -> tuple[str | None, ...]:
    if framework == "other":
        return next((d for prefix, d in OTHER.items() if Path(path).name.startswith(prefix)), (None,))
    return DIALECT_FOR[framework]


def test_corpus_dialects_match_the_manifest() -> None:
    dialect = {Path(f.path).relative_to(CORPUS).as_posix(): f.dialect for f in corpus_report().files}
    rows = [line.split("\t") for line in (CORPUS / "MANIFEST.tsv").read_text().splitlines()[1:]]
    wrong = [
        (path, framework, dialect.get(path))
        for path, framework, *_ in rows
        if dialect.get(path) not in expected_dialects(path, framework)
    ]
    assert 1 - len(wrong) / len(rows) >= REQUIRED, wrong
    # every miss is known and explained; a new one fails here
    assert wrong == []
