"""This framework's training configs (``<cli> train cfg.yaml``).

Read upstream (``src/<package>``, 0.9.x up to 0.9.6.dev0):

- ``hparams/parser.py`` ``read_args`` loads a ``.yaml``/``.yml``/``.json`` file with
  OmegaConf (command-line ``key=value`` pairs merged over it) and ``_parse_train_args``
  hands the dict to ``HfArgumentParser([ModelArguments, DataArguments, TrainingArguments,
  FinetuningArguments, GeneratingArguments]).parse_dict(args, allow_extra_keys=...)``,
  where ``allow_extra_keys = is_env_enabled("ALLOW_EXTRA_ARGS")``. transformers'
  ``parse_dict`` then refuses every key no dataclass declares: ``ValueError: Some keys are
  not used by the HfArgumentParser: ['bf_16']``. Hence ``closed_keys``.
- ``TrainingArguments`` is ``Seq2SeqTrainingArguments`` plus the framework's
  ``RayArguments`` (``ray_num_workers``...) and fp8 fields; ``MegatronBridgeArguments``
  (``hparams/megatron_bridge_args.py``) and mcore_adapter's arguments (``USE_MCA=1``) add
  Megatron parallelism keys.
- ``model_name_or_path`` is required (``ModelArguments.__post_init__``: "Please provide
  `model_name_or_path`."); ``finetuning_type`` defaults to ``lora``, ``stage`` to ``sft``.
- ``flash_attn`` (``auto``/``disabled``/``sdpa``/``fa2``/``fa3``) picks the attention
  kernel (``model/model_utils/attention.py`` ``configure_attn_implementation``);
  ``quantization_bit`` + ``quantization_method`` (``bnb``; ``bitsandbytes`` in older 0.9.x)
  quantize on the fly (``model/model_utils/quantization.py``).
- ``deepspeed`` is TrainingArguments' path to a DeepSpeed JSON (a reference).

Its v1 (``USE_V1=1``, ``src/<package>/v1``) reads a different, still
changing schema (``model``, ``model_class``, ``dist_config``, ``peft_config``,
``quant_config``, ``micro_batch_size``): recognised and mapped, but not linted for
unknown keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...config import TrainingConfig
from ...dialects.base import (
    Dialect,
    Priority,
    count_keys,
    field,
    looks_like_path,
    origin_of,
    read_attachments,
    to_bool,
    to_float,
    to_int,
)
from ...facts import quote
from ...provenance import Origin, Sourced
from ...sources import Document, Node, SourceNote
from ..hf_trainer.keys import REMOVED, TRAINING_ARGUMENTS_KEYS

#: environment variables the framework reads that change how a file is parsed or run
PARSING_ENV = ("ALLOW_EXTRA_ARGS", "USE_MCA", "USE_MEGATRON_BRIDGE", "USE_V1", "FORCE_TORCHRUN")

#: ``ModelArguments`` (with its Quantization/Processor/Export/KTransformers/vLLM/SGLang
#: parents), read from the CLI's ``train -h`` of 0.9.4-0.9.6.dev0 and
#: ``hparams/model_args.py``; older spellings kept (``new_special_tokens``,
#: ``image_resolution``, ``video_resolution``, ``use_cache``)
MODEL_ARGUMENTS = (
    "model_name_or_path",
    "adapter_name_or_path",
    "adapter_folder",
    "cache_dir",
    "use_fast_tokenizer",
    "resize_vocab",
    "split_special_tokens",
    "add_tokens",
    "add_special_tokens",
    "new_special_tokens",
    "new_special_tokens_config",
    "init_special_tokens",
    "model_revision",
    "low_cpu_mem_usage",
    "rope_scaling",
    "flash_attn",
    "shift_attn",
    "mixture_of_depths",
    "use_unsloth",
    "use_unsloth_gc",
    "enable_liger_kernel",
    "moe_aux_loss_coef",
    "disable_gradient_checkpointing",
    "use_reentrant_gc",
    "upcast_layernorm",
    "upcast_lmhead_output",
    "train_from_scratch",
    "infer_backend",
    "offload_folder",
    "use_cache",
    "use_kv_cache",
    "use_v1_kernels",
    "infer_dtype",
    "hf_hub_token",
    "ms_hub_token",
    "om_hub_token",
    "print_param_status",
    "trust_remote_code",
    "quantization_method",
    "quantization_bit",
    "quantization_type",
    "double_quantization",
    "quantization_device_map",
    "image_resolution",
    "video_resolution",
    "image_max_pixels",
    "image_min_pixels",
    "image_do_pan_and_scan",
    "crop_to_patches",
    "video_max_pixels",
    "video_min_pixels",
    "video_fps",
    "video_maxlen",
    "use_audio_in_video",
    "audio_sampling_rate",
    "export_dir",
    "export_size",
    "export_device",
    "export_quantization_bit",
    "export_quantization_dataset",
    "export_quantization_nsamples",
    "export_quantization_maxlen",
    "export_legacy_format",
    "export_hub_model_id",
    "use_kt",
    "kt_optimize_rule",
    "kt_cpu_activation",
    "kt_weight_path",
    "kt_non_expert_weight_path",
    "kt_config",
    "cpu_infer",
    "chunk_size",
    "mode",
    "kt_maxlen",
    "kt_use_cuda_graph",
    "kt_mode",
    "kt_force_think",
    "vllm_maxlen",
    "vllm_gpu_util",
    "vllm_enforce_eager",
    "vllm_max_lora_rank",
    "vllm_config",
    "sglang_maxlen",
    "sglang_mem_fraction",
    "sglang_tp_size",
    "sglang_config",
    "sglang_lora_backend",
    "fp8",
    "fp8_backend",
    "fp8_enable_fsdp_float8_all_gather",
)

#: ``DataArguments`` (``hparams/data_args.py``)
DATA_ARGUMENTS = (
    "template",
    "dataset",
    "eval_dataset",
    "dataset_dir",
    "media_dir",
    "cutoff_len",
    "train_on_prompt",
    "mask_history",
    "streaming",
    "buffer_size",
    "mix_strategy",
    "interleave_probs",
    "overwrite_cache",
    "preprocessing_batch_size",
    "preprocessing_num_workers",
    "max_samples",
    "eval_num_beams",
    "ignore_pad_token_for_loss",
    "val_size",
    "eval_on_each_dataset",
    "packing",
    "neat_packing",
    "tool_format",
    "default_system",
    "enable_thinking",
    "tokenized_path",
    "data_shared_file_system",
)

#: the framework's additions to ``Seq2SeqTrainingArguments`` (``hparams/training_args.py``:
#: ``RayArguments``, fp8 and ``overwrite_output_dir``, which transformers 5 dropped)
TRAINING_EXTRAS = (
    "ray_run_name",
    "ray_storage_path",
    "ray_storage_filesystem",
    "ray_num_workers",
    "ray_init_kwargs",
    "resources_per_worker",
    "placement_strategy",
    "master_addr",
    "master_port",
    "overwrite_output_dir",
)

#: ``FinetuningArguments`` with its Freeze/LoRA/OFT/RLHF/GaLore/APOLLO/BAdam/SwanLab parents
#: (``hparams/finetuning_args.py``); ``num_layer_trainable``/``name_module_trainable``/
#: ``dpo_*`` are the 0.5-0.8 spellings
FINETUNING_ARGUMENTS = (
    "stage",
    "finetuning_type",
    "pure_bf16",
    "freeze_trainable_layers",
    "freeze_trainable_modules",
    "freeze_extra_modules",
    "num_layer_trainable",
    "name_module_trainable",
    "additional_target",
    "module_dropout",
    "oft_rank",
    "oft_block_size",
    "oft_target",
    "create_new_adapter",
    "lora_alpha",
    "lora_dropout",
    "lora_rank",
    "lora_target",
    "loraplus_lr_ratio",
    "loraplus_lr_embedding",
    "use_rslora",
    "use_dora",
    "pissa_init",
    "pissa_iter",
    "pissa_convert",
    "pref_beta",
    "pref_ftx",
    "pref_bco_weight",
    "pref_loss",
    "dpo_beta",
    "dpo_loss",
    "dpo_ftx",
    "dpo_label_smoothing",
    "kto_chosen_weight",
    "kto_rejected_weight",
    "simpo_gamma",
    "ppo_buffer_size",
    "ppo_epochs",
    "ppo_score_norm",
    "ppo_target",
    "ppo_whiten_rewards",
    "ref_model",
    "ref_model_adapters",
    "ref_model_quantization_bit",
    "reward_model",
    "reward_model_adapters",
    "reward_model_quantization_bit",
    "reward_model_type",
    "ld_alpha",
    "use_galore",
    "galore_target",
    "galore_rank",
    "galore_update_interval",
    "galore_scale",
    "galore_proj_type",
    "galore_layerwise",
    "use_apollo",
    "apollo_target",
    "apollo_rank",
    "apollo_update_interval",
    "apollo_scale",
    "apollo_proj",
    "apollo_proj_type",
    "apollo_scale_type",
    "apollo_layerwise",
    "apollo_scale_front",
    "use_badam",
    "badam_mode",
    "badam_start_block",
    "badam_switch_mode",
    "badam_switch_interval",
    "badam_update_ratio",
    "badam_mask_mode",
    "badam_verbose",
    "use_swanlab",
    "swanlab_project",
    "swanlab_workspace",
    "swanlab_run_name",
    "swanlab_mode",
    "swanlab_api_key",
    "swanlab_logdir",
    "swanlab_lark_webhook_url",
    "swanlab_lark_secret",
    "use_llama_pro",
    "use_adam_mini",
    "use_mca",
    "use_muon",
    "use_dft_loss",
    "use_asft_loss",
    "asft_alpha",
    "use_eaft_loss",
    "eaft_alpha",
    "freeze_vision_tower",
    "freeze_multi_modal_projector",
    "freeze_language_model",
    "train_mm_proj_only",
    "compute_accuracy",
    "disable_shuffling",
    "early_stopping_steps",
    "plot_loss",
    "include_effective_tokens_per_second",
)

#: ``GeneratingArguments`` (``hparams/generating_args.py``)
GENERATING_ARGUMENTS = (
    "do_sample",
    "temperature",
    "top_p",
    "top_k",
    "num_beams",
    "max_length",
    "max_new_tokens",
    "repetition_penalty",
    "length_penalty",
    "skip_special_tokens",
)

#: ``EvaluationArguments`` (``hparams/evaluation_args.py:23-56@0.9.3``): the CLI's ``eval`` command
#: parses a file with them (``_EVAL_ARGS``, ``hparams/parser.py:54@0.9.3``), as the framework's own
#: ``examples/train_lora/llama3_lora_eval.yaml`` does
EVALUATION_ARGUMENTS = ("task", "task_dir", "batch_size", "seed", "lang", "n_shot", "save_dir", "download_mode")

#: ``MegatronBridgeArguments`` (``hparams/megatron_bridge_args.py``, ``USE_MEGATRON_BRIDGE=1``);
#: mcore_adapter's ``TrainingArguments`` (``USE_MCA=1``) takes the same parallelism keys
MEGATRON_ARGUMENTS = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "expert_model_parallel_size",
    "context_parallel_size",
    "virtual_pipeline_model_parallel_size",
    "sequence_parallel",
    "recompute_granularity",
    "recompute_method",
    "recompute_num_layers",
    "account_for_embedding_in_pipeline_split",
    "account_for_loss_in_pipeline_split",
    "bias_activation_fusion",
    "apply_rope_fusion",
    "masked_softmax_fusion",
    "cross_entropy_loss_fusion",
    "moe_grouped_gemm",
    "moe_token_dispatcher_type",
    "calculate_per_token_loss",
    "use_distributed_optimizer",
    "overlap_param_gather",
    "overlap_grad_reduce",
    "use_packed_sequences",
    "mixed_precision",
    "megatron_pretrained_checkpoint",
    "export_hf_on_finish",
    "extra_config",
)

#: keys only the Megatron backends read: a file with one is written for USE_MCA /
#: USE_MEGATRON_BRIDGE (``context_parallel_size``/``sequence_parallel`` are not proof:
#: context-parallel SFT reads them under the HF Trainer too)
MEGATRON_ONLY = frozenset(MEGATRON_ARGUMENTS) - {"context_parallel_size", "sequence_parallel"}

#: keys that mark this framework's (v0) training file beside ``model_name_or_path``
DISTINCTIVE = (
    "stage",
    "finetuning_type",
    "template",
    "dataset",
    "dataset_dir",
    "cutoff_len",
    "lora_target",
    "lora_rank",
    "quantization_bit",
    "flash_attn",
    "pure_bf16",
    "max_samples",
    "overwrite_cache",
    "plot_loss",
    "preprocessing_num_workers",
)

#: keys of its v1 (``src/<package>/v1/config``)
V1_KEYS = (
    "model_class",
    "dist_config",
    "kernel_config",
    "peft_config",
    "quant_config",
    "train_dataset",
    "micro_batch_size",
    "global_batch_size",
    "cp_mode",
    "cp_size",
    "sample_backend",
)

#: ``flash_attn`` → the ``attn_implementation`` it requests (``configure_attn_implementation``;
#: ``auto`` requests none: transformers' default). v1 spells the kernel names directly.
FLASH_ATTN = {
    "disabled": "eager",
    "eager": "eager",
    "sdpa": "sdpa",
    "fa2": "flash_attention_2",
    "fa3": "flash_attention_3",
    "flash_attention_2": "flash_attention_2",
    "flash_attention_3": "flash_attention_3",
}


#: blocks only v1 has (``micro_batch_size``/``global_batch_size`` are Megatron's names too)
V1_MARKERS = ("model_class", "dist_config", "kernel_config", "peft_config", "quant_config", "train_dataset")


def is_v1(keys: Iterable[str]) -> bool:
    """A v1 file: ``model`` (not ``model_name_or_path``) and v1 blocks."""
    present = set(keys)
    if "model" not in present or "model_name_or_path" in present:
        return False
    return count_keys(present, V1_MARKERS) >= 1 and count_keys(present, V1_KEYS) >= 2


def env_enabled(value: str | None) -> bool:
    """The framework's ``is_env_enabled``: ``true``, ``y`` or ``1`` (case-insensitive)."""
    return value is not None and value.strip().lower() in ("true", "y", "1")


