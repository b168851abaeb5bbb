"""The normalised training configuration.

Dialects map each framework's keys onto these fields, keeping where every value came
from (:class:`~precheck.provenance.Sourced`). A field is None when the run's files do
not set it: defaults are applied by :mod:`precheck.resolve`, which knows each
framework's own, so that "unset" and "set to the default" stay distinguishable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .provenance import Origin, Sourced
from .sources.nodes import Node, SourceNote
from .traits import NO_TRAITS, Traits

SBool = Sourced[bool] | None
SStr = Sourced[str] | None
SDtype = Sourced[str] | None


@dataclass(slots=True)
class TrainingConfig:
    """What a run's files set. A plain (slotted) dataclass, built once per file and
    filled in by the dialect: no validation happens on construction; the dialects convert
    each value. Containers given to the constructor are copied (a config never shares a
    list or dict with its caller), as the pydantic model this replaced did."""

    #: the dialect that read the file: its framework's one name ("hf-trainer", ...)
    dialect: str
    #: the framework whose semantics apply (its name as a Python distribution)
    framework: str
    path: str
    #: what the framework is like (:mod:`precheck.traits`), stamped by its dialect
    traits: Traits = NO_TRAITS

    # the model
    model: SStr = None
    #: dtype the model weights are loaded in (``torch_dtype``, ``backbone_dtype``...)
    torch_dtype: SDtype = None
    #: a 4-/8-bit quantised base model (QLoRA)
    quantization_bits: Sourced[int] | None = None
    #: the file turns 4-/8-bit loading off itself (``load_in_4bit: false``): where the
    #: unquantized base model is decided
    quantization_off: SBool = None
    #: "lora", "full", ... when the file says
    train_type: SStr = None

    # mixed-precision switches, as the framework names them
    fp16: SBool = None
    bf16: SBool = None
    tf32: SBool = None
    #: a mode string: "no" | "fp16" | "bf16" | "fp8" (accelerate, and frameworks that pass it on)
    mixed_precision: SStr = None
    #: an on/off autocast switch with a separate dtype (frameworks that split the two)
    amp: SBool = None
    amp_dtype: SDtype = None
    pure_bf16: SBool = None
    grad_scaler: SBool = None

    # optimisation
    optimizer: SStr = None
    gradient_precision: SStr = None
    gradient_checkpointing: SBool = None
    #: the optimizer steps each parameter in the backward pass and frees its gradient
    #: (an optimizer step fused into backward): gradients never all live at once
    optimizer_in_backward: SBool = None
    #: transformers 4.x TrainingArguments' AMP backend (auto | apex | cpu_amp)
    half_precision_backend: SStr = None
    max_grad_norm: Sourced[float] | None = None

    # distribution
    #: device indices the config itself assigns ("0,1"; a framework's own GPU list)
    devices: SStr = None
    fsdp: SBool = None
    fsdp_mixed_precision: SBool = None
    #: FSDP MixedPrecision policy dtypes (accelerate fsdp_config, HF fsdp_config, torch policies)
    fsdp_param_dtype: SDtype = None
    fsdp_reduce_dtype: SDtype = None
    fsdp_buffer_dtype: SDtype = None
    #: "full_shard", "shard_grad_op", "hybrid_shard"... as the framework names it
    fsdp_sharding: SStr = None
    #: accelerate's ``distributed_type`` (DEEPSPEED, FSDP, MULTI_GPU, NO...)
    distributed_type: SStr = None
    num_processes: Sourced[int] | None = None

    # DeepSpeed-style settings (DeepSpeed JSON, or a framework's own spelling of them)
    zero_stage: Sourced[int] | None = None
    #: where ZeRO offloads optimizer states / parameters: "cpu" | "nvme" | "none"
    offload_optimizer: SStr = None
    offload_param: SStr = None
    #: static loss scale; 0 means dynamic (DeepSpeed ``fp16.loss_scale``)
    loss_scale: Sourced[float] | None = None
    #: dynamic loss scaling starts at 2**initial_scale_power
    initial_scale_power: Sourced[float] | None = None
    #: dtype gradients are all-reduced in (DeepSpeed ``communication_data_type``)
    communication_dtype: SDtype = None
    #: dtype gradients are accumulated in (DeepSpeed ``data_types.grad_accum_dtype``)
    grad_accum_dtype: SDtype = None
    #: keys whose value is ``"auto"`` (to be filled by an integration); value: the key path
    auto_keys: list[Sourced[str]] = field(default_factory=list)

    # more precision settings
    #: bitsandbytes ``bnb_4bit_compute_dtype`` (or a framework's spelling of it)
    quant_compute_dtype: SDtype = None
    #: attention kernel: "eager" | "sdpa" | "flash_attention_2" | "flash_attention_3" ...
    attn_implementation: SStr = None
    #: fp8 requested, with its backend when named ("te", "msamp", "torchao", "fp8")
    fp8: SStr = None
    #: a precision string as written (``bf16-mixed``, a recipe's ``dtype``...)
    precision: SStr = None
    #: the canonical mode the framework turns ``precision`` into (an alias spelled out: ``bf16``
    #: as ``bf16-mixed``), set by the dialect; None when the value is invalid or has no modes
    precision_mode: SStr = None

    # sizes (memory estimates, explain)
    batch_size: Sourced[int] | None = None
    grad_accum_steps: Sourced[int] | None = None
    seq_len: Sourced[int] | None = None

    # what the checkpoint itself says (a local ``config.json``)
    #: the checkpoint's saved dtype (``torch_dtype``/``dtype`` in its config.json)
    model_dtype: SDtype = None
    #: its architecture (``architectures[0]`` or ``model_type``)
    model_arch: SStr = None
    #: the checkpoint config.json's scalar keys (hidden_size, num_hidden_layers, model_type...)
    model_dims: dict[str, Sourced[Any]] = field(default_factory=dict)
    #: the model's parameters, counted exactly (``--deep``: built on the meta device)
    model_params: Sourced[int] | None = None
    #: its trainable parameters under the run's adapters, counted the same way
    trainable_params: Sourced[int] | None = None

    # other files of the same run
    #: files this one names, by role ("deepspeed", "accelerate", "fsdp", "model"), as written
    references: dict[str, Sourced[str]] = field(default_factory=dict)
    #: the referenced files, read by their own dialect, by role
    attached: dict[str, TrainingConfig] = field(default_factory=dict)
    #: for a referenced file, where its relative path was found when not beside the file that
    #: names it ("relative to the repository root (PATH)": ``sources.script_path.find_file``)
    found_in: str | None = None

    #: environment variables the run will see (from the process or the config)
    env: dict[str, Sourced[str]] = field(default_factory=dict)
    #: how this framework spells its precision switches ({"fp16": "use_fp16"}); a switch
    #: the framework lacks is absent, so fixes never invent keys
    flag_keys: dict[str, str] = field(default_factory=dict)
    #: every top-level key of the file, as spelled, with where it is
    keys: dict[str, Sourced[Any]] = field(default_factory=dict)
    #: odd but readable input (duplicate keys, YAML 1.1 booleans)
    notes: list[SourceNote] = field(default_factory=list)
    #: the file configures generation, evaluation or quantization, not training: set by a dialect
    #: whose schema tells them apart (a recipe config that builds no optimizer). Rules about
    #: training (numerics of training in fp16, the memory of training) do not apply to it
    inference: bool = False
    #: which flavour of its framework the file is written for, set once by the dialect
    #: (a framework with several entry points: e.g. its own trainer or a library built on it)
    variant: str | None = None
    #: the precision plugin class that set ``precision`` (``MixedPrecision``...); None when
    #: the file's own precision key did
    precision_plugin: str | None = None
    #: the quantization method as the file names it (``bnb.nf4``), whether or not precheck knows it
    quantize: SStr = None
    #: apex AMP arguments the file passes (``amp_backend``, ``amp_level``), which the newer
    #: releases of its framework removed
    apex_args: tuple[Sourced[Any], ...] = ()
    #: the trainer's distributed strategy as the file names it: a registered name, lower-cased
    #: (``fsdp``, ``deepspeed_stage_2``), or the class path a ``class_path``/``_target_`` block
    #: builds, as written
    strategy: SStr = None
    #: the trainer's own gradient clipping value when it clips by norm, its default
    #: (``gradient_clip_val`` with no other algorithm); None when it clips by value or not at all
    gradient_clip_norm: Sourced[float] | None = None
    #: the Megatron backend the run trains through instead of the framework's own trainer
    #: ("Megatron Bridge", "mcore_adapter", "Megatron-core"), from the environment or the keys
    megatron_backend: SStr = None
    #: the format its document was read in (``Document.format``: "yaml", "json", "shell"...);
    #: empty for a config built without one. Fixes that add a key to the file carry it
    format: str = ""
    #: the frameworks known to hand a DeepSpeed file over without filling its ``"auto"``
    #: values, by label (``traits.keeps_deepspeed_auto``), set by the DeepSpeed dialect
    auto_kept_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.auto_keys = list(self.auto_keys)
        self.model_dims = dict(self.model_dims)
        self.references = dict(self.references)
        self.attached = dict(self.attached)
        self.env = dict(self.env)
        self.flag_keys = dict(self.flag_keys)
        self.keys = dict(self.keys)
        self.notes = list(self.notes)

    def setting(self, path: str) -> Sourced[Any] | None:
        """A value of the file at a dotted key path (``amp.opt_level``), as plain data, with
        where it is; top-level keys match with or without a leading ``--`` (configs spelt as flags)."""
        first, *rest = path.split(".")
        top = None
        for key, item in self.keys.items():  # rules ask often: no per-key lstrip unless dashed
            if key == first or (key[:1] == "-" and key.lstrip("-") == first):
                top = item
                break
        if top is None or not rest:
            return top
        node: Node | None = None
        value: Any = top.value
        for part in rest:
            node = value.get(part) if isinstance(value, dict) else None
            if not isinstance(node, Node):
                return None
            value = node.value
        assert node is not None
        line, column = node.anchor
        return Sourced(node.plain(), Origin("file", top.origin.path, line, column, path, format=top.origin.format))
