"""What a framework is like, as data the rules read (model layer).

Each framework declares its :class:`Traits` once, in its own package; the dialect stamps
them on every :class:`~precheck.config.TrainingConfig` it reads. Rules ask a config's
traits ("does this run train through the HF Trainer?") instead of comparing framework
names, so that adding a framework never means editing a rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .versions import VersionRange


@dataclass(frozen=True, slots=True)
class Traits:
    """One framework's traits (every field defaults to "not so")."""

    #: trains through transformers' ``Trainer``/``TrainingArguments``: its DeepSpeed
    #: integration, its ``optim`` names, its ``--fp16``/``--bf16`` switches
    hf_trainer: bool = False
    #: the launcher's ``ACCELERATE_*`` variables reach the run (HF Trainer, accelerate)
    honours_accelerate_env: bool = False
    #: the launch fills a DeepSpeed file's ``"auto"`` values (HF Trainer, accelerate)
    fills_deepspeed_auto: bool = False
    #: the launch fills a DeepSpeed file's ``fp16``/``bf16`` ``"auto"`` from the device (CUDA
    #: present, ``is_bf16_supported()``), not from the run's own flags; the framework's resolver
    #: puts the device's answer in the plan's autocast dtype (:mod:`precheck.resolve.deepspeed_device`)
    deepspeed_auto_dtype_by_device: bool = False
    #: a launch option that replaces the config's mixed precision (xtuner's ``--deepspeed``
    #: replaces mmengine's ``AmpOptimWrapper``): for a config checked without its launch, what
    #: the config's AMP settings do is an assumption (:func:`precheck.premises.premises`)
    amp_replaced_by_launch: str | None = None
    #: known to hand a DeepSpeed file over without filling its ``"auto"`` values
    keeps_deepspeed_auto: bool = False
    #: the training method defaults to LoRA when the files do not say (the memory estimate
    #: counts adapters then)
    lora_by_default: bool = False
    #: the launcher may shard the run when the files say nothing about sharding
    launcher_shards: bool = False
    #: the entry point decides the training method (full, LoRA) from its own keys
    method_by_entry_point: bool = False
    #: a script's own calls (a plain PyTorch loop): no framework switch to flip
    script: bool = False
    #: its mixed precision is an autocast that checks bf16 support itself, with no earlier
    #: check (mmengine's ``AmpOptimWrapper`` enters ``mmengine.runner.amp.autocast``, which raises
    #: ``RuntimeError('Current CUDA Device does not support bfloat16. Please switch dtype to
    #: float16.')`` when ``not torch.cuda.is_bf16_supported()``: ``runner/amp.py:121-125@0.10.4``)
    bf16_checked_by_autocast: bool = False
    #: a file a run attaches (DeepSpeed JSON, accelerate or FSDP config), not a trainer
    component: bool = False
    #: the precision string to write instead of bf16 on a card without it, and what it does
    #: (``("fp32", "train in fp32")``); None: the framework has fp16/bf16 switches
    precision_without_bf16: tuple[str, str] | None = None
    #: its files are ``TrainingArguments`` (and TRL config) keys that the user's own script
    #: reads with ``HfArgumentParser``, not a framework's entry point
    arguments_for_user_script: bool = False
    #: the HF Trainer itself (transformers, TRL): the file's keys are ``TrainingArguments``'
    #: own, not a framework's schema mapped onto them
    plain_hf_trainer: bool = False
    #: hands its ``fp16``/``bf16`` switches to ``TrainingArguments`` as written (not after
    #: reconciling them itself)
    passes_precision_flags: bool = False
    #: why the framework trains pure bf16 (bf16 weights, no fp32 copy) on purpose, as a
    #: finding says it; None: only where a setting asks for it
    pure_bf16_by_design: str | None = None
    #: precision is one mode string: ``16-mixed`` (fp16 autocast over fp32 weights),
    #: ``bf16-true`` (bf16 weights, no fp32 copy)
    precision_modes: bool = False
    #: refuses fp16 training before the run starts
    refuses_fp16: bool = False
    #: the precision modes its quantized path takes (its ``quantize`` setting), each with what it
    #: trains in, when it refuses the others (a quantized path that takes the ``-true`` modes alone, its
    #: mixed modes raise): a fix for a quantized run names only these; empty: any mode
    quantized_precisions: tuple[tuple[str, str], ...] = ()
    #: the optimizer a fix names to keep bf16 weights with compensated rounding (Kahan summation)
    kahan_optimizer: str | None = None
    #: its fp16 switch also loads fp16 weights, which a full fine-tune cannot train: the fix
    #: to give instead of fp16 mixed precision
    fp16_weights_fix: str | None = None
    #: stops a ``pure_bf16`` run itself where ``torch.cuda.is_bf16_supported()`` says no
    refuses_unsupported_pure_bf16: bool = False
    #: switches that replace the optimizer, each with the ``optim`` name of what it builds
    optimizer_switches: tuple[tuple[str, str], ...] = ()
    #: an optimizer-name prefix whose optimizers use Kahan summation (unless ``no_kahan``),
    #: and what they are
    kahan_optimizer_prefix: tuple[str, str] | None = None
    #: the releases that rewrite ``fp16``/``bf16`` from ``torch_dtype`` (None: none do)
    flags_from_torch_dtype: VersionRange | None = None
    #: LoRA adapters are peft's own, in the dtype peft gives them: the framework does not
    #: cast them to float32 itself
    adapters_follow_peft: bool = False
    #: fp16 mixed precision's GradScaler unscales the gradients of the weights as loaded,
    #: bf16 ones too: nothing refuses the pair before the first step
    grad_scaler_any_weights: bool = False
    #: optimizers that step bf16 weights only (their states are bf16)
    bf16_optimizers: frozenset[str] = frozenset()
    #: FSDP comes from the framework's own option naming an FSDP file (``--fsdp FILE``): naming
    #: the file switches FSDP on, its ``fsdp_version`` is read (default 2), and FSDP's activation
    #: checkpointing turns ``gradient_checkpointing`` off instead of raising; the value is the
    #: fact id of the warning it prints then (:func:`precheck.facts.quote`). None: the HF Trainer's way
    fsdp_from_file: str | None = None
    #: LoRA with no target modules named gets PEFT's per-model default targets (the
    #: framework passes none of its own to ``LoraConfig``)
    peft_default_lora_targets: bool = False
    #: its resolver trains adapters when the files name no training method
    #: (``is_adapter_training(config, "lora")``); the smoke step follows it
    resolves_unset_method_as_lora: bool = False
    #: the framework's name as findings write it (a message about the run's framework)
    label: str = ""
    #: its Trainer refuses ``gradient_accumulation_steps`` in a DeepSpeed file (it sets the
    #: key itself): the fact id of what it raises (:func:`precheck.facts.quote`); None: no such check
    refuses_deepspeed_accumulation: str | None = None
    #: refuses fp8 below compute capability 9.0 itself (sm_89 cards included): ``(span, message)``
    #: fact ids, the releases that do and what they raise; None: the fp8 backend's own sm_89 bound
    fp8_refused_below_hopper: tuple[str, str] | None = None
    #: the variants (``TrainingConfig.variant``) that run their own loop, not the framework's Trainer
    own_loop_variants: frozenset[str] = frozenset()

    def adding(self, **more: Any) -> Traits:
        """These traits with ``more`` set as well."""
        return replace(self, **more)


#: a config read by no framework in particular
NO_TRAITS = Traits()

#: what every framework that trains through the HF Trainer shares (its DeepSpeed
#: integration, the launcher's variables, the launcher's sharding); each adds its own
#: with :meth:`Traits.adding`
ON_HF_TRAINER = Traits(hf_trainer=True, honours_accelerate_env=True, fills_deepspeed_auto=True, launcher_shards=True)
