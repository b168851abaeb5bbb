"""When ``TrainingArguments`` fields appeared, were deprecated and were removed.

The versions were read from the PyPI wheels of transformers, not from release notes:
the ``TrainingArguments`` and ``Seq2SeqTrainingArguments`` dataclass fields (``init=True``)
of ``transformers/training_args.py`` and ``training_args_seq2seq.py`` in every minor release
from 4.40.0 to 5.23.0, bisected to the first minor release where a field is absent
(``removed``) or present (``added``). ``deprecated`` is the first release whose field help
says "Deprecated" (4.40.0 means "already in 4.40.0", the oldest release read). The
replacements are the ones the deprecation help texts name and, for the 5.0 removals,
``MIGRATION_GUIDE_V5.md`` of huggingface/transformers ("Removing deprecated arguments in
``TrainingArguments``" and "Removing arguments without deprecation cycle").

:mod:`precheck.deep.keys` judges keys against the installed dataclass; this table only
says *when* a key changed and what replaces it, for the message.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeyHistory:
    """One field's life in ``TrainingArguments`` (versions as ``X.Y.Z`` strings)."""

    added: str | None = None
    deprecated: str | None = None
    removed: str | None = None
    #: what to write instead ("`eval_strategy`", "the env var `RAY_SCOPE`"), or None
    instead: str | None = None


TRAINING_ARGUMENTS: dict[str, KeyHistory] = {
    # removed in 4.x
    "evaluation_strategy": KeyHistory(deprecated="4.41.0", removed="4.51.0", instead="`eval_strategy`"),
    "dispatch_batches": KeyHistory(
        deprecated="4.40.0", removed="4.51.0", instead="`accelerator_config: {dispatch_batches: ...}`"
    ),
    "split_batches": KeyHistory(
        deprecated="4.40.0", removed="4.51.0", instead="`accelerator_config: {split_batches: ...}`"
    ),
    "use_ipex": KeyHistory(removed="4.57.0"),
    "tp_size": KeyHistory(added="4.50.0", removed="4.52.0", instead="`parallelism_config`"),
    # removed in 5.0.0 (MIGRATION_GUIDE_V5.md, "Trainer")
    "adafactor": KeyHistory(removed="5.0.0", instead="`optim: adafactor`"),
    "fp16_backend": KeyHistory(deprecated="4.40.0", removed="5.0.0", instead="nothing: torch AMP is the only backend"),
    "half_precision_backend": KeyHistory(removed="5.0.0", instead="nothing: torch AMP is the only backend"),
    "fp16_opt_level": KeyHistory(removed="5.0.0", instead="nothing: apex AMP is gone"),
    "fsdp_min_num_params": KeyHistory(
        deprecated="4.40.0", removed="5.0.0", instead="`fsdp_config: {min_num_params: ...}`"
    ),
    "fsdp_transformer_layer_cls_to_wrap": KeyHistory(
        deprecated="4.40.0", removed="5.0.0", instead="`fsdp_config: {transformer_layer_cls_to_wrap: ...}`"
    ),
    "include_inputs_for_metrics": KeyHistory(deprecated="4.46.0", removed="5.0.0", instead="`include_for_metrics`"),
    "include_tokens_per_second": KeyHistory(removed="5.0.0", instead="`include_num_input_tokens_seen`"),
    "jit_mode_eval": KeyHistory(removed="5.0.0", instead="`torch_compile`"),
    "mp_parameters": KeyHistory(removed="5.0.0"),
    "no_cuda": KeyHistory(deprecated="4.40.0", removed="5.0.0", instead="`use_cpu`"),
    "overwrite_output_dir": KeyHistory(removed="5.0.0", instead="`resume_from_checkpoint`"),
    "past_index": KeyHistory(removed="5.0.0"),
    "per_gpu_eval_batch_size": KeyHistory(deprecated="4.40.0", removed="5.0.0", instead="`per_device_eval_batch_size`"),
    "per_gpu_train_batch_size": KeyHistory(
        deprecated="4.40.0", removed="5.0.0", instead="`per_device_train_batch_size`"
    ),
    "push_to_hub_model_id": KeyHistory(removed="5.0.0", instead="`hub_model_id`"),
    "push_to_hub_organization": KeyHistory(removed="5.0.0", instead="`hub_model_id`"),
    "push_to_hub_token": KeyHistory(removed="5.0.0", instead="`hub_token`"),
    "ray_scope": KeyHistory(removed="5.0.0", instead="the environment variable `RAY_SCOPE`"),
    "save_safetensors": KeyHistory(removed="5.0.0"),
    "torchdynamo": KeyHistory(deprecated="4.40.0", removed="5.0.0", instead="`torch_compile_backend`"),
    "tpu_metrics_debug": KeyHistory(deprecated="4.40.0", removed="5.0.0", instead="`debug: tpu_metrics_debug`"),
    "tpu_num_cores": KeyHistory(removed="5.0.0", instead="the environment variable `TPU_NUM_CORES`"),
    "use_legacy_prediction_loop": KeyHistory(removed="5.0.0"),
    "use_mps_device": KeyHistory(deprecated="4.40.0", removed="5.0.0", instead="nothing: mps is used when present"),
    # removed in 5.x
    "group_by_length": KeyHistory(removed="5.2.0", instead="`train_sampling_strategy: group_by_length`"),
    "logging_dir": KeyHistory(
        deprecated="5.0.0", removed="5.15.0", instead="the environment variable `TENSORBOARD_LOGGING_DIR`"
    ),
    "warmup_ratio": KeyHistory(
        deprecated="5.0.0", removed="5.15.0", instead="`warmup_steps` (a float below 1 is a ratio)"
    ),
    # deprecated in the newest release read
    "gradient_checkpointing": KeyHistory(deprecated="5.23.0", instead="`activation_checkpointing`"),
    "gradient_checkpointing_kwargs": KeyHistory(deprecated="5.23.0", instead="`activation_checkpointing_kwargs`"),
    # added since 4.40.0 (a run on an older release refuses them)
    "batch_eval_metrics": KeyHistory(added="4.41.0"),
    "eval_strategy": KeyHistory(added="4.41.0"),
    "restore_callback_states_from_checkpoint": KeyHistory(added="4.41.0"),
    "eval_on_start": KeyHistory(added="4.42.0"),
    "eval_use_gather_object": KeyHistory(added="4.43.0"),
    "torch_empty_cache_steps": KeyHistory(added="4.43.0"),
    "use_liger_kernel": KeyHistory(added="4.45.0"),
    "include_for_metrics": KeyHistory(added="4.46.0"),
    "average_tokens_across_devices": KeyHistory(added="4.47.0"),
    "hub_revision": KeyHistory(added="4.53.0"),
    "liger_kernel_config": KeyHistory(added="4.53.0"),
    "parallelism_config": KeyHistory(added="4.56.0"),
    "project": KeyHistory(added="4.57.0"),
    "trackio_space_id": KeyHistory(added="4.57.0"),
    "enable_jit_checkpoint": KeyHistory(added="5.0.0"),
    "use_cache": KeyHistory(added="5.0.0"),
    "train_sampling_strategy": KeyHistory(added="5.2.0"),
    "ddp_static_graph": KeyHistory(added="5.6.0"),
    "trackio_bucket_id": KeyHistory(added="5.6.0"),
    "trackio_static_space_id": KeyHistory(added="5.6.0"),
    "dataloader_in_order": KeyHistory(added="5.15.0"),
    "dataloader_multiprocessing_context": KeyHistory(added="5.15.0"),
    "activation_checkpointing": KeyHistory(added="5.23.0"),
    "activation_checkpointing_kwargs": KeyHistory(added="5.23.0"),
}

