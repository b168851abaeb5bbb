"""Architecture sizes of popular checkpoints, so memory can be estimated without a download.

Every entry holds the numbers of the checkpoint's ``config.json`` (or, where the Hub copy
is gated, the same numbers from the publisher's own code or paper); ``source`` says where
they were read. ``published_params`` is the parameter count the publisher states (model
card, paper, announcement, or the checkpoint's own weight index where the card only gives
a rounded name); it is ``None`` where the only stated figure is a nominal size further than
2 % from what the checkpoint holds (T5-Large/3B/11B), so that it cannot serve as a check.

Parameter count (``count_params``), with ``h`` the hidden size, ``L`` the layers, ``i``
the MLP intermediate size, ``a`` the attention heads, ``k`` the key/value heads, ``d`` the
head dim (``h / a`` unless the config says otherwise), ``V`` the vocabulary:

- **embeddings** ``V·h``, plus ``P·h`` learned absolute positions where the family has
  them (GPT-2, ``P = n_positions``);
- **lm_head** another ``V·h`` when the embeddings are not tied (plus ``V`` bias when the
  family puts biases everywhere: Phi-2);
- **attention**, per layer: ``q`` and ``o`` are ``h·a·d`` each, ``k`` and ``v`` are
  ``h·k·d`` each (``h·h`` each for plain multi-head attention); biases add ``a·d + 2·k·d``
  where only q/k/v have them (Qwen2.5) and also ``h`` for ``o`` where every linear has
  one (GPT-2, Phi-2); Qwen3's per-head q/k RMSNorms add ``2·d``;
- **MLP**, per layer: ``3·h·i`` for a gated (SwiGLU/GeGLU) MLP, ``2·h·i`` for a plain
  two-matrix one, plus ``i + h`` biases where the family has them;
- **norms**: ``n·h`` per layer (``n = 2`` pre-attention and pre-MLP; 4 for Gemma 2's pre
  and post norms; 1 for Phi-2's parallel block) plus ``h`` for the final norm, each twice
  for LayerNorm (weight and bias) rather than RMSNorm;
- **encoder-decoder** (T5): one shared ``V·h`` embedding; the encoder's ``L`` layers have
  self-attention, MLP and 2 norms, the decoder's layers self-attention, cross-attention,
  MLP and 3 norms; each stack has a final norm and ``32·a`` relative-position buckets.

The table itself is data, ``data/model_sizes.json`` (one object per checkpoint, with this
class's field names; fields at their default are left out), read on first use.

For the entries here it is exact, not an estimate: ``tests/test_model_sizes.py`` checks it
against the counted parameters of 30 released checkpoints (every family in the table).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

Mlp = Literal["gated", "plain"]
Bias = Literal["none", "qkv", "all"]
Norm = Literal["rms", "layer"]

#: T5's relative-position buckets (``relative_attention_num_buckets``), one table per stack
T5_RELATIVE_BUCKETS = 32


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ModelSize:
    """The architecture numbers of one checkpoint (see the module docstring for the count)."""

    name: str
    family: str
    hidden_size: int
    #: layers per stack for an encoder-decoder
    num_hidden_layers: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    tie_word_embeddings: bool
    #: "gated" for a SwiGLU/GeGLU three-matrix MLP, "plain" for a GPT-2-style two-matrix one
    mlp: Mlp
    #: T5-style encoder-decoder
    encoder_decoder: bool
    #: the parameter count the publisher states, or None
    published_params: float | None
    #: where the numbers were read
    source: str
    #: per-head dim where it is not hidden_size / num_attention_heads (Gemma, Qwen3, T5-3B/11B)
    head_dim: int | None = None
    #: which linears carry a bias: none (Llama), q/k/v (Qwen2.5), all (GPT-2, Phi-2)
    bias: Bias = "none"
    norm: Norm = "rms"
    norms_per_layer: int = 2
    #: per-head RMSNorm on queries and keys (Qwen3)
    qk_norm: bool = False
    #: learned absolute position embeddings (GPT-2's n_positions), 0 for none
    learned_positions: int = 0
    #: decoder layers where they differ from the encoder's (encoder-decoder only)
    num_decoder_layers: int | None = None
    #: regular expressions that a normalised hub id must match in full (see size_for)
    aliases: tuple[str, ...] = ()

    @property
    def attention_head_dim(self) -> int:
        return self.head_dim if self.head_dim is not None else self.hidden_size // self.num_attention_heads

    @property
    def params(self) -> int:
        return count_params(self)


def _attention(dims: ModelSize) -> int:
    """One attention block: q, k, v, o and their biases."""
    h, d = dims.hidden_size, dims.attention_head_dim
    q_out = dims.num_attention_heads * d
    kv_out = dims.num_key_value_heads * d
    total = 2 * h * q_out + 2 * h * kv_out
    if dims.bias in ("qkv", "all"):
        total += q_out + 2 * kv_out
    if dims.bias == "all":
        total += h
    return total


def _mlp(dims: ModelSize) -> int:
    h, i = dims.hidden_size, dims.intermediate_size
    total = (3 if dims.mlp == "gated" else 2) * h * i
    if dims.bias == "all":
        total += (2 * i if dims.mlp == "gated" else i) + h
    return total


def _norm(dims: ModelSize) -> int:
    return dims.hidden_size * (2 if dims.norm == "layer" else 1)


def count_params(dims: ModelSize) -> int:
    """Parameters of a checkpoint with these dims (formula in the module docstring)."""
    h, v = dims.hidden_size, dims.vocab_size
    embeddings = v * h + dims.learned_positions * h
    lm_head = 0 if dims.tie_word_embeddings else v * h + (v if dims.bias == "all" else 0)
    attention = _attention(dims)
    mlp = _mlp(dims)
    norm = _norm(dims)
    if dims.encoder_decoder:
        decoder_layers = dims.num_decoder_layers if dims.num_decoder_layers is not None else dims.num_hidden_layers
        encoder = dims.num_hidden_layers * (attention + mlp + 2 * norm)
        decoder = decoder_layers * (2 * attention + mlp + 3 * norm)
        relative = 2 * T5_RELATIVE_BUCKETS * dims.num_attention_heads
        return embeddings + lm_head + encoder + decoder + 2 * norm + relative
    qk_norm = 2 * dims.attention_head_dim if dims.qk_norm else 0
    layer = attention + mlp + dims.norms_per_layer * norm + qk_norm
    return embeddings + lm_head + dims.num_hidden_layers * layer + norm


# --------------------------------------------------------------------------- the table

_FIELDS = frozenset(ModelSize.__dataclass_fields__)


def _entry(item: dict[str, Any]) -> ModelSize:
    unknown = set(item) - _FIELDS
    if unknown:
        raise ValueError(f"data/model_sizes.json: {item.get('name')}: unknown keys {sorted(unknown)}")
    return ModelSize(**{**item, "aliases": tuple(item.get("aliases", ()))})


@lru_cache(maxsize=1)
def _table() -> tuple[ModelSize, ...]:
    """The shipped table (``data/model_sizes.json``), read on first use: a check that never
    estimates memory for a named model never reads it."""
    try:  # beside this module; importlib.resources (zip installs) costs more to import than the read
        text = (Path(__file__).parent / "data" / "model_sizes.json").read_text(encoding="utf-8")
    except OSError:
        from importlib import resources

        text = resources.files("precheck.data").joinpath("model_sizes.json").read_text(encoding="utf-8")
    return tuple(_entry(item) for item in json.loads(text)["models"])


def __getattr__(name: str) -> Any:
    """``SIZES``, the table, is loaded on first access (PEP 562)."""
    if name == "SIZES":
        return _table()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- lookup

#: tokens that name a format, quantisation or chat/instruct tuning of the same weights' shape
_DECORATIONS = frozenset(
    {
        "hf",
        "instruct",
        "chat",
        "it",
        "pt",
        "bnb",
        "4bit",
        "8bit",
        "awq",
        "gptq",
        "gguf",
        "mlx",
        "fp16",
        "bf16",
        "fp32",
        "fp8",
        "int4",
        "int8",
        "unsloth",
        "dynamic",
    }
)
_HASH = re.compile(r"[0-9a-f]{40}")


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[ModelSize, tuple[re.Pattern[str], ...]], ...]:
    return tuple((size, tuple(re.compile(alias) for alias in size.aliases)) for size in _table())


def _last_component(model_name: str) -> str:
    """The part of a hub id or path that names the model (the HF cache layout included)."""
    parts = [part for part in re.split(r"[/\\]+", model_name.strip()) if part]
    for part in reversed(parts):
        if part == "snapshots" or _HASH.fullmatch(part.lower()):
            continue
        if part.startswith("models--"):
            return part.rsplit("--", 1)[-1]
        return part
    return ""


def _candidates(model_name: str) -> list[str]:
    tokens = [token for token in re.split(r"[-_\s]+", _last_component(model_name).lower()) if token]
    tokens = [token for token in tokens if token not in _DECORATIONS]
    if not tokens:
        return []
    names = ["-".join(tokens)]
    if len(tokens) > 1 and tokens[-1] == "base":
        names.append("-".join(tokens[:-1]))
    return names


@lru_cache(maxsize=1024)
def size_for(model_name: str) -> ModelSize | None:
    """The built-in size of a hub id or local path (``meta-llama/Llama-2-7b-hf``,
    ``unsloth/tinyllama-bnb-4bit``, ``/models/Qwen2.5-7B-Instruct``), or None.

    Case does not matter, and neither do format, quantisation and chat/instruct words
    (``-hf``, ``-Instruct``, ``-it``, ``-bnb-4bit``, ``-AWQ``...) nor a trailing ``-Base``.
    What remains must match one entry's alias in full, so a variant with other dims
    (``Mistral-7B-v0.3``, ``Qwen2.5-7B-Instruct-1M``, ``t5-v1_1-base``) is unknown, not guessed.
    """
    for candidate in _candidates(model_name):
        for size, patterns in _compiled():
            if any(pattern.fullmatch(candidate) for pattern in patterns):
                return size
    return None


# --------------------------------------------------------------------------- local config.json

_HIDDEN = ("hidden_size", "n_embd", "d_model")
_LAYERS = ("num_hidden_layers", "n_layer", "num_layers")
_HEADS = ("num_attention_heads", "n_head", "num_heads")
_INTERMEDIATE = ("intermediate_size", "n_inner", "d_ff")
_HEAD_DIM = ("head_dim", "d_kv")
#: families whose config class ties the embeddings when config.json does not say
_TIED_BY_DEFAULT = frozenset({"gpt2", "t5", "gemma", "gemma2"})


def _int(values: Mapping[str, object], *keys: str) -> int | None:
    for key in keys:
        value = values.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31:  # past any real model: no size
            return value
    return None


def dims_from_config(values: Mapping[str, object], name: str = "config.json") -> ModelSize | None:
    """The same dims read from a local checkpoint's ``config.json``, or None when a required
    key (hidden size, layers, heads, vocabulary, and the MLP size except for GPT-2) is missing.

    Llama-style keys (``hidden_size``, ``num_hidden_layers``, ``intermediate_size``,
    ``num_attention_heads``, ``num_key_value_heads``, ``head_dim``, ``vocab_size``), GPT-2's
    (``n_embd``, ``n_layer``, ``n_head``, ``n_inner``, ``n_positions``) and T5's (``d_model``,
    ``num_layers``, ``d_ff``, ``num_heads``, ``d_kv``, ``num_decoder_layers``) are read;
    ``model_type`` picks the family's MLP, biases and norms (gpt2, phi, qwen2, qwen3,
    gemma2, t5), and any other type counts as Llama-style (gated MLP, no biases).
    """
    model_type = str(values.get("model_type", "")).lower()
    hidden = _int(values, *_HIDDEN)
    layers = _int(values, *_LAYERS)
    heads = _int(values, *_HEADS)
    vocab = _int(values, "vocab_size")
    intermediate = _int(values, *_INTERMEDIATE)
    if model_type == "gpt2" and intermediate is None and hidden is not None:
        intermediate = 4 * hidden
    if hidden is None or layers is None or heads is None or vocab is None or intermediate is None:
        return None
    kv_heads = _int(values, "num_key_value_heads") or heads
    tied_value = values.get("tie_word_embeddings")
    tied = tied_value if isinstance(tied_value, bool) else model_type in _TIED_BY_DEFAULT
    encoder_decoder = model_type == "t5" or bool(values.get("is_encoder_decoder"))
    mlp: Mlp = "gated"
    bias: Bias = "none"
    norm: Norm = "rms"
    norms_per_layer = 2
    if model_type in ("gpt2", "phi"):
        mlp, bias, norm = "plain", "all", "layer"
        norms_per_layer = 1 if model_type == "phi" else 2
    elif model_type == "t5" or encoder_decoder:
        mlp = "gated" if str(values.get("feed_forward_proj", "relu")).startswith("gated") else "plain"
    elif model_type == "qwen2" or values.get("attention_bias") is True or values.get("qkv_bias") is True:
        bias = "qkv"
    if model_type == "gemma2":
        norms_per_layer = 4
    decoder_layers = _int(values, "num_decoder_layers") if encoder_decoder else None
    return ModelSize(
        name=name,
        family=model_type or "unknown",
        hidden_size=hidden,
        num_hidden_layers=layers,
        intermediate_size=intermediate,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        vocab_size=vocab,
        tie_word_embeddings=tied,
        mlp=mlp,
        encoder_decoder=encoder_decoder,
        published_params=None,
        source=f"{name} (model_type {model_type or 'unknown'})",
        head_dim=_int(values, *_HEAD_DIM),
        bias=bias,
        norm=norm,
        norms_per_layer=norms_per_layer,
        qk_norm=model_type == "qwen3",
        learned_positions=(_int(values, "n_positions", "max_position_embeddings") or 0) if model_type == "gpt2" else 0,
        num_decoder_layers=decoder_layers if decoder_layers != layers else None,
    )
