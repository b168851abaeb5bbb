"""PC207–PC210: precision settings that are consistent on paper but not with the model or launcher.

Sources (each rule's docstring names what it relies on):

- bf16 rounding: bf16 keeps 8 significant bits, so adding ``u`` to a weight ``w`` changes
  nothing when ``|u|`` is below half a unit in the last place, i.e. for certain when
  ``|u| < |w|·2**-9``. Measured with torch 2.13 (CPU): one ``torch.optim.AdamW`` step (an update
  of ``lr`` per element at step 1) leaves 84 % of bf16 weights drawn with std 0.02 unchanged at
  lr 1e-5, 70 % at 2e-5, 12 % at 1e-4; a bf16 second moment does not decay at all
  (``v.mul_(0.999) == v`` for bf16 ``v``). pytorch/ao ``torchao/optim/README.md``: "if weight
  update is smaller than 1e-3 of the weight magnitude, there will be no change to the weight
  (using nearest rounding). This is highly problematic for full BF16 training, where we don't
  keep an FP32 copy of model weights." Remedies that keep pure bf16: stochastic rounding
  (torchao ``bf16_stochastic_round=True``, AdamWBF16 ``adamw_bf16``) or Kahan summation
  (optimi: "optimi optimizers can match the performance of mixed precision when training in
  pure BFloat16 by using Kahan summation"; transformers ``optim: stable_adamw``,
  ``optimizer: optimi_adamw``).
- fp16 overflow in T5 and Gemma 3: T5 was trained with bf16 activations (craffel in
  google-research/text-to-text-transfer-transformer#539: "All of our experiments use bfloat16
  activations"); transformers 5.23.0 ``models/t5/modeling_t5.py`` ``T5Block.forward`` clamps
  fp16 hidden states ("# clamp inf values to enable fp16 training") and keeps ``wo`` in fp32
  (``_keep_in_fp32_modules = ["wo"]``); fp16 NaN losses persist: huggingface/transformers#4586,
  #11461, #14189 (T5 v1.1), #23918 (t5-large, flan-t5-xl). Gemma 3: huggingface/transformers
  #36822 "Gemma 3 is broken with fp16" (empty output in float16, bf16 fine; the clamping PRs
  #36831/#36832 were closed unmerged); Unsloth forces float32 for ``gemma3``/``gemma3_text``/
  ``gemma3n``/``gpt_oss`` ("Architectures whose activations exceed fp16's finite range (~6.5e4)
  and must run in bf16 or fp32. Loaded as float16 they silently NaN/Inf at training time.",
  unsloth-zoo ``FORCE_FLOAT32``; EmbeddingGemma activations "reach ~800k", unsloth#4014).
  Gemma 4: NaN grad_norm on the first fp16 steps until Unsloth patched it (unsloth-zoo#866).
- transformers 5.23.0 ``TrainingArguments.__post_init__`` ("5. Mixed Precision"):
  ``self.mixed_precision = os.environ.get("ACCELERATE_MIXED_PRECISION", "no")``, then
  ``"fp16"`` if ``fp16`` else ``"bf16"`` if ``bf16``; the Trainer hands ``args.mixed_precision``
  to its ``Accelerator`` (``trainer.py``). ``accelerate launch`` exports the variable from its
  config's ``mixed_precision`` (accelerate 1.15.0 ``utils/launch.py`` ``prepare_*_env``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..config import TrainingConfig
from ..models import family_of
from ..provenance import Sourced
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule, written
from .device import flag_edit, used_devices
from .optimizer_support import compensated_rounding, names_adapters, optimizer_name, setting

#: training kinds that update the model's own weights (not adapters)
FULL_WEIGHTS = ("full", "freeze", "none", "")


def trains_full_weights(config: TrainingConfig) -> bool:
    if config.quantization_bits is not None or names_adapters(config):
        return False
    default = "lora" if config.traits.lora_by_default else "full"
    kind = str(config.train_type.value if config.train_type is not None else default).strip().lower()
    return kind in FULL_WEIGHTS


def learning_rate(config: TrainingConfig) -> float | None:
    """The learning rate where the file says it at a known place."""
    for path in (("learning_rate",), ("lr",), ("optimizer", "lr"), ("optimizer", "init_args", "lr")):
        item = setting(config, *path)
        if item is None or isinstance(item.value, (dict, list, bool)):
            continue
        try:
            return float(item.value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an int past the float range
            continue
    return None


# --- PC207 / PC208 ---------------------------------------------------------------------------


def _deliberate(ctx: Context) -> str | None:
    """Why this framework trains pure bf16 on purpose, if it does."""
    config, plan = ctx.config, ctx.plan
    if config.traits.pure_bf16_by_design is not None:  # no such framework has a `pure_bf16` key
        return config.traits.pure_bf16_by_design
    if config.pure_bf16 is not None and config.pure_bf16.value:
        return f"`{config.pure_bf16.origin.key or 'pure_bf16'}: true` asks for pure bf16 training"
    if config.traits.precision_modes and config.precision is not None and "true" in str(config.precision.value):
        return f"`{written(config.precision, 'precision')}` asks for bf16 weights"
    if plan.master_weights is not None and plan.master_weights.value == "bfloat16":
        return "the DeepSpeed config keeps master weights in bf16 (`bf16_master_weights_and_grads`)"
    return None


def _pure_bf16(ctx: Context) -> bool:
    plan, config = ctx.plan, ctx.config
    if plan.param_dtype.value != "bfloat16" or not trains_full_weights(config):
        return False
    master = plan.master_weights.value if plan.master_weights is not None else None
    if master not in (None, "bfloat16"):
        return False
    if "deepspeed" in config.references and "deepspeed" not in config.attached:
        return False  # a DeepSpeed file precheck could not read decides the master weights
    if ctx.hardware.known and any(not d.bf16 for d in used_devices(ctx)):
        return False  # bf16 itself is the problem there: PC101
    return compensated_rounding(config) is None


def _launcher_may_shard(ctx: Context) -> bool:
    """A multi-GPU HF Trainer run is usually started by `accelerate launch` with a DeepSpeed or FSDP
    config the training file does not name; ZeRO and accelerate's FSDP keep fp32 master weights."""
    if not ctx.config.traits.plain_hf_trainer:
        return False
    return not ctx.hardware.known or len(used_devices(ctx)) > 1


