"""HF transformers ``TrainingArguments`` / TRL configs as YAML or JSON.

Covers files whose keys are TrainingArguments fields, including alignment-handbook
and TRL CLI recipes that put model keys (``model_name_or_path``, ``torch_dtype``,
``load_in_4bit``, ``use_peft``) beside the training keys.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...config import TrainingConfig
from ...dialects.base import Dialect, close_key, count_keys, field, read_attachments, to_bool, to_float, to_int
from ...dtypes import parse_dtype, parse_load_dtype
from ...facts import quote
from ...sources import Document
from .keys import REMOVED, TRAINING_ARGUMENTS_KEYS, TRL_CONFIG_KEYS

TRAINING_ARGS = (
    "output_dir",
    "per_device_train_batch_size",
    "per_device_eval_batch_size",
    "gradient_accumulation_steps",
    "learning_rate",
    "num_train_epochs",
    "max_steps",
    "lr_scheduler_type",
    "warmup_ratio",
    "warmup_steps",
    "weight_decay",
    "logging_steps",
    "save_strategy",
    "save_steps",
    "eval_strategy",
    "evaluation_strategy",
    "report_to",
    "fp16",
    "bf16",
    "tf32",
    "optim",
    "max_grad_norm",
    "gradient_checkpointing",
    "half_precision_backend",
)


#: keys of the recipes' model and script arguments (TRL ModelConfig / ScriptArguments,
#: alignment-handbook), read beside TrainingArguments
MODEL_KEYS = (
    "model_name_or_path",
    "model_revision",
    "model_id",
    "torch_dtype",
    "dtype",
    "trust_remote_code",
    "attn_implementation",
    "load_in_4bit",
    "load_in_8bit",
    "bnb_4bit_quant_type",
    "bnb_4bit_compute_dtype",
    "use_bnb_nested_quant",
    "use_peft",
    "lora_r",
    "lora_alpha",
    "lora_dropout",
    "lora_target_modules",
    "lora_modules_to_save",
    "model_init_kwargs",
)


FSDP_STRATEGIES = ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2", "no_shard")


class HfTrainer(Dialect):
    flag_keys = (("fp16", "fp16"), ("bf16", "bf16"), ("torch_dtype", "torch_dtype"))
    fields = (
        field("model", "model_name_or_path", "model_id"),
        field("torch_dtype", "torch_dtype", "dtype", "model_init_kwargs.torch_dtype", convert=parse_load_dtype),
        field("fp16", "fp16", convert=to_bool),
        field("bf16", "bf16", convert=to_bool),
        field("tf32", "tf32", convert=to_bool),
        field("optimizer", "optim"),
        field("gradient_checkpointing", "gradient_checkpointing", "activation_checkpointing", convert=to_bool),
        field("max_grad_norm", "max_grad_norm", convert=to_float),
        field("half_precision_backend", "half_precision_backend"),
        field("attn_implementation", "attn_implementation", "model_init_kwargs.attn_implementation"),
        field("quant_compute_dtype", "bnb_4bit_compute_dtype", convert=parse_dtype),
        field("batch_size", "per_device_train_batch_size", convert=to_int),
        field("grad_accum_steps", "gradient_accumulation_steps", convert=to_int),
        field("seq_len", "max_seq_length", "max_length", convert=to_int),
    )

    known_keys = TRAINING_ARGUMENTS_KEYS | REMOVED | frozenset(MODEL_KEYS)
    #: transformers ``HfArgumentParser.parse_dict`` (``parse_yaml_file``/``parse_json_file``)
    ignores = (
        f'refuses it (HfArgumentParser: "ValueError: {quote("transformers.unused_keys", keys="[...]")}") '
        "unless the script allows extra keys, and then ignores it"
    )

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        read_attachments(self, doc, config, env, {"deepspeed": "deepspeed", "fsdp_config": "fsdp"})
        return config

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        from ...dialects import registered  # the registry's table (the registry imports this module)

        # another framework's file (its declared signature keys), or a component recipe
        if keys & registered.signature_keys or _instantiates_components(doc):
            return 0
        hits = count_keys(keys - _section_keys(self, doc), TRAINING_ARGS)
        return self.priority + hits if hits >= 2 else 0

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        self.read_model_loading(doc, config)
        self._fsdp(doc, config)

    def _fsdp(self, doc: Document, config: TrainingConfig) -> None:
        """``fsdp: "full_shard auto_wrap"`` (a string of options, or a list, or a bool in 5.x).

        transformers 5.23.0 ``TrainingArguments._process_fsdp_args``: the options are split on
        whitespace; ``full_shard``/``shard_grad_op``/``hybrid_shard``/``no_shard`` pick the
        sharding strategy, ``offload`` moves parameters (and the optimizer) to the CPU.
        """
        node = self.node(doc, "fsdp")
        if node is None:
            return
        value = node.value
        if isinstance(value, list):
            options = [str(item.value) for item in value]
        elif isinstance(value, str):
            options = value.split()
        elif to_bool(value) is not None:
            options = ["full_shard"] if to_bool(value) else []
        else:
            return
        self.put(config, "fsdp", bool(options), doc, node)
        strategy = next((o for o in options if o in FSDP_STRATEGIES), None)
        if strategy is not None:
            self.put(config, "fsdp_sharding", strategy, doc, node)
        if "offload" in options:
            self.put(config, "offload_param", "cpu", doc, node)


def _section_keys(dialect: Dialect, doc: Document) -> set[str]:
    """Top-level keys whose value is a section (a mapping). No field of ``TRAINING_ARGS`` is
    one: ``optim: OptimizerNames | str``, ``max_steps: int``, ``output_dir: str | None``
    (``training_args.py:771,779,812@5.24.0``). A file whose ``optim:`` holds ``lr`` and
    ``weight_decay`` (mistral-finetune's ``TrainArgs.optim: OptimArgs``, read by
    simple_parsing) names another parser's field, and is no evidence of TrainingArguments."""
    root = dialect.root(doc)
    return {dialect.normalise_key(k) for k, node in root.items() if isinstance(node.value, dict)}


