"""This framework's training flags (0.11.0, ``cli/train_sft.py``; the same ``--ds.*`` and
``--model.*`` groups in ``train_dpo.py`` and ``train_rm.py``), mapped onto the model:

- ``--ds.param_dtype bf16|fp16`` (default ``bf16``): ``models/actor.py`` loads the model in it
  (``from_pretrained(torch_dtype=convert_to_torch_dtype(param_dtype))``) and
  ``utils/deepspeed/deepspeed_utils.py`` ``get_train_ds_config`` writes the DeepSpeed config
  from it: ``"bf16": {"enabled": param_dtype == "bf16"}``, ``"fp16": {"enabled": param_dtype ==
  "fp16"}``, ``zero_optimization.stage`` from ``--ds.zero_stage`` (default 2),
  ``offload_optimizer.device`` ``cpu`` with ``--ds.adam_offload``, ``gradient_clipping`` from
  ``--max_norm`` (default 1.0). That config is attached to the run as its DeepSpeed file, so
  the DeepSpeed engine's own rules resolve it.
- ``--ds.lora.rank N`` (default 0): ``get_peft_model`` when N > 0 (LoRA), else a full fine-tune;
  ``--ds.load_in_4bit``: a 4-bit NF4 base with ``bnb_4bit_compute_dtype=torch.bfloat16`` (the
  actor asserts ``param_dtype == "bf16"``).
- ``--model.model_name_or_path``, ``--model.gradient_checkpointing_enable``,
  ``--train.micro_batch_size`` (per GPU, default 8), ``--data.max_len`` (default 2048),
  ``--ds.attn_implementation`` (default ``flash_attention_2``); ``train_ppo_ray`` names the
  trained model ``--actor.model_name_or_path`` and ``--actor.gradient_checkpointing_enable``.
- ``--ds.packing_samples`` replaces an attention without ``flash_attention`` in its name by
  ``flash_attention_2`` after parsing (``cli/train_sft.py:324-328@0.11.2``, the same in
  ``train_dpo.py:359``, ``train_rm.py:336``, ``train_ppo_ray.py:699-704``);
  ``train_ppo_ray`` turns packing on itself for ``--train.dynamic_batch_enable``
  (``train_ppo_ray.py:691-694@0.11.2``).
"""

from __future__ import annotations

from dataclasses import replace

from ...config import TrainingConfig
from ...dialects.base import Dialect, field, origin_of, to_bool, to_int
from ...provenance import Origin, Sourced
from ...sources import Document

#: ``--ds.param_dtype`` → the dtype the model is loaded and trained in
PARAM_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def param_dtype(config: TrainingConfig) -> str:
    """The dtype ``--ds.param_dtype`` loads and trains in (its default bf16)."""
    written = str(config.precision.value).strip().lower() if config.precision is not None else "bf16"
    return PARAM_DTYPES.get(written, "bfloat16")


class OpenRlhf(Dialect):
    fields = (
        field("model", "model.model_name_or_path", "actor.model_name_or_path"),
        # one precision string (bf16 or fp16: argparse refuses anything else)
        field("precision", "ds.param_dtype"),
        field(
            "gradient_checkpointing",
            "model.gradient_checkpointing_enable",
            "actor.gradient_checkpointing_enable",
            convert=to_bool,
        ),
        field("attn_implementation", "ds.attn_implementation"),
        field("batch_size", "train.micro_batch_size", convert=to_int),
        field("seq_len", "data.max_len", convert=to_int),
    )
    #: argparse converts its own values (``type=int``, ``store_true``)
    converts_string_booleans = True

    def score(self, doc: Document) -> int:
        return 0  # command lines only: named by its entry module

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        rank = self.node(doc, "ds.lora.rank")
        rank_value = to_int(rank.value) if rank is not None else None
        if rank is not None and rank_value is not None:
            self.put(config, "train_type", "lora" if rank_value > 0 else "full", doc, rank)
        else:
            config.train_type = Sourced("full", Origin.default("default --ds.lora.rank 0: a full fine-tune"))
        four_bit = self.node(doc, "ds.load_in_4bit")
        if four_bit is not None and to_bool(four_bit.value):
            self.put(config, "quantization_bits", 4, doc, four_bit)
            self.put(config, "quant_compute_dtype", "bfloat16", doc, four_bit)
        elif four_bit is not None and to_bool(four_bit.value) is False:
            self.put(config, "quantization_off", True, doc, four_bit)  # (its store_true default too)
        self._packing_attention(doc, config)
        engines = self.node(doc, "vllm.num_engines")
        if engines is not None and to_int(engines.value) is not None:
            # train_ppo_ray's generation engines (read by rule PC718), under the flag as written
            config.keys["vllm.num_engines"] = Sourced(to_int(engines.value), origin_of(doc, engines))
        config.attached["deepspeed"] = self._deepspeed(doc, config)

    def _packing_attention(self, doc: Document, config: TrainingConfig) -> None:
        """``--ds.packing_samples`` (or ``train_ppo_ray``'s ``--train.dynamic_batch_enable``,
        which turns it on) replaces a non-FlashAttention choice by ``flash_attention_2``."""
        switches = [self.node(doc, key) for key in ("ds.packing_samples", "train.dynamic_batch_enable")]
        switch = next((n for n in switches if n is not None and to_bool(n.value) is True), None)
        if switch is None:
            return
        chosen = config.attn_implementation
        if chosen is not None and "flash_attention" in str(chosen.value):
            return
        written = f"`{chosen.value}`" if chosen is not None else "the default attention"
        detail = (
            "cli/train_sft.py:324-328, train_ppo_ray.py:699-704@0.11.2: packing replaces "
            f"{written} by flash_attention_2 (packed sequences need FlashAttention's varlen kernels)"
        )
        # no key: a fix must not write an attention into the packing switch
        origin = replace(origin_of(doc, switch).derived(detail), key=None)
        config.attn_implementation = Sourced("flash_attention_2", origin)

    def _deepspeed(self, doc: Document, config: TrainingConfig) -> TrainingConfig:
        """The DeepSpeed config ``get_train_ds_config`` builds from the flags."""
        ds = TrainingConfig(dialect="deepspeed", framework="deepspeed", path=doc.path)
        dtype_node = self.node(doc, "ds.param_dtype")
        dtype = param_dtype(config)
        for name, wanted in (("bf16", "bfloat16"), ("fp16", "float16")):
            detail = f'get_train_ds_config: "{name}": {{"enabled": param_dtype == "{name[:4]}"}}'
            if dtype_node is not None:
                origin = origin_of(doc, dtype_node).derived(detail)
            else:
                origin = Origin.default(f"default --ds.param_dtype bf16; {detail}")
            setattr(ds, name, Sourced(dtype == wanted, origin))
        stage = self.node(doc, "ds.zero_stage")
        stage_value = to_int(stage.value) if stage is not None else None
        if stage is not None and stage_value is not None:
            ds.zero_stage = Sourced(stage_value, origin_of(doc, stage))
        else:
            ds.zero_stage = Sourced(2, Origin.default("default --ds.zero_stage 2"))
        offload = self.node(doc, "ds.adam_offload")
        if offload is not None and to_bool(offload.value):
            ds.offload_optimizer = Sourced("cpu", origin_of(doc, offload))
        return ds
