"""PC303–PC305: optimizers that cannot handle the weights, devices or sharding they are given.

Sources (read for these rules; each rule's docstring names what it relies on):

- torch 2.13 ``torch/optim/adamw.py``: the state is ``torch.zeros_like(p)``, so fp16
  parameters get fp16 moments. Measured on torch 2.13 (CPU): AdamW(lr=1e-5) over fp16
  weights with fp16 gradients of 1e-5..1e-3 — ``exp_avg_sq`` (``(1-0.999)·g²`` ≈ 1e-9..1e-12)
  is 0 for every element after the first step, ``eps=1e-8`` added in fp16 is 0 as well, and
  after three steps all weights are inf/NaN (for-loop and foreach implementations); the fused
  implementation computes in fp32 but stores the zeroed ``exp_avg_sq`` and moves weights by
  up to ~770× the learning rate.
- transformers 5.23.0 ``training_args.py``: ``optim`` defaults to ``adamw_torch`` (``adamw_torch_fused``
  with torch >= 2.8); ``trainer_optimizer.py`` maps ``*_8bit``/``paged_*``/``lion_*``/``rmsprop_bnb*``/
  ``ademamix*`` to ``bitsandbytes.optim.AdamW|Lion|RMSprop|AdEMAMix(optim_bits=8|32, is_paged=...)``
  and ``stable_adamw`` to optimi's ``StableAdamW`` (``kahan_sum`` from ``optim_args``, else optimi's
  default: on for bf16/fp16 parameters).
- transformers 5.23.0 ``integrations/deepspeed.py`` ``deepspeed_optim_sched``: without an
  ``optimizer`` section in the DeepSpeed config the Trainer builds its own optimizer
  (``trainer.create_optimizer()``) and passes it on; accelerate 1.15.0
  ``Accelerator._prepare_deepspeed``: when ``zero_optimization.offload_optimizer.device`` is not
  ``none`` and ``zero_force_ds_cpu_optimizer`` is not false, ``optimizer =
  map_pytorch_optim_to_deepspeed(optimizer)`` (``utils/deepspeed.py``): ``DeepSpeedCPUAdam(
  optimizer.param_groups, lr, weight_decay, adamw_mode=...)`` where ``adamw_mode`` is True only for
  ``torch.optim.AdamW`` and bitsandbytes ``AdamW`` with ``optim_bits == 32``;
  ``torch.optim.Adagrad`` (and 32-bit bnb Adagrad) becomes ``DeepSpeedCPUAdagrad``, 32-bit bnb
  ``Lion`` ``DeepSpeedCPULion``; every other optimizer becomes ``DeepSpeedCPUAdam`` in Adam mode.
  (accelerate PR #1208, 0.18: offload always used DeepSpeedCPUAdam; PR #3255, 1.2.0: by class.)
  Without accelerate's mapping DeepSpeed itself raises ``ZeRORuntimeException: You are using
  ZeRO-Offload with a client provided optimizer (...) which in most cases will yield poor
  performance.`` (``DeepSpeedEngine._configure_optimizer``).
- pytorch/ao ``torchao/optim/README.md``: "For FP8 optimizers on CUDA, PyTorch >= 2.4 and CUDA
  compute capability >= 8.9 are required."; ``torchao/optim/adam.py`` ``_AdamBase.step`` runs
  ``torch.compile(single_param_adam, fullgraph=True)``, and Triton's cast
  (``triton/language/semantic.py``) asserts ``"fp8e4nv data type is not supported on CUDA arch <
  89"``. Optimizer tables name it ``ao_adamw_fp8`` (``torchao...AdamWFp8``),
  ``ao-adamfp8``/``ao-adamwfp8``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..config import TrainingConfig
from ..facts import quote
from ..provenance import Sourced
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from .device import flag_edit, used_devices

#: TrainingArguments' default ``optim`` (transformers 5.23.0: adamw_torch, fused from torch 2.8)
DEFAULT_OPTIM = "adamw_torch"


def _true(item: Sourced[Any] | None) -> bool:
    return item is not None and str(item.value).strip().lower() in ("true", "1", "yes")


#: keys that say a run trains adapters when the dialect did not map them (scripts with their own flags)
ADAPTER_KEYS = ("use_lora", "use_qlora", "use_peft", "use_dora", "lora_r", "lora_rank", "peft_config", "peft_type")


def optimizer_name(config: TrainingConfig) -> str | None:
    """The optimizer as the file names it, or TrainingArguments' default where that applies."""
    for key, name in config.traits.optimizer_switches:
        if _true(setting(config, key)):
            return name
    if config.optimizer is not None and config.optimizer.value not in (None, ""):
        return str(config.optimizer.value)
    if config.traits.hf_trainer:  # the optimizer is TrainingArguments' ``optim``
        return DEFAULT_OPTIM
    return None


