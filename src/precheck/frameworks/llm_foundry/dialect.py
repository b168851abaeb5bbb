"""This framework's training YAML (``composer train.py yamls/pretrain/mpt-125m.yaml``).

``scripts/train/train.py`` calls ``train_from_yaml``: OmegaConf loads the file (and the
``key=value`` overrides after it) into ``TrainConfig`` (``llmfoundry/utils/config_utils.py``;
its fields and defaults are in the release data, :mod:`.schema`), and
``llmfoundry/command_utils/train.py`` ``train`` hands them to Composer's ``Trainer``:
``precision=train_cfg.precision`` and ``parallelism_config={'fsdp': fsdp_config, ...}``
(the flows the data records).

Read upstream (llm-foundry 0.22.0, Composer ``mosaicml`` 0.32.1):

- ``precision`` (``TrainConfig``: ``str = 'amp_bf16'``) is Composer's ``Precision``
  (``composer/core/precision.py``: ``fp32``, ``amp_fp16``, ``amp_bf16``, ``amp_fp8``; a
  ``StringEnum``, read case-insensitively, ``composer/utils/string_enum.py`` ``_missing_``).
  ``get_precision_context``: ``amp_fp16`` → ``torch.autocast('cuda')`` (fp16) with a GradScaler
  (``trainer.py``), ``amp_bf16`` → ``torch.autocast('cuda', dtype=torch.bfloat16)``, ``fp32``
  → autocast disabled, ``amp_fp8`` → Transformer Engine's ``fp8_autocast`` when TE is installed
  and ``get_device_capability() >= (8, 9)``, else ``RuntimeError('AMP_FP8 precision is used but
  current device does not support it.')`` / ``ImportError`` (TE missing).
- ``fsdp_config`` (default None: no FSDP) is Composer's ``FSDPConfig``; its ``mixed_precision``
  (``composer/utils/parallelism.py``: ``str = 'DEFAULT'``) goes to ``get_mixed_precision``
  (``composer/distributed/mosaic_parallelism.py``), upper-cased: ``FULL`` → no
  ``MixedPrecision`` dtypes (fp32); ``DEFAULT`` → param/buffer in the precision's dtype, reduce
  fp32; ``PURE`` → param, reduce and buffer all in the precision's dtype (``_get_torch_dtype``:
  ``amp_bf16`` → bf16, ``amp_fp16`` → fp16, ``fp32`` → fp32, ``amp_fp8`` → bf16); a mapping
  gives ``param_dtype``/``reduce_dtype``/``buffer_dtype`` itself; anything else raises
  ``ValueError: Unable to interpret mixed_precision=...``.
- ``model``: ``hf_causal_lm`` loads ``pretrained_model_name_or_path`` in float32
  (``models/hf/hf_base.py``: ``torch_dtype=_MASTER_WEIGHTS_PRECISION``, ``'float32'`` in
  ``models/consts.py``), ``use_flash_attention_2: true`` sets ``attn_implementation =
  'flash_attention_2'``; MPT (``mpt_causal_lm``) reads ``attn_config.attn_impl`` (``flash``
  calls the flash-attn 2 kernels, ``models/layers/attention.py`` ``flash_attn_fn``).
  ``model.master_weights_dtype`` (``bf16``/``bfloat16``/``f16``/``float16``) casts the built
  model (``utils/builders.py`` ``build_composer_model``: ``model.to(dtype=...)``), and under
  FSDP ``process_init_device`` turns the policy's ``param_dtype`` off and keeps low-precision
  gradients (``utils/config_utils.py:601``).
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...dialects.base import Dialect, count_keys, field, origin_of
from ...provenance import Origin, Sourced
from ...sources import Document, Node

#: top-level keys only this framework's training YAML has (``TrainConfig`` fields)
DISTINCTIVE = (
    "max_duration",
    "global_train_batch_size",
    "device_train_microbatch_size",
    "device_eval_batch_size",
    "device_train_batch_size",
    "train_loader",
    "eval_loader",
    "eval_first",
    "eval_subset_num_batches",
    "console_log_interval",
    "save_num_checkpoints_to_keep",
    "autoresume",
    "fsdp_config",
)


#: ``build_composer_model`` (``utils/builders.py:262``@0.22.0) casts the model to these
MASTER_WEIGHTS = {"f16": "float16", "float16": "float16", "bf16": "bfloat16", "bfloat16": "bfloat16"}


def _text(node: Node | None) -> str | None:
    return node.value if node is not None and isinstance(node.value, str) else None


class TrainYaml(Dialect):
    fields = (
        field("precision", "precision"),
        field("model", "model.pretrained_model_name_or_path", "tokenizer.name"),
        field("attn_implementation", "model.attn_implementation"),
    )

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        hits = count_keys(keys, DISTINCTIVE)
        model = doc.mapping().get("model")
        named = model is not None and isinstance(model.value, dict) and "name" in model.value
        if hits >= 3 or (hits >= 2 and named):
            return self.priority + hits
        return 0

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        fsdp = self.node(doc, "fsdp_config")
        if fsdp is not None and isinstance(fsdp.value, dict):  # `fsdp_config:` left empty is None: no FSDP
            self.put(config, "fsdp", True, doc, fsdp)
            sharding = self.node(doc, "fsdp_config.sharding_strategy")
            if sharding is not None and isinstance(sharding.value, str):
                self.put(config, "fsdp_sharding", sharding.value, doc, sharding)
            else:
                config.fsdp_sharding = Sourced(
                    "FULL_SHARD", Origin.default("FSDPConfig.sharding_strategy='FULL_SHARD'")
                )
        master = self.node(doc, "model.master_weights_dtype")
        if master is not None and isinstance(master.value, str) and master.value in MASTER_WEIGHTS:
            self.put(config, "torch_dtype", MASTER_WEIGHTS[master.value], doc, master)
        flash = self.node(doc, "model.use_flash_attention_2")
        if flash is not None and flash.value is True and config.attn_implementation is None:
            config.attn_implementation = Sourced("flash_attention_2", _keyless(doc, flash, "use_flash_attention_2"))
        impl = self.node(doc, "model.attn_config.attn_impl")
        if impl is not None and _text(impl) == "flash" and config.attn_implementation is None:
            config.attn_implementation = Sourced(
                "flash_attention_2", _keyless(doc, impl, "MPT attn_impl: flash calls the flash-attn 2 kernels")
            )


def _keyless(doc: Document, node: Node, detail: str) -> Origin:
    """The node's place, without its key: the generic fix (``sdpa``) is not a value this key takes."""
    origin = origin_of(doc, node)
    return Origin("derived", origin.path, origin.line, origin.column, None, detail, origin.written, origin.format)
