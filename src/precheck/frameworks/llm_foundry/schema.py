"""What the framework's releases declare, read from the data ``scripts/extract_schema.py``
extracted from their wheels (``precheck/data/schemas/llm-foundry.json``): ``TrainConfig``'s
fields and defaults (``llmfoundry/utils/config_utils.py``), Composer's ``Precision`` values
(``composer/core/precision.py``) and the ``fsdp_config.mixed_precision`` strings
``get_mixed_precision`` tells apart (``composer/distributed/mosaic_parallelism.py``)."""

from __future__ import annotations

from typing import Any

from ...release_schemas import ReleaseSchema, release
from .label import NAME


def schema(version: str | None = None) -> ReleaseSchema:
    """The release schema for ``version`` (the newest release read when None)."""
    return release(NAME, version)


def default(option: str, version: str | None = None) -> tuple[Any, ReleaseSchema] | None:
    """``TrainConfig``'s default for ``option`` and the release that says so; None when the
    field has no literal default."""
    found = schema(version)
    spec = found.config_option(option)
    if spec is None or "default" not in spec:
        return None
    return spec["default"], found


def required_sections(version: str | None = None) -> tuple[str, ...]:
    """``TrainConfig``'s sections without a default (``model: dict[str, Any] = MISSING``...): a
    YAML without one of them is refused by ``train_from_yaml`` (OmegaConf's ``MissingMandatoryValue``
    when the dataclass is built), so it is no llm-foundry training config as written. Only the
    mappings: the scalars without a default (``device_train_batch_size``, ``n_gpus``...) are
    filled by ``train()`` before the dataclass is built."""
    config = schema(version).schema.get("config_class")
    options: dict[str, Any] = config["options"] if config is not None else {}
    return tuple(
        name for name, spec in options.items() if spec.get("required") and str(spec.get("type", "")).startswith("dict")
    )


def values(label: str, version: str | None = None) -> tuple[Any, ...]:
    return schema(version).values(label)
