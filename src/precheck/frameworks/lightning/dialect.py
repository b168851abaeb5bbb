"""The framework's configs: its CLI's YAML, and the configs of its two variants (the GPT
fine-tuning library's, the Megatron library's Hydra configs).

One dialect for the three because they share the framework's precision plugins; the
resolver (:mod:`.resolve`) tells them apart.

Recognised layouts:

- **The CLI / the Megatron variant**: a top-level ``trainer:`` mapping holding ``Trainer.__init__``
  arguments (``precision``, ``accelerator``, ``devices``, ``strategy``,
  ``accumulate_grad_batches``, ``gradient_clip_val``, ``max_epochs``...; the list read in
  the framework's repository at 2.6.6, ``pytorch/trainer/trainer.py``), with
  ``model:``/``data:`` blocks (``class_path``/``init_args`` for jsonargparse, ``_target_``
  for Hydra). The Megatron variant's 1.x configs add ``model.megatron_amp_O2``,
  ``model.native_amp_init_scale``...; its 2.x puts a ``MegatronMixedPrecision`` under
  ``plugins:``.
- **The GPT variant** (its repository at 0.5.13, ``finetune/*.py``, ``pretrain.py``
  ``setup()`` arguments as jsonargparse reads them): top-level ``precision``, ``devices``,
  ``num_nodes``, ``quantize`` (``bnb.nf4|bnb.nf4-dq|bnb.fp4|bnb.fp4-dq|bnb.int8-training``),
  ``checkpoint_dir`` or ``model_name``, ``train:`` (``args.TrainArgs``:
  ``global_batch_size``, ``micro_batch_size``, ``max_norm``, ``max_seq_length``),
  ``optimizer``, ``out_dir``, ``lora_*``.

The precision string (``_PRECISION_INPUT``, ``fabric/plugins/precision/precision.py``):
``"transformer-engine"``, ``"transformer-engine-float16"``, ``"16-true"``, ``"16-mixed"``,
``"bf16-true"``, ``"bf16-mixed"``, ``"32-true"``, ``"64-true"``, the ints 64/32/16 and the
strings "64"/"32"/"16"/"bf16" (legacy aliases, :data:`ALIASES`). Anything else raises in
``fabric/connector.py`` ``_convert_precision_to_unified_args``: ``ValueError: Precision
'fp16' is invalid. Allowed precision values: (...)``. It is case-sensitive ("BF16" is invalid).

OmegaConf interpolations of absolute keys (``precision: ${export.dtype}``) are followed.
The CLI rejects unknown keys (jsonargparse), but a config may target any class, so
``known_keys`` is left empty (no unknown-key lint).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ...config import TrainingConfig
from ...dialects.base import Dialect, count_keys, field, looks_like_path, origin_of, to_bool, to_float, to_int
from ...dtypes import parse_dtype
from ...provenance import Origin, Sourced
from ...sources import Document, Node
from .modes import ALIASES as ALIASES
from .modes import GPT_LABEL, GPT_VARIANT, MEGATRON2_VARIANT, MEGATRON_LABEL, MEGATRON_VARIANT, TRAINER
from .modes import MODES as MODES
from .modes import alias_warning as alias_warning

#: the dtype each mode keeps the weights in ("-true", transformer-engine) or autocasts to ("-mixed")
MODE_DTYPE = {
    "transformer-engine": "bfloat16",
    "transformer-engine-float16": "float16",
    "16-true": "float16",
    "16-mixed": "float16",
    "bf16-true": "bfloat16",
    "bf16-mixed": "bfloat16",
    "32-true": "float32",
    "64-true": "float64",
}


def unify(raw: Any) -> str | None:
    """The mode the framework turns a ``precision`` value into; None when it raises (invalid)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        raw = str(raw) if raw in (16, 32, 64) else None
    if not isinstance(raw, str):
        return None
    if raw in MODES:
        return raw
    return ALIASES.get(raw)