def names_adapters(config: TrainingConfig) -> bool:
    """Whether keys the HF dialect does not map (``use_lora``, ``lora_rank``...) say adapters are trained:
    a training script with its own flags (open-instruct's ``use_qlora``) read as TrainingArguments."""
    if config.train_type is not None or not config.traits.plain_hf_trainer:
        return False
    for key in ADAPTER_KEYS:
        item = setting(config, key)
        if item is not None and str(item.value).strip().lower() not in ("", "false", "none", "null", "0", "full"):
            return True
    return False


def _short(name: str) -> str:
    """``torch.optim.AdamW`` → ``adamw``; ``bitsandbytes.optim.PagedAdamW8bit`` → ``pagedadamw8bit``."""
    return re.sub(r"[^a-z0-9]", "", name.lower().rsplit(".", 1)[-1])


#: torch's own Adam family (states ``zeros_like(param)``, ``eps`` added in the parameter dtype),
#: under the names TrainingArguments, optimizer tables and component paths use
TORCH_ADAM = frozenset(
    (
        "adamw_torch",
        "adamw_torch_fused",
        "adamw_torch_xla",
        "adamw_torch_npu_fused",
        "adamw_hf",
        "torch-adam",
        "torch-adamw",
        "torch-nadam",
        "torch-radam",
        "torch-adamax",
    )
)
TORCH_ADAM_CLASSES = frozenset(("adam", "adamw", "nadam", "radam", "adamax"))


def is_torch_adam(name: str) -> bool:
    lower = name.lower()
    if lower in TORCH_ADAM:
        return True
    # a component path or class name: torch.optim.AdamW, AdamW
    prefix = lower.rsplit(".", 1)[0] if "." in lower else ""
    return prefix in ("", "torch.optim") and _short(name) in TORCH_ADAM_CLASSES


def setting(config: TrainingConfig, *path: str) -> Sourced[Any] | None:
    """A nested value of the file (``optimizer.bf16_stochastic_round``), keys compared without ``--``."""
    return config.setting(".".join(path))


#: optimizers, by name wherever they are named, that keep a bf16 compensation buffer, and
#: whose they are
BF16_COMPENSATING = {name: "SimpleTuner AdamWBF16" for name in ("adamw_bf16", "adam_bfloat16")}


def compensated_rounding(config: TrainingConfig) -> str | None:
    """How the optimizer keeps updates smaller than a bf16 weight's rounding step, if it does."""
    name = optimizer_name(config) or ""
    lower = name.lower()
    if lower in BF16_COMPENSATING:
        return f"`{name}` keeps a bf16 compensation buffer and rounds stochastically ({BF16_COMPENSATING[lower]})"
    if "optimi" in lower or lower == "stable_adamw":
        return f"`{name}` is an optimi optimizer: Kahan summation is on for bf16 parameters"
    kahan = config.traits.kahan_optimizer_prefix
    if kahan is not None and lower.startswith(kahan[0]) and "no_kahan" not in lower:
        return f"`{name}` is {kahan[1]} (Kahan summation)"
    if _true(setting(config, "optimizer", "bf16_stochastic_round")):
        return "`bf16_stochastic_round: true`: torchao rounds the fp32 update stochastically into bf16"
    if _true(setting(config, "optimizer", "kahan_sum")) or _true(setting(config, "optimizer", "use_kahan_summation")):
        return "the optimizer's Kahan summation keeps the rounded-off remainder"
    return None


# --- PC303 ---------------------------------------------------------------------------------


