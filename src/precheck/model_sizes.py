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

For the entries here it is exact, not an estimate: ``tests/test_model_sizes.py`` checks it
against the counted parameters of 30 released checkpoints (every family in the table).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Mlp = Literal["gated", "plain"]
Bias = Literal["none", "qkv", "all"]
Norm = Literal["rms", "layer"]

#: T5's relative-position buckets (``relative_attention_num_buckets``), one table per stack
T5_RELATIVE_BUCKETS = 32


@dataclass(frozen=True, slots=True)
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


# --------------------------------------------------------------------------- sources

_LLAMA2_CFG = (
    "config.json of meta-llama/Llama-2-{size}-hf as printed by transformers in Retruth/deontic "
    "nlp_models/llama2/README.md"
)
_QWEN25_CFG = (
    "config.json of Qwen/Qwen2.5-{size} as transcribed (with its Hub URL) in Google LLC's Qwen2Config "
    "presets and in citsjtu2020/LLM-Prof sglang/Model_Config.md (3B/7B/14B/32B)"
)
_QWEN25_CARD = "; params: model card 'Number of Parameters: {card}' (ZHUI/paddlenlp_model_readme Qwen/Qwen2.5-{size})"
_QWEN3_CFG = (
    "config.json of Qwen/Qwen3-{size} as transcribed in AI-Hypercomputer/maxtext "
    "src/MaxText/utils/ckpt_conversion/utils/hf_model_configs.py"
)
_QWEN3_CARD = "; params: model card 'Number of Parameters: {card}'"
_GEMMA_PT = "google/gemma_pytorch gemma/config.py get_config_for_{size}() (vocab 256000, as in the Hub config.json)"
_GPT2_CFG = (
    "HF config.json n_embd/n_layer/n_head as loaded from OpenAI's checkpoints in rasbt/LLMs-from-scratch "
    "(model_configs); n_positions 1024, vocab 50257 (transformers GPT2Config defaults)"
)
_T5_CFG = "google-research/t5x t5x/examples/t5/t5_1_0/{size}.gin (T5.1.0, relu MLP, tied logits)"


# --------------------------------------------------------------------------- the table

