"""The ``[tool.precheck]`` project configuration as a pydantic model, and its JSON Schema.

The check path never imports this module (pydantic's import alone costs more than checking
a file): :mod:`precheck.project` validates a configuration by hand, with the line and
column of the offending key. This model is the declaration the JSON Schema is generated
from (``schema/precheck-config.schema.json``, for editors and SchemaStore), and a test
validates the same configurations with both and checks that they agree.

``python scripts/generate_docs.py`` writes the schema; needs pydantic (typer brings it).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from .distribution import REPOSITORY
from .errors import PrecheckError

SCHEMA_ID = f"{REPOSITORY}/blob/main/schema/precheck-config.schema.json"
SCHEMA_FILE = "schema/precheck-config.schema.json"


def _rule_selector(value: str) -> str:
    from . import frameworks as frameworks  # the registry: fills the rule registry's table of framework rules
    from .rules import resolve_selector

    try:
        resolve_selector(value)
    except PrecheckError as error:
        raise ValueError(str(error)) from None
    return value


def _gpu(value: str) -> str:
    from .hardware import expand_specs

    try:
        expand_specs([value])
    except PrecheckError as error:
        raise ValueError(str(error)) from None
    return value


def _glob(value: str) -> str:
    from pathlib import PurePosixPath

    from .ignore_patterns import compile_pattern

    if compile_pattern(value, PurePosixPath(".")) is None:
        raise ValueError(f"{value!r} is not a glob")
    return value


def _selector_schema() -> dict[str, Any]:
    from . import frameworks as frameworks  # the registry: fills the rule registry's table of framework rules
    from .rules import RULES

    return {
        "type": "string",
        "description": "A rule: its code (PC201), a code prefix (PC2), its name, or ALL",
        "anyOf": [{"enum": ["ALL", *RULES, *(r.name for r in RULES.values())]}, {"pattern": _SELECTOR}],
    }


#: what a selector looks like beyond the listed names: a code or prefix, ALL, in any case
_SELECTOR = "^([Pp][Cc][0-9]{0,3}|[Aa][Ll][Ll])$"


def _severity(value: Any) -> Any:
    """As precheck reads it: `Error ` is `error` (the schema lists the spelling to use)."""
    return value.strip().lower() if isinstance(value, str) else value


Selector = Annotated[str, AfterValidator(_rule_selector), WithJsonSchema(_selector_schema())]
Severity = Annotated[Literal["error", "warning", "info"], BeforeValidator(_severity)]
Glob = Annotated[str, AfterValidator(_glob), Field(description="gitignore syntax, relative to this file's folder")]
Gpu = Annotated[
    str,
    AfterValidator(_gpu),
    Field(description="a GPU as --gpu takes it: a name, with a count (8xA100-80GB)", examples=["8xA100-80GB"]),
]
Version = Annotated[str, Field(pattern=r"^[0-9]", description="an exact version", examples=["0.19.0"])]


class ProjectSettings(BaseModel):
    """precheck's settings: [tool.precheck] in pyproject.toml, or the same keys at the top of
    a .precheck.toml (the closest file to a checked file wins; files are not merged)."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        title="precheck project configuration",
        json_schema_extra={"$id": SCHEMA_ID, "$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    versions: dict[str, Version] | None = Field(
        None,
        description='Framework → exact version, as if pinned: { trl = "0.19.0" }',
        examples=[{"trl": "0.19.0", "transformers": "4.56.2"}],
    )
    select: list[Selector] | None = Field(
        None, description="The rules to run (default: every rule but the opt-in ones); --select replaces it"
    )
    extend_select: list[Selector] | None = Field(
        None, alias="extend-select", description="Rules added to the selection (opt-in rules such as PC907)"
    )
    ignore: list[Selector] | None = Field(None, description="Rules taken out of the selection")
    per_file_ignores: dict[Glob, list[Selector]] | None = Field(
        None,
        alias="per-file-ignores",
        description="gitignore-style glob (relative to this file's folder) → rules silenced in the files it matches",
        examples=[{"configs/legacy/**/*.json": ["PC601"]}],
    )
    severity: dict[Selector, Severity] | None = Field(
        None, description="Rule selector → the severity its findings get", examples=[{"fp16-on-bf16-model": "error"}]
    )
    exclude: list[Glob] | None = Field(None, description="Files never checked, also when named on the command line")
    fail_on: Severity | None = Field(
        None, alias="fail-on", description="The lowest severity that fails the run (default: error)"
    )
    gpus: list[Gpu] | None = Field(
        None, description="The target hardware when no --gpu or --hardware is given, before probing this machine"
    )


def json_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`ProjectSettings`, keys as the file spells them; the rule
    selector is defined once (``$defs.RuleSelector``) and referred to."""
    selector = _selector_schema()

    def shared(node: Any) -> Any:
        if node == selector:
            return {"$ref": "#/$defs/RuleSelector"}
        if isinstance(node, dict):
            return {k: shared(v) for k, v in node.items()}
        if isinstance(node, list):
            return [shared(v) for v in node]
        return node

    schema: dict[str, Any] = shared(ProjectSettings.model_json_schema(by_alias=True))
    schema.setdefault("$defs", {})["RuleSelector"] = selector
    return schema


def render() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


__all__ = ["SCHEMA_FILE", "ProjectSettings", "json_schema", "render"]
