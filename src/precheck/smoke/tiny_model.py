"""A tiny model of the run's architecture family, built from a config (never downloaded).

The family comes from the checkpoint's own ``config.json`` when the model is a local
folder (``model_type``, else ``architectures[0]``, read by :mod:`precheck.references`),
else from the model name through precheck's checkpoint table
(:func:`precheck.model_sizes.size_for`, :func:`precheck.models.family_of`), else from a
keyword in the name. A model that is not a transformers language model (a FLUX or SDXL
diffusion transformer, an unknown name) gets a tiny Llama as a stand-in, and the run says
so: the dtypes, scaler and optimizer path is what the smoke step tests, not the layers.

The model is built with transformers' ``AutoConfig.for_model`` + ``from_config`` (random
weights, float32) and ``HF_HUB_OFFLINE=1``; ``from_pretrained`` is never called.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ..config import TrainingConfig
from ..model_sizes import size_for
from ..models import family_of

#: precheck's family names (model_sizes.py / models.py) → transformers ``model_type``
FAMILY_TYPES = {
    "Llama 2": "llama",
    "Llama 3": "llama",
    "Llama 3.1": "llama",
    "Llama 3.2": "llama",
    "TinyLlama": "llama",
    "Mistral": "mistral",
    "Qwen2": "qwen2",
    "Qwen2.5": "qwen2",
    "Qwen3": "qwen3",
    "Gemma": "gemma",
    "Gemma 2": "gemma2",
    "GPT-2": "gpt2",
    "Phi-2": "phi",
    "Phi-3": "phi3",
    "T5": "t5",
}

#: name keywords → model_type, most specific first (a name no table knows: "my-org/qwen2-finetune")
_KEYWORDS = (
    (re.compile(r"mixtral"), "mixtral"),
    (re.compile(r"mistral"), "mistral"),
    (re.compile(r"qwen3"), "qwen3"),
    (re.compile(r"qwen"), "qwen2"),
    (re.compile(r"gemma-?2"), "gemma2"),
    (re.compile(r"gemma"), "gemma"),
    (re.compile(r"phi-?3"), "phi3"),
    (re.compile(r"phi"), "phi"),
    (re.compile(r"gpt-?2"), "gpt2"),
    (re.compile(r"(^|[/_-])t5"), "t5"),
    (re.compile(r"llama"), "llama"),
)

STAND_IN = "llama"

#: the tiny sizes, in the common (Llama-style) spelling; families with other names below
TINY = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "vocab_size": 256,
    "max_position_embeddings": 128,
    # mixture-of-experts families (Mixtral, Qwen2-MoE): few, small experts
    "num_local_experts": 4,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
    "shared_expert_intermediate_size": 32,
}
_OWN_SPELLING = {
    "gpt2": {"n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": 128, "n_positions": 128, "vocab_size": 256},
    "t5": {
        "d_model": 64,
        "d_ff": 128,
        "d_kv": 16,
        "num_layers": 2,
        "num_decoder_layers": 2,
        "num_heads": 4,
        "vocab_size": 256,
        "decoder_start_token_id": 0,
    },
}
#: special token ids must lie inside the tiny vocabulary
_TOKENS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
#: structural switches copied from a local config.json (sizes are not)
_STRUCTURE = ("tie_word_embeddings", "attention_bias", "mlp_bias", "hidden_act", "qkv_bias", "feed_forward_proj")

VOCAB = 256


@dataclass(frozen=True)
class Architecture:
    """Which tiny model the smoke run builds, and why."""

    model_type: str
    #: where the family was read ("config.json model_type", "precheck's checkpoint table"...)
    source: str
    #: the run's model is not of this family: a tiny Llama stands in
    stand_in: bool = False
    #: structural keys of a local config.json to keep (tie_word_embeddings...)
    structure: tuple[tuple[str, Any], ...] = ()

    def describe(self) -> str:
        what = f"tiny {self.model_type}"
        return f"{what} (stand-in: {self.source})" if self.stand_in else f"{what} ({self.source})"


def _from_arch_name(arch: str) -> str | None:
    """``LlamaForCausalLM`` → ``llama``; ``Qwen2ForCausalLM`` → ``qwen2``."""
    stem = re.sub(r"(For[A-Z]\w*|Model|LMHead\w*)$", "", arch)
    lowered = stem.lower()
    return lowered or None


def choose(config: TrainingConfig) -> Architecture:
    """The family of the run's model (no torch import)."""
    dims = config.model_dims
    structure = tuple((k, dims[k].value) for k in _STRUCTURE if k in dims)
    kind = dims.get("model_type")
    if kind is not None and isinstance(kind.value, str) and kind.value:
        return Architecture(kind.value.lower(), f"model_type in {kind.origin.location()}", structure=structure)
    if config.model_arch is not None:
        found = _from_arch_name(str(config.model_arch.value))
        if found:
            return Architecture(found, f"architectures in {config.model_arch.origin.location()}", structure=structure)
    name = str(config.model.value) if config.model is not None else ""
    if not name:
        return Architecture(STAND_IN, "the config names no model", stand_in=True)
    size = size_for(name)
    if size is not None and size.family in FAMILY_TYPES:
        return Architecture(FAMILY_TYPES[size.family], f"{name}: {size.name} in precheck's checkpoint table")
    family = family_of(name)
    if family is not None and family.name in FAMILY_TYPES:
        return Architecture(FAMILY_TYPES[family.name], f"{name}: the {family.name} family")
    lowered = name.lower()
    for pattern, model_type in _KEYWORDS:
        if pattern.search(lowered):
            return Architecture(model_type, f"{name}: named like {model_type}")
    return Architecture(STAND_IN, f"{name} is not a transformers language model precheck knows", stand_in=True)


def tiny_config(arch: Architecture) -> Any:
    """The transformers config of the tiny model (imports transformers)."""
    from transformers import AutoConfig

    defaults = AutoConfig.for_model(arch.model_type)
    stored = defaults.to_dict()
    sizes = _OWN_SPELLING.get(arch.model_type)
    if sizes is None:
        # only the keys this family stores itself (Falcon derives head_dim; Llama has no num_experts)
        sizes = {k: v for k, v in TINY.items() if k in stored or k in ("hidden_size", "num_hidden_layers")}
    tokens = {k: v for k, v in _TOKENS.items() if stored.get(k) is not None}
    return AutoConfig.for_model(arch.model_type, **{**sizes, **tokens, **dict(arch.structure)})


def model_classes() -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    return AutoModelForCausalLM, AutoModelForSeq2SeqLM


def build(arch: Architecture, attention: str | None = None) -> tuple[Any, Architecture, bool]:
    """The tiny model (a transformers ``PreTrainedModel``) in float32 on the CPU, and whether it
    is an encoder-decoder.

    An architecture transformers does not know (or cannot build tiny) falls back to the
    Llama stand-in; the returned :class:`Architecture` says so.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    causal, seq2seq = model_classes()
    if arch.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES | MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
        arch = Architecture(STAND_IN, f"{arch.model_type} is not a transformers causal LM", stand_in=True)
    encoder_decoder = arch.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    config = tiny_config(arch)
    cls = seq2seq if encoder_decoder else causal
    if attention in ("eager", "sdpa"):
        return cls.from_config(config, attn_implementation=attention), arch, encoder_decoder
    return cls.from_config(config), arch, encoder_decoder
