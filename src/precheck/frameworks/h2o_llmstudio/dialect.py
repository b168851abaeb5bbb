"""This framework's experiment configs (the ``cfg.yaml`` an experiment saves).

Layout read upstream in ``llm_studio/src/utils/config_utils.py``
``save_config_yaml`` (sub-configs nested under ``architecture``, ``environment``,
``training``...). Defaults from ``python_configs/text_causal_language_modeling_config.py``:
``mixed_precision: True``, ``mixed_precision_dtype: "bfloat16"`` (bfloat16|float16),
``backbone_dtype: "int4"`` (float32|bfloat16|float16|int8|int4).
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...dialects.base import Dialect, count_keys, field, to_bool, to_float, to_index_list
from ...dtypes import parse_dtype
from ...sources import Document

TOP_LEVEL = (
    "architecture",
    "augmentation",
    "dataset",
    "environment",
    "experiment_name",
    "llm_backbone",
    "logging",
    "output_directory",
    "prediction",
    "problem_type",
    "tokenizer",
    "training",
)


class ExperimentConfig(Dialect):
    fields = (
        field("model", "llm_backbone"),
        field("amp", "environment.mixed_precision", convert=to_bool),
        field("amp_dtype", "environment.mixed_precision_dtype", convert=parse_dtype),
        field("torch_dtype", "architecture.backbone_dtype", convert=parse_dtype),
        field("gradient_checkpointing", "architecture.gradient_checkpointing", convert=to_bool),
        field("optimizer", "training.optimizer"),
        field("max_grad_norm", "training.gradient_clip", convert=to_float),
        field("devices", "environment.gpus", convert=to_index_list),
    )

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        if "llm_backbone" not in keys and "problem_type" not in keys:
            return 0
        hits = count_keys(keys, TOP_LEVEL)
        return self.priority + hits if hits >= 4 else 0

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        backbone = self.node(doc, "architecture.backbone_dtype")
        if backbone is not None and str(backbone.value) in ("int4", "int8"):
            self.put(config, "quantization_bits", int(str(backbone.value)[3:]), doc, backbone)
        lora = self.node(doc, "training.lora")
        if lora is not None and to_bool(lora.value) is not None:
            self.put(config, "train_type", "lora" if to_bool(lora.value) else "full", doc, lora)
