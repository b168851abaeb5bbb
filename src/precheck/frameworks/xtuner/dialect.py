"""This framework's mmengine Python configs (``xtuner train CONFIG.py``), read by
:mod:`precheck.sources.mmengine_config` into a mapping of the module's top-level settings.

Read upstream (xtuner 0.2.0, mmengine 0.10.7, the configs of ``xtuner/configs``):

- ``model = dict(type=SupervisedFinetune, llm=dict(type=AutoModelForCausalLM.from_pretrained,
  pretrained_model_name_or_path=..., torch_dtype=torch.float16, quantization_config=dict(
  type=BitsAndBytesConfig, load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16, ...)),
  lora=dict(type=LoraConfig, ...))``: ``llm`` is ``from_pretrained``'s arguments; a ``lora``
  makes ``SupervisedFinetune`` call ``prepare_model_for_kbit_training`` and ``get_peft_model``
  (``model/sft.py`` ``_prepare_for_lora``); without one the whole model trains.
- ``llm.attn_implementation="flash_attention_2"``: ``_prepare_for_flash_attn`` (``model/sft.py``)
  keeps it and sets ``torch_dtype`` to bf16 where ``is_bf16_supported()``, else fp16.
- ``optim_wrapper = dict(type=AmpOptimWrapper, dtype="float16", loss_scale="dynamic", ...)``:
  mmengine's ``AmpOptimWrapper`` (``mmengine/optim/optimizer/amp_optimizer_wrapper.py``) runs
  the forward pass in ``autocast(dtype=...)`` (``None``: torch's cuda default, float16) and
  scales the loss with a ``GradScaler`` (``loss_scale='dynamic'`` by default, always a
  scaler); ``dtype`` must be one of float16, bfloat16, float32, float64. A plain
  ``OptimWrapper`` has no autocast.
- memory: ``train_dataloader = dict(batch_size=..., dataset=dict(max_length=...))`` is the
  micro-batch per device and the (packed) sequence length; ``SupervisedFinetune`` (and ``DPO``,
  ``ORPO``, its subclasses), ``RewardModel`` and ``LLaVAModel`` turn activation checkpointing on
  unless ``use_activation_checkpointing=False`` (``model/sft.py:90,112-120``,
  ``model/reward.py:119,158-168``, ``model/llava.py:68``@0.2.0).
- ``xtuner train CONFIG --deepspeed NAME`` (``tools/train.py:289-370``@0.2.0) replaces
  ``optim_wrapper`` with a ``DeepSpeedOptimWrapper`` and trains in the DeepSpeed JSON's
  fp16/bf16: a launch read by :mod:`.launch` attaches that file (``deepspeed``); a config
  checked on its own is the path without ``--deepspeed``, which the launch decides: what the
  ``AmpOptimWrapper`` does is then an assumption (``Traits.amp_replaced_by_launch``). A launch
  read without ``--deepspeed`` is mmengine's ``MMDistributedDataParallel`` (a full copy of the
  model on every GPU): its memory is estimated unsharded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ...config import TrainingConfig
from ...dialects.base import Dialect, origin_of, read_attachments
from ...dtypes import parse_dtype
from ...provenance import Origin, Sourced
from ...sources import Document, Node

#: mmengine's mixed-precision optimizer wrapper
AMP_WRAPPER = "AmpOptimWrapper"
#: ``AmpOptimWrapper.valid_dtypes``
AMP_DTYPES = ("float16", "bfloat16", "float32", "float64")
#: the model classes whose ``use_activation_checkpointing`` defaults to True
CHECKPOINTING_MODELS = ("SupervisedFinetune", "DPO", "ORPO", "RewardModel", "LLaVAModel")


def _above_one(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


def _type(node: Node | None) -> str | None:
    """The last name of a block's ``type=`` (``mmengine.optim.AmpOptimWrapper`` → ``AmpOptimWrapper``)."""
    if node is None or not isinstance(node.value, dict):
        return None
    kind = node.value.get("type")
    return kind.value.rsplit(".", 1)[-1] if kind is not None and isinstance(kind.value, str) else None


