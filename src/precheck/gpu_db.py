"""The GPU database (``data/gpus.json``): every fact about a card model, with sources.

Lookups normalise what users and drivers type: case, punctuation and the vendor words
(``NVIDIA``, ``Tesla``, ``GeForce``...) do not matter, so ``"Tesla V100-SXM2-32GB"``,
``v100 sxm2 32gb`` and ``V100-SXM2-32GB`` are one card.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

_VENDOR_WORDS = re.compile(r"\b(nvidia|tesla|geforce|quadro|amd|instinct|radeon)\b")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def normalise(name: str) -> str:
    return _NOT_ALNUM.sub("", _VENDOR_WORDS.sub("", name.lower()))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class GpuModel:
    """One GPU model of the database: what it supports and how it is named."""

    id: str
    name: str
    vendor: str
    arch: str
    compute_capability: str
    memory_gib: float
    segment: str
    aliases: tuple[str, ...]
    bf16: bool
    fp16_tensor_cores: bool
    fp16_full_rate: bool
    tf32: bool
    fp8: bool
    flash_attention_2: bool
    flash_attention_3: bool
    source: tuple[str, ...]
    #: total memory as CUDA reports it (ECC on GDDR cards takes 6.25 %); ``memory_gib`` is the marketed figure
    cuda_memory_gib: float = 0.0

    @property
    def cc(self) -> tuple[int, int] | None:
        """NVIDIA compute capability as a tuple; None for AMD gfx targets."""
        match = re.fullmatch(r"(\d+)\.(\d+)", self.compute_capability)
        return (int(match.group(1)), int(match.group(2))) if match else None

    @property
    def sm(self) -> str:
        cc = self.cc
        return f"sm_{cc[0]}{cc[1]}" if cc else self.compute_capability

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> GpuModel:
        return cls(
            id=item["id"],
            name=item["name"],
            vendor=item["vendor"],
            arch=item["arch"],
            compute_capability=str(item["compute_capability"]),
            memory_gib=float(item["memory_gib"]),
            segment=item.get("segment", ""),
            aliases=tuple(item.get("aliases", ())),
            bf16=bool(item["bf16"]),
            fp16_tensor_cores=bool(item["fp16_tensor_cores"]),
            fp16_full_rate=bool(item["fp16_full_rate"]),
            tf32=bool(item["tf32"]),
            fp8=bool(item["fp8"]),
            flash_attention_2=bool(item["flash_attention_2"]),
            flash_attention_3=bool(item["flash_attention_3"]),
            source=tuple(item.get("source", ())),
            cuda_memory_gib=float(item.get("cuda_memory_gib", item["memory_gib"])),
        )


def custom_model(major: int, minor: int, memory_gib: float) -> GpuModel:
    """A card the database lacks, described by compute capability and memory.

    Capabilities follow from the compute capability alone, by the same thresholds the
    database uses (bf16/tf32/FlashAttention-2 from sm_80, fp8 from sm_89, FA3 from sm_80 to sm_90).
    """
    cc = (major, minor)
    return GpuModel(
        id=f"sm{major}{minor}-{memory_gib:g}gb",
        name="Custom GPU",
        vendor="nvidia",
        arch="custom",
        compute_capability=f"{major}.{minor}",
        memory_gib=memory_gib,
        segment="custom",
        aliases=(),
        bf16=cc >= (8, 0),
        fp16_tensor_cores=cc >= (7, 0),
        fp16_full_rate=cc >= (7, 0) or cc == (6, 0),
        tf32=cc >= (8, 0),
        fp8=cc >= (8, 9),
        flash_attention_2=cc >= (8, 0),
        flash_attention_3=(8, 0) <= cc <= (9, 0),
        source=("derived from compute capability",),
    )


@dataclass(frozen=True, eq=False, repr=False)
class GpuDatabase:
    """Every known GPU model, looked up by normalised name or alias."""

    models: tuple[GpuModel, ...]
    sources: dict[str, str]
    index: dict[str, GpuModel]

    def find(self, name: str) -> GpuModel | None:
        return self.index.get(normalise(name))

    def closest(self, name: str, n: int = 3) -> list[str]:
        key = normalise(name)
        names = {normalise(m.name): m.name for m in self.models}
        for model in self.models:
            for alias in model.aliases:
                names.setdefault(normalise(alias), alias)
        import difflib  # only for an unknown name

        hits = difflib.get_close_matches(key, list(names), n=n, cutoff=0.5)
        if not hits:  # "a100" typed as "a10o": fall back to a prefix match
            hits = [k for k in names if k.startswith(key[:3])][:n]
        return [names[h] for h in hits]


@lru_cache(maxsize=1)
def database() -> GpuDatabase:
    try:  # beside this module; importlib.resources (zip installs) costs more to import than the read
        text = (Path(__file__).parent / "data" / "gpus.json").read_text(encoding="utf-8")
    except OSError:
        from importlib import resources

        text = resources.files("precheck.data").joinpath("gpus.json").read_text(encoding="utf-8")
    data = json.loads(text)
    models = tuple(GpuModel.from_json(item) for item in data["gpus"])
    index: dict[str, GpuModel] = {}
    for model in models:
        for spelling in (model.id, model.name, *model.aliases):
            index.setdefault(normalise(spelling), model)
    return GpuDatabase(models, dict(data.get("sources", {})), index)
