"""This framework's ``train_config`` (and ``fsdp_config``) as YAML/JSON.

The finetuning script takes these keys as command-line flags (``fire``); teams keep
them in a file. Keys read upstream in
``src/<package>/configs/training.py`` and ``configs/fsdp.py``: ``use_fp16``
(default False), ``mixed_precision`` (True), ``enable_fsdp`` (False), ``use_peft``
(False), ``quantization`` (None | "4bit" | "8bit"; a boolean in older releases),
``pure_bf16`` (fsdp_config, False). Dotted flags (``fsdp_config.pure_bf16``) and a
nested ``fsdp_config`` block both work.
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...dialects.base import Dialect, count_keys, field, to_bool, to_float
from ...sources import Document

DISTINCTIVE = (
    "use_fp16",
    "enable_fsdp",
    "batch_size_training",
    "use_peft",
    "peft_method",
    "batching_strategy",
    "run_validation",
    "context_length",
    "num_workers_dataloader",
    "val_batch_size",
    "use_fast_kernels",
    "one_gpu",
    "dist_checkpoint_root_folder",
    "gradient_clipping_threshold",
)


class TrainConfig(Dialect):
    flag_keys = (("fp16", "use_fp16"),)
    fields = (
        field("model", "model_name"),
        field("fp16", "use_fp16", convert=to_bool),
        field("fsdp", "enable_fsdp", convert=to_bool),
        field("fsdp_mixed_precision", "mixed_precision", "fsdp_config.mixed_precision", convert=to_bool),
        field("pure_bf16", "pure_bf16", "fsdp_config.pure_bf16", convert=to_bool),
        field("optimizer", "fsdp_config.optimizer", "optimizer"),
        field("max_grad_norm", "gradient_clipping_threshold", convert=to_float),
    )

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        hits = count_keys(keys, DISTINCTIVE)
        if hits >= 2 or (hits == 1 and "model_name" in keys and "quantization" in keys):
            return self.priority + hits
        return 0

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        peft = self.node(doc, "use_peft")
        if peft is not None and to_bool(peft.value) is not None:
            self.put(config, "train_type", "lora" if to_bool(peft.value) else "full", doc, peft)
        quant = self.node(doc, "quantization")
        if quant is not None:
            text = str(quant.value).lower()
            bits = 4 if text == "4bit" else 8 if text in ("8bit", "true") else None
            if bits is not None:
                self.put(config, "quantization_bits", bits, doc, quant)