#: ``Trainer.__init__`` arguments (2.6.6); ``logger`` left out (verl's ``trainer:`` has it too)
TRAINER_ARGS = (
    "accelerator",
    "strategy",
    "devices",
    "num_nodes",
    "precision",
    "callbacks",
    "fast_dev_run",
    "max_epochs",
    "min_epochs",
    "max_steps",
    "min_steps",
    "max_time",
    "limit_train_batches",
    "limit_val_batches",
    "limit_test_batches",
    "limit_predict_batches",
    "overfit_batches",
    "val_check_interval",
    "check_val_every_n_epoch",
    "num_sanity_val_steps",
    "log_every_n_steps",
    "enable_checkpointing",
    "enable_progress_bar",
    "enable_model_summary",
    "accumulate_grad_batches",
    "gradient_clip_val",
    "gradient_clip_algorithm",
    "deterministic",
    "benchmark",
    "inference_mode",
    "use_distributed_sampler",
    "profiler",
    "detect_anomaly",
    "barebones",
    "plugins",
    "sync_batchnorm",
    "reload_dataloaders_every_n_epochs",
    "default_root_dir",
)

#: the GPT variant's ``setup()`` arguments (finetune/full.py, lora.py, pretrain.py of 0.5.13)
GPT_VARIANT_KEYS = (
    "checkpoint_dir",
    "out_dir",
    "precision",
    "quantize",
    "devices",
    "num_nodes",
    "resume",
    "data",
    "train",
    "eval",
    "log",
    "optimizer",
    "logger_name",
    "seed",
    "access_token",
    "model_name",
    "model_config",
    "initial_checkpoint_dir",
    "tokenizer_dir",
    "lora_r",
    "lora_alpha",
    "lora_dropout",
)
#: ``args.TrainArgs`` fields that mark the GPT variant's ``train:`` block
TRAIN_ARGS = ("global_batch_size", "micro_batch_size", "lr_warmup_steps", "max_norm", "save_interval", "log_interval")

#: the GPT variant's ``quantize`` → (bits, BitsandbytesPrecision mode); lora.py 0.5.13 takes these five
QUANTIZE = {
    "bnb.nf4": (4, "nf4"),
    "bnb.nf4-dq": (4, "nf4-dq"),
    "bnb.fp4": (4, "fp4"),
    "bnb.fp4-dq": (4, "fp4-dq"),
    "bnb.int8-training": (8, "int8-training"),
    "bnb.int8": (8, "int8"),
}

#: strategy names registered in the framework's 2.6.6 ``strategies/deepspeed.py`` ``register_strategies``:
#: name → (ZeRO stage, optimizer offload, parameter offload)
DEEPSPEED_STRATEGIES = {
    "deepspeed": (2, "none", "none"),
    "deepspeed_stage_1": (1, "none", "none"),
    "deepspeed_stage_2": (2, "none", "none"),
    "deepspeed_stage_2_offload": (2, "cpu", "none"),
    "deepspeed_stage_3": (3, "none", "none"),
    "deepspeed_stage_3_offload": (3, "cpu", "cpu"),
    "deepspeed_stage_3_offload_nvme": (3, "nvme", "nvme"),
}
#: ``strategies/fsdp.py``: "fsdp" and "fsdp_cpu_offload" (``cpu_offload=True``); FULL_SHARD by default
FSDP_STRATEGIES = {"fsdp": False, "fsdp_cpu_offload": True}
#: the Megatron variant's ``model.fsdp_sharding_strategy`` ('full', 'hybrid', 'grad') → torch's names
MEGATRON_FSDP_SHARDING = {"full": "full_shard", "hybrid": "hybrid_shard", "grad": "shard_grad_op"}

_INTERPOLATION = re.compile(r"^\$\{([A-Za-z_][\w.]*)\}$")


def _mapping(node: Node | None) -> dict[str, Node]:
    return node.value if node is not None and isinstance(node.value, dict) else {}


def _class_name(node: Node | None) -> str:
    """The class a ``class_path``/``_target_`` block instantiates ("" when none)."""
    block = _mapping(node)
    for key in ("class_path", "_target_"):
        target = block.get(key)
        if target is not None and isinstance(target.value, str):
            return target.value.rsplit(".", 1)[-1]
    return ""