SIZES: tuple[ModelSize, ...] = (
    # ---- Llama 2
    ModelSize(
        name="Llama-2-7b",
        family="Llama 2",
        hidden_size=4096,
        num_hidden_layers=32,
        intermediate_size=11008,
        num_attention_heads=32,
        num_key_value_heads=32,
        vocab_size=32000,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=6.74e9,
        source=_LLAMA2_CFG.format(size="7b")
        + "; transformers LlamaConfig defaults are the same; params: the card says '7B', the checkpoint's "
        "weight index total_size 13,476,839,424 B in fp16 = 6.74e9",
        aliases=(r"(meta-)?llama-?2-7b",),
    ),
    ModelSize(
        name="Llama-2-13b",
        family="Llama 2",
        hidden_size=5120,
        num_hidden_layers=40,
        intermediate_size=13824,
        num_attention_heads=40,
        num_key_value_heads=40,
        vocab_size=32000,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=13e9,
        source=_LLAMA2_CFG.format(size="13b") + "; params: model card '13B'",
        aliases=(r"(meta-)?llama-?2-13b",),
    ),
    ModelSize(
        name="Llama-2-70b",
        family="Llama 2",
        hidden_size=8192,
        num_hidden_layers=80,
        intermediate_size=28672,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=32000,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=70e9,
        source="AI-Hypercomputer/maxtext MaxText/configs/models/llama2-70b.yml (emb 8192, 64 q / 8 kv heads, "
        "head_dim 128, mlp 28672, 80 layers, vocab 32000), matching the module shapes printed in an h2oGPT "
        "card of Llama-2-70b-chat-hf; params: model card '70B'",
        aliases=(r"(meta-)?llama-?2-70b",),
    ),
    # ---- Llama 3 / 3.1
    ModelSize(
        name="Meta-Llama-3-8B",
        family="Llama 3",
        hidden_size=4096,
        num_hidden_layers=32,
        intermediate_size=14336,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=8e9,
        source="AI-Hypercomputer/maxtext MaxText/configs/models/llama3-8b.yml; params: model card '8B'",
        aliases=(r"(meta-)?llama-?3-8b",),
    ),
    ModelSize(
        name="Meta-Llama-3-70B",
        family="Llama 3",
        hidden_size=8192,
        num_hidden_layers=80,
        intermediate_size=28672,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=70e9,
        source="AI-Hypercomputer/maxtext MaxText/configs/models/llama3-70b.yml; params: model card '70B'",
        aliases=(r"(meta-)?llama-?3-70b",),
    ),
    ModelSize(
        name="Llama-3.1-8B",
        family="Llama 3.1",
        hidden_size=4096,
        num_hidden_layers=32,
        intermediate_size=14336,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=8e9,
        source="config.json of meta-llama/Llama-3.1-8B in citsjtu2020/LLM-Prof sglang/Model_Config.md and "
        "AI-Hypercomputer/maxtext hf_model_configs.py (llama31_8b_config); params: model card '8B'",
        aliases=(r"(meta-)?llama-?3\.1-8b",),
    ),
    ModelSize(
        name="Llama-3.1-70B",
        family="Llama 3.1",
        hidden_size=8192,
        num_hidden_layers=80,
        intermediate_size=28672,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=70e9,
        source="AI-Hypercomputer/maxtext hf_model_configs.py (llama31_70b_config); params: model card '70B'",
        aliases=(r"(meta-)?llama-?3\.1-70b",),
    ),
    # ---- Llama 3.2
    ModelSize(
        name="Llama-3.2-1B",
        family="Llama 3.2",
        hidden_size=2048,
        num_hidden_layers=16,
        intermediate_size=8192,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=1.23e9,
        source="config.json of meta-llama/Llama-3.2-1B-Instruct in kevinstephano/thunder_model_blocks "
        "hf_llama/llama_config.py; params: model card '1B (1.23B)'",
        head_dim=64,
        aliases=(r"(meta-)?llama-?3\.2-1b",),
    ),
    ModelSize(
        name="Llama-3.2-3B",
        family="Llama 3.2",
        hidden_size=3072,
        num_hidden_layers=28,
        intermediate_size=8192,
        num_attention_heads=24,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=3.21e9,
        source="config.json of meta-llama/Llama-3.2-3B in citsjtu2020/LLM-Prof sglang/Model_Config.md; "
        "params: model card '3B (3.21B)'",
        head_dim=128,
        aliases=(r"(meta-)?llama-?3\.2-3b",),
    ),
    # ---- Mistral
    ModelSize(
        name="Mistral-7B-v0.1",
        family="Mistral",
        hidden_size=4096,
        num_hidden_layers=32,
        intermediate_size=14336,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=32000,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=7.3e9,
        source="transformers MistralConfig defaults (checkpoint mistralai/Mistral-7B-v0.1) = Mistral 7B paper "
        "table 1; v0.2 has the same dims (keras-hub mistral_0.2_instruct_7b_en has the same count); params: "
        "Mistral AI announcement 'a 7.3B parameter model'",
        aliases=(r"mistral-7b(-v0\.[12])?",),
    ),
    # ---- Qwen2.5 (q/k/v biases)
    ModelSize(
        name="Qwen2.5-0.5B",
        family="Qwen2.5",
        hidden_size=896,
        num_hidden_layers=24,
        intermediate_size=4864,
        num_attention_heads=14,
        num_key_value_heads=2,
        vocab_size=151936,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=0.49e9,
        source=_QWEN25_CFG.format(size="0.5B") + _QWEN25_CARD.format(card="0.49B", size="0.5B"),
        bias="qkv",
        aliases=(r"qwen2\.5-0\.5b",),
    ),
    ModelSize(
        name="Qwen2.5-1.5B",
        family="Qwen2.5",
        hidden_size=1536,
        num_hidden_layers=28,
        intermediate_size=8960,
        num_attention_heads=12,
        num_key_value_heads=2,
        vocab_size=151936,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=1.54e9,
        source=_QWEN25_CFG.format(size="1.5B") + _QWEN25_CARD.format(card="1.54B", size="1.5B"),
        bias="qkv",
        aliases=(r"qwen2\.5-1\.5b",),
    ),
    ModelSize(
        name="Qwen2.5-3B",
        family="Qwen2.5",
        hidden_size=2048,
        num_hidden_layers=36,
        intermediate_size=11008,
        num_attention_heads=16,
        num_key_value_heads=2,
        vocab_size=151936,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=3.09e9,
        source=_QWEN25_CFG.format(size="3B") + _QWEN25_CARD.format(card="3.09B", size="3B"),
        bias="qkv",
        aliases=(r"qwen2\.5-3b",),
    ),
    ModelSize(
        name="Qwen2.5-7B",
        family="Qwen2.5",
        hidden_size=3584,
        num_hidden_layers=28,
        intermediate_size=18944,
        num_attention_heads=28,
        num_key_value_heads=4,
        vocab_size=152064,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=7.61e9,
        source=_QWEN25_CFG.format(size="7B") + _QWEN25_CARD.format(card="7.61B", size="7B"),
        bias="qkv",
        aliases=(r"qwen2\.5-7b",),
    ),
    ModelSize(
        name="Qwen2.5-14B",
        family="Qwen2.5",
        hidden_size=5120,
        num_hidden_layers=48,
        intermediate_size=13824,
        num_attention_heads=40,
        num_key_value_heads=8,
        vocab_size=152064,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=14.7e9,
        source=_QWEN25_CFG.format(size="14B") + _QWEN25_CARD.format(card="14.7B", size="14B"),
        bias="qkv",
        aliases=(r"qwen2\.5-14b",),
    ),
    ModelSize(
        name="Qwen2.5-32B",
        family="Qwen2.5",
        hidden_size=5120,
        num_hidden_layers=64,
        intermediate_size=27648,
        num_attention_heads=40,
        num_key_value_heads=8,
        vocab_size=152064,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=32.5e9,
        source=_QWEN25_CFG.format(size="32B") + _QWEN25_CARD.format(card="32.5B", size="32B"),
        bias="qkv",
        aliases=(r"qwen2\.5-32b",),
    ),
    ModelSize(
        name="Qwen2.5-72B",
        family="Qwen2.5",
        hidden_size=8192,
        num_hidden_layers=80,
        intermediate_size=29568,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=152064,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=72.7e9,
        source=_QWEN25_CFG.format(size="72B") + _QWEN25_CARD.format(card="72.7B", size="72B"),
        bias="qkv",
        aliases=(r"qwen2\.5-72b",),
    ),
    # ---- Qwen3 dense (head_dim 128, q/k norms, no biases)
    ModelSize(
        name="Qwen3-0.6B",
        family="Qwen3",
        hidden_size=1024,
        num_hidden_layers=28,
        intermediate_size=3072,
        num_attention_heads=16,
        num_key_value_heads=8,
        vocab_size=151936,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=0.6e9,
        source=_QWEN3_CFG.format(size="0.6B") + _QWEN3_CARD.format(card="0.6B"),
        head_dim=128,
        qk_norm=True,
        aliases=(r"qwen3-0\.6b",),
    ),
    ModelSize(
        name="Qwen3-1.7B",
        family="Qwen3",
        hidden_size=2048,
        num_hidden_layers=28,
        intermediate_size=6144,
        num_attention_heads=16,
        num_key_value_heads=8,
        vocab_size=151936,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=1.7e9,
        source="config.json of a Qwen3-1.7B copy in mephisto1484/Neko-LoRA-Build-Your-AI-Catgirl Qwen3-1.7B/ "
        "(its weight index: total_parameters 1,720,574,976)" + _QWEN3_CARD.format(card="1.7B"),
        head_dim=128,
        qk_norm=True,
        aliases=(r"qwen3-1\.7b",),
    ),
    ModelSize(
        name="Qwen3-4B",
        family="Qwen3",
        hidden_size=2560,
        num_hidden_layers=36,
        intermediate_size=9728,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=151936,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=4.0e9,
        source=_QWEN3_CFG.format(size="4B") + _QWEN3_CARD.format(card="4.0B"),
        head_dim=128,
        qk_norm=True,
        aliases=(r"qwen3-4b",),
    ),
    ModelSize(
        name="Qwen3-8B",
        family="Qwen3",
        hidden_size=4096,
        num_hidden_layers=36,
        intermediate_size=12288,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=151936,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=8.2e9,
        source=_QWEN3_CFG.format(size="8B") + _QWEN3_CARD.format(card="8.2B"),
        head_dim=128,
        qk_norm=True,
        aliases=(r"qwen3-8b",),
    ),
    ModelSize(
        name="Qwen3-14B",
        family="Qwen3",
        hidden_size=5120,
        num_hidden_layers=40,
        intermediate_size=17408,
        num_attention_heads=40,
        num_key_value_heads=8,
        vocab_size=151936,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=14.8e9,
        source=_QWEN3_CFG.format(size="14B") + _QWEN3_CARD.format(card="14.8B"),
        head_dim=128,
        qk_norm=True,
        aliases=(r"qwen3-14b",),
    ),
    ModelSize(
        name="Qwen3-32B",
        family="Qwen3",
        hidden_size=5120,
        num_hidden_layers=64,
        intermediate_size=25600,
        num_attention_heads=64,
        num_key_value_heads=8,
        vocab_size=151936,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=32.8e9,
        source=_QWEN3_CFG.format(size="32B") + _QWEN3_CARD.format(card="32.8B"),
        head_dim=128,
        qk_norm=True,
        aliases=(r"qwen3-32b",),
    ),
    # ---- Gemma (GeGLU, tied, head_dim 256); the papers count a 256,128-entry vocabulary
    ModelSize(
        name="gemma-2b",
        family="Gemma",
        hidden_size=2048,
        num_hidden_layers=18,
        intermediate_size=16384,
        num_attention_heads=8,
        num_key_value_heads=1,
        vocab_size=256000,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=2_506_434_560,
        source=_GEMMA_PT.format(size="2b")
        + "; params: Gemma paper (arXiv 2403.08295) table 2, 524,550,144 embedding + 1,981,884,416 other",
        head_dim=256,
        aliases=(r"gemma-(1\.1-)?2b",),
    ),
    ModelSize(
        name="gemma-7b",
        family="Gemma",
        hidden_size=3072,
        num_hidden_layers=28,
        intermediate_size=24576,
        num_attention_heads=16,
        num_key_value_heads=16,
        vocab_size=256000,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=8_538_074_112,
        source=_GEMMA_PT.format(size="7b")
        + " = transformers GemmaConfig defaults; params: Gemma paper table 2, 786,825,216 + 7,751,248,896",
        head_dim=256,
        aliases=(r"gemma-(1\.1-)?7b",),
    ),
    ModelSize(
        name="gemma-2-2b",
        family="Gemma 2",
        hidden_size=2304,
        num_hidden_layers=26,
        intermediate_size=9216,
        num_attention_heads=8,
        num_key_value_heads=4,
        vocab_size=256000,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=2_614_636_800,
        source="AI-Hypercomputer/maxtext hf_model_configs.py gemma2_2b_config (= transformers Gemma2Config "
        "defaults: head_dim 256, vocab 256000); params: Gemma 2 paper (arXiv 2408.00118) table 2, "
        "590,118,912 + 2,024,517,888",
        head_dim=256,
        norms_per_layer=4,
        aliases=(r"gemma-?2-2b",),
    ),
    ModelSize(
        name="gemma-2-9b",
        family="Gemma 2",
        hidden_size=3584,
        num_hidden_layers=42,
        intermediate_size=14336,
        num_attention_heads=16,
        num_key_value_heads=8,
        vocab_size=256000,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=9_242_164_736,
        source=_GEMMA_PT.format(size="9b")
        + " and maxtext gemma2_9b_config; params: Gemma 2 paper table 2, 917,962,752 + 8,324,201,984",
        head_dim=256,
        norms_per_layer=4,
        aliases=(r"gemma-?2-9b",),
    ),
    ModelSize(
        name="gemma-2-27b",
        family="Gemma 2",
        hidden_size=4608,
        num_hidden_layers=46,
        intermediate_size=36864,
        num_attention_heads=32,
        num_key_value_heads=16,
        vocab_size=256000,
        tie_word_embeddings=True,
        mlp="gated",
        encoder_decoder=False,
        published_params=27_227_718_144,
        source=_GEMMA_PT.format(size="27b")
        + " and maxtext gemma2_27b_config (head_dim 128); params: Gemma 2 paper table 2, "
        "1,180,237,824 + 26,047,480,320",
        head_dim=128,
        norms_per_layer=4,
        aliases=(r"gemma-?2-27b",),
    ),
    # ---- Phi
    ModelSize(
        name="phi-2",
        family="Phi-2",
        hidden_size=2560,
        num_hidden_layers=32,
        intermediate_size=10240,
        num_attention_heads=32,
        num_key_value_heads=32,
        vocab_size=51200,
        tie_word_embeddings=False,
        mlp="plain",
        encoder_decoder=False,
        published_params=2.78e9,
        source="config.json of microsoft/phi-2 in dotnet/machinelearning "
        "src/Microsoft.ML.GenAI.Phi/Resource/Config/phi-2-config.json (parallel block: one LayerNorm, "
        "biases everywhere); params: the card says '2.7 billion', the checkpoint's weight index "
        "total_size 5,559,367,680 B in fp16 = 2.78e9",
        bias="all",
        norm="layer",
        norms_per_layer=1,
        aliases=(r"phi-?2",),
    ),
    ModelSize(
        name="Phi-3-mini",
        family="Phi-3",
        hidden_size=3072,
        num_hidden_layers=32,
        intermediate_size=8192,
        num_attention_heads=32,
        num_key_value_heads=32,
        vocab_size=32064,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=3.8e9,
        source="config.json of microsoft/Phi-3-mini-4k-instruct in dotnet/machinelearning "
        "src/Microsoft.ML.GenAI.Phi/Resource/Config/phi-3-mini-4k-instruct-config.json (= transformers "
        "Phi3Config defaults; the 128k variant has the same dims); params: model card '3.8B'",
        aliases=(r"phi-?3-mini(-(4|128)k)?",),
    ),
    # ---- TinyLlama
    ModelSize(
        name="TinyLlama-1.1B",
        family="TinyLlama",
        hidden_size=2048,
        num_hidden_layers=22,
        intermediate_size=5632,
        num_attention_heads=32,
        num_key_value_heads=4,
        vocab_size=32000,
        tie_word_embeddings=False,
        mlp="gated",
        encoder_decoder=False,
        published_params=1.1e9,
        source="jzhang38/TinyLlama README (22 layers, 32 heads, 4 query groups, 2048 embedding, 5632 SwiGLU, "
        "Llama 2 tokenizer) and config.json of TinyLlama/TinyLlama-1.1B-Chat-v1.0 in "
        "swayam8624/nanoquant-private; params: README '1.1B'",
        aliases=(r"tinyllama(-1\.1b)?(-v1\.0)?", r"tinyllama-1\.1b-intermediate-step-\d+k-[\d.]+t"),
    ),
    # ---- GPT-2 (learned positions, biases and LayerNorm everywhere, tied)
    ModelSize(
        name="gpt2",
        family="GPT-2",
        hidden_size=768,
        num_hidden_layers=12,
        intermediate_size=3072,
        num_attention_heads=12,
        num_key_value_heads=12,
        vocab_size=50257,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=False,
        published_params=124e6,
        source="transformers GPT2Config defaults (checkpoint openai-community/gpt2); params: model card '124M'",
        bias="all",
        norm="layer",
        learned_positions=1024,
        aliases=(r"gpt-?2(-small)?",),
    ),
    ModelSize(
        name="gpt2-medium",
        family="GPT-2",
        hidden_size=1024,
        num_hidden_layers=24,
        intermediate_size=4096,
        num_attention_heads=16,
        num_key_value_heads=16,
        vocab_size=50257,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=False,
        published_params=355e6,
        source=_GPT2_CFG + "; params: model card 'the 355M parameter version'",
        bias="all",
        norm="layer",
        learned_positions=1024,
        aliases=(r"gpt-?2-medium",),
    ),
    ModelSize(
        name="gpt2-large",
        family="GPT-2",
        hidden_size=1280,
        num_hidden_layers=36,
        intermediate_size=5120,
        num_attention_heads=20,
        num_key_value_heads=20,
        vocab_size=50257,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=False,
        published_params=774e6,
        source=_GPT2_CFG + "; params: model card 'the 774M parameter version'",
        bias="all",
        norm="layer",
        learned_positions=1024,
        aliases=(r"gpt-?2-large",),
    ),
    ModelSize(
        name="gpt2-xl",
        family="GPT-2",
        hidden_size=1600,
        num_hidden_layers=48,
        intermediate_size=6400,
        num_attention_heads=25,
        num_key_value_heads=25,
        vocab_size=50257,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=False,
        published_params=1542e6,
        source=_GPT2_CFG + "; params: GPT-2 paper table 2 '1542M' (the card's '1.5B' is 3.8 % under)",
        bias="all",
        norm="layer",
        learned_positions=1024,
        aliases=(r"gpt-?2-xl",),
    ),
    # ---- T5 v1.0 (encoder-decoder, relu MLP, no biases, shared tied embeddings)
    ModelSize(
        name="t5-small",
        family="T5",
        hidden_size=512,
        num_hidden_layers=6,
        intermediate_size=2048,
        num_attention_heads=8,
        num_key_value_heads=8,
        vocab_size=32128,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=True,
        published_params=60e6,
        source=_T5_CFG.format(size="small") + " = transformers T5Config defaults; params: T5 paper / card '60M'",
        aliases=(r"t5-small",),
    ),
    ModelSize(
        name="t5-base",
        family="T5",
        hidden_size=768,
        num_hidden_layers=12,
        intermediate_size=3072,
        num_attention_heads=12,
        num_key_value_heads=12,
        vocab_size=32128,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=True,
        published_params=220e6,
        source=_T5_CFG.format(size="base") + "; params: T5 paper / card '220M'",
        aliases=(r"t5-base",),
    ),
    ModelSize(
        name="t5-large",
        family="T5",
        hidden_size=1024,
        num_hidden_layers=24,
        intermediate_size=4096,
        num_attention_heads=16,
        num_key_value_heads=16,
        vocab_size=32128,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=True,
        published_params=None,
        source=_T5_CFG.format(size="large")
        + "; the paper and card say '770M', 4.4 % over the 737.7M the checkpoint holds, so no stated count",
        aliases=(r"t5-large",),
    ),
    ModelSize(
        name="t5-3b",
        family="T5",
        hidden_size=1024,
        num_hidden_layers=24,
        intermediate_size=16384,
        num_attention_heads=32,
        num_key_value_heads=32,
        vocab_size=32128,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=True,
        published_params=None,
        source=_T5_CFG.format(size="3B")
        + " (head_dim 128); the paper and card say '3B', 5.2 % over the 2.85B the checkpoint holds",
        head_dim=128,
        aliases=(r"t5-3b",),
    ),
    ModelSize(
        name="t5-11b",
        family="T5",
        hidden_size=1024,
        num_hidden_layers=24,
        intermediate_size=65536,
        num_attention_heads=128,
        num_key_value_heads=128,
        vocab_size=32128,
        tie_word_embeddings=True,
        mlp="plain",
        encoder_decoder=True,
        published_params=None,
        source=_T5_CFG.format(size="11B")
        + " (head_dim 128); the paper and card say '11B', 2.7 % under the 11.3B the checkpoint holds",
        head_dim=128,
        aliases=(r"t5-11b",),
    ),
)


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
_COMPILED: tuple[tuple[ModelSize, tuple[re.Pattern[str], ...]], ...] = tuple(
    (size, tuple(re.compile(alias) for alias in size.aliases)) for size in SIZES
)


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
        for size, patterns in _COMPILED:
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
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
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