def _instantiates_components(doc: Document) -> bool:
    """Hydra-style recipes build objects from ``_component_`` / ``_target_`` blocks."""
    for node in doc.mapping().values():
        if isinstance(node.value, dict) and node.value.keys() & {"_component_", "_target_"}:
            return True
    return False


#: fields only TRL's configs (SFTConfig, DPOConfig, GRPOConfig...) and its ModelConfig /
#: ScriptArguments have; read in huggingface/trl ``trl/trainer/*_config.py``
TRL_FIELDS = (
    "packing",
    "dataset_text_field",
    "completion_only_loss",
    "assistant_only_loss",
    "max_seq_length",
    "max_prompt_length",
    "max_completion_length",
    "num_generations",
    "beta",
    "dataset_kwargs",
    "use_peft",
    "lora_r",
    "lora_target_modules",
    "dataset_name",
    "dataset_mixer",
    "chat_template",
)


class Trl(HfTrainer):
    """TRL trainer configs: TrainingArguments plus TRL's own fields."""

    known_keys = HfTrainer.known_keys | frozenset(TRL_FIELDS) | TRL_CONFIG_KEYS

    def score(self, doc: Document) -> int:
        base = super().score(doc)
        if not base:
            return 0
        keys = self.keys(doc)
        if not (count_keys(keys, TRL_FIELDS) or ("max_length" in keys and "model_name_or_path" in keys)):
            return 0
        return 0 if _foreign_keys(keys, self.known_keys) else base + 1


def _foreign_keys(keys: set[str], known: frozenset[str]) -> list[str]:
    """Keys TRL's parser refuses that are no misspelling of one of its own: ``TrlParser``
    (``fail_with_unknown_args=True``) and ``HfArgumentParser.parse_yaml_file`` stop on them, so
    a file that has them is read by another parser, the repository's own (open-instruct's
    ``ArgumentParserPlus`` over ``FlatArguments``: ``with_tracking``, ``checkpointing_steps``),
    and TRL's defaults are not the run's (DESIGN.md: a framework's defaults only where its entry
    point runs). Such a file is read as TrainingArguments keys of a script precheck did not read."""
    unknown = sorted(k for k in keys if k not in known)
    if not unknown:
        return []
    candidates = tuple(sorted(known))
    return [k for k in unknown if close_key(k, candidates) is None]