def _init_args(node: Node | None) -> dict[str, Node]:
    """The constructor arguments of a ``class_path`` (``init_args``) or ``_target_`` block."""
    block = _mapping(node)
    if "class_path" in block:
        return _mapping(block.get("init_args"))
    return block


def _root(doc: Document) -> dict[str, Node]:
    """The mapping holding the Trainer's keys: the document, or a CLI ``fit:`` block."""
    root = doc.mapping()
    fit = _mapping(root.get("fit"))
    if "trainer" not in root and isinstance(fit.get("trainer"), Node):
        return fit
    return root


def _is_megatron(doc: Document) -> bool:
    """A Megatron variant 1.x model config (built by ``MegatronTrainerBuilder``)."""
    model = _mapping(_root(doc).get("model"))
    return bool(model.keys() & {"megatron_amp_O2", "native_amp_init_scale", "tensor_model_parallel_size"})


class TrainerDialect(Dialect):
    fields = (
        field(
            "model",
            "checkpoint_dir",
            "model.init_args.model_name_or_path",
            "model.init_args.pretrained_model_name_or_path",
            "model.llm.pretrained_model",
        ),
        field("optimizer", "optimizer.class_path", "optimizer", "model.optim.name", "optim.config.optimizer"),
        field("max_grad_norm", "train.max_norm", convert=to_float),
        field(
            "batch_size",
            "train.micro_batch_size",
            "model.micro_batch_size",
            "data.init_args.batch_size",
            "data.batch_size",
            "model.train_ds.batch_size",
            convert=to_int,
        ),
        field("seq_len", "train.max_seq_length", "model.encoder_seq_length", "model.data.seq_length", convert=to_int),
        field("gradient_checkpointing", "model.init_args.gradient_checkpointing", convert=to_bool),
    )

    def root(self, doc: Document) -> dict[str, Node]:
        return _root(doc)

    def score(self, doc: Document) -> int:
        root = self.root(doc)
        trainer = _mapping(root.get("trainer"))
        hits = count_keys(trainer.keys(), TRAINER_ARGS)
        if hits >= 2:
            return self.priority + hits
        train = _mapping(root.get("train"))
        variant = count_keys(root.keys(), GPT_VARIANT_KEYS)
        if count_keys(train.keys(), TRAIN_ARGS) >= 2 and variant >= 3:
            return self.priority + variant
        return 0

    # -- values, following OmegaConf interpolations -------------------------------------------

    def resolved(self, doc: Document, path: str) -> tuple[Node, Any, str] | None:
        """(the node as written, its value after interpolation, how it was resolved)."""
        node = self.node(doc, path)
        if node is None:
            return None
        value, via = node.value, ""
        for _ in range(8):
            match = _INTERPOLATION.match(value) if isinstance(value, str) else None
            if match is None:
                break
            target = self.node(doc, match.group(1))
            if target is None:
                return None
            line, _column = target.anchor
            via += f"{value} = {target.value!r} (line {line}); "
            value = target.value
        return node, value, via.rstrip("; ")

    def sourced(self, doc: Document, node: Node, via: str) -> Origin:
        origin = origin_of(doc, node)
        return origin.derived(via) if via else origin

    # -- the mapping ----------------------------------------------------------------------------

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        self._for_rules(config)
        self._precision(doc, config)
        self._devices(doc, config)
        self._strategy(doc, config)
        self._trainer(doc, config)
        self._gpt_variant(doc, config)
        self._megatron_variant(doc, config)
        config.variant = flavour(config)

    def _precision(self, doc: Document, config: TrainingConfig) -> None:
        plugin = self._precision_plugin(doc, config)
        for path in ("trainer.precision", "precision"):
            found = self.resolved(doc, path)
            if found is None or found[1] is None:
                continue
            node, value, via = found
            if plugin:
                # the framework: "Received both `precision=...` and `plugins=...`. Choose one."
                break
            raw = str(value)
            config.precision = Sourced(raw, self.sourced(doc, node, via))
            self._derive(config, raw, config.precision.origin)
            return

    def _precision_plugin(self, doc: Document, config: TrainingConfig) -> bool:
        """A precision set through ``plugins`` (the Megatron variant's 2.x ``MegatronMixedPrecision``, a
        CLI ``trainer.plugins`` class); True when one was found."""
        blocks: list[Node] = []
        for path in ("plugins", "trainer.plugins"):
            node = self.node(doc, path)
            if node is None:
                continue
            if isinstance(node.value, list):
                blocks.extend(n for n in node.value if isinstance(n, Node))
            else:
                blocks.append(node)
        for block in blocks:
            kind = _class_name(block)
            args = _init_args(block)
            if kind == "BitsandbytesPrecision":
                mode = args.get("mode")
                if mode is not None and isinstance(mode.value, str):
                    bits = 8 if mode.value.startswith("int8") else 4
                    self.put(config, "quantization_bits", bits, doc, mode)
                dtype = args.get("dtype")
                if dtype is not None and parse_dtype(dtype.value) is not None:
                    self.put(config, "quant_compute_dtype", parse_dtype(dtype.value), doc, dtype)
                return True
            precision = args.get("precision")
            if kind in ("MegatronMixedPrecision", "MixedPrecision", "HalfPrecision", "FSDPPrecision") and precision:
                raw = str(precision.value)
                origin = origin_of(doc, precision).derived(f"{kind} plugin")
                config.precision = Sourced(raw, origin)
                config.precision_plugin = kind
                self._derive(config, raw, origin)
                scaler = args.get("scaler")
                if kind == "MixedPrecision" and scaler is not None and scaler.value not in (None, False, "null"):
                    self.put(config, "grad_scaler", True, doc, scaler)  # a scaler the plugin is given
                return True
            if kind == "TransformerEnginePrecision":
                weights = args.get("weights_dtype")
                weights_dtype = parse_dtype(weights.value) if weights is not None else None
                raw = "transformer-engine-float16" if weights_dtype == "float16" else "transformer-engine"
                config.precision = Sourced(raw, origin_of(doc, weights or block).derived(f"{kind} plugin"))
                config.precision_plugin = kind
                self._derive(config, raw, config.precision.origin)
                return True
        return False

    def _derive(self, config: TrainingConfig, raw: str, origin: Origin) -> None:
        """The normalised switches a precision string amounts to (derived, never edited)."""
        mode = unify(raw)
        config.precision_mode = Sourced(mode, origin) if mode is not None else None
        if mode is None:
            return
        # no key: these are derived from the precision string, so fixes must not write them
        at = Origin("derived", origin.path, origin.line, origin.column, None, f"from precision {raw!r}")
        dtype = MODE_DTYPE[mode]
        if mode.endswith("-mixed"):
            mixed = "fp16" if dtype == "float16" else "bf16"
            config.mixed_precision = Sourced(mixed, Origin.default(f"{at}, at {origin.location()}"))
        elif mode.startswith("transformer-engine"):
            config.mixed_precision = Sourced("fp8", Origin.default(f"{at}, at {origin.location()}"))
            config.fp8 = Sourced(f"transformer-engine ({dtype} weights)", at)
            config.torch_dtype = Sourced(dtype, at)
        elif mode != "32-true":
            config.torch_dtype = Sourced(dtype, at)
            config.mixed_precision = Sourced("no", Origin.default(f"{at}, at {origin.location()}"))

    def _devices(self, doc: Document, config: TrainingConfig) -> None:
        for path in ("trainer.devices", "devices"):
            found = self.resolved(doc, path)
            if found is None:
                continue
            node, value, via = found
            indices = device_indices(value)
            if indices is not None:
                config.devices = Sourced(indices, self.sourced(doc, node, via))
            return

    def _strategy(self, doc: Document, config: TrainingConfig) -> None:
        node = self.node(doc, "trainer.strategy") or self.node(doc, "strategy")
        if node is None:
            return
        origin = origin_of(doc, node)
        if isinstance(node.value, str):
            name = node.value.strip().lower()
            if name in DEEPSPEED_STRATEGIES:
                stage, optimizer, params = DEEPSPEED_STRATEGIES[name]
                config.zero_stage = Sourced(stage, origin)
                config.offload_optimizer = Sourced(optimizer, origin)
                config.offload_param = Sourced(params, origin)
            elif name in FSDP_STRATEGIES:
                config.fsdp = Sourced(True, origin)
                config.fsdp_sharding = Sourced("full_shard", origin.derived("FSDPStrategy default FULL_SHARD"))
                if FSDP_STRATEGIES[name]:
                    config.offload_param = Sourced("cpu", origin)
            return
        kind, args = _class_name(node), _init_args(node)
        if kind == "DeepSpeedStrategy":
            stage_node = args.get("stage")
            number = to_int(stage_node.value) if stage_node is not None else None
            if stage_node is not None and number is not None:
                self.put(config, "zero_stage", number, doc, stage_node)
            else:
                config.zero_stage = Sourced(2, origin.derived("DeepSpeedStrategy default stage=2"))
            for key, name, device_key in (
                ("offload_optimizer", "offload_optimizer", "offload_optimizer_device"),
                ("offload_parameters", "offload_param", "offload_params_device"),
            ):
                flag = args.get(key)
                if flag is not None and to_bool(flag.value) is not None:
                    device = args.get(device_key)
                    where = str(device.value) if device is not None and device.value else "cpu"
                    self.put(config, name, where if to_bool(flag.value) else "none", doc, flag)
            ds = args.get("config")
            if ds is not None and looks_like_path(ds.value):
                config.references["deepspeed"] = Sourced(str(ds.value).strip(), origin_of(doc, ds))
        elif kind in ("FSDPStrategy", "NLPFSDPStrategy"):
            config.fsdp = Sourced(True, origin)
            sharding = args.get("sharding_strategy")
            if sharding is not None and isinstance(sharding.value, str):
                name = sharding.value.strip().lower()
                self.put(config, "fsdp_sharding", MEGATRON_FSDP_SHARDING.get(name, name), doc, sharding)
            else:
                config.fsdp_sharding = Sourced("full_shard", origin.derived("FSDPStrategy default FULL_SHARD"))
            offload = args.get("cpu_offload")
            if offload is not None and to_bool(offload.value):
                self.put(config, "offload_param", "cpu", doc, offload)

    def _trainer(self, doc: Document, config: TrainingConfig) -> None:
        clip = self.node(doc, "trainer.gradient_clip_val")
        algorithm = self.node(doc, "trainer.gradient_clip_algorithm")
        by_value = algorithm is not None and str(algorithm.value).lower() == "value"
        if clip is not None and to_float(clip.value) is not None and not by_value:
            self.put(config, "max_grad_norm", to_float(clip.value), doc, clip)
        accumulate = self.node(doc, "trainer.accumulate_grad_batches")
        if accumulate is not None and to_int(accumulate.value) is not None and not _is_megatron(doc):
            self.put(config, "grad_accum_steps", to_int(accumulate.value), doc, accumulate)

    def _gpt_variant(self, doc: Document, config: TrainingConfig) -> None:
        quantize = self.node(doc, "quantize")
        if quantize is not None and isinstance(quantize.value, str) and quantize.value in QUANTIZE:
            self.put(config, "quantization_bits", QUANTIZE[quantize.value][0], doc, quantize)
            mode = unify(config.precision.value) if config.precision is not None else None
            # finetune/lora.py: dtype = {"16-true": torch.float16, "bf16-true": torch.bfloat16,
            # "32-true": torch.float32}[precision]; BitsandbytesPrecision(quantize[4:], dtype)
            if mode in ("16-true", "bf16-true", "32-true") and config.precision is not None:
                at = config.precision.origin
                config.quant_compute_dtype = Sourced(
                    MODE_DTYPE[mode],
                    Origin("derived", at.path, at.line, at.column, None, f"{GPT_LABEL}: the precision's dtype"),
                )
        lora = self.node(doc, "lora_r")
        if lora is not None and lora.value is not None:
            self.put(config, "train_type", "lora", doc, lora)
        train = _mapping(self.node(doc, "train"))
        devices = self.node(doc, "devices")
        if train and devices is not None and "trainer" not in self.root(doc):
            self._gpt_batches(doc, config, train, devices)
            self._gpt_sharding(doc, config, devices)

    def _gpt_batches(self, doc: Document, config: TrainingConfig, train: dict[str, Node], devices: Node) -> None:
        """``TrainArgs.gradient_accumulation_iters``: global_batch_size // (devices * num_nodes) // micro_batch_size."""
        total, micro = train.get("global_batch_size"), train.get("micro_batch_size")
        count = to_int(devices.value)
        nodes_node = self.node(doc, "num_nodes")
        nodes = to_int(nodes_node.value) if nodes_node is not None else 1
        if total is None or micro is None or count is None or count < 1 or not nodes:
            return
        big, small = to_int(total.value), to_int(micro.value)
        if big is None or not small:
            return
        steps = big // (count * nodes) // small
        if steps > 0:
            origin = origin_of(doc, total).derived(
                f"{GPT_LABEL}: global_batch_size {big} // ({count} devices x {nodes} nodes) // micro_batch_size {small}"
            )
            config.grad_accum_steps = Sourced(steps, origin)

    def _gpt_sharding(self, doc: Document, config: TrainingConfig, devices: Node) -> None:
        """The GPT variant shards whenever ``devices * num_nodes > 1``: FSDPStrategy in finetune/full.py
        (FULL_SHARD) and pretrain.py (``sharding_strategy="HYBRID_SHARD"``), ModelParallelStrategy
        with ``fully_shard`` (FSDP2) data parallelism in finetune/lora.py."""
        count = to_int(devices.value)
        many = devices.value in ("auto", -1, "-1") or (count is not None and count > 1)
        if not many or config.fsdp is not None:
            return
        at = origin_of(doc, devices)
        origin = Origin("derived", at.path, at.line, at.column, None, f"{GPT_LABEL} shards over more than one device")
        config.fsdp = Sourced(True, origin)
        pretrain = self.node(doc, "model_name") is not None or self.node(doc, "model_config") is not None
        config.fsdp_sharding = Sourced("hybrid_shard" if pretrain else "full_shard", origin)

    def _megatron_variant(self, doc: Document, config: TrainingConfig) -> None:
        peft = self.node(doc, "model.peft")
        kind = _class_name(peft).lower()
        if peft is not None and kind:
            self.put(config, "train_type", "lora" if "lora" in kind else kind, doc, peft)
        if not _is_megatron(doc):
            return
        scale = self.node(doc, "model.native_amp_init_scale")
        value = to_float(scale.value) if scale is not None else None
        if scale is not None and value is not None and value > 0:
            self.put(config, "initial_scale_power", math.log2(value), doc, scale)
        fsdp = self.node(doc, "model.fsdp")
        if fsdp is not None and to_bool(fsdp.value):
            self.put(config, "fsdp", True, doc, fsdp)
            sharding = self.node(doc, "model.fsdp_sharding_strategy")
            if sharding is not None and isinstance(sharding.value, str):
                name = sharding.value.strip().lower()
                self.put(config, "fsdp_sharding", MEGATRON_FSDP_SHARDING.get(name, name), doc, sharding)
            else:
                config.fsdp_sharding = Sourced(
                    "full_shard", origin_of(doc, fsdp).derived(f"{MEGATRON_LABEL} default 'full'")
                )
            reduce = self.node(doc, "model.fsdp_grad_reduce_dtype")
            if reduce is not None and parse_dtype(reduce.value) is not None:
                self.put(config, "fsdp_reduce_dtype", parse_dtype(reduce.value), doc, reduce)
        fp8 = self.node(doc, "model.fp8")
        if fp8 is not None and to_bool(fp8.value):
            hybrid = self.node(doc, "model.fp8_hybrid")
            recipe = "HYBRID" if hybrid is not None and to_bool(hybrid.value) else "E4M3"
            self.put(config, "fp8", f"transformer-engine ({recipe}, Megatron)", doc, fp8)
        granularity = self.node(doc, "model.activations_checkpoint_granularity")
        if granularity is not None and granularity.value not in (None, "null"):
            self.put(config, "gradient_checkpointing", True, doc, granularity)
        scheme = self.node(doc, "model.peft.peft_scheme")
        if scheme is not None and isinstance(scheme.value, str):
            self.put(
                config, "train_type", "full" if scheme.value.lower() == "none" else scheme.value.lower(), doc, scheme
            )

    def _for_rules(self, config: TrainingConfig) -> None:
        """What the framework's rules read of the file besides the normalised fields, set once."""
        quantize = config.keys.get("quantize")
        if quantize is not None and quantize.value:
            config.quantize = Sourced(str(quantize.value), quantize.origin)
        apex = (setting(config, f"trainer.{key}") for key in ("amp_backend", "amp_level"))
        config.apex_args = tuple(item for item in apex if item is not None)
        strategy = setting(config, "trainer.strategy")
        if strategy is not None and isinstance(strategy.value, str):
            config.strategy = Sourced(strategy.value.strip().lower(), strategy.origin)
        elif strategy is not None and isinstance(strategy.value, dict):
            for key in ("class_path", "_target_"):
                target = setting(config, f"trainer.strategy.{key}")
                if target is not None and isinstance(target.value, str):
                    config.strategy = Sourced(target.value, strategy.origin)
                    break
        clip = setting(config, "trainer.gradient_clip_val")
        value = to_float(clip.value) if clip is not None else None
        algorithm = setting(config, "trainer.gradient_clip_algorithm")
        by_norm = algorithm is None or algorithm.value is None or str(algorithm.value).lower() == "norm"
        if clip is not None and value is not None and by_norm:
            config.gradient_clip_norm = Sourced(value, clip.origin)


