"""This framework's ``config.json`` / ``config.toml`` / ``config.env``.

Keys may be spelled with or without a leading ``--`` (the framework's
``json_file.normalize_args`` adds it when missing), so both spellings map to one field;
findings keep the user's spelling. Read upstream:
``helpers/configuration/cmd_args.py`` (``--mixed_precision`` bf16|fp16|no, fp8 from
2.2.0, default bf16), ``helpers/training/optimizer_param.py`` (optimizer table).
"""

from __future__ import annotations

from ...dialects.base import Dialect, count_keys, field, to_bool, to_float, to_int
from ...sources import Document, Node

DISTINCTIVE = (
    "model_family",
    "pretrained_model_name_or_path",
    "base_model_precision",
    "base_model_default_dtype",
    "gradient_precision",
    "data_backend_config",
    "lora_type",
    "lycoris_config",
    "quantize_via",
    "flow_schedule_shift",
    "validation_prompt",
    "checkpoint_step_interval",
    "checkpointing_steps",
    "train_batch_size",
    "optimizer",
    "mixed_precision",
    "model_type",
)


#: ``config.env`` variables ``train.sh`` turns into flags (upstream ``train.sh``,
#: ``config/config.env``); the rest are the flag's name in upper case
ENV_KEYS = {
    "MODEL_NAME": "pretrained_model_name_or_path",
    "USE_GRADIENT_CHECKPOINTING": "gradient_checkpointing",
    "TRAINING_NUM_PROCESSES": "num_processes",
}


class ArgsFile(Dialect):
    flag_keys = (("mixed_precision", "mixed_precision"),)
    #: ``helpers/configuration/json_file.py`` ``normalize_args``: ``value == "true"`` becomes a
    #: bare ``--key`` flag and ``value == "false"`` is skipped, exactly as the booleans are
    converts_string_booleans = True
    fields = (
        field("model", "pretrained_model_name_or_path"),
        field("mixed_precision", "mixed_precision"),
        field("optimizer", "optimizer"),
        field("gradient_precision", "gradient_precision"),
        field("gradient_checkpointing", "gradient_checkpointing", convert=to_bool),
        field("max_grad_norm", "max_grad_norm", convert=to_float),
        field("train_type", "model_type"),
        field("batch_size", "train_batch_size", convert=to_int),
        field("grad_accum_steps", "gradient_accumulation_steps", convert=to_int),
        field("num_processes", "num_processes", convert=to_int),
    )

    def root(self, doc: Document) -> dict[str, Node]:
        """Saved templates nest the arguments: ``{"_metadata": ..., "config": {...}}``."""
        top = doc.mapping()
        inner = top.get("config")
        if "_metadata" in top and inner is not None and isinstance(inner.value, dict):
            return inner.value
        return top

    def normalise_key(self, key: str) -> str:
        if key.isupper():  # config.env: the launcher's variable for the flag
            return ENV_KEYS.get(key, key.lower())
        return key[2:] if key.startswith("--") else key

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        if doc.format == "env":  # a full old-style config.env, not one that only sets the launcher
            return self.priority + count_keys(keys, DISTINCTIVE) if keys & {"mixed_precision", "optimizer"} else 0
        if not keys & {"model_family", "data_backend_config"}:
            return 0
        return self.priority + count_keys(keys, DISTINCTIVE)
