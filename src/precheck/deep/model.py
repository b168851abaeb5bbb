"""``--deep``: the exact parameter counts of the run's model, for the memory rules.

The model is the one ``config.model`` names: a local folder with a ``config.json`` (which
:func:`precheck.references.attach` has already read into ``model_dims``), or a hub id whose
snapshot the local Hugging Face cache holds (read here the same way). The counts go to
``TrainingConfig.model_params`` / ``trainable_params`` with where they came from;
:func:`precheck.memory.dims_for` and :func:`precheck.memory.estimate` prefer them to the
formula of :mod:`precheck.model_sizes`.
"""

from __future__ import annotations

from pathlib import Path

from ..config import TrainingConfig
from ..memory import trains_adapters
from ..paths import within_checked
from ..provenance import Origin, Sourced
from ..references import locate, read_model_folder
from .lora import lora_settings
from .meta_count import NotCountable, cached_snapshot, count


def model_folder(config: TrainingConfig, file: Path) -> Path | None:
    """The local folder holding the model's config.json: as named, or in the local HF cache."""
    if config.model is None or not isinstance(config.model.value, str) or not config.model.value.strip():
        return None
    name = config.model.value.strip()
    folder = locate(name, file.parent)
    if folder is not None:  # a folder outside the repository checked is not read (paths.within_checked)
        config_json = folder / "config.json"
        return folder if config_json.is_file() and within_checked(config_json) else None
    revision = config.setting("model_revision")
    return cached_snapshot(name, str(revision.value) if revision is not None and revision.value else None)


#: more layers than any released model has (Llama 3.1 405B: 126): such a config.json is not
#: built on the meta device (50,000 layers took 17.7 s and 1.5 GB)
MAX_LAYERS = 1024


def _too_deep(config: TrainingConfig) -> bool:
    for key, item in config.model_dims.items():
        value = item.value
        if key.endswith(("layers", "n_layer")) and isinstance(value, int) and value > MAX_LAYERS:
            return True
    return False


def exact_counts(config: TrainingConfig, file: Path) -> list[str]:
    """Count the model's parameters on the meta device into ``config``; the files read for it."""
    folder = model_folder(config, file)
    if folder is None:
        return []
    read: list[str] = []
    if not config.model_dims:  # a hub id found in the local cache
        shown = read_model_folder(config, folder)
        if shown:
            read.append(shown)
    if _too_deep(config):  # building it, even on the meta device, takes seconds a thousand layers
        return read
    kind = config.model_dims.get("model_type")
    model_type = str(kind.value) if kind is not None else ""
    lora = lora_settings(config, model_type) if trains_adapters(config) else None
    try:
        counts = count(folder, lora)
    except NotCountable:
        return read
    first = next(iter(config.model_dims.values()), None)
    where = first.origin.path if first is not None else str(folder / "config.json")
    config.model_params = Sourced(counts.total, Origin("derived", where, detail=f"counted: {counts.built}"))
    if counts.trainable is not None and lora is not None:
        how = f"LoRA adapters counted on the meta device ({'; '.join(lora.notes)})"
        config.trainable_params = Sourced(counts.trainable, Origin("derived", where, detail=how))
    return read