def _named(config: TrainingConfig, short: bool = False) -> str:
    """The optimizer as written (``short``: its class name only, ``PagedAdamW8bit``)."""
    name = optimizer_name(config)
    if name and short:
        name = name.rsplit(".", 1)[-1]
    return f"`{name}`" if name else "the optimizer"


def _lost_updates(config: TrainingConfig, states: str) -> str:
    lr = learning_rate(config)
    text = (
        "bf16 keeps 8 significant bits, so an update smaller than about 1/512 of a weight rounds away "
        "(one AdamW step at lr 1e-5 leaves 84% of weights of std 0.02 unchanged)"
    )
    if lr is not None and lr > 0:
        text += f"; at learning rate {lr:g} an Adam step of ~lr is lost on every weight above {512 * lr:.2g}"
    if states == "bfloat16":
        text += "; the bf16 second moment does not decay either (v·0.999 rounds back to v)"
    return text


def _state_dtype(ctx: Context) -> str:
    """The optimizer states' dtype: a bitsandbytes optimizer keeps its own whatever the weights'
    dtype (``Optimizer2State.init_state``: ``optim_bits == 32`` -> ``torch.float32``, 8 ->
    ``torch.uint8`` blockwise-quantized, fp32 below ``min_8bit_size``;
    bitsandbytes/optim/optimizer.py:492-510@0.50.2.dev0, commit 95f9af3), so
    ``paged_adamw_32bit`` on bf16 weights keeps fp32 moments; a torch optimizer's states
    follow the parameters (the plan's)."""
    name = (optimizer_name(ctx.config) or "").lower()
    if name.endswith("32bit"):
        return "float32"
    if name.endswith("8bit"):
        return "8-bit quantized"
    return str(ctx.plan.optimizer_state_dtype.value)


def _pure_bf16_origin(ctx: Context) -> Any:
    plan, config = ctx.plan, ctx.config
    item = config.optimizer
    return anchor(
        config.path,
        plan.param_dtype.origin,
        plan.load_dtype.origin,
        *([config.torch_dtype.origin] if config.torch_dtype is not None else []),
        *([item.origin] if item is not None else []),
        *([config.model.origin] if config.model is not None else []),
    )


def _weights_source(ctx: Context) -> str:
    load = ctx.plan.load_dtype
    return "" if load.origin.in_file else f" (bf16 because: {load.origin})"