def megatron_backend(config: TrainingConfig) -> Sourced[str] | None:
    """``USE_MEGATRON_BRIDGE``/``USE_MCA`` from the environment, else a file written for one."""
    for name, label in (("USE_MEGATRON_BRIDGE", "Megatron Bridge"), ("USE_MCA", "mcore_adapter")):
        item = config.env.get(name)
        if item is not None and env_enabled(item.value):
            return Sourced(label, item.origin)
    for key, item in config.keys.items():
        if key in MEGATRON_ONLY:
            label = "Megatron Bridge" if key == "mixed_precision" or config.precision is not None else "Megatron-core"
            return Sourced(
                label, item.origin.derived(f"`{key}` is a Megatron backend key (USE_MCA/USE_MEGATRON_BRIDGE)")
            )
    return None


#: switches that replace TrainingArguments' optimizer (``train/trainer_utils.py``
#: ``create_custom_optimizer``), with the TrainingArguments-style name of what they build
OPTIMIZER_SWITCHES = (
    ("use_galore", "galore_adamw"),
    ("use_apollo", "apollo_adamw"),
    ("use_badam", "badam"),
    ("use_adam_mini", "adam_mini"),
    ("use_muon", "muon"),
)


class TrainConfig(Dialect):
    flag_keys = (("fp16", "fp16"), ("bf16", "bf16"), ("pure_bf16", "pure_bf16"), ("tf32", "tf32"))
    fields = (
        field("model", "model_name_or_path", "model"),
        field("fp16", "fp16", convert=to_bool),
        field("bf16", "bf16", convert=to_bool),
        field("pure_bf16", "pure_bf16", convert=to_bool),
        field("tf32", "tf32", convert=to_bool),
        field("train_type", "finetuning_type"),
        field("optimizer", "optim"),
        field("gradient_checkpointing", "gradient_checkpointing", convert=to_bool),
        field("max_grad_norm", "max_grad_norm", convert=to_float),
        field("batch_size", "per_device_train_batch_size", "micro_batch_size", convert=to_int),
        field("grad_accum_steps", "gradient_accumulation_steps", convert=to_int),
        field("seq_len", "cutoff_len", convert=to_int),
    )
    known_keys = (
        TRAINING_ARGUMENTS_KEYS
        | REMOVED
        | frozenset(MODEL_ARGUMENTS)
        | frozenset(DATA_ARGUMENTS)
        | frozenset(TRAINING_EXTRAS)
        | frozenset(FINETUNING_ARGUMENTS)
        | frozenset(GENERATING_ARGUMENTS)
        | frozenset(EVALUATION_ARGUMENTS)
        | frozenset(MEGATRON_ARGUMENTS)
    )
    closed_keys = True
    ignores = (
        "refuses it at launch (HfArgumentParser.parse_dict: "
        f"`ValueError: {quote('transformers.unused_keys', keys='[...]')}`; ALLOW_EXTRA_ARGS=1 lets it through)"
    )

    def score(self, doc: Document) -> int:
        keys = self.keys(doc)
        if is_v1(keys):
            return Priority.WRAPPER + count_keys(keys, V1_KEYS)  # v1 keys sit beside the HF Trainer's
        if "model_name_or_path" not in keys:
            return 0
        hits = count_keys(keys, DISTINCTIVE)
        if keys & {"stage", "finetuning_type"} or hits >= 3:
            return self.priority + hits
        return 0

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        for name in PARSING_ENV:
            if name in env:
                config.env[name] = Sourced(env[name], Origin.env(name))
        if env_enabled(env.get("ALLOW_EXTRA_ARGS")):
            # parse_dict(allow_extra_keys=True): only likely typos are worth a word
            config.notes = [n for n in config.notes if n.kind != "unknown-key"] + _OPEN.unknown_keys(doc)
        if is_v1(self.keys(doc)):
            config.variant = "v1"
            self._read_v1(doc, env, config)
        else:
            read_attachments(self, doc, config, env, {"deepspeed": "deepspeed"})
        config.megatron_backend = megatron_backend(config)
        return config

    def unknown_keys(self, doc: Document) -> list[SourceNote]:
        if is_v1(self.keys(doc)):
            return []  # v1's schema is still changing: no list to compare with
        return super().unknown_keys(doc)

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        if is_v1(self.keys(doc)):
            return
        bits = self.node(doc, "quantization_bit")
        if bits is not None and to_int(bits.value) in (4, 8):
            self.put(config, "quantization_bits", to_int(bits.value), doc, bits)
        attn = self.node(doc, "flash_attn")
        if attn is not None and str(attn.value).strip().lower() in FLASH_ATTN:
            self.put(config, "attn_implementation", FLASH_ATTN[str(attn.value).strip().lower()], doc, attn)
        fp8 = self.node(doc, "fp8")
        gather = self.node(doc, "fp8_enable_fsdp_float8_all_gather")
        # _verify_model_args: "fp8_enable_fsdp_float8_all_gather requires fp8=True. Setting fp8=True."
        switch = fp8 if fp8 is not None and to_bool(fp8.value) else gather
        if switch is not None and to_bool(switch.value):
            backend = self.node(doc, "fp8_backend")
            name = str(backend.value).strip().lower() if backend is not None and backend.value else "auto"
            # train/fp8_utils.py create_fp8_kwargs: accelerate AORecipeKwargs (torchao) unless a
            # backend is named
            self.put(config, "fp8", "torchao" if name == "auto" else name, doc, switch)
        fsdp = self.node(doc, "fsdp")
        if fsdp is not None:
            options = _fsdp_options(fsdp.value)
            if options:
                self.put(config, "fsdp", True, doc, fsdp)
                sharding = next((o for o in options if o in ("full_shard", "shard_grad_op", "hybrid_shard")), None)
                if sharding is not None:
                    self.put(config, "fsdp_sharding", sharding, doc, fsdp)
        precision = self.node(doc, "mixed_precision")
        if precision is not None and isinstance(precision.value, str):
            self.put(config, "precision", precision.value.strip(), doc, precision)

    def _read_v1(self, doc: Document, env: Mapping[str, str], config: TrainingConfig) -> None:
        attn = self.node(doc, "flash_attn")
        if attn is not None and str(attn.value).strip().lower() in FLASH_ATTN:
            self.put(config, "attn_implementation", FLASH_ATTN[str(attn.value).strip().lower()], doc, attn)
        peft = self.node(doc, "peft_config.name")
        if peft is not None and isinstance(peft.value, str):
            self.put(config, "train_type", peft.value.strip().lower(), doc, peft)
        bits = self.node(doc, "quant_config.quantization_bit")
        if bits is not None and to_int(bits.value) in (4, 8):
            self.put(config, "quantization_bits", to_int(bits.value), doc, bits)
            # v1/plugins/model_plugins/quantization.py BnbParams: compute_dtype = "float16"
            compute = self.node(doc, "quant_config.compute_dtype")
            if compute is not None and isinstance(compute.value, str):
                self.put(config, "quant_compute_dtype", compute.value.strip(), doc, compute)
        dist = self.node(doc, "dist_config.name")
        if dist is not None and isinstance(dist.value, str):
            kind = dist.value.strip().lower()
            if kind == "deepspeed":
                ds = self.node(doc, "dist_config.config_file")
                if ds is not None and looks_like_path(ds.value):
                    config.references["deepspeed"] = Sourced(str(ds.value).strip(), origin_of(doc, ds))
            elif kind.startswith("fsdp"):
                self.put(config, "fsdp", True, doc, dist)
                # v1 FSDP2Engine.get_mp_policy: mixed_precision "bf16" (default) → param bf16,
                # reduce fp32; "fp16" → fp16/fp32; else fp32/fp32
                mp = self.node(doc, "dist_config.mixed_precision")
                self.put(config, "fsdp_mixed_precision", True, doc, mp or dist)
                mode = str(mp.value).strip().lower() if mp is not None else "bf16"
                param = {"bf16": "bfloat16", "fp16": "float16"}.get(mode, "float32")
                self.put(config, "fsdp_param_dtype", param, doc, mp or dist)
                self.put(config, "fsdp_reduce_dtype", "float32", doc, mp or dist)


def _fsdp_options(value: Any) -> list[str]:
    """TrainingArguments' ``fsdp``: a list or a space-separated string of options."""
    if isinstance(value, bool) or value is None:
        return ["full_shard"] if value else []
    if isinstance(value, list):
        items = [str(v.value if isinstance(v, Node) else v) for v in value]
    else:
        items = str(value).split()
    return [i.strip().lower() for i in items if i.strip()]


class _OpenTrainConfig(TrainConfig):
    """The same dialect when ``ALLOW_EXTRA_ARGS=1``: unknown keys pass, typos are still named."""

    closed_keys = False
    ignores = "ignores it (ALLOW_EXTRA_ARGS=1)"


_OPEN = _OpenTrainConfig()