#: the releases the table was read from
READ_FROM = ("4.40.0", "5.23.0")

#: TRL's ``ModelConfig`` (``trl/trainer/model_config.py`` in the PyPI wheels of trl 0.19.0 to
#: 1.16.0, bisected): ``dtype`` arrived in 0.23.0, when ``torch_dtype`` started to warn
#: "`torch_dtype` is deprecated and will be removed in version 0.27.0, please use `dtype`
#: instead."; 0.27.0 removed it (huggingface/trl#5717 later dropped the last fallbacks).
TRL_MODEL_CONFIG: dict[str, KeyHistory] = {
    "torch_dtype": KeyHistory(deprecated="0.23.0", removed="0.27.0", instead="`dtype`"),
    "dtype": KeyHistory(added="0.23.0"),
}


def describe(key: str, table: dict[str, KeyHistory] = TRAINING_ARGUMENTS) -> str:
    """What ``table`` knows of ``key``: "deprecated in 4.41.0, removed in 4.51.0", or ""."""
    item = table.get(key)
    if item is None:
        return ""
    parts = []
    if item.added:
        parts.append(f"added in {item.added}")
    if item.deprecated:
        oldest = table is TRAINING_ARGUMENTS and item.deprecated == READ_FROM[0]
        since = f"by {item.deprecated}" if oldest else f"in {item.deprecated}"
        parts.append(f"deprecated {since}")
    if item.removed:
        parts.append(f"removed in {item.removed}")
    return ", ".join(parts)