def device_indices(value: Any) -> str | None:
    """The framework's ``devices`` (``fabric/utilities/device_parser.py`` ``_parse_gpu_ids``) as
    indices: N → GPUs 0..N-1, a list or "0,1" → those, "2" → a count; None for all
    ("auto", -1, "-1") or what it cannot read."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, list):
        items = [to_int(item.value if isinstance(item, Node) else item) for item in value]
        return ",".join(str(i) for i in items if i is not None) if all(i is not None for i in items) else None
    if isinstance(value, str):
        text = value.strip()
        if "," in text:
            parts = [p.strip() for p in text.split(",") if p.strip()]
            return ",".join(parts) if all(p.isdecimal() for p in parts) else None
        value = to_int(text)
    if isinstance(value, int) and 0 < value <= MAX_DEVICES:
        return ",".join(str(i) for i in range(value))
    return None


#: more devices than any machine holds is read as unknown (``devices: 10**18`` must not
#: build a list of that many indices)
MAX_DEVICES = 4096


def setting(config: TrainingConfig, path: str) -> Sourced[Any] | None:
    """A nested value of the file (``"trainer.accelerator"``) with where it is, from ``config.keys``."""
    first, *rest = path.split(".")
    top = config.keys.get(first)
    if top is None:
        return None
    if not rest:
        return top
    value: Any = top.value
    node: Node | None = None
    for part in rest:
        if not isinstance(value, Mapping):
            return None
        node = value.get(part)
        if not isinstance(node, Node):
            return None
        value = node.value
    assert node is not None
    line, column = node.anchor
    return Sourced(node.value, Origin("file", top.origin.path, line, column, node.key, format=top.origin.format))


def flavour(config: TrainingConfig) -> str:
    """The GPT variant, the Megatron variant (1.x builder; 2.x ``MegatronMixedPrecision``
    plugin) or the plain "trainer" (:mod:`.modes` names the values)."""
    if "trainer" not in config.keys:
        return GPT_VARIANT
    target = setting(config, "plugins._target_")
    if target is not None and str(target.value).endswith("MegatronMixedPrecision"):
        return MEGATRON2_VARIANT
    if any(setting(config, f"model.{k}") for k in ("megatron_amp_O2", "native_amp_init_scale")):
        return MEGATRON_VARIANT
    if setting(config, "model.tensor_model_parallel_size") is not None:
        return MEGATRON_VARIANT
    return TRAINER