@rule("PC303", "fp16-adam-states", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def fp16_adam_states(ctx: Context) -> Iterator[Finding]:
    """
    Finds torch's Adam/AdamW stepping fp16 weights with fp16 moments and no fp32 master copy.

    ## What it does
    Reports a plan whose trainable weights and optimizer states are float16, with no fp32
    master weights and no GradScaler, when the optimizer is torch's Adam family
    (TrainingArguments' default `adamw_torch`/`adamw_torch_fused`, a `torch.optim.AdamW`
    component): a full fine-tune of a model loaded in float16 without fp16 mixed precision
    (including transformers 5 loading a float16 checkpoint such as Llama 2 by default),
    a `precision: 16-true` mode. bitsandbytes and torchao optimizers (fp32 arithmetic, 8-bit or fp32
    states) and DeepSpeed's fp16 mode (fp32 master weights) are not reported; with a
    GradScaler the run stops earlier (PC401).

    ## Why is this bad?
    `torch.optim.AdamW` creates its moments with `torch.zeros_like(param)`: float16. The
    second moment `(1-β2)·g²` of a gradient below ~7.7e-3 is below fp16's smallest
    subnormal (5.96e-8) and is stored as 0, and `eps=1e-8` added in float16 is 0 too, so
    the step divides by zero. Measured with torch 2.13: AdamW(lr=1e-5) on fp16 weights and
    gradients of 1e-5 to 1e-3 leaves every weight inf/NaN after three steps (default and
    foreach implementations); the fused implementation computes in fp32 but keeps the
    zeroed second moment and moves weights by ~770× the learning rate. The loss turns NaN
    with no error.

    ## Example
    ```yaml
    model_name_or_path: meta-llama/Llama-2-7b-hf
    torch_dtype: float16   # full fine-tune, no fp16/bf16 flag
    ```
    Use instead:
    ```yaml
    torch_dtype: float32
    fp16: true             # fp16 autocast, fp32 master weights, dynamic loss scaling
    ```

    ## Fix
    Keep fp32 weights (`torch_dtype: float32`, `precision: 16-mixed`) and let fp16
    autocast do the fast math, train LoRA adapters (fp32 under peft), or use an optimizer
    that computes in fp32 and keeps 8-bit states (bitsandbytes `adamw_bnb_8bit`).
    """
    plan = ctx.plan
    if plan.param_dtype.value != "float16" or plan.optimizer_state_dtype.value != "float16":
        return
    master = plan.master_weights.value if plan.master_weights is not None else None
    if master not in (None, "float16") or plan.grad_scaler.value or ctx.config.traits.refuses_fp16:
        return
    name = optimizer_name(ctx.config)
    if name is None or not is_torch_adam(name) or names_adapters(ctx.config):
        return
    config = ctx.config
    item = config.optimizer
    written = item is not None and item.origin.in_file
    what = f"`{name}`" if written else f"the default optimizer `{name}` (TrainingArguments)"
    edits: tuple[Edit, ...] = ()
    if config.traits.plain_hf_trainer:
        edit = flag_edit(ctx, "torch_dtype", "float32")
        edits = (edit,) if edit is not None else ()
    elif config.traits.precision_modes and config.precision is not None:
        edits = edits_for(config.precision, config.path, "16-mixed")
    model = [config.model.origin] if config.model is not None else []
    source = "" if plan.load_dtype.origin.in_file else f" (the weights are float16 because: {plan.load_dtype.origin})"
    yield Finding(
        anchor(config.path, plan.param_dtype.origin, plan.load_dtype.origin, *([item.origin] if item else []), *model),
        f"{what} steps float16 weights{source} with float16 moments and no fp32 master copy: (1-β2)·g² underflows "
        "to 0 and eps=1e-8 is 0 in float16, so the update divides by zero and the weights turn inf/NaN "
        "within the first steps",
        Fix(
            "keep fp32 weights (load in float32; fp16 autocast does the fast math) or train LoRA adapters",
            edits,
        ),
        related=(item.origin,) if item is not None and written else (),
    )


# --- PC304 ---------------------------------------------------------------------------------

#: TrainingArguments names that accelerate maps onto an equivalent DeepSpeed CPU optimizer
ADAMW_EQUIVALENT = frozenset(
    ("adamw_torch", "adamw_torch_fused", "adamw_torch_xla", "adamw_torch_npu_fused", "adamw_hf", "paged_adamw_32bit")
)
OTHER_EQUIVALENT = {
    "adagrad": "DeepSpeedCPUAdagrad",
    "lion_32bit": "DeepSpeedCPULion",
    "paged_lion_32bit": "DeepSpeedCPULion",
}
#: bitsandbytes 8-bit AdamW: the same algorithm, but Adam mode turns decoupled weight decay into L2
BNB_8BIT_ADAMW = frozenset(("adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit"))


def _weight_decay(config: TrainingConfig) -> float:
    item = setting(config, "weight_decay")
    try:
        return float(item.value) if item is not None else 0.0
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past the float range
        return 0.0


@rule(
    "PC304",
    "zero-offload-replaces-optimizer",
    Severity.WARNING,
    fix_safety=FixSafety.UNSAFE,
)
def zero_offload_replaces_optimizer(ctx: Context) -> Iterator[Finding]:
    """
    Warns when ZeRO optimizer offload silently swaps the Trainer's optimizer for DeepSpeedCPUAdam.

    ## What it does
    Reports a run through the HF Trainer (transformers, TRL, a framework built on it) whose
    DeepSpeed config offloads the optimizer (`zero_optimization.offload_optimizer.device`
    cpu or nvme) and has no `optimizer` section, while `optim` is neither AdamW, Adagrad
    nor 32-bit Lion: 8-bit or paged bitsandbytes optimizers (reported when
    `weight_decay` > 0), SGD, Adafactor, RMSprop, GaLore, schedule-free, torchao and optimi
    optimizers...

    ## Why is this bad?
    Without an `optimizer` section the Trainer builds its own optimizer
    (`deepspeed_optim_sched`, transformers 5.23.0), and accelerate 1.15.0
    (`Accelerator._prepare_deepspeed`) replaces it when the optimizer is offloaded and
    `zero_force_ds_cpu_optimizer` is not false: `map_pytorch_optim_to_deepspeed` builds
    `DeepSpeedCPUAdam(param_groups, lr, weight_decay, adamw_mode=False)` for anything but
    `torch.optim.AdamW` and 32-bit bitsandbytes AdamW (Adagrad and 32-bit Lion get their
    DeepSpeed CPU twins). No message says so. The run trains with Adam: a different
    algorithm than SGD, Adafactor or Lion, and for 8-bit AdamW an L2 penalty in the
    gradient instead of decoupled weight decay, with fp32 states in CPU memory. (Without
    accelerate's swap DeepSpeed itself refuses: "ZeRORuntimeException: You are using
    ZeRO-Offload with a client provided optimizer ...".)

    ## Example
    ```yaml
    optim: adamw_bnb_8bit
    weight_decay: 0.1
    deepspeed:
      zero_optimization:
        stage: 2
        offload_optimizer:
          device: cpu
    ```
    Use instead:
    ```yaml
    optim: adamw_torch
    weight_decay: 0.1
    ```

    ## Fix
    Use `optim: adamw_torch` (becomes DeepSpeedCPUAdam in AdamW mode, the same algorithm),
    add an `optimizer` section to the DeepSpeed config, or turn optimizer offload off to keep
    the optimizer you chose.
    """
    config = ctx.config
    ds = config.attached.get("deepspeed")
    if not config.traits.hf_trainer:
        return
    if ds is None or ds.offload_optimizer is None or ds.offload_optimizer.value not in ("cpu", "nvme"):
        return
    if "optimizer" in ds.keys or (ds.zero_stage is not None and ds.zero_stage.value <= 0):
        return
    force = ds.setting("zero_force_ds_cpu_optimizer")
    if force is not None and str(force.value).strip().lower() in ("false", "0"):
        return
    name = optimizer_name(config)
    if name is None:
        return
    lower = name.lower()
    if lower in ADAMW_EQUIVALENT or lower in OTHER_EQUIVALENT:
        return
    if lower in BNB_8BIT_ADAMW:
        decay = _weight_decay(config)
        if decay <= 0:
            return  # Adam and AdamW agree without weight decay
        what = (
            f"AdamW's decoupled weight decay ({decay:g}) becomes an L2 term added to the gradient, "
            "and the 8-bit states become fp32 states in CPU memory"
        )
    else:
        what = f"the run trains with Adam, not `{name}`"
    offload = ds.offload_optimizer
    item = config.optimizer
    origin = anchor(ds.path, *([item.origin] if item is not None else []), offload.origin)
    yield Finding(
        origin,
        f"ZeRO offloads the optimizer ({offload.origin.key or 'offload_optimizer.device'}: {offload.value}) and "
        f"the DeepSpeed config has no `optimizer` section, so accelerate replaces the Trainer's `{name}` with "
        "DeepSpeedCPUAdam(adamw_mode=False) (Accelerator._prepare_deepspeed, map_pytorch_optim_to_deepspeed): "
        f"{what}",
        Fix(
            "use `adamw_torch` (DeepSpeedCPUAdam in AdamW mode), give DeepSpeed an `optimizer` section, "
            "or stop offloading the optimizer",
            edits_for(item, config.path, "adamw_torch"),
        ),
        related=(offload.origin,) if offload.origin.in_file and offload.origin != origin else (),
    )


# --- PC305 ---------------------------------------------------------------------------------

#: torchao's FP8 optimizers as optimizer tables and component paths name them (normalised)
_FP8_OPTIMIZER = re.compile(r"adamw?fp8")
#: the 8-bit counterpart each spelling offers
_EIGHT_BIT = {"ao_adamw_fp8": "adamw_torch_8bit", "ao-adamwfp8": "ao-adamw8bit", "ao-adamfp8": "ao-adamw8bit"}


def is_fp8_optimizer(name: str) -> bool:
    return bool(_FP8_OPTIMIZER.search(re.sub(r"[^a-z0-9]", "", name.lower())))


@rule("PC305", "fp8-optimizer-unsupported-gpu", Severity.ERROR, hardware=True, fix_safety=FixSafety.UNSAFE)
def fp8_optimizer_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds torchao's FP8 optimizer (`AdamWFp8`/`AdamFp8`) on a GPU below compute capability 8.9.

    ## What it does
    Reports an optimizer-table name (`ao_adamw_fp8`, `ao-adamwfp8`/`ao-adamfp8`) or a
    `torchao.optim.AdamWFp8`/`AdamFp8` component when an NVIDIA device the run
    uses is older than Ada/Hopper (sm_89): A100, A10, RTX 30xx, V100, T4.

    ## Why is this bad?
    torchao's optimizer README: "For FP8 optimizers on CUDA, PyTorch >= 2.4 and CUDA compute
    capability >= 8.9 are required." `_AdamBase.step` (`torchao/optim/adam.py`) compiles
    each parameter's update with `torch.compile`, and Triton refuses the float8_e4m3fn state
    on older GPUs at the first step: `AssertionError: fp8e4nv data type is not supported on
    CUDA arch < 89` (`triton/language/semantic.py`).

    ## Example
    ```yaml
    optimizer: ao_adamw_fp8   # on an A100
    ```
    Use instead:
    ```yaml
    optimizer: adamw_torch_8bit
    ```

    ## Fix
    Use an 8-bit optimizer (torchao `AdamW8bit`, bitsandbytes `adamw_bnb_8bit`), which
    saves the same memory on any GPU, or run on sm_89+ (L4, L40S, RTX 40xx, H100).
    """
    name = optimizer_name(ctx.config)
    if name is None or not is_fp8_optimizer(name):
        return
    old = [d for d in used_devices(ctx) if d.model.cc is not None and d.model.cc < (8, 9)]
    if not old:
        return
    item = ctx.config.optimizer
    assert item is not None
    lower = name.lower()
    replacement = _EIGHT_BIT.get(lower) or (name.replace("Fp8", "8bit").replace("fp8", "8bit") if "." in name else None)
    edits = edits_for(item, ctx.config.path, replacement) if replacement else ()
    names = ", ".join(sorted({f"{d.name} ({d.model.sm})" for d in old}))
    yield Finding(
        anchor(ctx.config.path, item.origin),
        f"`{name}` is torchao's FP8 optimizer, which needs compute capability 8.9: its compiled step fails on "
        f'{names} with "AssertionError: {quote("triton.fp8e4nv_arch")}"',
        Fix("use an 8-bit optimizer, which saves the same memory on this GPU", edits),
    )


__all__ = ["compensated_rounding", "is_torch_adam", "names_adapters", "optimizer_name", "setting"]
