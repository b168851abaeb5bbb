"""What a framework is like, as data the rules read (model layer).

Each framework declares its :class:`Traits` once, in its own package; the dialect stamps
them on every :class:`~precheck.config.TrainingConfig` it reads. Rules ask a config's
traits ("does this run train through the HF Trainer?") instead of comparing framework
names, so that adding a framework never means editing a rule.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Traits:
    #: trains through transformers' ``Trainer``/``TrainingArguments``: its DeepSpeed
    #: integration, its ``optim`` names, its ``--fp16``/``--bf16`` switches
    hf_trainer: bool = False
    #: the launcher's ``ACCELERATE_*`` variables reach the run (HF Trainer, accelerate)
    honours_accelerate_env: bool = False
    #: the launch fills a DeepSpeed file's ``"auto"`` values (HF Trainer, accelerate)
    fills_deepspeed_auto: bool = False
    #: known to hand a DeepSpeed file over without filling its ``"auto"`` values
    keeps_deepspeed_auto: bool = False
    #: the training method defaults to LoRA when the files do not say
    lora_by_default: bool = False
    #: the launcher may shard the run when the files say nothing about sharding
    launcher_shards: bool = False
    #: the entry point decides the training method (full, LoRA) from its own keys
    method_by_entry_point: bool = False
    #: a script's own calls (a plain PyTorch loop): no framework switch to flip
    script: bool = False
    #: a file a run attaches (DeepSpeed JSON, accelerate or FSDP config), not a trainer
    component: bool = False
    #: the precision string to write instead of bf16 on a card without it, and what it does
    #: (``("fp32", "train in fp32")``); None: the framework has fp16/bf16 switches
    precision_without_bf16: tuple[str, str] | None = None
    #: LoRA with no target modules named gets PEFT's per-model default targets (the
    #: framework passes none of its own to ``LoraConfig``)
    peft_default_lora_targets: bool = False
    #: its resolver trains adapters when the files name no training method
    #: (``is_adapter_training(config, "lora")``); the smoke step follows it
    resolves_unset_method_as_lora: bool = False
    #: the memory estimate counts adapters when the files name no training method. Narrower
    #: than ``lora_by_default`` and ``resolves_unset_method_as_lora``, as precheck has
    #: always estimated: making the three one changes findings
    estimates_unset_method_as_lora: bool = False


#: a config read by no framework in particular
NO_TRAITS = Traits()
