"""This framework's recipe configs (``tune run <recipe> --config <file>.yaml``).

Such a config is an OmegaConf YAML read by the recipe named on the command line,
not by a schema: ``model``, ``tokenizer``, ``checkpointer``, ``dataset``, ``optimizer``,
``loss``... are ``_component_`` blocks that the package's ``config.instantiate`` builds, and
the recipe reads its scalars (``dtype``, ``batch_size``, ``gradient_accumulation_steps``,
``enable_activation_checkpointing``, ``fsdp_cpu_offload``...) with ``cfg.get`` or
attribute access. Recipes read any key they like, so ``known_keys`` stays empty.

Read upstream (0.1.1, 0.2.1, 0.3.1, 0.5.0, 0.6.1 wheels; main at bd2a0fc
through the code index):

- ``dtype`` is the training precision. ``training.get_dtype`` (``training/precision.py`` of the package;
  ``utils/precision.py`` up to 0.2.x) maps ``PRECISION_STR_TO_DTYPE`` =
  ``{"fp16", "bf16", "fp32", "fp64"}`` and nothing else: ``dtype: bfloat16`` raises
  ``ValueError: Dtype bfloat16 must be one of fp16, bf16, fp32, fp64 for finetuning.``;
  ``dtype: null`` is float32. A config without the key fails on ``cfg.dtype`` (OmegaConf
  2.1+ raises ``ConfigAttributeError: Missing key dtype``), except in the dev async GRPO
  recipe, whose ``TrainingWorker`` hard-codes ``training.get_dtype("bf16", ...)``.
- Which recipe runs the file is on the command line; the framework's own configs say it in a
  comment (``#   tune run --nproc_per_node 8 full_finetune_distributed --config ...``),
  which this dialect reads. ``*_distributed`` recipes shard with FSDP2
  (``training.shard_model`` → ``fully_shard``), the only distributed strategy they have;
  keys only they read (``fsdp_cpu_offload``, ``fsdp_reshard_after_forward``,
  ``tensor_parallel_dim``, ``data_parallel_shard_dim``...) say the same when the comment
  is missing.
- ``model._component_`` names the builder: ``lora_*`` (and DoRA, ``use_dora: True``) train
  adapters, ``qlora_*`` (``quantize_base=True``) quantise the base weights to NF4
  (``modules/peft/lora.py`` ``LoRALinear``: ``to_nf4(linear.weight)``).
- ``fsdp_cpu_offload: True`` passes ``CPUOffloadPolicy()`` to ``fully_shard``: parameters,
  gradients and optimizer states live on the CPU. ``fsdp_reshard_after_forward: False``
  is SHARD_GRAD_OP (default True: FULL_SHARD).
- ``enable_fp8_training`` (``full_finetune_distributed`` on main after 0.6.1, torchao
  ``convert_to_float8_training``; older releases never read it).

The precision switch is ``dtype`` with the framework's own spellings, so ``flag_keys`` stays
empty and the load dtype carries no key: generic fixes would otherwise write
``dtype: float32``, which ``get_dtype`` rejects. ``precision`` keeps the value as written,
with its key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...config import TrainingConfig
from ...dialects.base import Dialect, Priority, to_bool, to_float, to_int
from ...dtypes import parse_dtype
from ...provenance import Origin, Sourced
from ...sources import Document, Node
from .label import NAME

#: ``PRECISION_STR_TO_DTYPE`` (unchanged from 0.1.1 to main)
PRECISION_STR_TO_DTYPE = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}

#: top-level blocks the framework's recipes instantiate
COMPONENT_BLOCKS = (
    "model",
    "tokenizer",
    "checkpointer",
    "dataset",
    "optimizer",
    "loss",
    "lr_scheduler",
    "metric_logger",
    "profiler",
    "policy_model",
    "reward_and_value_model",
    "teacher_model",
    "quantizer",
)

#: keys only the ``*_distributed`` recipes read
DISTRIBUTED_KEYS = (
    "fsdp_cpu_offload",
    "fsdp_reshard_after_forward",
    "custom_sharded_layers",
    "tensor_parallel_dim",
    "tensor_parallel_plan",
    "data_parallel_shard_dim",
    "data_parallel_replicate_dim",
    "context_parallel_dim",
    "enable_fp8_training",
)

#: ``tune run`` / torchrun options that take no value
_FLAG_OPTIONS = frozenset({"--standalone", "--no-python", "--no_python", "-m", "--module", "--run-path"})
_TUNE_RUN = re.compile(r"^\s*#.*?\btune\s+run\s+(.+)$")
_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][\w.]*)\}")
#: the recipe whose trainer ignores ``dtype`` and trains in bf16
ASYNC_GRPO = "async_grpo"


def _components(doc: Document) -> list[str]:
    """``_component_`` values of the top-level blocks and the blocks one level below."""
    found: list[str] = []
    for node in doc.mapping().values():
        if not isinstance(node.value, dict):
            continue
        blocks = [node, *(child for child in node.value.values() if isinstance(child.value, dict))]
        for block in blocks:
            component = block.get("_component_")
            if component is not None and isinstance(component.value, str):
                found.append(component.value)
    return found


def recipe_of(doc: Document) -> tuple[str, int, int] | None:
    """The recipe a ``tune run`` command in the file's comments names, with its line and column."""
    for number, line in enumerate(doc.text.splitlines(), start=1):
        match = _TUNE_RUN.match(line)
        if match is None:
            continue
        skip = False
        for found in re.finditer(r"\S+", line[match.start(1) :]):
            token = found.group(0)
            if skip:
                skip = False
                continue
            if token.startswith("-"):
                skip = "=" not in token and token not in _FLAG_OPTIONS
                continue
            if re.fullmatch(r"[A-Za-z_][\w./-]*", token):
                return token, number, match.start(1) + found.start() + 1
            break
    return None


