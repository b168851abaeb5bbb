"""accelerate config files: what ``accelerate config`` writes and ``accelerate launch`` reads.

Read in accelerate 1.15.0 (``commands/config/config_args.py``, ``commands/launch.py``,
``utils/launch.py``, ``utils/dataclasses.py``); behaviour checked by running ``accelerate
launch --config_file`` on CPU:

- ``load_config_from_file``: a ``.json`` file is read with ``json.load``, anything else with
  ``yaml.safe_load`` (YAML 1.1: an unquoted ``no`` is the boolean False). A
  ``compute_environment`` other than ``LOCAL_MACHINE`` selects ``SageMakerConfig``, else
  ``ClusterConfig``.
- ``BaseConfig.process_config``: ``distributed_type`` is required ("A `distributed_type` must be
  specified in the config file."); the legacy ``fp16: true`` becomes ``mixed_precision:
  fp16`` when ``mixed_precision`` is absent; the legacy ``dynamo_backend`` becomes
  ``dynamo_config``. ``from_yaml_file`` / ``from_json_file`` then REFUSE every other key that
  is not a dataclass field: ``ValueError: The config file at {path} had unknown keys
  ({sorted keys}), please try upgrading your `accelerate` version or fix (and potentially
  remove) these keys from your config file.`` (``closed_keys``; ``known_keys`` are the
  ``ClusterConfig`` / ``SageMakerConfig`` fields).
- ``_validate_launch_command``: each nested dict is copied onto the launch arguments:
  ``deepspeed_config.x`` → ``args.x``, ``fsdp_config.x`` → ``args.fsdp_x`` (prefix added when
  missing), ``fp8_config.x`` → ``args.fp8_x``, ``dynamo_config.x`` → ``args.dynamo_x``. A
  nested key the launcher has no argument for is set on the namespace and never read
  (silently ignored: the unknown-key note says so). ``mixed_precision``: the CLI
  ``--mixed_precision`` wins, else the config's value, else ``"no"``.
- ``prepare_simple_launcher_cmd_env`` / ``prepare_multi_gpu_env`` / ``prepare_deepspeed_cmd_env``:
  ``PrecisionType(args.mixed_precision.lower())`` (so ``BF16`` works; ``float16`` raises
  "Unknown mixed_precision mode: float16. Choose between ['no', 'fp8', 'fp16', 'bf16']."; an
  unquoted YAML ``mixed_precision: no`` is False and fails with ``AttributeError: 'bool' object
  has no attribute 'lower'``), exported as ``ACCELERATE_MIXED_PRECISION``; ``gpu_ids`` other
  than ``all`` become ``CUDA_VISIBLE_DEVICES``. FSDP exports ``ACCELERATE_USE_FSDP``,
  ``FSDP_VERSION`` (launch default 1), ``FSDP_SHARDING_STRATEGY`` (default FULL_SHARD, read
  by FSDP1 only), ``FSDP_RESHARD_AFTER_FORWARD`` (default true, read by FSDP2),
  ``FSDP_OFFLOAD_PARAMS``, ``FSDP_ACTIVATION_CHECKPOINTING``; DeepSpeed exports
  ``ACCELERATE_USE_DEEPSPEED`` and, for each key the config sets, ``ACCELERATE_DEEPSPEED_ZERO_STAGE``,
  ``..._OFFLOAD_OPTIMIZER_DEVICE``, ``..._OFFLOAD_PARAM_DEVICE``, ``ACCELERATE_DEEPSPEED_CONFIG_FILE``.
- ``downcast_bf16`` is read only for TPUs (``prepare_tpu`` / ``AcceleratorState`` under XLA):
  nothing on GPUs.

What the exported settings do at run time is in :mod:`precheck.resolve.accelerate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import TrainingConfig
from ..counts import decimal
from ..dtypes import parse_load_dtype
from ..facts import quote
from ..provenance import Origin, Sourced
from ..sources import Document, Node, SourceNote
from ..traits import Traits
from .base import Dialect, close_key, count_keys, to_bool, to_float, to_int, to_str

#: ``BaseConfig`` fields (accelerate 1.15.0 ``config_args.py``)
BASE_KEYS = ("compute_environment", "distributed_type", "mixed_precision", "use_cpu", "debug")
#: keys ``process_config`` converts before the unknown-key check (legacy spellings)
LEGACY_KEYS = ("fp16", "dynamo_backend")
#: ``ClusterConfig`` fields
CLUSTER_KEYS = frozenset(
    (
        *BASE_KEYS,
        *LEGACY_KEYS,
        "num_processes",
        "machine_rank",
        "num_machines",
        "gpu_ids",
        "main_process_ip",
        "main_process_port",
        "rdzv_backend",
        "same_network",
        "main_training_function",
        "enable_cpu_affinity",
        "fp8_config",
        "deepspeed_config",
        "fsdp_config",
        "parallelism_config",
        "megatron_lm_config",
        "mpirun_config",
        "downcast_bf16",
        "tpu_name",
        "tpu_zone",
        "tpu_use_cluster",
        "tpu_use_sudo",
        "command_file",
        "commands",
        "tpu_vm",
        "tpu_env",
        "dynamo_config",
    )
)
#: ``SageMakerConfig`` fields (``compute_environment: AMAZON_SAGEMAKER``)
SAGEMAKER_KEYS = frozenset(
    (
        *BASE_KEYS,
        *LEGACY_KEYS,
        "ec2_instance_type",
        "iam_role_name",
        "image_uri",
        "profile",
        "region",
        "num_machines",
        "gpu_ids",
        "base_job_name",
        "pytorch_version",
        "transformers_version",
        "py_version",
        "sagemaker_inputs_file",
        "sagemaker_metrics_file",
        "additional_args",
        "dynamo_config",
        "enable_cpu_affinity",
    )
)

#: ``DistributedType`` and ``SageMakerDistributedType`` values (the enums are case-sensitive)
DISTRIBUTED_TYPES = frozenset(
    (
        "NO",
        "MULTI_CPU",
        "MULTI_GPU",
        "MULTI_NPU",
        "MULTI_MLU",
        "MULTI_SDAA",
        "MULTI_MUSA",
        "MULTI_XPU",
        "DEEPSPEED",
        "FSDP",
        "XLA",
        "MEGATRON_LM",
        "MULTI_HPU",
        "MULTI_NEURON",
        "DATA_PARALLEL",
        "MODEL_PARALLEL",
    )
)

#: keys ``accelerate config`` writes in (nearly) every file
DISTINCTIVE = (
    "compute_environment",
    "mixed_precision",
    "downcast_bf16",
    "machine_rank",
    "main_training_function",
    "num_machines",
    "num_processes",
    "rdzv_backend",
    "same_network",
    "use_cpu",
    "gpu_ids",
    "deepspeed_config",
    "fsdp_config",
    "fp8_config",
    "dynamo_config",
    "megatron_lm_config",
    "tpu_env",
    "tpu_use_cluster",
)

#: the launch arguments each nested block is copied onto (``accelerate launch --help`` groups
#: and the ``getattr(args, ...)`` reads of ``utils/launch.py``), after the prefix is added
NESTED_ARGUMENTS: dict[str, tuple[str, frozenset[str]]] = {
    "fsdp_config": (
        "fsdp_",
        frozenset(
            (
                "fsdp_activation_checkpointing",
                "fsdp_activation_checkpointing_offload",
                "fsdp_auto_wrap_policy",
                "fsdp_backward_prefetch",
                "fsdp_cpu_ram_efficient_loading",
                "fsdp_forward_prefetch",
                "fsdp_min_num_params",
                "fsdp_offload_params",
                "fsdp_reshard_after_forward",
                "fsdp_sharding_strategy",
                "fsdp_state_dict_type",
                "fsdp_sync_module_states",
                "fsdp_transformer_layer_cls_to_wrap",
                "fsdp_use_orig_params",
                "fsdp_version",
                "fsdp_ignored_modules",
            )
        ),
    ),
    "deepspeed_config": (
        "",
        frozenset(
            (
                "deepspeed_config_file",
                "zero_stage",
                "offload_optimizer_device",
                "offload_param_device",
                "offload_optimizer_nvme_path",
                "offload_param_nvme_path",
                "gradient_accumulation_steps",
                "gradient_clipping",
                "zero3_init_flag",
                "zero3_save_16bit_model",
                "deepspeed_hostfile",
                "deepspeed_exclusion_filter",
                "deepspeed_inclusion_filter",
                "deepspeed_multinode_launcher",
                "deepspeed_moe_layer_cls_names",
                # TRL/ALST recipes: read by the ParallelismConfig's DeepSpeed SP handler
                "seq_parallel_communication_data_type",
            )
        ),
    ),
    "fp8_config": (
        "fp8_",
        frozenset(
            (
                "fp8_amax_compute_algo",
                "fp8_amax_history_len",
                "fp8_backend",
                "fp8_enable_fsdp_float8_all_gather",
                "fp8_format",
                "fp8_interval",
                "fp8_margin",
                "fp8_opt_level",
                "fp8_override_linear_precision",
                "fp8_pad_inner_dim",
                "fp8_use_autocast_during_eval",
            )
        ),
    ),
    "dynamo_config": (
        "dynamo_",
        frozenset(
            (
                "dynamo_backend",
                "dynamo_mode",
                "dynamo_use_dynamic",
                "dynamo_use_fullgraph",
                "dynamo_use_regional_compilation",
            )
        ),
    ),
}

#: ``FSDP_SHARDING_STRATEGY`` (``utils/constants.py``); FSDP1 also takes their 1-based index
FSDP_SHARDING = ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2")
#: ``FullyShardedDataParallelPlugin.set_mixed_precision``: mixed_precision → policy dtype
FSDP_POLICY_DTYPE = {"fp16": "float16", "bf16": "bfloat16", "fp8": "bfloat16"}
#: ``FP8BackendType`` values as ``accelerate config`` writes them → precheck's backend names
FP8_BACKENDS = {"TE": "te", "MSAMP": "msamp", "AO": "torchao"}
PRECISIONS = ("no", "fp16", "bf16", "fp8")

#: template: ``.format(path=..., keys=...)``
UNKNOWN_KEYS = quote("accelerate.unknown_config_keys")
BOOL_MIXED_PRECISION = "AttributeError: 'bool' object has no attribute 'lower'"


class AccelerateConfig(Dialect):
    name = "accelerate"
    framework = "accelerate"
    traits = Traits(fills_deepspeed_auto=True, launcher_shards=True, component=True)
    flag_keys = (("mixed_precision", "mixed_precision"),)
    known_keys = CLUSTER_KEYS
    closed_keys = True
    ignores = "refuses the file: `accelerate launch` raises ValueError"

    def score(self, doc: Document) -> int:
        root = self.root(doc)
        node = root.get("distributed_type")
        if node is None:
            return 0
        keys = set(root)
        hits = count_keys(keys, DISTINCTIVE)
        valid = node.value is False or (isinstance(node.value, str) and node.value in DISTRIBUTED_TYPES)
        if not valid and hits < 2:
            return 0
        return self.priority + hits

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        # YAML 1.1 booleans accelerate reads as meant (distributed_type NO, downcast_bf16 no):
        # only an unquoted ``mixed_precision: no`` hurts, and its note says how
        harmless = {self._value_place(doc, k) for k in ("distributed_type", "downcast_bf16", "use_cpu", "debug")}
        config.notes = [n for n in config.notes if not (n.kind == "yaml11-boolean" and (n.line, n.column) in harmless)]
        mixed = self.node(doc, "mixed_precision")
        if mixed is not None and isinstance(mixed.value, bool):
            for note in config.notes:
                if note.kind == "yaml11-boolean" and (note.line, note.column) == (mixed.line, mixed.column):
                    note.message = (
                        f"`mixed_precision: {mixed.raw or mixed.value}` is read as the boolean {mixed.value} "
                        "(YAML 1.1): "
                        f"`accelerate launch` fails with {BOOL_MIXED_PRECISION} (prepare_*_env calls "
                        "args.mixed_precision.lower()); quote it: 'no', as `accelerate config` writes it"
                    )
        return config

    def _value_place(self, doc: Document, key: str) -> tuple[int, int] | None:
        node = self.node(doc, key)
        return (node.line, node.column) if node is not None else None

    # --- mapping ------------------------------------------------------------------------

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        kind = self._distributed_type(doc, config)
        self._mixed_precision(doc, config)
        number = self.node(doc, "num_processes")
        if number is not None and to_int(number.value) is not None:
            self.put(config, "num_processes", to_int(number.value), doc, number)
        gpu_ids = self.node(doc, "gpu_ids")
        if gpu_ids is not None and not isinstance(gpu_ids.value, (bool, dict, list)) and gpu_ids.value is not None:
            ids = str(gpu_ids.value).replace(" ", "")
            if ids.lower() != "all" and ids:
                self.put(config, "devices", ids, doc, gpu_ids)
        if kind == "DEEPSPEED":
            self._deepspeed(doc, config)
        if kind == "FSDP":
            self._fsdp(doc, config)
        self._fp8(doc, config)
        self._script_weights(doc, config)

    def _script_weights(self, doc: Document, config: TrainingConfig) -> None:
        """The dtype of the model the launched script hands ``accelerator.prepare``: a key the launch
        takes from the script's own loop (``sources.launchers``), marked with the script's path."""
        node = _script_weights(self.root(doc))
        dtype = parse_load_dtype(node.value) if node is not None else None
        if node is not None and dtype is not None:
            self.put(config, "torch_dtype", dtype, doc, node)

    def _distributed_type(self, doc: Document, config: TrainingConfig) -> str | None:
        node = self.node(doc, "distributed_type")
        if node is None:
            return None
        # an unquoted ``NO`` is False for yaml.safe_load; ClusterConfig keeps it and the launcher
        # then matches no distributed type: the same as "NO"
        value = "NO" if node.value is False else to_str(node.value)
        if value is None:
            return None
        self.put(config, "distributed_type", value, doc, node)
        return value

    def _mixed_precision(self, doc: Document, config: TrainingConfig) -> None:
        node = self.node(doc, "mixed_precision")
        if node is not None and node.value is not None:
            # the launcher lower-cases it (PrecisionType(args.mixed_precision.lower())); a boolean
            # (unquoted ``no``) is kept as written for the resolver to report
            value = str(node.value).lower() if not isinstance(node.value, (dict, list)) else None
            if value is not None:
                self.put(config, "mixed_precision", value, doc, node)
            return
        legacy = self.node(doc, "fp16")
        if node is None and legacy is not None and legacy.value:
            # process_config: mixed_precision = "fp16" if config_dict["fp16"] else None
            config.mixed_precision = Sourced(
                "fp16", self.origin(doc, legacy, "fp16").derived("legacy `fp16: true` (process_config)")
            )

    def _deepspeed(self, doc: Document, config: TrainingConfig) -> None:
        """A ``deepspeed_config_file`` becomes a reference; otherwise the plugin's own settings
        (``DeepSpeedPlugin.__post_init__`` builds the DeepSpeed config from them)."""
        block = self.node(doc, "deepspeed_config")
        entries = block.value if block is not None and isinstance(block.value, dict) else {}
        file = entries.get("deepspeed_config_file")
        if file is not None and file.value not in (None, "", "none"):
            config.references["deepspeed"] = Sourced(
                str(file.value).strip(), self.origin(doc, file, "deepspeed_config.deepspeed_config_file")
            )
            return  # the DeepSpeed file decides; the resolver reports accelerate keys it refuses beside it
        stage = entries.get("zero_stage")
        number = to_int(stage.value) if stage is not None else None
        if stage is not None and number is not None:
            config.zero_stage = Sourced(number, self.origin(doc, stage, "deepspeed_config.zero_stage"))
        for name, key in (("offload_optimizer", "offload_optimizer_device"), ("offload_param", "offload_param_device")):
            node = entries.get(key)
            if node is not None and to_str(node.value) is not None:
                setattr(
                    config, name, Sourced(str(node.value).lower(), self.origin(doc, node, f"deepspeed_config.{key}"))
                )
        steps = entries.get("gradient_accumulation_steps")
        count = to_int(steps.value) if steps is not None else None
        if steps is not None and count is not None:
            config.grad_accum_steps = Sourced(
                count, self.origin(doc, steps, "deepspeed_config.gradient_accumulation_steps")
            )
        clipping = entries.get("gradient_clipping")
        norm = to_float(clipping.value) if clipping is not None and isinstance(clipping.value, (int, float)) else None
        if clipping is not None and norm is not None:  # to_float: None for a bool, or an int past the float range
            config.max_grad_norm = Sourced(norm, self.origin(doc, clipping, "deepspeed_config.gradient_clipping"))

    def _fsdp(self, doc: Document, config: TrainingConfig) -> None:
        kind = self.node(doc, "distributed_type")
        assert kind is not None
        config.fsdp = Sourced(True, self.origin(doc, kind, "distributed_type").derived("distributed_type FSDP"))
        version = 1
        found = self._fsdp_entry(doc, "fsdp_version")
        if found is not None and to_int(found[1].value) is not None:
            version = int(to_int(found[1].value) or 1)
        if version == 2:
            reshard = self._fsdp_entry(doc, "fsdp_reshard_after_forward")
            if reshard is not None:
                flag = to_bool(reshard[1].value)
                if flag is not None:
                    config.fsdp_sharding = Sourced(
                        "full_shard" if flag else "shard_grad_op", self.origin(doc, reshard[1], reshard[0])
                    )
        else:
            strategy = self._fsdp_entry(doc, "fsdp_sharding_strategy")
            if strategy is not None:
                name = fsdp1_strategy(strategy[1].value)
                if name is not None:
                    config.fsdp_sharding = Sourced(name, self.origin(doc, strategy[1], strategy[0]))
        offload = self._fsdp_entry(doc, "fsdp_offload_params")
        if offload is not None and to_bool(offload[1].value) is not None:
            value = "cpu" if to_bool(offload[1].value) else "none"
            config.offload_param = Sourced(value, self.origin(doc, offload[1], offload[0]))
        checkpointing = self._fsdp_entry(doc, "fsdp_activation_checkpointing")
        if checkpointing is not None and to_bool(checkpointing[1].value) is not None:
            config.gradient_checkpointing = Sourced(
                bool(to_bool(checkpointing[1].value)), self.origin(doc, checkpointing[1], checkpointing[0])
            )
        mixed = config.mixed_precision
        dtype = FSDP_POLICY_DTYPE.get(str(mixed.value)) if mixed is not None else None
        if mixed is not None and dtype is not None:
            # AcceleratorState: fsdp_plugin.set_mixed_precision(mixed_precision) when it is not "no":
            # FSDP1 MixedPrecision(param, reduce, buffer), FSDP2 MixedPrecisionPolicy(param, reduce, output)
            parts = "param_dtype, reduce_dtype" + (", buffer_dtype" if version == 1 else ", output_dtype")
            origin = mixed.origin.derived(
                f"FullyShardedDataParallelPlugin.set_mixed_precision({mixed.value}): "
                f"FSDP{version} policy {parts} = {dtype}"
            )
            config.fsdp_mixed_precision = Sourced(True, origin)
            config.fsdp_param_dtype = Sourced(dtype, origin)
            config.fsdp_reduce_dtype = Sourced(dtype, origin)
            if version == 1:
                config.fsdp_buffer_dtype = Sourced(dtype, origin)

    def _fsdp_entry(self, doc: Document, name: str) -> tuple[str, Node] | None:
        """An ``fsdp_config`` entry by its launch name (``fsdp_x``), spelled with or without the prefix."""
        block = self.node(doc, "fsdp_config")
        if block is None or not isinstance(block.value, dict):
            return None
        for key, node in block.value.items():
            if (key if key.startswith("fsdp_") else f"fsdp_{key}") == name:
                return f"fsdp_config.{key}", node
        return None

    def _fp8(self, doc: Document, config: TrainingConfig) -> None:
        mixed = config.mixed_precision
        if mixed is None or mixed.value != "fp8":
            return  # fp8_config is exported only for mixed_precision fp8 (setup_fp8_env)
        block = self.node(doc, "fp8_config")
        backend = (block.get("backend") or block.get("fp8_backend")) if block is not None else None
        if backend is not None and to_str(backend.value) is not None:
            text = str(backend.value)
            config.fp8 = Sourced(
                FP8_BACKENDS.get(text, text.lower()), self.origin(doc, backend, f"fp8_config.{backend.key}")
            )
        else:
            config.fp8 = Sourced(
                "auto", mixed.origin.derived("no fp8_config.backend: Accelerator picks torchao, else TE, else MS-AMP")
            )

    def origin(self, doc: Document, node: Node, path: str) -> Origin:
        line, column = node.anchor
        return Origin("file", doc.path, line, column, path, format=doc.format)

    # --- unknown keys -------------------------------------------------------------------

    def unknown_keys(self, doc: Document) -> list[SourceNote]:
        """Top-level keys ``from_yaml_file``/``from_json_file`` refuse, and nested keys the launcher ignores."""
        root = self.root(doc)
        environment = root.get("compute_environment")
        sagemaker = environment is not None and environment.value not in (None, "LOCAL_MACHINE")
        known = SAGEMAKER_KEYS if sagemaker else CLUSTER_KEYS
        script = _script_weights(root)
        refused = sorted(k for k in root if k not in known and root[k] is not script)
        notes = []
        candidates = tuple(sorted(known))
        for key in refused:
            node = root[key]
            close = close_key(key, candidates)
            hint = f"; did you mean `{close}`?" if close is not None else ""
            error = UNKNOWN_KEYS.format(path=doc.path, keys=refused)
            line, column = node.anchor
            notes.append(
                SourceNote(
                    "unknown-key",
                    f"`{key}` is not an accelerate config key: `accelerate launch` refuses the file with "
                    f'ValueError "{error}"{hint}',
                    line,
                    column,
                    key,
                )
            )
        if not sagemaker:
            notes.extend(_nested_unknown(root))
        return notes


def _script_weights(root: Mapping[str, Node]) -> Node | None:
    """``torch_dtype`` from the launched script (a node of another file), not one the config wrote."""
    node = root.get("torch_dtype")
    return node if node is not None and node.path is not None else None


def _nested_unknown(root: Mapping[str, Node]) -> list[SourceNote]:
    notes = []
    for block_name, (prefix, arguments) in NESTED_ARGUMENTS.items():
        block = root.get(block_name)
        if block is None or not isinstance(block.value, dict):
            continue
        for key, node in block.value.items():
            name = key if not prefix or key.startswith(prefix) else f"{prefix}{key}"
            if name in arguments:
                continue
            close = close_key(name, tuple(sorted(arguments)))
            hint = f"; did you mean `{close}`?" if close is not None else ""
            line, column = node.anchor
            notes.append(
                SourceNote(
                    "unknown-key",
                    f"`{block_name}.{key}` is not an `accelerate launch` setting: the launcher copies it to "
                    f"`args.{name}`, which nothing reads, so it is ignored{hint}",
                    line,
                    column,
                    f"{block_name}.{key}",
                )
            )
    return notes


def fsdp1_strategy(value: Any) -> str | None:
    """``FSDP_SHARDING_STRATEGY`` names or their 1-based index → the lower-case strategy name."""
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip().upper()
    index = decimal(text)
    if index is not None and 1 <= index <= len(FSDP_SHARDING):
        return FSDP_SHARDING[index - 1].lower()
    return text.lower() if text in FSDP_SHARDING else None


def fsdp_policy_dtype(mixed_precision: str) -> str | None:
    """The dtype ``set_mixed_precision`` gives every FSDP policy field (None for "no")."""
    return FSDP_POLICY_DTYPE.get(mixed_precision)


__all__ = ["AccelerateConfig", "fsdp1_strategy", "fsdp_policy_dtype"]
