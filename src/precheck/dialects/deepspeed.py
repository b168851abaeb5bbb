"""DeepSpeed config files (``ds_config.json``), standalone or named by another run's config.

Keys read in deepspeedai/DeepSpeed ``deepspeed/runtime/config.py``
(``DeepSpeedConfig._initialize_params``), ``runtime/constants.py``,
``runtime/precision_config.py`` and ``runtime/zero/config.py``:

- ``fp16.enabled`` / ``bf16.enabled`` (default false). The legacy ``bfloat16`` section is read
  only when there is no ``bf16`` key (``get_bfloat16_config``: ``param_dict.get("bf16")``,
  else ``param_dict.get("bfloat16", {})``).
- ``fp16.loss_scale`` (0 = dynamic), ``fp16.initial_scale_power`` (16), ``amp.enabled`` (apex).
- ``zero_optimization.stage`` (default 0), ``.offload_optimizer.device`` /
  ``.offload_param.device``; the deprecated ``cpu_offload`` / ``cpu_offload_param`` booleans
  mean a cpu offload.
- ``communication_data_type``, ``data_types.grad_accum_dtype``, ``optimizer.type``,
  ``train_micro_batch_size_per_gpu``, ``gradient_accumulation_steps``, ``gradient_clipping``.

``"auto"`` is a placeholder only the HF integrations fill (transformers'
``HfTrainerDeepSpeedConfig``, accelerate's ``DeepSpeedPlugin``): every ``"auto"`` in the file
is listed in ``auto_keys`` and its field is left unset. DeepSpeed itself drops ``"auto"``
values from its pydantic sections (``DeepSpeedConfigModel.__init__``: ``data = {k: v ... if
v != "auto"}``), so a standalone run uses the defaults.

The top level is a plain dict (``get_scalar_param`` = ``dict.get``): DeepSpeed ignores keys it
does not know, so ``closed_keys`` is False.

gpt-neox configs (``EleutherAI/gpt-neox/configs/*.yml``) carry DeepSpeed keys
(``zero_optimization``, ``fp16``, ``train_micro_batch_size_per_gpu``) beside their own
(``num_layers``, ``pipe_parallel_size``, ``precision``...). They are not DeepSpeed files:
NeoXArgs reads them and builds the DeepSpeed config itself (``precision: bfloat16`` becomes
``bf16.enabled``), so reading one as a DeepSpeed file would get its precision wrong. This
dialect declines any file with gpt-neox (or other framework) keys.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..config import TrainingConfig
from ..dtypes import parse_dtype
from ..provenance import Origin, Sourced
from ..sources import Document, Node
from ..traits import Traits
from .base import Dialect, count_keys, field, lookup, to_bool, to_float, to_int, to_str

#: every top-level key DeepSpeed reads: ``runtime/constants.py`` and the getters of
#: ``runtime/config.py`` (monitor, comms, compression, data efficiency, autotuning,
#: elasticity, profiling... sub-configs read their own top-level key)
KNOWN_KEYS = frozenset(
    (
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "managed_gradient_accumulation",
        "steps_per_print",
        "dump_state",
        "disable_allgather",
        "communication_data_type",
        "seq_parallel_comm_data_type",
        "seq_parallel_communication_data_type",
        "prescale_gradients",
        "gradient_predivide_factor",
        "gradient_allreduce_op",
        "sparse_gradients",
        "zero_optimization",
        "activation_checkpointing",
        "comms_logger",
        "tensorboard",
        "wandb",
        "csv_monitor",
        "comet",
        "gradient_clipping",
        "fp16",
        "bf16",
        "bfloat16",
        "amp",
        "torch_autocast",
        "compression_training",
        "graph_harvesting",
        "optimizer",
        "zero_allow_untested_optimizer",
        "zero_force_ds_cpu_optimizer",
        "scheduler",
        "flops_profiler",
        "wall_clock_breakdown",
        "memory_breakdown",
        "autotuning",
        "quantize_training",
        "eigenvalue",
        "use_data_before_expert_parallelism",
        "hybrid_engine",
        "sparse_attention",
        "pipeline",
        "progressive_layer_drop",
        "curriculum_learning",
        "data_efficiency",
        "checkpoint",
        "data_types",
        "aio",
        "dataloader_drop_last",
        "log_level",
        "nebula",
        "datastates",
        "weight_quantization",
        "compile",
        "timers",
        "tensor_parallel",
        "expert_parallel",
        "elasticity",
        "vocabulary_size",
        "sequence_parallel_size",
        "zenflow",
        # set by the HF integrations before DeepSpeed sees the dict
        "msamp",
    )
)

#: keys that mark a DeepSpeed config
DISTINCTIVE = (
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "zero_optimization",
    "fp16",
    "bf16",
    "bfloat16",
    "amp",
    "gradient_clipping",
    "steps_per_print",
    "wall_clock_breakdown",
    "zero_allow_untested_optimizer",
    "zero_force_ds_cpu_optimizer",
    "communication_data_type",
    "prescale_gradients",
    "data_types",
    "optimizer",
    "scheduler",
    "activation_checkpointing",
    "flops_profiler",
    "torch_autocast",
)

#: keys only DeepSpeed configs have (one must be present)
STRONG = (
    "train_micro_batch_size_per_gpu",
    "train_batch_size",
    "zero_optimization",
    "zero_allow_untested_optimizer",
    "zero_force_ds_cpu_optimizer",
)

#: keys of files that embed DeepSpeed keys but are read by another framework
FOREIGN = frozenset(
    (
        # gpt-neox NeoXArgs (both spellings: gpt-neox accepts dashes)
        "num_layers",
        "num-layers",
        "hidden_size",
        "hidden-size",
        "pipe_parallel_size",
        "pipe-parallel-size",
        "model_parallel_size",
        "model-parallel-size",
        "seq_length",
        "seq-length",
        "train_iters",
        "train-iters",
        "data_impl",
        "data-impl",
        "precision",
        # HF TrainingArguments / accelerate / the trainer frameworks built on them
        "output_dir",
        "per_device_train_batch_size",
        "model_name_or_path",
        "model",
        "distributed_type",
        "deepspeed_config",
        "base_model",
        "finetuning_type",
    )
)


def _enabled(value: Any) -> bool | None:
    """An ``enabled`` switch (a distinct converter, so the base class adds no HfArgumentParser note)."""
    return to_bool(value)


def _device(value: Any) -> str | None:
    text = to_str(value)
    return text.strip().lower() if text is not None and text.strip().lower() != "auto" else None


def _optimizer(value: Any) -> str | None:
    text = to_str(value)
    return text if text is not None and text != "auto" else None


class DeepSpeed(Dialect):
    name = "deepspeed"
    framework = "deepspeed"
    traits = Traits(component=True)
    flag_keys = (("fp16", "fp16.enabled"), ("bf16", "bf16.enabled"))
    fields = (
        field("fp16", "fp16.enabled", convert=_enabled),
        field("bf16", "bf16.enabled", convert=_enabled),
        field("amp", "amp.enabled", convert=_enabled),
        field("zero_stage", "zero_optimization.stage", convert=to_int),
        field("offload_optimizer", "zero_optimization.offload_optimizer.device", convert=_device),
        field("offload_param", "zero_optimization.offload_param.device", convert=_device),
        field("loss_scale", "fp16.loss_scale", convert=to_float),
        field("initial_scale_power", "fp16.initial_scale_power", convert=to_float),
        field("communication_dtype", "communication_data_type", convert=parse_dtype),
        field("grad_accum_dtype", "data_types.grad_accum_dtype", convert=parse_dtype),
        field("optimizer", "optimizer.type", convert=_optimizer),
        field("batch_size", "train_micro_batch_size_per_gpu", convert=to_int),
        field("grad_accum_steps", "gradient_accumulation_steps", convert=to_int),
        field("max_grad_norm", "gradient_clipping", convert=to_float),
    )
    known_keys = KNOWN_KEYS
    closed_keys = False

    def score(self, doc: Document) -> int:
        root = self.root(doc)
        keys = set(root)
        if keys & FOREIGN:
            return 0
        strong = bool(keys & set(STRONG)) or any(
            isinstance(root[k].value, dict) and "enabled" in root[k].value
            for k in ("fp16", "bf16", "bfloat16")
            if k in root
        )
        hits = count_keys(keys, DISTINCTIVE)
        return self.priority + hits if strong and hits >= 2 else 0

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        from . import registered  # the registry's table (the registry lists this dialect)

        config.auto_kept_by = registered.auto_kept_by
        root = self.root(doc)
        # the legacy section counts only when there is no ``bf16`` key at all
        if "bf16" not in root:
            legacy = self.node(doc, "bfloat16.enabled")
            if legacy is not None and to_bool(legacy.value) is not None:
                config.bf16 = Sourced(bool(to_bool(legacy.value)), _origin(doc, legacy, "bfloat16.enabled"))
        # deprecated ZeRO booleans (DeepSpeedZeroConfig: cpu_offload → offload_optimizer cpu)
        for name, key in (("offload_optimizer", "cpu_offload"), ("offload_param", "cpu_offload_param")):
            node = self.node(doc, f"zero_optimization.{key}")
            if getattr(config, name) is None and node is not None and to_bool(node.value):
                setattr(config, name, Sourced("cpu", _origin(doc, node, f"zero_optimization.{key}")))
        # origins name the key path (``fp16.enabled``), not just the leaf (``enabled``)
        for spec in self.fields:
            item = getattr(config, spec.name)
            if not isinstance(item, Sourced) or item.origin.key is None:
                continue
            for path in spec.paths:
                node = lookup(root, path, self.normalise_key)
                if node is not None and node.anchor == (item.origin.line, item.origin.column):
                    setattr(config, spec.name, Sourced(item.value, _origin(doc, node, ".".join(path))))
                    break
        config.auto_keys = [Sourced(path, _origin(doc, node, path)) for path, node in _autos(root, "")]


def _origin(doc: Document, node: Node, path: str) -> Origin:
    line, column = node.anchor
    if node.path is not None:  # read from another file (a script's deepspeed.initialize(config="ds.json"))
        return Origin("file", node.path, line, column, path)
    return Origin("file", doc.path, line, column, path, format=doc.format)


def _autos(mapping: Mapping[str, Node], prefix: str) -> Iterator[tuple[str, Node]]:
    """Every ``"auto"`` value, with its dotted key path (list items by index)."""
    for key, node in mapping.items():
        path = f"{prefix}{key}"
        yield from _autos_in(node, path)


def _autos_in(node: Node, path: str) -> Iterator[tuple[str, Node]]:
    if isinstance(node.value, dict):
        yield from _autos(node.value, f"{path}.")
    elif isinstance(node.value, list):
        for index, item in enumerate(node.value):
            if isinstance(item, Node):
                yield from _autos_in(item, f"{path}.{index}")
    elif node.value == "auto":
        yield path, node
