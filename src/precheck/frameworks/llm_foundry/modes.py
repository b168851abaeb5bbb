"""Composer's precision inputs and what they mean, as data and pure functions (the dialect,
the resolver and the rules read them; sources in :mod:`.dialect`)."""

from __future__ import annotations

from typing import Any

from ...config import TrainingConfig
from ...provenance import Origin, Sourced
from ...versions import Versions
from .label import NAME, TRAINER
from .schema import default, required_sections, values

#: ``_get_torch_dtype`` (``composer/distributed/mosaic_parallelism.py``@0.32.1): a precision's FSDP dtype
FSDP_DTYPE = {"fp32": "float32", "amp_fp16": "float16", "amp_bf16": "bfloat16", "amp_fp8": "bfloat16"}
#: the dtype spellings ``_get_torch_dtype`` reads in a ``mixed_precision`` mapping
DTYPE_WORDS = {
    **dict.fromkeys(("float32", "torch.float32", "fp32"), "float32"),
    **dict.fromkeys(("float16", "torch.float16", "half", "fp16", "amp", "amp_fp16"), "float16"),
    **dict.fromkeys(("bfloat16", "bfloat", "torch.bfloat16", "bf16", "amp_bf16"), "bfloat16"),
    **dict.fromkeys(("float8", "torch.float8", "fp8", "amp_fp8"), "bfloat16"),
}
#: the autocast dtype of each precision
AUTOCAST = {"amp_fp16": "float16", "amp_bf16": "bfloat16"}
#: Composer's FSDPConfig defaults (``composer/utils/parallelism.py:34``@0.32.1)
MIXED_PRECISION_DEFAULT = "DEFAULT"


def _version_note(versions: Versions) -> tuple[str | None, str]:
    """The run's version of the framework, and how a default's origin says which release it read."""
    info = versions.get(NAME)
    if info is None:
        return None, f"{NAME} version not known: taken as the newest release read"
    return info.version, f"{NAME} {info.version} ({info.source})"


def precision(config: TrainingConfig, versions: Versions) -> tuple[Sourced[Any], str | None]:
    """The run's ``precision`` (the YAML's, else ``TrainConfig``'s default) and the Composer mode
    it names (lower-cased; None when Composer's ``Precision`` refuses it)."""
    version, note = _version_note(versions)
    item: Sourced[Any] | None = config.precision
    if item is None and (lacking := missing_sections(config, version)):
        # not a TrainConfig llm-foundry could build: a Composer-based repository's own script
        # reads it (mosaicml/examples' resnet_cifar main.py passes its own precision), and
        # TrainConfig's default is not the run's
        detail = (
            f"no precision: the YAML has no {', '.join(lacking)} section, which llm-foundry's TrainConfig requires, "
            "so TrainConfig's precision default does not apply: the script that reads it decides"
        )
        return Sourced(None, Origin.default(detail)), None
    if item is None:
        found = default("precision", version)
        if found is None:
            return Sourced(None, Origin.default("no precision default known")), None
        value, release = found
        item = Sourced(value, Origin.default(f"TrainConfig.precision default {value!r} ({release.label}; {note})"))
    valid = values("precision", version)
    text = str(item.value).lower() if isinstance(item.value, str) else None
    return item, text if text in valid else None


def missing_sections(config: TrainingConfig, version: str | None) -> list[str]:
    """The ``TrainConfig`` sections without a default that the run's YAML (with its launch's
    overrides) leaves out (:func:`.schema.required_sections`)."""
    return [name for name in required_sections(version) if config.setting(name) is None]


def mixed_precision(config: TrainingConfig) -> Sourced[Any] | None:
    """``fsdp_config.mixed_precision`` (Composer's default ``DEFAULT``) when the run uses FSDP."""
    if config.fsdp is None or not config.fsdp.value:
        return None
    item = config.setting("fsdp_config.mixed_precision")
    if item is None or item.value is None:
        detail = f"{TRAINER} FSDPConfig.mixed_precision default {MIXED_PRECISION_DEFAULT!r}"
        return Sourced(MIXED_PRECISION_DEFAULT, Origin.default(detail))
    return item


def fsdp_dtypes(mode: str, mixed: Sourced[Any]) -> tuple[str | None, str | None] | None:
    """(param_dtype, reduce_dtype) of ``get_mixed_precision``; None when it raises."""
    value = mixed.value
    if isinstance(value, dict):
        param, reduce = value.get("param_dtype"), value.get("reduce_dtype")
        return (
            DTYPE_WORDS.get(str(param)) if param is not None else None,
            DTYPE_WORDS.get(str(reduce)) if reduce is not None else None,
        )
    if not isinstance(value, str):
        return None
    word = value.upper()
    dtype = FSDP_DTYPE[mode]
    if word == "FULL":
        return None, None
    if word == "DEFAULT":
        return dtype, "float32"
    if word == "PURE":
        return dtype, dtype
    return None