class MmengineConfig(Dialect):
    fields = ()

    def score(self, doc: Document) -> int:
        if doc.format != "python":
            return 0
        root = doc.mapping()
        model = root.get("model")
        if model is None or not isinstance(model.value, dict) or "optim_wrapper" not in root:
            return 0
        llm = model.get("llm")
        if llm is not None and isinstance(llm.value, dict):
            return self.priority + 2
        # a model class that loads its own checkpoint (InternVL_V1_5(model_path=...)): still
        # mmengine's runner and optimizer wrapper, never TrainingArguments
        return self.priority + 1 if "type" in model.value else 0

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        config = super().read(doc, env)
        read_attachments(self, doc, config, env, {"deepspeed": "deepspeed"})  # `--deepspeed` of a launch
        parallel = self.node(doc, "sequence_parallel_size")
        if "deepspeed" not in config.attached and isinstance(parallel, Node) and _above_one(parallel.value):
            # sequence parallelism runs only under DeepSpeed: without `--deepspeed`, check_cfg
            # asserts sequence_parallel_size == 1 (tools/train.py:132-138@0.2.0); the file is the
            # launch's, the README's deepspeed_zero2 is taken (its "auto" dtypes filled from the device)
            from .launch import with_deepspeed  # only for such a config

            config = with_deepspeed(config)
        elif doc.format != "python" and "deepspeed" not in config.attached and not self._wrapped(doc):
            # a launch without `--deepspeed` sets no strategy (tools/train.py:278-366@0.2.0): mmengine's
            # Runner.wrap_model wraps the model in MMDistributedDataParallel, a full copy on every GPU
            # (mmengine/runner/runner.py@0.10.7): the launcher does not shard this run
            config = replace(config, traits=replace(config.traits, launcher_shards=False))
        return config

    def _wrapped(self, doc: Document) -> bool:
        """The config names its own strategy or model wrapper (mmengine's FSDP, DeepSpeed)."""
        return self.node(doc, "strategy") is not None or self.node(doc, "model_wrapper_cfg") is not None

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        name = self.node(doc, "model.llm.pretrained_model_name_or_path") or self.node(doc, "model.model_path")
        if name is not None and isinstance(name.value, str):
            self.put(config, "model", name.value, doc, name)
        dtype = self.node(doc, "model.llm.torch_dtype")
        if dtype is not None and parse_dtype(dtype.value) is not None:
            self.put(config, "torch_dtype", parse_dtype(dtype.value), doc, dtype)
        attention = self.node(doc, "model.llm.attn_implementation")
        if attention is not None and isinstance(attention.value, str):
            self.put(config, "attn_implementation", attention.value, doc, attention)
        quant = self.node(doc, "model.llm.quantization_config")
        if _type(quant) == "BitsAndBytesConfig":
            self.quantization_switches(doc, config, "model.llm.quantization_config.")
            compute = self.node(doc, "model.llm.quantization_config.bnb_4bit_compute_dtype")
            if compute is not None and parse_dtype(compute.value) is not None:
                self.put(config, "quant_compute_dtype", parse_dtype(compute.value), doc, compute)
        lora = self.node(doc, "model.lora")
        if lora is not None and isinstance(lora.value, dict) and lora.value:
            self.put(config, "train_type", "lora", doc, lora)
        else:
            config.train_type = Sourced(
                "full", Origin.default("no `lora` in `model`: SupervisedFinetune trains the model")
            )
        self._memory(doc, config)
        wrapper = self.node(doc, "optim_wrapper")
        kind = _type(wrapper)
        if kind == AMP_WRAPPER:
            type_node = self.node(doc, "optim_wrapper.type")
            assert type_node is not None
            self.put(config, "amp", True, doc, type_node)
            amp_dtype = self.node(doc, "optim_wrapper.dtype")
            if amp_dtype is not None and parse_dtype(amp_dtype.value) is not None:
                self.put(config, "amp_dtype", parse_dtype(amp_dtype.value), doc, amp_dtype)
        elif kind is not None:
            type_node = self.node(doc, "optim_wrapper.type")
            assert type_node is not None
            self.put(config, "amp", False, doc, type_node)

    def _memory(self, doc: Document, config: TrainingConfig) -> None:
        """The micro-batch, the sequence length and activation checkpointing (see the module)."""
        batch = self.node(doc, "train_dataloader.batch_size")
        if batch is not None and _positive(batch.value):
            self.put(config, "batch_size", batch.value, doc, batch)
        length = self._max_length(doc)
        if length is not None:
            parallel = self.node(doc, "sequence_parallel_size")
            if parallel is not None and _above_one(parallel.value):
                # each sequence-parallel rank holds its 1/SP slice of the sequence
                # (split_for_sequence_parallel, xtuner/parallel/sequence/comm.py:93@0.2.0)
                config.seq_len = Sourced(
                    max(1, int(length.value) // int(parallel.value)),
                    origin_of(doc, length).derived(f"max_length / sequence_parallel_size {parallel.value}"),
                )
            else:
                self.put(config, "seq_len", length.value, doc, length)
        switch = self.node(doc, "model.use_activation_checkpointing")
        if switch is not None and isinstance(switch.value, bool):
            self.put(config, "gradient_checkpointing", switch.value, doc, switch)
        elif _type(self.node(doc, "model")) in CHECKPOINTING_MODELS:
            config.gradient_checkpointing = Sourced(
                True,
                Origin.default(
                    f"{_type(self.node(doc, 'model'))}(use_activation_checkpointing=True): xtuner enables "
                    "gradient checkpointing unless the config turns it off (model/sft.py:90@0.2.0)"
                ),
            )

    def _max_length(self, doc: Document) -> Node | None:
        """The dataset's ``max_length``: its own, or the longest of a ``ConcatDataset``'s ``datasets``."""
        own = self.node(doc, "train_dataloader.dataset.max_length")
        if own is not None and _positive(own.value):
            return own
        parts = self.node(doc, "train_dataloader.dataset.datasets")
        if parts is None or not isinstance(parts.value, list):
            return None
        lengths = [
            item.value["max_length"]
            for item in parts.value
            if isinstance(item, Node) and isinstance(item.value, dict) and "max_length" in item.value
        ]
        found = [n for n in lengths if isinstance(n, Node) and _positive(n.value)]
        return max(found, key=lambda n: int(n.value)) if found else None


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