def _pure_bf16_fix(ctx: Context) -> Fix:
    config = ctx.config
    keep = (
        "keep an fp32 copy of the weights (load in float32 and let bf16 autocast do the math), or use an "
        "optimizer that compensates the rounding (optimi Kahan summation, torchao bf16_stochastic_round)"
    )
    edits: tuple[Edit, ...] = ()
    kahan = config.traits.kahan_optimizer
    if config.traits.plain_hf_trainer:
        edit = flag_edit(ctx, "torch_dtype", "float32")
        edits = (edit,) if edit is not None else ()
    elif kahan is not None:
        edits = edits_for(config.optimizer, config.path, kahan) or (
            Edit(config.path, "optimizer", kahan, format=config.format or None),
        )
    return Fix(keep, edits)


@rule("PC207", "pure-bf16-weights", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def pure_bf16_weights(ctx: Context) -> Iterator[Finding]:
    """
    Warns when a full fine-tune updates bf16 weights in place, without an fp32 copy, by accident.

    ## What it does
    Reports a plan whose trainable weights are bfloat16 with no fp32 master copy (ZeRO,
    FSDP mixed precision, DeepSpeed's bf16 optimizer keep one; a plain torch optimizer does
    not) in a full-parameter run, where the framework does not do so by design: a HF/TRL
    model loaded with `torch_dtype: bfloat16` (or, from transformers 5, left to load the
    checkpoint's own bf16), a framework's full fine-tune with `bf16: true` that loads the
    weights in bf16. LoRA adapters and optimizers that compensate the rounding (optimi's
    Kahan summation, `stable_adamw`, torchao's `bf16_stochastic_round`, AdamWBF16's
    `adamw_bf16`) are not reported. Frameworks that train pure bf16 on purpose are PC208. HF Trainer/TRL runs are
    reported only on a single known GPU: a multi-GPU Trainer run is normally started by
    `accelerate launch` with a DeepSpeed or FSDP config the training file does not name,
    and ZeRO and accelerate's FSDP keep fp32 master weights. On a GPU without native bf16
    PC101 reports the bf16 itself instead.

    ## Why is this bad?
    bf16 keeps 8 significant bits: an update smaller than ~1/512 of the weight rounds back
    to the old value. Adam's step is about the learning rate, so at lr 1e-5 every weight
    above ~0.005 in magnitude stops learning: one `torch.optim.AdamW` step leaves 84 % of
    weights of std 0.02 unchanged (torch 2.13, measured), and bf16 optimizer states lose
    the second moment's decay as well (`v·0.999` rounds to `v`). torchao's optimizer README:
    "This is highly problematic for full BF16 training, where we don't keep an FP32 copy of
    model weights." The loss plateaus early; nothing reports it.

    ## Example
    ```yaml
    model_name_or_path: meta-llama/Llama-3.1-8B
    torch_dtype: bfloat16
    bf16: true
    learning_rate: 1.0e-5
    ```
    Use instead:
    ```yaml
    torch_dtype: float32   # fp32 master weights, bf16 autocast
    bf16: true
    ```

    ## Fix
    Load the weights in float32 and keep bf16 autocast (twice the weight memory), or
    keep bf16 weights with an optimizer that compensates the rounding: `optim:
    stable_adamw` (transformers), the framework's optimi optimizer where it has one
    (`optimizer: optimi_adamw`), torchao's `bf16_stochastic_round=True`.
    """
    if not _pure_bf16(ctx) or _deliberate(ctx) is not None or _launcher_may_shard(ctx):
        return
    states = _state_dtype(ctx)
    yield Finding(
        _pure_bf16_origin(ctx),
        f"the trainable weights are bf16{_weights_source(ctx)} and {_named(ctx.config)} updates them in place "
        "with no fp32 copy "
        f"({states} optimizer states): {_lost_updates(ctx.config, states)}",
        _pure_bf16_fix(ctx),
    )


@rule("PC208", "pure-bf16-by-design", Severity.INFO)
def pure_bf16_by_design(ctx: Context) -> Iterator[Finding]:
    """
    Notes deliberate pure-bf16 training (by design, `pure_bf16`, `bf16-true`) without compensated rounding.

    ## What it does
    Reports the same plan as PC207 (bf16 weights updated in place, no fp32 master copy,
    full-parameter training) where the framework or the file chose it: a framework that
    trains in its `dtype: bf16` or casts the model to its bf16 weight dtype by design, a
    `pure_bf16: true` switch, a `bf16-true` precision mode, DeepSpeed's
    `bf16_master_weights_and_grads`; unless the optimizer compensates the rounding (optimi,
    torchao `bf16_stochastic_round: true`, AdamWBF16's `adamw_bf16`).

    ## Why is this bad?
    It halves weight memory and is what these frameworks document, but the cost is the same
    as in PC207: bf16 keeps 8 significant bits, an update below ~1/512 of a weight is
    rounded away, and at fine-tuning learning rates (1e-5) most weights stop moving.
    An `anyprecision` optimizer created for `pure_bf16` with `use_kahan_summation=False`
    does not help either.

    ## Example
    ```yaml
    dtype: bf16      # a full fine-tune recipe
    optimizer:
      _component_: torch.optim.AdamW
      lr: 2e-5
    ```
    Use instead:
    ```yaml
    dtype: bf16
    optimizer:
      _component_: torchao.optim.AdamW8bit
      lr: 2e-5
      bf16_stochastic_round: True
    ```

    ## Fix
    Keep pure bf16 but round stochastically (torchao optimizers' `bf16_stochastic_round`)
    or use Kahan summation (optimi `AdamW`), or train in fp32 / bf16 mixed precision.
    """
    if not _pure_bf16(ctx):
        return
    why = _deliberate(ctx)
    if why is None:
        return
    states = _state_dtype(ctx)
    yield Finding(
        _pure_bf16_origin(ctx),
        f"{why}, and {_named(ctx.config, short=True)} rounds each update into the bf16 weights "
        f"({states} optimizer states): {_lost_updates(ctx.config, states)}",
        Fix(
            "round stochastically (torchao optimizers' bf16_stochastic_round) or use Kahan summation (optimi), "
            "or keep fp32 weights"
        ),
    )


# --- PC209 ------------------------------------------------------------------------------------


class OverflowFamily:
    def __init__(self, name: str, model_types: tuple[str, ...], pattern: str, evidence: str) -> None:
        self.name, self.model_types, self.evidence = name, model_types, evidence
        self.pattern = re.compile(pattern)


#: model families whose activations leave fp16's range, with the evidence
OVERFLOW_FAMILIES = (
    OverflowFamily(
        "T5",
        ("t5", "mt5", "umt5", "longt5"),
        r"(?:^|[/_-])(?:flan-|mt|umt|byt|long-?)?t5(?:$|[-_.])",
        "T5 was trained with bf16 activations; transformers clamps its fp16 hidden states to avoid inf "
        "(modeling_t5.py) and fp16 runs still report NaN losses (transformers#11461, #14189, #23918)",
    ),
    OverflowFamily(
        "Gemma 3",
        ("gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text"),
        r"gemma-?3|gemma3n|gemma-?4|embeddinggemma|medgemma|functiongemma",
        "Gemma 3 activations exceed fp16's 65504 (transformers#36822 'Gemma 3 is broken with fp16'; "
        "Unsloth forces bf16/fp32 for gemma3, gemma3n and, after NaN grad norms, patches gemma4)",
    ),
    OverflowFamily(
        "gpt-oss",
        ("gpt_oss",),
        r"gpt-?oss",
        "Unsloth lists gpt_oss among the architectures whose activations exceed fp16's finite range "
        "(unsloth-zoo FORCE_FLOAT32: 'Loaded as float16 they silently NaN/Inf at training time')",
    ),
)


def overflow_family(config: TrainingConfig) -> tuple[OverflowFamily, Sourced[Any]] | None:
    """The family and the value that names it: config.json's model_type, the architecture, or the model id."""
    model_type = config.model_dims.get("model_type")
    if model_type is not None:  # the checkpoint says what it is (t5gemma is not T5)
        kind = str(model_type.value).lower()
        return next(((f, model_type) for f in OVERFLOW_FAMILIES if kind in f.model_types), None)
    arch = config.model_arch
    if arch is not None:
        lowered = str(arch.value).lower()
        for family in OVERFLOW_FAMILIES:
            if any(lowered.startswith(kind.replace("_", "")) for kind in family.model_types):
                return family, arch
    if config.model is not None:
        name = str(config.model.value).lower()
        for family in OVERFLOW_FAMILIES:
            if family.pattern.search(name):
                return family, config.model
    return None


def _bf16_model_rule_applies(config: TrainingConfig) -> bool:
    """PC202 reports fp16 on a checkpoint released in bf16; this rule leaves those to it."""
    if config.model_dtype is not None:
        return config.model_dtype.value == "bfloat16"
    family = family_of(str(config.model.value)) if config.model is not None else None
    return family is not None and family.native_dtype == "bfloat16"


def _to_bf16_edits(ctx: Context) -> tuple[Edit, ...]:
    config, plan = ctx.config, ctx.plan
    edits: list[Edit] = []
    if plan.autocast_dtype.value == "float16":
        if config.mixed_precision is not None and config.mixed_precision.origin.in_file:
            edits.extend(edits_for(config.mixed_precision, config.path, "bf16"))
        elif config.fp16 is not None and config.fp16.origin.in_file:
            edits.extend(edits_for(config.fp16, config.path, False))
            bf16 = flag_edit(ctx, "bf16", True)
            if bf16 is not None:
                edits.append(bf16)
        elif config.precision is not None and config.precision.origin.in_file:
            edits.extend(edits_for(config.precision, config.path, "bf16-mixed"))
    dtype = config.torch_dtype
    if plan.load_dtype.value == "float16" and dtype is not None and dtype.value == "float16":
        edits.extend(edits_for(dtype, config.path, "bfloat16"))
    return tuple(edits)


@rule("PC209", "fp16-overflow-prone-model", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def fp16_overflow_prone_model(ctx: Context) -> Iterator[Finding]:
    """
    Warns when a model family known to overflow fp16 (T5, Gemma 3, gpt-oss) is trained in fp16.

    ## What it does
    Reports fp16 autocast or fp16 weights for T5 (t5, mT5, umT5, LongT5, Flan-T5, T5 v1.1),
    Gemma 3 (Gemma 3, 3n, EmbeddingGemma, Gemma 4) and gpt-oss models, recognised from the
    checkpoint's `config.json` (`model_type`, `architectures`) or the model id. A checkpoint
    that PC202 already reports (saved in bf16, or a family in precheck's bf16 table) is left
    to it.

    ## Why is this bad?
    These models produce activations beyond fp16's maximum of 65504; loss scaling cannot
    help a forward pass that overflows. T5 was trained with bf16 activations (Colin Raffel,
    google-research/text-to-text-transfer-transformer#539); transformers clamps T5's fp16
    hidden states (`# clamp inf values to enable fp16 training`, `modeling_t5.py`) and keeps
    `wo` in fp32, yet fp16 runs report NaN losses (transformers#11461 t5-large, #14189
    T5 v1.1, #23918 flan-t5-xl). "Gemma 3 is broken with fp16" (transformers#36822); Unsloth
    switches gemma3, gemma3n and gpt_oss away from float16 because "Loaded as float16 they
    silently NaN/Inf at training time" (unsloth-zoo `FORCE_FLOAT32`).
    A model loaded through Unsloth (`FastLanguageModel`/`FastModel`, a framework's
    `use_unsloth`) is not reported: its loader sets `UNSLOTH_FORCE_FLOAT32` for these
    families when asked for fp16 (`unsloth/models/loader.py:2999-3010@2026.10.9`).

    ## Example
    ```yaml
    model_name_or_path: google/flan-t5-xl
    fp16: true
    ```
    Use instead:
    ```yaml
    model_name_or_path: google/flan-t5-xl
    bf16: true
    ```

    ## Fix
    Train in bf16 (sm_80+ GPUs) or fp32. On a GPU without bf16, fp32 is the safe choice.
    """
    config, plan = ctx.config, ctx.plan
    if not plan.uses_fp16 or _bf16_model_rule_applies(config):
        return
    unsloth = config.setting("use_unsloth")
    if unsloth is not None and unsloth.value is True:
        return  # Unsloth's loader forces float32 for these families itself (loader.py:2999-3010)
    found = overflow_family(config)
    if found is None:
        return
    family, named = found
    item = plan.autocast_dtype if plan.autocast_dtype.value == "float16" else plan.load_dtype
    if item.value != "float16":
        item = plan.param_dtype
    origin = anchor(config.path, item.origin, named.origin)
    bf16_ok = ctx.hardware.known and bool(used_devices(ctx)) and all(d.bf16 for d in used_devices(ctx))
    if bf16_ok or not ctx.hardware.known:
        fix = Fix("train in bf16 (needs an sm_80+ GPU) or fp32", _to_bf16_edits(ctx) if bf16_ok else ())
    else:
        fix = Fix("train in fp32: these GPUs have no native bf16")
    yield Finding(
        origin,
        f"{named.value} is a {family.name} model, and {family.name} overflows fp16 (max 65504): {family.evidence}",
        fix,
        related=(named.origin,) if named.origin.in_file and named.origin != origin else (),
    )


# --- PC210 ------------------------------------------------------------------------------------

_HALF = {"float16": "fp16", "bfloat16": "bf16"}


@rule("PC210", "launcher-mixed-precision-ignored", Severity.WARNING)
def launcher_mixed_precision_ignored(ctx: Context) -> Iterator[Finding]:
    """
    Warns when `ACCELERATE_MIXED_PRECISION` and TrainingArguments' `fp16`/`bf16` disagree.

    ## What it does
    Reports an `ACCELERATE_MIXED_PRECISION` of fp16, bf16 or fp8 (what `accelerate launch`
    exports from its config's `mixed_precision`, or a shell export) that the run does not
    use: `fp16: true`/`bf16: true` (or TRL's default `bf16 = not fp16`) selects the other
    dtype, or the file turns a flag off explicitly and the variable turns mixed precision
    back on. Runs with a DeepSpeed config are left to the DeepSpeed rules. Only the HF
    Trainer and TRL, whose files are TrainingArguments' own keys.

    ## Why is this bad?
    transformers 5.23.0 `TrainingArguments.__post_init__` reads the variable first and lets
    the flags override it: `self.mixed_precision = os.environ.get("ACCELERATE_MIXED_PRECISION",
    "no")`, then `"fp16"` if `fp16` else `"bf16"` if `bf16`; the Trainer builds its
    Accelerator with that value. Either the launcher's choice is dropped without a word, or
    an explicit `fp16: false` in the file does not stop fp16 autocast and its GradScaler.

    ## Example
    ```yaml
    bf16: true    # launched by `accelerate launch` with mixed_precision: fp16
    ```
    Use instead: the same `mixed_precision` in the accelerate config as in the training file.

    ## Fix
    Make them agree: set `mixed_precision` in the accelerate config (or `--mixed_precision`)
    to what the training file says, or launch with `mixed_precision: 'no'` and let the
    file decide.
    """
    config, plan = ctx.config, ctx.plan
    if not config.traits.plain_hf_trainer:
        return
    env = config.env.get("ACCELERATE_MIXED_PRECISION")
    if env is None or "deepspeed" in config.attached:
        return
    wanted = env.value.strip().lower()
    if wanted not in ("fp16", "bf16", "fp8"):
        return
    autocast = plan.autocast_dtype
    running = _HALF.get(str(autocast.value)) if autocast.value is not None else None
    if autocast.origin.kind != "env" and running is not None and running != wanted:
        flag = config.fp16 if running == "fp16" else config.bf16
        in_file = flag is not None and flag.origin.in_file and flag.value
        winner = f"`{written(flag)}`" if in_file and flag is not None else f"{autocast.origin}"
        yield Finding(
            anchor(config.path, *([flag.origin] if flag is not None else []), autocast.origin),
            f"ACCELERATE_MIXED_PRECISION={env.value} is overridden: TrainingArguments reads it first and then sets "
            f'mixed_precision to "{running}" because of {winner} (TrainingArguments.__post_init__), so the run '
            f"trains with {running} autocast, not {wanted}",
            Fix(f"make the launcher's mixed_precision and the file agree (both {running}, or both {wanted})"),
        )
        return
    if autocast.origin.kind == "env" and running == wanted:
        offs = [f for f in (config.fp16, config.bf16) if f is not None and f.origin.in_file and f.value is False]
        if not offs:
            return
        keys = " and ".join(f"`{written(f)}`" for f in offs)
        yield Finding(
            offs[0].origin,
            f"{keys} {'do' if len(offs) > 1 else 'does'} not turn mixed precision off: with no flag true, "
            "TrainingArguments keeps "
            f'ACCELERATE_MIXED_PRECISION={env.value} (mixed_precision = os.environ.get("ACCELERATE_MIXED_PRECISION")), '
            f"so the run trains with {wanted} autocast",
            Fix(
                "launch without mixed precision (`mixed_precision: 'no'` in the accelerate config) "
                "or unset the variable"
            ),
            related=tuple(f.origin for f in offs[1:]),
        )
