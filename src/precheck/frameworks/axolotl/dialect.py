"""This framework's training configs (``<cli> train config.yml``).

Keys read upstream, released sdists/wheels 0.9.0 to 0.19.0 (and the
GitHub tree the corpus comes from, 067b021):

- ``cli/config.py`` ``load_cfg``: ``yaml.safe_load``, then ``validate_config``
  (``utils/config/__init__.py``) builds the input config model and keeps its
  ``model_dump``. The model sets no ``extra`` (``model_config = {"populate_by_name":
  True}``), so pydantic ignores unknown keys: a misspelt key is dropped without a word,
  and quoted booleans (``"true"``) are converted by pydantic's lax bool parsing.
- Precision switches (``utils/schemas/config.py``): ``bf16: Literal["auto"] | bool |
  None = "auto"``, ``fp16: bool | None``, ``bfloat16``/``float16`` ("No AMP (automatic
  mixed precision)": the load dtype without autocast), ``tf32`` (bool; from 0.16.0
  ``Literal["auto"] | bool`` defaulting to ``"auto"``), ``fp8`` ("FP8 mixed precision
  training using TorchAO"). There is **no** ``torch_dtype`` field (commented out in the
  schema): a ``torch_dtype:`` key is dropped and ``resolve_dtype`` derives the load dtype
  from the switches above.
- Model: ``base_model`` (required), ``base_model_config``, ``model_type`` (remapped to
  ``type_of_model``), ``tokenizer_type``. Adapters (``utils/schemas/peft.py``
  ``LoraConfig``): ``adapter`` (lora | qlora | llama-adapter | a plugin's), ``load_in_4bit``
  (qlora only: "Require cfg.load_in_4bit to be True for qlora"), ``load_in_8bit``; without
  an adapter both raise "load_in_8bit and load_in_4bit are not supported without setting
  an adapter for training." ``bnb_config_kwargs`` updates the 4-bit ``BitsAndBytesConfig``
  (``loaders/model.py`` ``_set_quantization_config``).
- Attention: ``attn_implementation`` (0.16+ canonical), and the legacy booleans
  ``xformers_attention``, ``sage_attention``, ``flex_attention``, ``flash_attention``,
  ``sdp_attention``, ``eager_attention``, which 0.19.0 maps in that priority
  (``utils/schemas/enums.py`` ``LEGACY_ATTN_FLAG_TO_IMPL``; ``normalize_attn_implementation``
  raises when one is combined with ``attn_implementation``).
- Sizes: ``micro_batch_size`` (per GPU), ``gradient_accumulation_steps``, ``batch_size``
  (``normalize_config``: ``gradient_accumulation_steps or batch_size // micro_batch_size``),
  ``sequence_len``.
- Distribution: ``deepspeed`` (a path, or an inline dict; no built-in preset names: the
  ``deepspeed_configs/*.json`` files are fetched with the CLI's ``fetch deepspeed_configs``),
  ``fsdp`` (a list of TrainingArguments ``fsdp`` options, deprecated) and ``fsdp_config``
  (``utils/schemas/fsdp.py`` ``FSDPConfig``: ``offload_params``, ``activation_checkpointing``,
  ``reshard_after_forward``...; the ``fsdp_`` prefix of older configs is stripped by
  ``check_fsdp_config_kwargs_prefix``), ``fsdp_version``. FSDP's mixed precision comes from
  accelerate's ``mixed_precision`` (``FullyShardedDataParallelPlugin.set_mixed_precision``):
  ``fsdp_config.mixed_precision_policy`` is declared but not read, so no FSDP dtype keys
  are mapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...config import TrainingConfig
from ...dialects.base import Dialect, count_keys, field, read_attachments, to_bool, to_float, to_int
from ...dtypes import parse_dtype
from ...provenance import Origin, Sourced
from ...sources import Document, Node, SourceNote
from .keys import NAME, SCHEMA_KEYS

#: keys that, beside ``base_model``, mark this framework's config
DISTINCTIVE = (
    "base_model_config",
    "micro_batch_size",
    "sequence_len",
    "datasets",
    "adapter",
    "load_in_4bit",
    "load_in_8bit",
    "lora_r",
    "lora_target_linear",
    "num_epochs",
    "lr_scheduler",
    "optimizer",
    "val_set_size",
    "dataset_prepared_path",
    "special_tokens",
    "sample_packing",
    "pad_to_sequence_len",
    "bfloat16",
    "float16",
    "flash_attention",
    "tokenizer_type",
    "evals_per_epoch",
    "saves_per_epoch",
    "fsdp_version",
)

#: ``LEGACY_ATTN_FLAG_TO_IMPL`` (0.19.0 ``utils/schemas/enums.py``), in its priority order
LEGACY_ATTENTION = (
    ("xformers_attention", "xformers"),
    ("sage_attention", "sage"),
    ("flex_attention", "flex_attention"),
    ("flash_attention", "flash_attention_2"),
    ("sdp_attention", "sdpa"),
    ("eager_attention", "eager"),
)

#: TrainingArguments ``fsdp`` options that name the sharding strategy
FSDP_SHARDING = ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2", "no_shard")

#: ``gradient_checkpointing`` values that recompute activations (``offload``: with CPU
#: offload of the checkpoints; ``unsloth`` in 0.9-0.12)
CHECKPOINTING_MODES = ("offload", "offload_disk", "unsloth")


def to_literal(value: Any) -> str | None:
    """A string setting, but not an unfilled template placeholder (``${ADAPTER}``)."""
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = str(value).strip()
    return text if text and "${" not in text else None


class TrainConfig(Dialect):
    flag_keys = (("fp16", "fp16"), ("bf16", "bf16"), ("tf32", "tf32"), ("pure_bf16", "bfloat16"))
    fields = (
        field("model", "base_model", convert=to_literal),
        field("fp16", "fp16", convert=to_bool),
        field("bf16", "bf16", convert=to_bool),
        field("tf32", "tf32", convert=to_bool),
        field("pure_bf16", "bfloat16", convert=to_bool),
        field("train_type", "adapter", convert=to_literal),
        field("optimizer", "optimizer", convert=to_literal),
        field("max_grad_norm", "max_grad_norm", convert=to_float),
        field("attn_implementation", "attn_implementation", convert=to_literal),
        field("quant_compute_dtype", "bnb_config_kwargs.bnb_4bit_compute_dtype", convert=parse_dtype),
        field("batch_size", "micro_batch_size", convert=to_int),
        field("grad_accum_steps", "gradient_accumulation_steps", convert=to_int),
    )
    known_keys = SCHEMA_KEYS
    closed_keys = False
    ignores = "drops it when it validates the config (pydantic ignores extra fields), so it has no effect"

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        if "base_model" not in keys:
            return 0
        hits = count_keys(keys, DISTINCTIVE)
        return self.priority + hits if hits >= 2 else 0

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        # pydantic's lax bool parsing turns "true"/"false" into booleans: not a trap here
        config.notes = [n for n in config.notes if n.kind != "quoted-boolean"]
        read_attachments(self, doc, config, env, {"deepspeed": "deepspeed"})
        return config

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        for key, bits in (("load_in_4bit", 4), ("load_in_8bit", 8)):
            node = self.node(doc, key)
            if node is not None and to_bool(node.value) and config.quantization_bits is None:
                self.put(config, "quantization_bits", bits, doc, node)
        self._checkpointing(doc, config)
        self._attention(doc, config)
        fp8 = self.node(doc, "fp8")
        if fp8 is not None and to_bool(fp8.value):
            self.put(config, "fp8", "torchao", doc, fp8)
        self._fsdp(doc, config)
        self._accumulation(doc, config)
        self._sequence(doc, config)
        for key in ("torch_dtype", "dtype"):
            node = self.node(doc, key)
            if node is not None:
                line, column = node.anchor
                config.notes.append(
                    SourceNote(
                        "unknown-key",
                        f"`{key}` is not an {NAME} key: {NAME} drops it when it validates the config and "
                        "loads the model in the dtype it derives from bf16/fp16/bfloat16/float16 "
                        "(utils/config resolve_dtype)",
                        line,
                        column,
                        key,
                    )
                )

    def _checkpointing(self, doc: Document, config: TrainingConfig) -> None:
        node = self.node(doc, "gradient_checkpointing")
        if node is not None:
            flag = to_bool(node.value)
            if flag is None and str(node.value).strip().lower() in CHECKPOINTING_MODES:
                flag = True
            if flag is not None:
                self.put(config, "gradient_checkpointing", flag, doc, node)
                return
        for path in ("fsdp_config.activation_checkpointing", "fsdp_config.fsdp_activation_checkpointing"):
            node = self.node(doc, path)
            if node is not None and to_bool(node.value):
                self.put(config, "gradient_checkpointing", True, doc, node)
                return

    def _attention(self, doc: Document, config: TrainingConfig) -> None:
        if config.attn_implementation is not None:
            return
        for key, kind in LEGACY_ATTENTION:
            node = self.node(doc, key)
            if node is not None and to_bool(node.value):
                line, column = node.anchor
                # no key on the origin: a fix must not write a kernel name into the boolean
                origin = Origin("derived", doc.path, line, column, None, f"{NAME} maps `{key}: true` to {kind}")
                config.attn_implementation = Sourced(kind, origin)
                return

    def _fsdp(self, doc: Document, config: TrainingConfig) -> None:
        block = self.node(doc, "fsdp_config")
        options = self.node(doc, "fsdp")
        names = _fsdp_options(options)
        if block is not None and isinstance(block.value, dict) and block.value:
            self.put(config, "fsdp", True, doc, block)
        elif names:
            assert options is not None
            self.put(config, "fsdp", True, doc, options)
        if options is not None:
            sharding = next((n for n in names if n in FSDP_SHARDING), None)
            if sharding is not None:
                self.put(config, "fsdp_sharding", sharding, doc, options)
            if "offload" in names:
                self._offload(doc, config, options, True)
        for path in ("fsdp_config.offload_params", "fsdp_config.fsdp_offload_params"):
            node = self.node(doc, path)
            if node is not None and to_bool(node.value) is not None:
                self._offload(doc, config, node, bool(to_bool(node.value)))
                break

    def _offload(self, doc: Document, config: TrainingConfig, node: Node, on: bool) -> None:
        """FSDP ``CPUOffload(offload_params=True)`` keeps parameters and gradients on the CPU,
        so the optimizer steps there too (torch ``CPUOffload`` docstring)."""
        for name in ("offload_param", "offload_optimizer"):
            self.put(config, name, "cpu" if on else "none", doc, node)

    def _accumulation(self, doc: Document, config: TrainingConfig) -> None:
        """``normalize_config``: accumulation = ``batch_size // micro_batch_size`` when unset."""
        if config.grad_accum_steps is not None or config.batch_size is None:
            return
        total = self.node(doc, "batch_size")
        size = to_int(total.value) if total is not None else None
        if total is None or size is None or not config.batch_size.value:
            return
        steps = size // config.batch_size.value
        line, column = total.anchor
        origin = Origin("derived", doc.path, line, column, total.key, f"batch_size // micro_batch_size = {steps}")
        config.grad_accum_steps = Sourced(steps, origin)

    def _sequence(self, doc: Document, config: TrainingConfig) -> None:
        """The tokens of one micro-batch row on one GPU.

        ``sequence_len`` is only a cap unless the rows are padded or packed to it: the
        collator pads to the longest row (``core/builders/causal.py``: ``padding: True``)
        unless ``pad_to_sequence_len`` (which ``sample_packing`` and ``reward_model``
        default to true; streaming ``pretraining_dataset`` packs too). Context parallelism
        splits each sequence over ``context_parallel_size`` GPUs.
        """
        node = self.node(doc, "sequence_len")
        length = to_int(node.value) if node is not None else None
        if node is None or length is None:
            return
        padded = next(
            (key for key in PADDED_TO_SEQUENCE_LEN if (n := self.node(doc, key)) is not None and _truthy(n.value)),
            None,
        )
        if padded is None:
            return
        line, column = node.anchor
        detail = f"{padded}: every row is filled to sequence_len"
        for key in ("context_parallel_size", "sequence_parallel_degree"):
            split = self.node(doc, key)
            degree = to_int(split.value) if split is not None else None
            if degree is not None and degree > 1:
                length //= degree
                detail += f"; {key} {degree} gives each GPU 1/{degree} of it"
                break
        config.seq_len = Sourced(length, Origin("derived", doc.path, line, column, node.key, detail))


PADDED_TO_SEQUENCE_LEN = ("sample_packing", "pad_to_sequence_len", "reward_model", "pretraining_dataset")


def _truthy(value: Any) -> bool:
    return bool(to_bool(value)) if not isinstance(value, (list, dict)) else bool(value)


def _fsdp_options(node: Node | None) -> list[str]:
    """The TrainingArguments ``fsdp`` options a ``fsdp:`` list (or string) names."""
    if node is None:
        return []
    items = node.value if isinstance(node.value, list) else [node]
    names: list[str] = []
    for item in items:
        value = item.value if isinstance(item, Node) else item
        if isinstance(value, str):
            names.extend(part for part in value.replace(",", " ").split() if part)
    return [n.lower() for n in names]
