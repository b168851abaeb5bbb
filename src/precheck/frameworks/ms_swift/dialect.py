"""This framework's arguments as a YAML/JSON file (``<cli> sft config.yaml``, ``args.json``).

Key names read upstream: 3.x/4.x ``model``, ``torch_dtype``,
``train_type`` (renamed ``tuner_type`` in 4.x), ``fp16``/``bf16``; 2.x
``model_id_or_path``, ``sft_type``, ``dtype``. 3.x-4.x accept a JSON file as the
first argument; 4.x also YAML, whose top-level ``ENV`` block sets environment
variables.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...config import TrainingConfig
from ...dialects.base import Dialect, count_keys, field, origin_of, read_attachments, to_bool, to_float, to_int
from ...dtypes import parse_dtype
from ...provenance import Sourced
from ...sources import Document

DISTINCTIVE = (
    "tuner_type",
    "train_type",
    "sft_type",
    "model_type",
    "template",
    "template_type",
    "lora_rank",
    "target_modules",
    "model_author",
    "attn_impl",
    "tuner_backend",
    "split_dataset_ratio",
    "torch_dtype",
    "system",
    "model_id_or_path",
    "ENV",
)


#: ``deepspeed: zero2`` names a JSON shipped in ``llm/ds_config/`` of the package (3.x
#: ``DeepspeedArguments``): its ``fp16``/``bf16`` are ``"auto"`` (filled by the HF Trainer)
#: and the name says the ZeRO stage and whether it offloads to the CPU
DEEPSPEED_PRESETS = {
    "zero0": (0, False),
    "zero1": (1, False),
    "zero2": (2, False),
    "zero2_offload": (2, True),
    "zero3": (3, False),
    "zero3_offload": (3, True),
    "zero0_autotp": (0, False),
    "zero1_autotp": (1, False),
    "zero2_autotp": (2, False),
}


class MsSwift(Dialect):
    flag_keys = (("fp16", "fp16"), ("bf16", "bf16"), ("torch_dtype", "torch_dtype"))
    fields = (
        field("model", "model", "model_id_or_path"),
        field("torch_dtype", "torch_dtype", "dtype", convert=parse_dtype),
        field("fp16", "fp16", convert=to_bool),
        field("bf16", "bf16", convert=to_bool),
        field("tf32", "tf32", convert=to_bool),
        field("train_type", "train_type", "tuner_type", "sft_type"),
        field("optimizer", "optim"),
        field("gradient_checkpointing", "gradient_checkpointing", convert=to_bool),
        field("max_grad_norm", "max_grad_norm", convert=to_float),
        field("attn_implementation", "attn_impl"),
        field("batch_size", "per_device_train_batch_size", "batch_size", convert=to_int),
        field("grad_accum_steps", "gradient_accumulation_steps", convert=to_int),
        field("seq_len", "max_length", convert=to_int),
    )

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        if not keys & {"model", "model_id_or_path"}:
            return 0
        hits = count_keys(keys, DISTINCTIVE)
        return self.priority + hits if hits >= 2 else 0

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        block = self.node(doc, "ENV")  # 4.x: variables set by the config itself
        if block is not None and isinstance(block.value, dict):
            for name, node in block.value.items():
                if node.value is not None:
                    config.env[name] = Sourced(str(node.value), origin_of(doc, node))
        read_attachments(self, doc, config, env, {"deepspeed": "deepspeed", "fsdp": "fsdp"})
        return config

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        bits = self.node(doc, "quant_bits")
        if bits is not None and isinstance(bits.value, int) and bits.value in (4, 8):
            self.put(config, "quantization_bits", bits.value, doc, bits)
            # QuantizeArguments.__post_init__ (quant_args.py:85-91@3.2.2): unset follows torch_dtype,
            # float16/float32 -> float32, bfloat16 -> bfloat16
            compute = self.node(doc, "bnb_4bit_compute_dtype")
            dtype = parse_dtype(compute.value) if compute is not None and isinstance(compute.value, str) else None
            if compute is not None and dtype is not None:
                self.put(config, "quant_compute_dtype", dtype, doc, compute)
        preset = self.node(doc, "deepspeed")
        if preset is not None and isinstance(preset.value, str) and preset.value in DEEPSPEED_PRESETS:
            stage, offload = DEEPSPEED_PRESETS[preset.value]
            self.put(config, "zero_stage", stage, doc, preset)
            if offload:
                self.put(config, "offload_optimizer", "cpu", doc, preset)
                if stage == 3:
                    self.put(config, "offload_param", "cpu", doc, preset)