def builder_name(component: str) -> str:
    """``<package>.models.llama3_1.qlora_llama3_1_8b`` → ``qlora_llama3_1_8b``."""
    return component.rsplit(".", 1)[-1]


class RecipeConfig(Dialect):
    #: ``dtype`` takes the framework's own spellings (fp32, bf16): no generic flag edits
    flag_keys = ()
    #: recipes read arbitrary keys (``cfg.get``): no unknown-key lint
    known_keys = frozenset()

    def score(self, doc: Document) -> int:
        components = _components(doc)
        if not components:
            return 0
        ours = sum(1 for c in components if c.startswith(f"{NAME}."))
        keys = set(doc.mapping())
        blocks = sum(1 for k in COMPONENT_BLOCKS if k in keys)
        if ours:
            return self.priority + min(ours, 10)
        if blocks >= 2:
            return Priority.COMPONENTS + blocks
        return 0

    # -- helpers -------------------------------------------------------------------------

    @staticmethod
    def origin(doc: Document, node: Node, path: str) -> Origin:
        """A node's place, named by its dotted key path (``tokenizer.max_seq_len``)."""
        line, column = node.anchor
        return Origin("file", doc.path, line, column, path, format=doc.format)

    def first(self, doc: Document, *paths: str) -> tuple[Node, str] | None:
        """The first of ``paths`` present in the file (top-level first, then ``training.``)."""
        for path in paths:
            node = self.node(doc, path)
            if node is not None:
                return node, path
        return None

    def interpolate(self, doc: Document, value: Any) -> Any:
        """Resolve ``${key}`` references to scalars of the same file (``${base_model_path}``)."""
        if not isinstance(value, str):
            return value
        for _ in range(8):
            match = _INTERPOLATION.search(value)
            if match is None:
                return value
            target = self.node(doc, match.group(1))
            if target is None or isinstance(target.value, (dict, list)) or target.value is None:
                return value
            value = value[: match.start()] + str(target.value) + value[match.end() :]
        return value

    def set(self, config: TrainingConfig, name: str, value: Any, doc: Document, node: Node, path: str) -> None:
        setattr(config, name, Sourced(value, self.origin(doc, node, path)))

    # -- reading -------------------------------------------------------------------------

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        self._precision(doc, config)
        self._model(doc, config)
        self._training(doc, config)
        self._distribution(doc, config)
        # every training recipe builds `optimizer` (the async GRPO one `training.optimizer`); the
        # generate, eleuther_eval and quantize recipes read no optimizer (recipes/generate.py@0.6.1)
        config.inference = self.first(doc, "optimizer", "training.optimizer") is None
        in_backward = self.first(doc, "optimizer_in_bwd", "training.optimizer_in_bwd")
        if in_backward is not None and to_bool(in_backward[0].value) is not None:
            # each gradient is freed as its parameter's step runs (the memory estimate knows)
            node, path = in_backward
            config.optimizer_in_backward = Sourced(bool(to_bool(node.value)), self.origin(doc, node, path))
        return config

    def _precision(self, doc: Document, config: TrainingConfig) -> None:
        found = self.first(doc, "dtype", "training.dtype")
        recipe = recipe_of(doc)
        if found is None:
            if recipe is not None and ASYNC_GRPO in recipe[0]:
                name, line, column = recipe
                at = Origin(
                    "derived",
                    doc.path,
                    line,
                    column,
                    None,
                    f"{name}: its TrainingWorker calls training.get_dtype('bf16') whatever the config says",
                )
                config.precision = Sourced("bf16", at)
                config.torch_dtype = Sourced("bfloat16", at)
            return
        node, path = found
        raw = node.value
        config.precision = Sourced("null" if raw is None else str(raw), self.origin(doc, node, path))
        dtype = "float32" if raw is None else PRECISION_STR_TO_DTYPE.get(str(raw))
        if dtype is None:
            dtype = parse_dtype(raw)  # what was meant; get_dtype rejects the spelling
        if dtype is not None:
            line, column = node.anchor
            # no key: a generic fix must not write ``dtype: float32`` (the framework wants fp32)
            detail = f"{NAME} instantiates the model under set_default_dtype(dtype)"
            config.torch_dtype = Sourced(dtype, Origin("derived", doc.path, line, column, None, f"{detail} ({path})"))

    def _model(self, doc: Document, config: TrainingConfig) -> None:
        found = self.first(doc, "model._component_", "policy_model._component_")
        if found is not None and isinstance(found[0].value, str):
            node, path = found
            builder = builder_name(found[0].value)
            block = path.rsplit(".", 1)[0]
            quantize = self.node(doc, f"{block}.quantize_base")
            if builder.startswith(("lora_", "qlora_")):
                self.set(config, "train_type", "lora", doc, node, path)
            else:
                self.set(config, "train_type", "full", doc, node, path)
            if builder.startswith("qlora_"):
                self.set(config, "quantization_bits", 4, doc, node, path)
            elif quantize is not None and to_bool(quantize.value):
                self.set(config, "quantization_bits", 4, doc, quantize, f"{block}.quantize_base")
                self.set(config, "train_type", "lora", doc, quantize, f"{block}.quantize_base")
            config.model = Sourced(builder, self.origin(doc, node, path))
        # the checkpoint folder names the model better than the builder (and may hold config.json)
        checkpoint = self.first(doc, "checkpointer.checkpoint_dir", "training.checkpointer.checkpoint_dir")
        if checkpoint is not None:
            node, path = checkpoint
            value = self.interpolate(doc, node.value)
            if isinstance(value, str) and value.strip() and "${" not in value:
                config.model = Sourced(value.strip(), self.origin(doc, node, path))

    def _training(self, doc: Document, config: TrainingConfig) -> None:
        table: tuple[tuple[str, tuple[str, ...], Any], ...] = (
            ("batch_size", ("batch_size", "training.batch_size"), to_int),
            ("grad_accum_steps", ("gradient_accumulation_steps", "training.gradient_accumulation_steps"), to_int),
            (
                "gradient_checkpointing",
                ("enable_activation_checkpointing", "training.enable_activation_checkpointing"),
                to_bool,
            ),
            ("max_grad_norm", ("clip_grad_norm", "training.clip_grad_norm"), to_float),
            ("seq_len", ("tokenizer.max_seq_len",), to_int),
            ("optimizer", ("optimizer._component_", "training.optimizer._component_"), _to_component),
        )
        for name, paths, convert in table:
            found = self.first(doc, *paths)
            if found is None:
                continue
            value = convert(self.interpolate(doc, found[0].value))
            if value is not None:
                self.set(config, name, value, doc, found[0], found[1])
        ppo = self.node(doc, "ppo_batch_size")
        if ppo is not None and to_int(ppo.value):
            # PPO: batch_size counts trajectories; each backward sees ppo_batch_size // accumulation
            steps = config.grad_accum_steps.value if config.grad_accum_steps is not None else 1
            micro = max(int(to_int(ppo.value) or 1) // max(steps, 1), 1)
            at = self.origin(doc, ppo, "ppo_batch_size").derived("ppo_batch_size // gradient_accumulation_steps")
            config.batch_size = Sourced(micro, at)
        fp8 = self.node(doc, "enable_fp8_training")
        if fp8 is not None and to_bool(fp8.value):
            self.set(config, "fp8", "torchao", doc, fp8, "enable_fp8_training")

    def _distribution(self, doc: Document, config: TrainingConfig) -> None:
        recipe = recipe_of(doc)
        distributed: Sourced[bool] | None = None
        if recipe is not None and ("distributed" in recipe[0] or "single_device" in recipe[0]):
            name, line, column = recipe
            many = "distributed" in name
            how = "shards the model with FSDP2 fully_shard" if many else "runs on one device"
            distributed = Sourced(
                many, Origin("derived", doc.path, line, column, None, f"`tune run {name}` in a comment: {how}")
            )
        else:
            for key in DISTRIBUTED_KEYS:
                node = self.node(doc, key)
                if node is not None:
                    at = self.origin(doc, node, key).derived(f"only the *_distributed recipes read `{key}` (FSDP2)")
                    distributed = Sourced(True, at)
                    break
        if distributed is not None:
            config.fsdp = distributed
        if distributed is None or not distributed.value:
            return
        reshard = self.first(doc, "fsdp_reshard_after_forward", "training.fsdp_reshard_after_forward")
        if reshard is not None and to_bool(reshard[0].value) is not None:
            kind = "full_shard" if to_bool(reshard[0].value) else "shard_grad_op"
            self.set(config, "fsdp_sharding", kind, doc, reshard[0], reshard[1])
        offload = self.first(doc, "fsdp_cpu_offload", "training.fsdp_cpu_offload")
        if offload is not None and to_bool(offload[0].value):
            self.set(config, "offload_param", "cpu", doc, offload[0], offload[1])
            self.set(config, "offload_optimizer", "cpu", doc, offload[0], offload[1])


def _to_component(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


__all__ = ["PRECISION_STR_TO_DTYPE", "RecipeConfig", "builder_name", "recipe_of"]
