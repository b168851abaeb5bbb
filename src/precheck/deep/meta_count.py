"""``--deep``: count a model's parameters exactly by building it on the meta device.

The model's ``config.json`` is read with ``AutoConfig.from_pretrained(folder,
local_files_only=True)`` and the model is built inside ``torch.device("meta")``, so no
weight is allocated or downloaded (``accelerate estimate-memory`` builds under
``accelerate.init_empty_weights()`` instead; with transformers 5.23.0 that context loses
the tie between input and output embeddings that ``post_init`` makes, counting a tied
GPT-2 head twice, while the meta device keeps it, as the CPU model does: the tests
compare). Only local files are read: a folder the config names, or the snapshot the local
Hugging Face cache already holds for a hub id (``huggingface_hub.try_to_load_from_cache``,
which never opens a connection). Remote code is never run (``trust_remote_code=False``):
a model that needs it is not counted.

The class built is the one a fine-tuning script loads: ``AutoModelForCausalLM``, else
``AutoModelForSeq2SeqLM``, else the config's ``architectures[0]``, else ``AutoModel``.
``model.parameters()`` yields a tied weight once, so tied embeddings count once, as in
the checkpoint.

Trainable parameters under LoRA are counted as PEFT adds them
(``peft/tuners/lora/layer.py``): ``lora_A`` is ``r × in`` and ``lora_B`` is ``out × r`` for a
``Linear`` (and transformers' GPT-2 ``Conv1D``, whose weight is ``in × out``); an
``Embedding`` gets ``r × num_embeddings`` plus ``dim × r``; DoRA adds a magnitude vector of
``out``; ``modules_to_save`` trains a full copy of each matching module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .lora import ALL_LINEAR, LoraSettings


@dataclass(frozen=True)
class Counts:
    total: int
    #: trainable parameters under ``lora`` (None: a full fine-tune trains all of them)
    trainable: int | None
    #: the class that was built and the library that built it, for the count's origin
    built: str


class NotCountable(Exception):
    """The model could not be built from its config (remote code, an unknown architecture)."""


def cached_snapshot(repo_id: str, revision: str | None = None) -> Path | None:
    """The local Hugging Face cache's snapshot folder of ``repo_id`` that holds a config.json."""
    if not re.fullmatch(r"[\w.-]+(/[\w.-]+)?", repo_id) or repo_id.startswith((".", "/")):
        return None
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    return Path(found).parent if isinstance(found, str) else None


def build_on_meta(folder: Path) -> tuple[Any, str]:
    """The model of ``folder``'s config.json, built on the meta device; and the class name."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    try:
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except Exception as error:  # remote code, an architecture this transformers lacks, a bad file
        raise NotCountable(f"{type(error).__name__}: {error}") from None
    builders: list[Any] = [AutoModelForCausalLM.from_config, AutoModelForSeq2SeqLM.from_config]
    arch = (getattr(config, "architectures", None) or [None])[0]
    named = getattr(transformers, arch, None) if isinstance(arch, str) else None
    if named is not None and hasattr(named, "_from_config"):
        builders.append(named._from_config)
    builders.append(AutoModel.from_config)
    last: Exception | None = None
    for build in builders:
        try:
            with torch.device("meta"):
                model = build(config)
        except (ValueError, KeyError, TypeError, AttributeError, ImportError) as error:
            last = error
            continue
        return model, type(model).__name__
    raise NotCountable(f"{type(last).__name__}: {last}")


def count(folder: Path, lora: LoraSettings | None) -> Counts:
    """Parameters of the model ``folder`` holds, and its trainable ones under ``lora``."""
    import transformers

    model, name = build_on_meta(folder)
    total = sum(p.numel() for p in model.parameters())
    trainable = adapter_params(model, lora) if lora is not None else None
    return Counts(int(total), trainable, f"{name} on the meta device with transformers {transformers.__version__}")


def _adapted(name: str, targets: tuple[str, ...] | str) -> bool:
    if isinstance(targets, str):
        return re.fullmatch(targets, name) is not None
    return name in targets or any(name.endswith("." + t) for t in targets)


def _shape(module: Any) -> tuple[int, int] | None:
    """(in, out) of a layer LoRA adapts: Linear, transformers' Conv1D, Embedding."""
    import torch
    from transformers.pytorch_utils import Conv1D

    if isinstance(module, torch.nn.Linear):
        return module.in_features, module.out_features
    if isinstance(module, Conv1D):
        rows, cols = module.weight.shape
        return int(rows), int(cols)
    if isinstance(module, torch.nn.Embedding):
        return module.num_embeddings, module.embedding_dim
    return None


def adapter_params(model: Any, lora: LoraSettings) -> int:
    """Trainable parameters PEFT's LoRA adds to ``model`` (plus ``modules_to_save`` copies)."""
    import torch

    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    total = 0
    for name, module in model.named_modules():
        if not name:
            continue
        if lora.modules_to_save and _adapted(name, lora.modules_to_save):
            total += sum(p.numel() for p in module.parameters())
            continue
        if lora.targets == ALL_LINEAR:
            hit = module is not output and not isinstance(module, torch.nn.Embedding) and _shape(module) is not None
        else:
            hit = _adapted(name, lora.targets) and _shape(module) is not None
        if not hit:
            continue
        shape = _shape(module)
        assert shape is not None
        total += lora.rank * (shape[0] + shape[1]) + (shape[1] if lora.dora else 0)
    return int(total)
