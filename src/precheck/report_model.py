"""The versioned JSON report (``--format json``) as a pydantic model, and its JSON Schema.

The check path never imports this module: :mod:`precheck.report.json_report` writes the
document with :mod:`json` (pydantic's import alone costs more than checking a file). This
model is the declaration the JSON Schema is generated from (``schema/precheck-report.schema.json``,
for readers of the report), and a test validates real reports against both.

``python scripts/generate_docs.py`` writes the schema; needs pydantic (a core dependency).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from .distribution import REPOSITORY

SCHEMA_ID = f"{REPOSITORY}/blob/main/schema/precheck-report.schema.json"
SCHEMA_FILE = "schema/precheck-report.schema.json"
#: the ``version`` the model describes (:data:`precheck.report.json_report.SCHEMA_VERSION`)
VERSION = 1


def _absent(schema: dict[str, Any]) -> None:
    """An optional key: the report leaves it out rather than writing null."""
    schema.pop("default", None)


def _present(value: Any) -> Any:
    if value is None:
        raise ValueError("an optional key is left out, never null")
    return value


#: a key the report writes only when it has a value (never null)
OptionalText = Annotated[str | SkipJsonSchema[None], BeforeValidator(_present)]
OptionalTexts = Annotated[list[str] | SkipJsonSchema[None], BeforeValidator(_present)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Device(_Strict):
    """One device the run can see, numbered as CUDA numbers them."""

    index: int = Field(ge=0, description="CUDA's index of the device")
    name: str = Field(description="The device's name, e.g. 'NVIDIA A100-SXM4-80GB'")
    compute_capability: str = Field(pattern=r"^\d+\.\d+$", description="CUDA compute capability, e.g. '8.0'")
    memory_gib: float = Field(ge=0, description="Memory precheck counts with, in GiB")
    bf16: bool = Field(description="Whether the device computes bf16 natively")


class HardwareInfo(_Strict):
    """The target hardware."""

    source: Literal["profile", "probe", "file", "none"] = Field(
        description="profile (--gpu), probe (this machine), file (--hardware) or none (no GPU known)"
    )
    devices: list[Device]
    note: OptionalText = Field(
        None,
        description="Which rules were skipped (no GPU known), or how --gpu without a count was read",
        json_schema_extra=_absent,
    )


class UnusedSetting(_Strict):
    """A precision setting the run's files write that precheck read but could not use: a value
    known only when the script runs, a branch on one, a call or script it does not follow."""

    file: str = Field(description="The file that writes it (``file``, not ``path``: the report does not cite it)")
    line: int = Field(ge=1, description="1-based line")
    key: str | None = Field(description="The key or argument, as written; null when none")
    why: str = Field(description="Why it was left out (in words; never a FILE:LINE)")


class FileEntry(_Strict):
    """A file read and parsed (files that could not be are in ``errors``)."""

    path: str
    dialect: str | None = Field(description="The dialect that read it; null: not a training config precheck knows")
    reads: OptionalTexts = Field(
        None, description="The other files this run named and precheck read", json_schema_extra=_absent
    )
    part_of: OptionalText = Field(
        None,
        description="The config of this check that names this file: it was checked as part of that run",
        json_schema_extra=_absent,
    )
    names: OptionalTexts = Field(
        None,
        description="Files named alone on the command line that this config names (found by searching for it)",
        json_schema_extra=_absent,
    )
    skipped: OptionalText = Field(
        None, description="Why a file named on the command line was passed over", json_schema_extra=_absent
    )
    unused: list[UnusedSetting] | SkipJsonSchema[None] = Field(
        None,
        description="The run's precision settings precheck read but could not use, and why "
        "(what it did not understand; absent when none)",
        json_schema_extra=_absent,
    )


class VersionEntry(_Strict):
    """A framework version precheck knows."""

    version: str = Field(description="The version, or the range a pin allows")
    source: str = Field(description="flag, project config, FILE:LINE of a pin, or installed")


class Finding(_Strict):
    """One finding."""

    rule: str = Field(description="The rule's code, e.g. PC201")
    name: str = Field(description="The rule's name, e.g. fp16-flag-overridden-by-torch-dtype")
    severity: Literal["error", "warning", "info"]
    path: str | None = Field(description="The file the finding points at")
    line: int | None = Field(ge=1, description="1-based line of the key that set the value")
    column: int | None = Field(ge=1, description="1-based column")
    key: str | None = Field(description="The key, spelled as in the file")
    message: str = Field(description="The whole finding: the framework's error, where in its code, the versions")
    headline: str = Field(description="Its first clause: what is wrong and where")
    fix: str | None = Field(description="What to change, in the user's own key and file")
    fixable: bool = Field(description="Whether --fix makes the fix (--unsafe-fixes ones are false)")
    assumptions: list[str] = Field(
        description="What the finding rests on that precheck could not read, each with how to state it"
    )


class InputError(_Strict):
    """An input that could not be read or parsed, or an internal error (no position)."""

    path: str
    line: int | None = Field(ge=1)
    column: int | None = Field(ge=1)
    message: str


class Summary(_Strict):
    """Findings counted by severity."""

    errors: int = Field(ge=0)
    warnings: int = Field(ge=0)
    info: int = Field(ge=0)


class Report(_Strict):
    """precheck's JSON report (``precheck --format json``). ``version`` changes only when a
    field changes meaning or disappears; keys may be added."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        title="precheck report",
        json_schema_extra={"$id": SCHEMA_ID, "$schema": "https://json-schema.org/draft/2020-12/schema"},
    )

    version: Literal[1] = Field(description="The report's schema version")
    hardware: HardwareInfo
    files: list[FileEntry]
    versions: dict[str, VersionEntry] = Field(description="Framework name → its version and where it came from")
    findings: list[Finding]
    errors: list[InputError]
    summary: Summary


def json_schema() -> dict[str, Any]:
    return Report.model_json_schema()


def render() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


__all__ = ["SCHEMA_FILE", "VERSION", "Report", "json_schema", "render"]
