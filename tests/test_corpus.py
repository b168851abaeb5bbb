"""Real configs from public framework repositories: read all, no false errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck.engine import check
from precheck.hardware import from_specs
from precheck.rules.base import Severity

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")

#: MANIFEST framework → the dialect that must read it (frameworks precheck reads so far)
DIALECT_FOR = {
    "hf-trainer": ("hf-trainer", "trl"),
    "simpletuner": ("simpletuner",),
    "deepspeed": ("deepspeed",),
    "llama-factory": ("llama-factory",),
    "axolotl": ("axolotl",),
    "lightning": ("lightning",),
    "torchtune": ("torchtune",),
}
OTHER = {"h2oai__h2o-llmstudio": ("h2o-llmstudio",), "modelscope__ms-swift": ("ms-swift",)}


def test_corpus_reads_without_errors_and_raises_no_false_error() -> None:
    report = check([str(CORPUS)], from_specs(["8xH100"], {}), env={})
    assert report.errors == []
    errors = [f for f in report.findings if f.severity >= Severity.ERROR]
    assert errors == []


def test_corpus_dialects_match_the_manifest() -> None:
    report = check([str(CORPUS)], from_specs(["8xH100"], {}), env={})
    dialect = {Path(f.path).relative_to(CORPUS).as_posix(): f.dialect for f in report.files}
    rows = [line.split("\t") for line in (CORPUS / "MANIFEST.tsv").read_text().splitlines()[1:]]
    wrong = []
    for row in rows:
        path, framework = row[0], row[1]
        expected = DIALECT_FOR.get(framework)
        if framework == "other":
            expected = next((d for prefix, d in OTHER.items() if Path(path).name.startswith(prefix)), None)
        got = dialect.get(path)
        if expected is not None and got not in expected:
            wrong.append((path, expected, got))
        if expected is None and got is not None:
            wrong.append((path, "no dialect yet", got))
    assert wrong == []
