"""Issue 28: frameworks' option schemas extracted from their released wheels.

The data files under ``precheck/data/schemas/`` are written by ``scripts/extract_schema.py``
(which downloads the wheels). Here the same extraction runs on checked-in, trimmed copies of
the released sources (``tests/fixtures/releases/<dist>-<version>/``, each file headed by its
origin and license) and must give what the data file says for that release; line numbers are
left out of the comparison (the trimmed copies are shorter than the originals)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import precheck
from precheck.sources.release_schema import choices_of, extract, flows, function_options

DATA = Path(precheck.__file__).parent / "data" / "schemas"
FIXTURES = Path(__file__).parent / "fixtures" / "releases"


def _without_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k != "line"}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def _document(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize(("name", "version"), [("litgpt", "0.5.13"), ("llm-foundry", "0.22.0")])
def test_data_file_is_what_the_extraction_reads_from_the_release(name: str, version: str) -> None:
    document = _document(name)
    release = next(r for r in document["releases"] if version in r["versions"])
    extracted = extract(FIXTURES / f"{name}-{version}", document["spec"])
    assert _without_lines(extracted) == _without_lines(release["schema"])


def test_every_data_file_is_shipped_and_names_its_spec_and_releases() -> None:
    files = sorted(DATA.glob("*.json"))
    assert {f.stem for f in files} >= {"litgpt", "llm-foundry"}
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["spec"] and document["releases"]
        for release in document["releases"]:
            assert release["versions"] and release["read_from"][document["distribution"]] == release["versions"][-1]
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schemas/*.json"' in pyproject


def test_litgpt_precision_flows_and_refusals_come_from_the_code() -> None:
    schema = _document("litgpt")["releases"][-1]["schema"]["entry_points"]
    lora = schema["finetune_lora"]
    assert lora["options"]["quantize"]["choices"] == [
        "bnb.nf4",
        "bnb.nf4-dq",
        "bnb.fp4",
        "bnb.fp4-dq",
        "bnb.int8-training",
        None,
    ]
    assert "L.Fabric(precision=)" in lora["flows"]["precision"]["calls"]
    assert lora["flows"]["precision"]["unset_filled_by"] == ["get_default_supported_precision(training=True)"]
    assert any("mixed" in r["if"] for r in lora["flows"]["precision"]["refusals"])
    # pretrain takes only bf16 or fp32 (jsonargparse refuses 16-true / 16-mixed)
    assert schema["pretrain"]["options"]["precision"]["choices"] == ["bf16-true", "bf16-mixed", "32-true", None]
    assert "quantize" not in schema["finetune_full"]["options"]


def test_choices_of_a_literal_union() -> None:
    def annotation(text: str) -> ast.expr:
        return ast.parse(text, mode="eval").body

    assert choices_of(annotation("Literal['a', 'b'] | None")) == ["a", "b", None]
    assert choices_of(annotation("Optional[Literal['a']]")) == ["a", None]
    assert choices_of(annotation("bool | Literal['auto'] | Path")) is None
    assert choices_of(annotation("str")) is None
    aliases = {"Choice": annotation("Literal['x', 'y']")}
    assert choices_of(annotation("Choice"), aliases) == ["x", "y"]


def test_flows_follow_names_assigned_from_the_value_but_not_a_calls_result() -> None:
    tree = ast.parse(
        "def setup(precision: str | None = None, quantize: str | None = None):\n"
        "    precision = precision or default_precision()\n"
        "    if quantize is not None and 'mixed' in precision:\n"
        "        raise ValueError('no mixed with quantize')\n"
        "    dtype = {'16-true': 1}[precision]\n"
        "    plugin = Plugin(quantize[4:], dtype)\n"
        "    fabric = Fabric(precision=precision, plugins=plugin)\n"
        "    print(precision)\n"
        "    run(fabric)\n"
    )
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    options = function_options(function)
    assert options["precision"] == {"type": "str | None", "line": 1, "converts_to": "str", "default": None}
    found = flows(function.body, "precision")
    assert found["calls"] == ["Fabric(precision=)", "Plugin(#1)"]
    assert found["unset_filled_by"] == ["default_precision()"]
    assert found["refusals"][0]["raises"] == "ValueError: no mixed with quantize"
    assert flows(function.body, "quantize")["calls"] == ["Plugin(#0)"]
