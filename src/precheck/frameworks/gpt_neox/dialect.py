"""gpt-neox's config set (``configs/*.yml``): NeoXArgs' own keys beside DeepSpeed's.

Read upstream (EleutherAI/gpt-neox ``megatron/neox_arguments/``@ea7aefd):

- ``precision`` (``neox_args.py:102``: ``Literal["fp16", "fp32", "bfloat16"] = None``), and the
  DeepSpeed sections ``fp16``/``bf16`` (``deepspeed_args.py:94``/``:101``: dicts, default None,
  in DeepSpeed's own semantics: ``enabled``, ``loss_scale`` 0 = dynamic...).
- ``calculate_derived`` (``arguments.py:966-1011``): ``fp16.enabled`` with no ``precision``
  makes it ``fp16`` (``bf16.enabled``: ``bfloat16``); either set beside a different
  ``precision`` fails ``assert`` (``DeepSpeed fp16 field was set but precision conflicts``).
  ``precision: fp16`` turns ``fp16.enabled`` on (the written section kept, or DeepSpeed's
  defaults); ``precision: bfloat16`` adds ``bf16: {enabled: true}`` when no ``bf16`` section is
  written; anything else is ``fp32``.
- ``params_dtype`` (``arguments.py:733``): the model is built in ``torch.half`` for ``fp16``,
  ``torch.bfloat16`` for ``bfloat16``, float32 otherwise.
- ``attention_config`` (``neox_args.py:234``: ``[[["flash"], 12]]`` is 12 layers of ``flash``,
  expanded by ``megatron/utils.py`` ``expand_attention_types``): ``flash`` calls the flash-attn
  2 kernels (``arguments.py:1150`` checks ``flash-attn``'s version).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...config import TrainingConfig
from ...dialects.base import count_keys, origin_of
from ...dialects.deepspeed import DeepSpeed
from ...provenance import Origin, Sourced
from ...sources import Document, Node

#: top-level keys only NeoXArgs reads (``neox_args.py``), either spelling
DISTINCTIVE = (
    "pipe_parallel_size",
    "model_parallel_size",
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "seq_length",
    "max_position_embeddings",
    "pos_emb",
    "attention_config",
    "train_iters",
    "lr_decay_iters",
    "data_impl",
    "norm",
    "output_layer_parallelism",
    "checkpoint_activations",
    "partition_activations",
    "init_method",
    "output_layer_init_method",
    "no_weight_tying",
    "gpt_j_residual",
)

#: ``precision`` → the DeepSpeed section it turns on, and the model's dtype (``params_dtype``)
PRECISIONS = {"fp16": ("fp16", "float16"), "bfloat16": ("bf16", "bfloat16"), "fp32": (None, "float32")}

#: a file checked on its own that states no precision
UNSTATED = (
    "this file sets no precision (nor fp16/bf16): another file of the config set deepy.py merges may; "
    "check the launch (python ./deepy.py train.py a.yml b.yml) to read the whole set"
)


def _flat(value: Any) -> Iterator[Any]:
    if isinstance(value, Node):
        yield from _flat(value.value)
    elif isinstance(value, list):
        for item in value:
            yield from _flat(item)
    else:
        yield value


class NeoXConfig(DeepSpeed):
    """A gpt-neox config (or the launch's merged config set)."""

    def normalise_key(self, key: str) -> str:  # NeoXArgs reads ``num-layers`` as ``num_layers``
        return key.replace("-", "_")

    def score(self, doc: Document) -> int:
        if doc.format == "shell":
            # deepy.py takes config files, never these keys as flags, and names its launches'
            # dialect itself (``launch.py``): flags that look like NeoXArgs are another program's,
            # most often Megatron-LM's ``pretrain_gpt.py`` (the arguments gpt-neox inherited)
            return 0
        keys = {k.replace("-", "_") for k in self.root(doc)}
        hits = count_keys(keys, DISTINCTIVE)
        return self.priority + hits if hits >= 3 else 0

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        super().finish(doc, config)
        node = self.node(doc, "precision")
        written = node.value if node is not None and isinstance(node.value, str) else None
        derived = written
        for key, word in (("fp16", "fp16"), ("bf16", "bfloat16")):
            item: Sourced[bool] | None = getattr(config, key)
            if item is not None and item.value and derived is None:
                derived = word
        if written in PRECISIONS and node is not None:
            section, dtype = PRECISIONS[written]
            origin = _keyless(origin_of(doc, node))
            if section == "fp16" or (section == "bf16" and self.node(doc, "bf16") is None):
                detail = f"precision: {written} enables DeepSpeed's {section} (NeoXArgs.calculate_derived)"
                setattr(config, section, Sourced(True, origin.derived(detail)))
            config.torch_dtype = Sourced(dtype, origin.derived(f"precision: {written}: NeoXArgs.params_dtype"))
        elif derived in PRECISIONS:
            item = config.fp16 if derived == "fp16" else config.bf16
            assert item is not None
            dtype = PRECISIONS[derived][1]
            config.torch_dtype = Sourced(dtype, item.origin.derived(f"NeoXArgs derives precision {derived}"))
        elif doc.format != "shell":
            # one file of a config set: another file deepy.py reads beside it may set the precision
            config.torch_dtype = Sourced("auto", Origin.default(UNSTATED))
        attention = self.node(doc, "attention_config")
        if attention is not None and "flash" in set(_flat(attention)):
            origin = _keyless(origin_of(doc, attention))
            detail = "attention_config flash: gpt-neox calls the flash-attn 2 kernels"
            config.attn_implementation = Sourced("flash_attention_2", origin.derived(detail))


def _keyless(origin: Origin) -> Origin:
    """The key's place, without its key: the generic fixes (``float32``, ``sdpa``) are not
    values ``precision``/``attention_config`` take."""
    return Origin(
        "derived", origin.path, origin.line, origin.column, None, origin.detail, origin.written, origin.format
    )
