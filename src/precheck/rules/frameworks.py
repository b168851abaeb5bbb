"""PC7xx: framework-specific precision traps (torchtune, Lightning/LitGPT/NeMo, axolotl,
LLaMA-Factory, llama-cookbook).

Each rule reads one framework's own keys and names the exact error or behaviour that
framework shows. Sources (each rule's docstring cites the function it relies on):

- pytorch/torchtune (main, 05a4cec): ``torchtune/training/precision.py`` ``get_dtype``
  (``PRECISION_STR_TO_DTYPE`` = fp16, bf16, fp32, fp64; anything else raises ``ValueError:
  Dtype {dtype} must be one of fp16, bf16, fp32, fp64 for finetuning.``); every training
  recipe's ``__init__`` refuses fp16 right after ``get_dtype``: "full fp16 training is not
  supported with this recipe. Please use bf16 or fp32 instead." (full_finetune_*, *_distributed,
  PPO, QAT, dev/early_exit, dev/grpo) or "fp16 precision is not supported in this recipe.
  Please use fp32 or bf16." (lora_finetune_single_device, lora_dpo_single_device,
  knowledge_distillation_*). More in :mod:`precheck.resolve.torchtune`.
- Lightning-AI/pytorch-lightning (2.0.0 to 2.6.x): ``fabric/connector.py``
  ``_convert_precision_to_unified_args`` (the invalid-precision ``ValueError`` and the
  "historical reasons" warning, used by the Trainer and by Fabric); ``pytorch/plugins/precision/
  fsdp.py`` ``FSDPPrecision.clip_grad_by_norm`` (``MisconfigurationException:
  `gradient_clip_algorithm='norm'` is currently not supported for `FSDPPrecision```; 2.0's
  ``FSDPMixedPrecisionPlugin`` raised the same) reached from ``Precision.clip_gradients`` when
  ``clip_val > 0`` and the algorithm is NORM, the default of ``LightningModule.clip_gradients``
  (``self.trainer.gradient_clip_algorithm or "norm"``); CHANGELOG 2.0.0 "nvidia/apex removal
  (#16149): Removed the `Trainer(amp_backend=...)` argument ... Removed the
  `Trainer(amp_level=...)` argument". More in :mod:`precheck.resolve.lightning`.
- Lightning-AI/litgpt (main, c16c72c): ``litgpt/finetune/lora.py`` ``setup`` (also adapter.py,
  adapter_v2.py): ``precision = precision or get_default_supported_precision(training=True)``
  (``litgpt/utils.py``: always a ``-mixed`` value for training); with ``quantize: bnb.*``:
  ``if "mixed" in precision: raise ValueError("Quantization and mixed precision is not
  supported.")``, then ``{"16-true": ..., "bf16-true": ..., "32-true": ...}[precision]``
  (a ``KeyError`` for anything else); ``if devices * num_nodes > 1: if quantize: raise
  NotImplementedError("Quantization is currently not supported for multi-GPU training. Please
  set devices=1 and num_nodes=1 when using the --quantize flag.")``.
- NVIDIA/NeMo 1.x (``nemo/collections/nlp/models/language_modeling/megatron_base_model.py``
  ``MegatronBaseModel._validate_and_override_config``): ``if self.cfg.get('fsdp', False) and
  self.cfg.get('fp8', False): raise ValueError('Torch FSDP does not support FP8.')``.
- axolotl-ai-cloud/axolotl (main 00ce888, and 0.10.0+): ``utils/config/__init__.py``
  ``resolve_dtype`` (``bf16: auto`` resolution, then ``torch_dtype`` = bf16 ``if cfg.bf16 or
  cfg.bfloat16`` before fp16 ``elif cfg.load_in_8bit or cfg.fp16 or cfg.float16``);
  ``core/builders/base.py`` ``_configure_precision_settings``: TrainingArguments ``fp16 =
  (cfg.fp16 and not cfg.bf16) or False``, ``bf16 = cfg.bf16 or cfg.bfloat16`` (0.9.x: ``bf16 =
  cfg.bf16``); transformers ``TrainingArguments.__post_init__`` (4.57 and 5.23): ``ValueError:
  At most one of fp16 and bf16 can be True, but not both``. More in :mod:`precheck.resolve.axolotl`.
- hiyouga/LLaMA-Factory (0.9.x to 0.9.6.dev0): ``hparams/parser.py`` ``get_train_args``
  (``if finetuning_args.pure_bf16:`` "This device does not support `pure_bf16`." unless
  ``is_torch_bf16_gpu_available()``; "`pure_bf16` is incompatible with DeepSpeed ZeRO-3."
  when ``is_deepspeed_zero3_enabled()``; ``compute_dtype`` bf16 for ``bf16 or pure_bf16``);
  ``model/adapter.py`` ``init_adapter``: "Pure bf16 / BAdam detected, remaining trainable
  params in half precision." (no fp32 upcast).
- meta-llama/llama-cookbook (main 20dd34e): ``finetuning.py`` ``main`` (``torch_dtype=
  torch.float16 if train_config.use_fp16 else "auto"``; ``if train_config.enable_fsdp and
  fsdp_config.pure_bf16 and not train_config.quantization: model.to(torch.bfloat16)``; FSDP
  ``mixed_precision=mixed_precision_policy if not fsdp_config.pure_bf16 else None``);
  ``utils/train_utils.py`` ``train`` (``ShardedGradScaler()`` for ``use_fp16`` under FSDP,
  ``torch.cuda.amp.autocast`` when ``use_fp16``).
- torch ``torch/amp/grad_scaler.py`` / ``torch/distributed/fsdp/sharded_grad_scaler.py``
  ``_unscale_grads_`` call ``torch._amp_foreach_non_finite_check_and_unscale_``, whose CUDA
  kernel is dispatched for float, double and half only: bf16 gradients raise
  ``NotImplementedError: "_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for
  'BFloat16'``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..config import TrainingConfig
from ..dialects.base import to_bool, to_float, to_int
from ..dialects.lightning import ALIASES, MODES, alias_warning, setting, unify
from ..dialects.llama_factory import is_v1
from ..dtypes import parse_dtype
from ..facts import quote, span
from ..provenance import Sourced
from ..resolve.common import frameworks_see_bf16
from ..resolve.lightning import NEMO_PLUGIN_INPUTS, flavour
from ..resolve.llama_factory import megatron_backend
from ..versions import VersionInfo, version_key
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from .device import used_devices

# --- shared helpers -------------------------------------------------------------------------


def _on(item: Sourced[Any] | None) -> bool:
    return item is not None and bool(to_bool(item.value))


def _flag(config: TrainingConfig, key: str) -> Sourced[bool] | None:
    """A top-level boolean key of the file that precheck has no field for."""
    item = config.keys.get(key)
    if item is None or to_bool(item.value) is None:
        return None
    return Sourced(bool(to_bool(item.value)), item.origin)


def _in_file(item: Sourced[Any] | None) -> bool:
    return item is not None and item.origin.in_file and item.origin.key is not None


def _all_bf16(ctx: Context) -> bool | None:
    """Whether every device the run uses has native bf16 (None: the devices are not known)."""
    if not ctx.hardware.known:
        return None
    devices = used_devices(ctx)
    return all(d.bf16 for d in devices) if devices else None


# --- torchtune ------------------------------------------------------------------------------

#: ``PRECISION_STR_TO_DTYPE`` keys, by the dtype they mean
TORCHTUNE_SPELLING = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
TORCHTUNE_VALID = ("fp16", "bf16", "fp32", "fp64")


def _torchtune_dtype(config: TrainingConfig) -> Sourced[str] | None:
    """``dtype`` as written in the file (not the async GRPO recipe's hard-coded bf16)."""
    item = config.precision
    if not _in_file(item) or item is None or item.origin.kind != "file":
        return None
    return item


@rule("PC701", "torchtune-fp16-rejected", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("torchtune",))
def torchtune_fp16_rejected(ctx: Context) -> Iterator[Finding]:
    """
    Finds `dtype: fp16` in a torchtune training config: every training recipe refuses it at start.

    ## What it does
    Reports a torchtune config with an `optimizer` (what every training recipe builds)
    whose `dtype` is `fp16`. The generation, evaluation and quantization recipes
    (`generate.py:39`, `eleuther_eval.py:454`, `quantize.py:50`@0.6.1) take fp16 and are
    not reported: their configs (torchtune's own `generation.yaml`) have no optimizer.

    ## Why is this bad?
    torchtune trains in `dtype` itself, with no autocast and no loss scaling, so its recipes
    reject fp16 in `__init__`, right after `training.get_dtype`: `ValueError: full fp16
    training is not supported with this recipe. Please use bf16 or fp32 instead.`
    (full_finetune_single_device/distributed, lora_finetune_distributed, the DPO, PPO and QAT
    recipes) or `ValueError: fp16 precision is not supported in this recipe. Please use fp32
    or bf16.` (lora_finetune_single_device, lora_dpo_single_device, knowledge_distillation_*)
    (pytorch/torchtune `recipes/full_finetune_single_device.py:126@0.6.1`,
    `recipes/lora_finetune_single_device.py:132@0.6.1`).

    ## Example
    ```yaml
    dtype: fp16
    ```
    Use instead:
    ```yaml
    dtype: bf16   # fp32 on a GPU without bf16 (V100, T4)
    ```

    ## Fix
    `dtype: bf16` on Ampere or newer, `dtype: fp32` on older GPUs. Either changes the run's
    numerics, so the fix is marked unsafe.
    """
    item = _torchtune_dtype(ctx.config)
    if item is None or item.value != "fp16" or "optimizer" not in ctx.config.keys:
        return  # no optimizer: generate / eleuther_eval / quantize, which take fp16
    bf16 = _all_bf16(ctx)
    value, why = ("fp32", "the GPUs have no native bf16") if bf16 is False else ("bf16", "bf16 where the GPU has it")
    yield Finding(
        item.origin,
        "`dtype: fp16` is refused by every torchtune training recipe at start: "
        f'"{quote("torchtune.full_fp16_refused")}" (single-device LoRA/DPO and distillation recipes: '
        f'"{quote("torchtune.fp16_refused")}")',
        Fix(f"train in {value} ({why}; fp32 otherwise)", edits_for(item, ctx.config.path, value)),
    )


@rule("PC702", "torchtune-dtype-spelling", Severity.ERROR, fix_safety=FixSafety.SAFE, frameworks=("torchtune",))
def torchtune_dtype_spelling(ctx: Context) -> Iterator[Finding]:
    """
    Finds a torchtune `dtype` outside fp16/bf16/fp32/fp64 (`bfloat16`, `float32`...).

    ## What it does
    Reports a `dtype` (top level or `training.dtype`) that is not one of torchtune's four
    spellings, such as the torch names `bfloat16` or `float32`.

    ## Why is this bad?
    The recipes call `training.get_dtype(cfg.dtype, device=...)` (`torchtune/training/
    precision.py`; `torchtune/utils/precision.py` up to 0.2), which looks the string up in
    `PRECISION_STR_TO_DTYPE` and raises `ValueError: Dtype bfloat16 must be one of fp16,
    bf16, fp32, fp64 for finetuning.` before anything is built.

    ## Example
    ```yaml
    dtype: bfloat16
    ```
    Use instead:
    ```yaml
    dtype: bf16
    ```

    ## Fix
    Write the same dtype the way torchtune spells it (`bf16`, `fp32`, `fp16`, `fp64`). The
    meaning does not change, so the fix is safe.
    """
    item = _torchtune_dtype(ctx.config)
    if item is None or item.value in (*TORCHTUNE_VALID, "null"):
        return
    meant = parse_dtype(item.value)
    message = quote("torchtune.dtype_spelling", dtype=item.value, choices=", ".join(TORCHTUNE_VALID))
    fix = Fix("use one of torchtune's dtype spellings: fp16, bf16, fp32, fp64")
    if meant is not None:
        spelled = TORCHTUNE_SPELLING[meant]
        fix = Fix(f"write {meant} as torchtune spells it", edits_for(item, ctx.config.path, spelled))
    yield Finding(
        item.origin,
        f'`dtype: {item.value}` is not a torchtune dtype: get_dtype raises "ValueError: {message}"',
        fix,
    )


# --- Lightning, LitGPT, NeMo ----------------------------------------------------------------

#: "16-true", "bf16-true", "transformer-engine[-float16]" from 2.1.0
LIGHTNING_HALF_TRUE = span("lightning.half_true")
#: the ``-mixed``/``-true`` names from 2.0.0 (#16783); apex removed in 2.0.0 (#16149)
LIGHTNING_2 = span("lightning.unified_names")
ALLOWED = (*MODES, 64, 32, 16, "64", "32", "16", "bf16")
ALLOWED_2_0 = ("16-mixed", "bf16-mixed", "32-true", "64-true", 64, 32, 16, "64", "32", "16", "bf16")
#: Lightning 2.x name → the 1.x spelling of the same mode
TO_1X = {value: key for key, value in ALIASES.items()}
REMOVED_TRAINER_ARGS = ("amp_backend", "amp_level")
LITGPT_QUANTIZE_PRECISIONS = ("16-true", "bf16-true", "32-true")


def _lightning(ctx: Context) -> VersionInfo | None:
    return ctx.versions.get("lightning")


def _known_before(ctx: Context, version: str) -> bool:
    info = _lightning(ctx)
    return info is not None and version_key(info.version) < version_key(version)


def _precision(config: TrainingConfig) -> Sourced[str] | None:
    """``trainer.precision`` / LitGPT ``precision`` as the file writes it (not a plugin's)."""
    item = config.precision
    if not _in_file(item) or item is None:
        return None
    if item.origin.detail is not None and "plugin" in item.origin.detail:
        return None
    return item


def _written_for_2x(config: TrainingConfig) -> bool:
    """The file uses a precision name only Lightning 2.x knows (``bf16-mixed``, ``16-true``...)."""
    return config.precision is not None and str(config.precision.value) in MODES


def _lightning_1x_file(ctx: Context) -> bool:
    """No Lightning version is known and the file is a Lightning 1.x config (apex keys, no 2.x names)."""
    config = ctx.config
    has_apex = any(setting(config, f"trainer.{key}") is not None for key in REMOVED_TRAINER_ARGS)
    return _lightning(ctx) is None and has_apex and not _written_for_2x(config)


def _litgpt_bnb(config: TrainingConfig) -> Sourced[Any] | None:
    """LitGPT ``quantize: bnb.*`` (which takes the precision out of Fabric's hands)."""
    if flavour(config) != "litgpt":
        return None
    item = config.keys.get("quantize")
    if item is None or not isinstance(item.value, str) or not item.value.startswith("bnb."):
        return None
    return item


def _suggest_mode(raw: str) -> str | None:
    """The Lightning precision a misspelt value most likely means (``fp16`` → ``16-mixed``)."""
    text = raw.strip().lower().replace("_", "-")
    for prefix, short in (("bfloat16", "bf16"), ("float16", "16"), ("fp16", "16"), ("half", "16")):
        if text.startswith(prefix):
            text = short + text[len(prefix) :]
            break
    for prefix, short in (("float32", "32"), ("fp32", "32"), ("float64", "64"), ("fp64", "64")):
        if text.startswith(prefix):
            text = short + text[len(prefix) :]
            break
    if text.endswith("-mix"):
        text += "ed"
    if text in MODES:
        return text
    if text in ALIASES:
        return ALIASES[text]
    return {"16": "16-mixed", "bf16": "bf16-mixed", "32": "32-true", "64": "64-true"}.get(text)


def _invalid_precision(ctx: Context, raw: str) -> tuple[str, str | None] | None:
    """(what Lightning raises, the value to use instead) when ``raw`` is refused; None when valid."""
    kind = flavour(ctx.config)
    if kind == "nemo" and raw in NEMO_PLUGIN_INPUTS:
        return None  # NeMo's MegatronTrainerBuilder turns these into its own plugin
    info = _lightning(ctx)
    mode = unify(raw)
    if mode is None:
        allowed = ALLOWED_2_0 if _known_before(ctx, "2.1.0") else ALLOWED
        text = f"ValueError: {quote('lightning.invalid_precision', precision=repr(raw), allowed=allowed)}"
        return text, _suggest_mode(raw)
    if _known_before(ctx, "2.0.0") and raw not in ALIASES:
        assert info is not None
        text = (
            f"lightning {info.version} raises MisconfigurationException: "
            f"{quote('lightning.invalid_precision_1x', precision=repr(raw))} "
            "(Lightning 1.x takes 64, 32, 16 and 'bf16'; the '-mixed'/'-true' names came with 2.0)"
        )
        return text, TO_1X.get(mode)
    if _known_before(ctx, "2.1.0") and mode in (
        "16-true",
        "bf16-true",
        "transformer-engine",
        "transformer-engine-float16",
    ):
        assert info is not None
        text = (
            f"lightning {info.version} raises ValueError: "
            f"{quote('lightning.invalid_precision', precision=repr(raw), allowed=ALLOWED_2_0)} "
            "('16-true', 'bf16-true' and 'transformer-engine' came with 2.1.0)"
        )
        return text, None
    return None


def _bf16_mixed_plugin_scaler(config: TrainingConfig) -> Iterator[Finding]:
    """``MixedPrecision(precision="bf16-mixed", scaler=...)``: the plugin refuses the scaler."""
    item, scaler = config.precision, config.grad_scaler
    if item is None or scaler is None or not scaler.value or not scaler.origin.in_file:
        return
    if "MixedPrecision plugin" not in str(item.origin.detail) or unify(str(item.value)) != "bf16-mixed":
        return
    yield Finding(
        scaler.origin,
        f'a MixedPrecision plugin with `precision: {item.value}` is given a `scaler`: Lightning raises "'
        + quote("lightning.bf16_mixed_no_scaler").replace("{scaler}", "...")
        + '" before training (bf16 needs no loss scaling)',
        Fix("remove the `scaler` argument (16-mixed is the mode that uses one)"),
        related=(item.origin,),
    )


@rule("PC703", "lightning-invalid-precision", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def lightning_invalid_precision(ctx: Context) -> Iterator[Finding]:
    """
    Finds a Lightning/LitGPT `precision` value Lightning refuses (`fp16`, `BF16`, `32-mixed`...).

    ## What it does
    Reports `trainer.precision` (LightningCLI, NeMo) or LitGPT's `precision` when the value
    is not one Lightning accepts: anything outside "transformer-engine",
    "transformer-engine-float16", "16-true", "16-mixed", "bf16-true", "bf16-mixed", "32-true",
    "64-true", 64/32/16 and the aliases "64", "32", "16", "bf16" (case-sensitive). With a known
    Lightning version it also reports names that version lacks: "16-true", "bf16-true" and
    "transformer-engine" before 2.1.0, every "-mixed"/"-true" name before 2.0.0. NeMo 1.x
    Megatron configs pass 16, "16", "bf16", "16-mixed" and "bf16-mixed" to NeMo's own plugin
    and are checked against nothing else. LitGPT with `quantize: bnb.*` is PC707.

    ## Why is this bad?
    `_convert_precision_to_unified_args` (`lightning/fabric/connector.py`, used by both the
    Trainer and Fabric) raises before training: `ValueError: Precision 'fp16' is invalid.
    Allowed precision values: ('transformer-engine', 'transformer-engine-float16', '16-true',
    '16-mixed', 'bf16-true', 'bf16-mixed', '32-true', '64-true', 64, 32, 16, '64', '32',
    '16', 'bf16')`. Lightning 1.x raised `MisconfigurationException` with its own list.
    A `MixedPrecision` plugin in `trainer.plugins` with `precision: bf16-mixed` and a
    `scaler` is refused by its constructor: `` `precision='bf16-mixed'` does not use a
    scaler, found ...`` (`lightning/pytorch/plugins/precision/amp.py:56@2.6.4`).

    ## Example
    ```yaml
    trainer:
      precision: fp16
    ```
    Use instead:
    ```yaml
    trainer:
      precision: 16-mixed
    ```

    ## Fix
    Use one of Lightning's names. The fix picks the mixed-precision mode the value most
    likely means (`fp16` → `16-mixed`, `bf16_mixed` → `bf16-mixed`); "-true" would train
    in pure half precision instead, so the choice is marked unsafe.
    """
    config = ctx.config
    yield from _bf16_mixed_plugin_scaler(config)
    item = _precision(config)
    if item is None or _litgpt_bnb(config) is not None:
        return
    found = _invalid_precision(ctx, str(item.value))
    if found is None:
        return
    text, suggestion = found
    edits = edits_for(item, config.path, suggestion) if suggestion is not None and item.origin.kind == "file" else ()
    description = f"use `{suggestion}`" if suggestion else "use a precision this Lightning version accepts"
    if _known_before(ctx, "2.1.0") and not _known_before(ctx, "2.0.0") and suggestion is None:
        description = "upgrade Lightning to 2.1 or later, or use '16-mixed'/'bf16-mixed'"
    yield Finding(
        item.origin,
        f"`precision: {item.value}` is refused before training: {text}",
        Fix(description, edits),
    )


@rule("PC704", "lightning-legacy-precision-alias", Severity.INFO, fix_safety=FixSafety.SAFE, frameworks=("lightning",))
def lightning_legacy_precision_alias(ctx: Context) -> Iterator[Finding]:
    """
    Notes `precision: 16` / `precision: bf16`, which Lightning 2.x accepts with a deprecation warning.

    ## What it does
    Reports the legacy precision aliases 16 ("16") and "bf16" in a Lightning Trainer or
    LitGPT config run by Lightning 2.x (or an unknown version, unless the file is a 1.x
    config with apex keys). NeMo 1.x Megatron configs, whose builder hands these values to
    NeMo's own precision plugin, are not reported.

    ## Why is this bad?
    Nothing breaks: `_convert_precision_to_unified_args` (`lightning/fabric/connector.py`)
    maps them to "16-mixed" and "bf16-mixed" and warns: "`precision=16` is supported for
    historical reasons but its usage is discouraged. Please set your precision to 16-mixed
    instead!" (2.0.x: "16 is supported for historical reasons..."). The explicit name says
    which of mixed and true half precision the run uses, which the alias hides.

    ## Example
    ```yaml
    trainer:
      precision: bf16
    ```
    Use instead:
    ```yaml
    trainer:
      precision: bf16-mixed
    ```

    ## Fix
    Write the name the alias stands for; the run does not change, so the fix is safe.
    """
    config = ctx.config
    item = _precision(config)
    if item is None or _litgpt_bnb(config) is not None or _known_before(ctx, "2.0.0") or _lightning_1x_file(ctx):
        return
    raw = str(item.value)
    if flavour(config) == "nemo" and raw in NEMO_PLUGIN_INPUTS:
        return
    warning = alias_warning(raw)
    if warning is None:
        return
    if _known_before(ctx, "2.1.0"):
        warning = warning.replace(f"`precision={raw}`", raw)
    edits = edits_for(item, config.path, ALIASES[raw]) if item.origin.kind == "file" else ()
    yield Finding(
        item.origin,
        f"`precision: {raw}` is a legacy alias of {ALIASES[raw]!r}; Lightning warns: {warning}",
        Fix(f"write `{ALIASES[raw]}`", edits),
    )


@rule(
    "PC705",
    "lightning-apex-arguments-removed",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
    versions=(LIGHTNING_2,),
    frameworks=("lightning",),
)
def lightning_apex_arguments_removed(ctx: Context) -> Iterator[Finding]:
    """
    Finds `trainer.amp_backend` / `trainer.amp_level`, which Lightning 2.0 removed.

    ## What it does
    Reports the apex AMP arguments `amp_backend` and `amp_level` in a config's `trainer:`
    block when Lightning 2.0 or later runs it: a pinned version, or, with no version known,
    a file that also uses a 2.x-only precision name ("bf16-mixed", "16-true"...). A file
    with apex keys and only 1.x spellings is taken to be run by the Lightning 1.x it was
    written for, and is not reported without a version.

    ## Why is this bad?
    Lightning 2.0.0 removed apex support (#16149, CHANGELOG: "Removed the
    `Trainer(amp_backend=...)` argument", "Removed the `Trainer(amp_level=...)` argument").
    Scripts build the Trainer with `Trainer(**cfg.trainer)` (NeMo's examples,
    LightningCLI), so the run stops at start: `TypeError: Trainer.__init__() got an
    unexpected keyword argument 'amp_backend'`.

    ## Example
    ```yaml
    trainer:
      precision: 16-mixed
      amp_backend: apex
      amp_level: O2
    ```
    Use instead:
    ```yaml
    trainer:
      precision: 16-mixed   # native torch AMP
    ```

    ## Fix
    Remove both keys; Lightning 2.x has only native AMP (`precision: 16-mixed` /
    `bf16-mixed`). apex O2 kept fp16 weights with fp32 master copies, native AMP keeps fp32
    weights, so the fix is marked unsafe.
    """
    config = ctx.config
    if flavour(config) == "litgpt":
        return
    found = [item for key in REMOVED_TRAINER_ARGS if (item := setting(config, f"trainer.{key}")) is not None]
    if not found:
        return
    if _lightning(ctx) is None and not _written_for_2x(config):
        return
    first = found[0]
    edits = tuple(edit for item in found for edit in edits_for(item, config.path, remove=True))
    yield Finding(
        first.origin,
        f"`{first.origin.key}` is a Lightning 1.x argument: Lightning 2.0 removed apex AMP, and "
        f'`Trainer(**cfg.trainer)` raises "TypeError: Trainer.__init__() got an unexpected keyword argument '
        f"'{first.origin.key}'\"",
        Fix("remove the apex arguments; Lightning 2.x has only native AMP (precision: 16-mixed)", edits),
        related=tuple(item.origin for item in found[1:]),
    )


def _lightning_fsdp(config: TrainingConfig) -> Sourced[Any] | None:
    """Lightning's own ``FSDPStrategy`` (not NeMo's ``NLPFSDPStrategy``, which clips itself)."""
    strategy = setting(config, "trainer.strategy")
    if strategy is None:
        return None
    value = strategy.value
    if isinstance(value, str):
        return strategy if value.strip().lower() in ("fsdp", "fsdp_cpu_offload") else None
    if isinstance(value, dict):
        for key in ("class_path", "_target_"):
            target = setting(config, f"trainer.strategy.{key}")
            if target is not None and isinstance(target.value, str):
                name = target.value.rsplit(".", 1)[-1]
                return strategy if name == "FSDPStrategy" else None
    return None


@rule("PC706", "lightning-fsdp-clip-by-norm", Severity.ERROR, frameworks=("lightning",))
def lightning_fsdp_clip_by_norm(ctx: Context) -> Iterator[Finding]:
    """
    Finds gradient clipping by norm (the default) under Lightning's FSDP strategy.

    ## What it does
    Reports a Lightning Trainer config with `strategy: fsdp` (or `fsdp_cpu_offload`, or an
    `FSDPStrategy` class) and `gradient_clip_val` above 0 while `gradient_clip_algorithm` is
    unset or "norm". NeMo's `NLPFSDPStrategy` and LitGPT (Fabric) clip differently and are
    not reported.

    ## Why is this bad?
    Every precision under FSDP goes through `FSDPPrecision`, whose `clip_grad_by_norm`
    (`lightning/pytorch/plugins/precision/fsdp.py`) raises at the first optimizer step:
    `MisconfigurationException: `gradient_clip_algorithm='norm'` is currently not supported
    for `FSDPPrecision`` (`torch.nn.utils.clip_grad_norm_` is wrong for sharded parameters).
    `LightningModule.clip_gradients` uses "norm" when the Trainer names no algorithm. A
    module that overrides `configure_gradient_clipping` (calling FSDP's own
    `clip_grad_norm_`) avoids it; the config cannot show that.

    ## Example
    ```yaml
    trainer:
      strategy: fsdp
      precision: bf16-mixed
      gradient_clip_val: 1.0
    ```
    Use instead:
    ```yaml
    trainer:
      strategy: fsdp
      precision: bf16-mixed
      gradient_clip_val: 1.0
      gradient_clip_algorithm: value
    ```

    ## Fix
    Override `configure_gradient_clipping` in the LightningModule to call the FSDP root
    module's `clip_grad_norm_(gradient_clip_val)`, or clip by value
    (`gradient_clip_algorithm: value`), which bounds each gradient element instead of the
    norm: a different clipping, so no edit is proposed.
    """
    config = ctx.config
    if flavour(config) != "trainer":
        return
    strategy = _lightning_fsdp(config)
    clip = setting(config, "trainer.gradient_clip_val")
    if strategy is None or clip is None:
        return
    value = to_float(clip.value)
    algorithm = setting(config, "trainer.gradient_clip_algorithm")
    by_norm = algorithm is None or algorithm.value is None or str(algorithm.value).lower() == "norm"
    if value is None or value <= 0 or not by_norm:
        return
    plugin = "FSDPMixedPrecisionPlugin" if _known_before(ctx, "2.1.0") else "FSDPPrecision"
    yield Finding(
        clip.origin,
        f"gradient clipping by norm under Lightning's FSDP strategy: {plugin}.clip_grad_by_norm raises "
        f'"MisconfigurationException: {quote("lightning.fsdp_clip_norm", plugin=plugin)}" at the first optimizer '
        "step (unless the LightningModule overrides configure_gradient_clipping)",
        Fix(
            "override configure_gradient_clipping to call the FSDP root module's clip_grad_norm_, "
            "or clip by value (gradient_clip_algorithm: value)"
        ),
        related=(strategy.origin,),
    )


def _litgpt_precision_fix(ctx: Context, raw: str | None) -> str:
    """The ``-true`` precision LitGPT's quantized path takes, keeping the 16-bit type asked for."""
    if raw is not None:
        if raw.startswith("bf16"):
            return "bf16-true"
        if raw.startswith("16"):
            return "16-true"
        if raw.startswith("32"):
            return "32-true"
    return "16-true" if _all_bf16(ctx) is False else "bf16-true"


@rule("PC707", "litgpt-quantize-precision", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def litgpt_quantize_precision(ctx: Context) -> Iterator[Finding]:
    """
    Finds LitGPT `quantize: bnb.*` with a precision other than 16-true, bf16-true or 32-true.

    ## What it does
    Reports a LitGPT fine-tuning config (`litgpt finetune lora|adapter|adapter_v2`) that
    quantizes with bitsandbytes while `precision` is a "-mixed" value, is left unset, or is
    anything other than "16-true", "bf16-true" and "32-true".

    ## Why is this bad?
    `setup()` (`litgpt/finetune/lora.py`, adapter.py, adapter_v2.py) first fills an unset
    precision with `get_default_supported_precision(training=True)` (`litgpt/utils.py`),
    which is always "bf16-mixed" or "16-mixed", then checks `if "mixed" in precision: raise
    ValueError("Quantization and mixed precision is not supported.")`, then maps the value
    with `{"16-true": ..., "bf16-true": ..., "32-true": ...}[precision]` (a `KeyError` for
    any other). The run stops before the model loads.

    ## Example
    ```yaml
    quantize: bnb.nf4
    precision: bf16-mixed
    ```
    Use instead:
    ```yaml
    quantize: bnb.nf4
    precision: bf16-true
    ```

    ## Fix
    Use the "-true" precision of the same 16-bit type (`bf16-true`; `16-true` on GPUs
    without bf16). Weights and LoRA then compute in that dtype (`BitsandbytesPrecision`)
    instead of autocast, so the fix is marked unsafe.
    """
    config = ctx.config
    quantize = _litgpt_bnb(config)
    if quantize is None:
        return
    item = config.precision
    raw = str(item.value) if item is not None else None
    if raw is not None and raw in LITGPT_QUANTIZE_PRECISIONS:
        return
    value = _litgpt_precision_fix(ctx, raw)
    if raw is None:
        yield Finding(
            quantize.origin,
            f"`quantize: {quantize.value}` without `precision`: LitGPT fills in get_default_supported_precision("
            f'training=True), a "-mixed" precision, and raises "ValueError: {quote("litgpt.quantize_mixed")}"',
            Fix(f"set precision: {value}", (Edit(config.path, "precision", value, format=config.format or None),)),
        )
        return
    assert item is not None
    if "mixed" in raw:
        text = f'raises "ValueError: {quote("litgpt.quantize_mixed")}"'
    else:
        text = f"raises KeyError: {raw!r} (quantize takes precision 16-true, bf16-true or 32-true)"
    yield Finding(
        item.origin,
        f"`precision: {raw}` with `quantize: {quantize.value}`: LitGPT {text}",
        Fix(f"use precision: {value}", edits_for(item, config.path, value)),
        related=(quantize.origin,),
    )


def _litgpt_devices(ctx: Context) -> tuple[int, list[Sourced[Any]]] | None:
    """devices x num_nodes as LitGPT's ``parse_devices`` counts them, with the keys that say so."""
    config = ctx.config
    devices = config.keys.get("devices")
    nodes = config.keys.get("num_nodes")
    keys: list[Sourced[Any]] = []
    count = 1  # finetune/lora.py default devices=1
    if devices is not None:
        raw = devices.value
        if raw in ("auto", -1, "-1"):
            if not ctx.hardware.known:
                return None
            count = max(len(ctx.hardware.devices), 1)  # torch.cuda.device_count() or 1
        else:
            number = to_int(raw)
            if number is None:
                return None
            count = number
        if count > 1:
            keys.append(devices)
    node_count = to_int(nodes.value) if nodes is not None else 1
    if node_count is None:
        return None
    if node_count > 1 and nodes is not None:
        keys.append(nodes)
    return count * node_count, keys


@rule("PC708", "litgpt-quantize-multi-device", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def litgpt_quantize_multi_device(ctx: Context) -> Iterator[Finding]:
    """
    Finds LitGPT `quantize` with more than one device (devices x num_nodes > 1).

    ## What it does
    Reports a LitGPT fine-tuning config that sets `quantize` and asks for several devices:
    `devices` above 1, `devices: auto`/-1 on a machine with several GPUs, or `num_nodes`
    above 1.

    ## Why is this bad?
    `setup()` in `litgpt/finetune/lora.py` (and adapter.py, adapter_v2.py) checks `if
    devices * num_nodes > 1: if quantize: raise NotImplementedError("Quantization is
    currently not supported for multi-GPU training. Please set devices=1 and num_nodes=1
    when using the --quantize flag.")` before building the Fabric.

    ## Example
    ```yaml
    quantize: bnb.nf4
    precision: bf16-true
    devices: 4
    ```
    Use instead:
    ```yaml
    quantize: bnb.nf4
    precision: bf16-true
    devices: 1
    ```

    ## Fix
    Train the quantized model on one device, or drop `quantize` to shard the unquantized
    model over several (FSDP). Either changes the run, so the fix is marked unsafe.
    """
    config = ctx.config
    if flavour(config) != "litgpt":
        return
    quantize = config.keys.get("quantize")
    if quantize is None or not quantize.value:
        return
    found = _litgpt_devices(ctx)
    if found is None:
        return
    total, keys = found
    if total <= 1:
        return
    edits = tuple(edit for item in keys for edit in edits_for(item, config.path, 1))
    origin = anchor(config.path, *(item.origin for item in keys), quantize.origin)
    yield Finding(
        origin,
        f"`quantize: {quantize.value}` on {total} devices: LitGPT raises "
        f'"NotImplementedError: {quote("litgpt.quantize_multi_gpu")}"',
        Fix("train the quantized model on one device (or drop quantize to shard over several)", edits),
        related=(quantize.origin,),
    )


@rule("PC709", "nemo-fsdp-fp8", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("lightning",))
def nemo_fsdp_fp8(ctx: Context) -> Iterator[Finding]:
    """
    Finds a NeMo 1.x Megatron config with both `model.fsdp` and `model.fp8`.

    ## What it does
    Reports a NeMo 1.x Megatron model config (`megatron_gpt_config.yaml` and its kin) that
    turns on Torch FSDP (`model.fsdp: true`) and Transformer Engine FP8 (`model.fp8: true`)
    together.

    ## Why is this bad?
    `MegatronBaseModel._validate_and_override_config`
    (`nemo/collections/nlp/models/language_modeling/megatron_base_model.py`) runs when the
    model is built and raises `ValueError: Torch FSDP does not support FP8.`

    ## Example
    ```yaml
    model:
      megatron_amp_O2: false
      fsdp: true
      fp8: true
    ```
    Use instead:
    ```yaml
    model:
      megatron_amp_O2: false
      fsdp: true
      fp8: false
    ```

    ## Fix
    Drop FP8 to keep FSDP (bf16 compute), or drop FSDP and use Megatron's tensor/pipeline
    parallelism with the distributed optimizer to keep FP8. Either changes the run, so the
    fix is marked unsafe.
    """
    config = ctx.config
    if flavour(config) != "nemo":
        return
    fsdp, fp8 = setting(config, "model.fsdp"), setting(config, "model.fp8")
    if not _on(fsdp) or not _on(fp8):
        return
    assert fsdp is not None and fp8 is not None
    yield Finding(
        fp8.origin,
        f'`model.fp8` with `model.fsdp`: NeMo\'s MegatronBaseModel raises "ValueError: {quote("nemo.fsdp_fp8")}"',
        Fix("turn FP8 off to keep FSDP (or FSDP off to keep FP8)", edits_for(fp8, config.path, False)),
        related=(fsdp.origin,),
    )


# --- axolotl --------------------------------------------------------------------------------

#: 0.10.0: TrainingArguments ``bf16 = cfg.bf16 or cfg.bfloat16`` (0.9.x: ``cfg.bf16``)
AXOLOTL_BFLOAT16_AUTOCASTS = span("axolotl.bfloat16_autocasts")


@rule("PC710", "axolotl-float16-ignored", Severity.WARNING, fix_safety=FixSafety.SAFE, frameworks=("axolotl",))
def axolotl_float16_ignored(ctx: Context) -> Iterator[Finding]:
    """
    Warns when axolotl's `float16: true` has no effect because bf16 wins.

    ## What it does
    Reports `float16: true` when axolotl loads the weights in bf16 anyway: `bf16: true`,
    `bfloat16: true`, or `bf16` left at its default `auto` on a GPU where
    `is_torch_bf16_gpu_available()` is true (every Ampere or newer GPU; with torch 2.3+ also
    older ones, which count emulation).

    ## Why is this bad?
    `resolve_dtype` (`axolotl/utils/config/__init__.py`) turns `bf16: auto` on when fp16 is
    not set and the GPU reports bf16, then picks the load dtype with `if cfg.bf16 or
    cfg.bfloat16: torch.bfloat16 elif cfg.load_in_8bit or cfg.fp16 or cfg.float16:
    torch.float16`. The file asks for fp16 weights; the run trains bf16 weights under bf16
    autocast, and nothing says so.

    ## Example
    ```yaml
    float16: true   # bf16 left at auto, on an A100
    ```
    Use instead:
    ```yaml
    float16: true
    bf16: false     # really fp16 weights (no loss scaling: see PC405)
    ```

    ## Fix
    Remove `float16` (it changes nothing), or set `bf16: false` if fp16 weights were
    meant. The removal keeps what the run does, so the fix is safe.
    """
    config = ctx.config
    float16 = _flag(config, "float16")
    if not _on(float16) or ctx.plan.load_dtype.value != "bfloat16":
        return
    assert float16 is not None
    if _on(config.pure_bf16):
        winner, related = "`bfloat16: true`", config.pure_bf16
    elif _on(config.bf16):
        winner, related = "`bf16: true`", config.bf16
    else:
        winner, related = "`bf16: auto` (the default), which the GPU's bf16 support turned on,", None
    yield Finding(
        float16.origin,
        f"`float16: true` has no effect: {winner} and resolve_dtype checks bf16 before float16, "
        "so the weights load in bf16 and train under bf16 autocast",
        Fix(
            "remove `float16` (or set `bf16: false` if fp16 weights were meant)",
            edits_for(float16, config.path, remove=True),
        ),
        related=(related.origin,) if related is not None else (),
    )


@rule(
    "PC711",
    "axolotl-fp16-with-bfloat16",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
    versions=(AXOLOTL_BFLOAT16_AUTOCASTS,),
    frameworks=("axolotl",),
)
def axolotl_fp16_with_bfloat16(ctx: Context) -> Iterator[Finding]:
    """
    Finds axolotl `fp16: true` with `bfloat16: true`, which hands TrainingArguments both flags.

    ## What it does
    Reports `fp16: true` together with `bfloat16: true` when `bf16` is not `true`
    (absent, `auto` or `false`), for axolotl 0.10.0 and later.

    ## Why is this bad?
    With fp16 set, `resolve_dtype` turns `bf16: auto` off, so fp16 survives. The trainer
    builder (`core/builders/base.py` `_configure_precision_settings`) then passes
    `fp16 = cfg.fp16 and not cfg.bf16` (true) and, from 0.10.0, `bf16 = cfg.bf16 or
    cfg.bfloat16` (true), and transformers' `TrainingArguments.__post_init__` stops the run:
    `ValueError: At most one of fp16 and bf16 can be True, but not both`. (With `bf16:
    true`, `resolve_dtype` drops fp16 instead and the run trains bf16.)

    ## Example
    ```yaml
    bfloat16: true
    fp16: true
    ```
    Use instead:
    ```yaml
    bfloat16: true
    ```

    ## Fix
    Drop `fp16`: `bfloat16: true` already trains bf16 weights under bf16 autocast. Use
    `fp16: true` alone (and `bfloat16: false`) for fp16 mixed precision on a GPU without
    bf16. The choice changes numerics, so the fix is marked unsafe.
    """
    config = ctx.config
    if not _on(config.fp16) or not _on(config.pure_bf16) or _on(config.bf16):
        return
    assert config.fp16 is not None and config.pure_bf16 is not None
    yield Finding(
        config.fp16.origin,
        "`fp16: true` with `bfloat16: true`: axolotl passes TrainingArguments fp16=True and bf16=True "
        f'(bf16 = bf16 or bfloat16), which raises "ValueError: {quote("transformers.fp16_and_bf16")}"',
        Fix("drop fp16 (bfloat16: true already trains in bf16)", edits_for(config.fp16, config.path, False)),
        related=(config.pure_bf16.origin,),
    )


# --- LLaMA-Factory --------------------------------------------------------------------------


def _llamafactory_trainer(config: TrainingConfig) -> bool:
    """A LLaMA-Factory v0 run on the HF Trainer (not v1, not a Megatron backend)."""
    return not is_v1(config.keys) and megatron_backend(config) is None


def _pure_bf16(config: TrainingConfig) -> Sourced[bool] | None:
    item = config.pure_bf16
    return item if _on(item) and _llamafactory_trainer(config) else None


@rule(
    "PC712", "llamafactory-pure-bf16-zero3", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("llamafactory",)
)
def llamafactory_pure_bf16_zero3(ctx: Context) -> Iterator[Finding]:
    """
    Finds LLaMA-Factory `pure_bf16: true` with a DeepSpeed ZeRO-3 config.

    ## What it does
    Reports `pure_bf16: true` when the file's `deepspeed:` config has
    `zero_optimization.stage: 3`.

    ## Why is this bad?
    `get_train_args` (`llamafactory/hparams/parser.py`) checks `if finetuning_args.pure_bf16:
    ... if is_deepspeed_zero3_enabled(): raise ValueError("`pure_bf16` is incompatible with
    DeepSpeed ZeRO-3.")` before loading anything.

    ## Example
    ```yaml
    pure_bf16: true
    deepspeed: examples/deepspeed/ds_z3_config.json
    ```
    Use instead:
    ```yaml
    bf16: true
    deepspeed: examples/deepspeed/ds_z3_config.json
    ```

    ## Fix
    Use `bf16: true` under ZeRO-3 (DeepSpeed keeps fp32 master weights), or a ZeRO-2 config
    to keep pure bf16. Either changes the run, so the fix is marked unsafe.
    """
    config = ctx.config
    pure = _pure_bf16(config)
    attached = config.attached.get("deepspeed")
    stage = attached.zero_stage if attached is not None else None
    if pure is None or stage is None or stage.value != 3:
        return
    yield Finding(
        pure.origin,
        "`pure_bf16: true` with DeepSpeed ZeRO-3: LLaMA-Factory raises "
        f'"ValueError: {quote("llamafactory.pure_bf16_zero3")}"',
        Fix("use bf16: true under ZeRO-3 (or a ZeRO-2 config)", edits_for(pure, config.path, False)),
        related=(stage.origin,),
    )


@rule(
    "PC713",
    "llamafactory-pure-bf16-unsupported-gpu",
    Severity.ERROR,
    hardware=True,
    fix_safety=FixSafety.UNSAFE,
    frameworks=("llamafactory",),
)
def llamafactory_pure_bf16_unsupported_gpu(ctx: Context) -> Iterator[Finding]:
    """
    Finds LLaMA-Factory `pure_bf16: true` where the bf16 check fails (pre-Ampere GPU, torch < 2.3).

    ## What it does
    Reports `pure_bf16: true` when `torch.cuda.is_bf16_supported()` answers False on the
    GPUs: a GPU before Ampere with torch 2.2 or older. From torch 2.3 the check counts
    emulation and passes on a V100 or T4; that case is PC101's.

    ## Why is this bad?
    `get_train_args` (`llamafactory/hparams/parser.py`) raises `ValueError: This device does
    not support `pure_bf16`.` unless `is_torch_bf16_gpu_available()` (transformers:
    `torch.cuda.is_bf16_supported()`) or an NPU with bf16.

    ## Example
    ```yaml
    pure_bf16: true   # V100 with torch 2.2
    ```
    Use instead:
    ```yaml
    fp16: true
    ```

    ## Fix
    Train with fp16 mixed precision (`fp16: true`) or in fp32 on that GPU. Either changes
    the run, so the fix is marked unsafe.
    """
    config = ctx.config
    pure = _pure_bf16(config)
    if pure is None or not ctx.hardware.devices:
        return
    sees, why = frameworks_see_bf16(ctx.hardware, ctx.versions)
    if sees:
        return
    lacking = [d for d in ctx.hardware.devices if not d.bf16]
    names = ", ".join(f"{sum(1 for d in lacking if d.name == n)}x {n}" for n in sorted({d.name for d in lacking}))
    yield Finding(
        pure.origin,
        f"`pure_bf16: true` on {names}: {why}, so LLaMA-Factory raises "
        f'"ValueError: {quote("llamafactory.pure_bf16_unsupported")}"',
        Fix("train with fp16 mixed precision (fp16: true) or in fp32", edits_for(pure, config.path, False)),
    )


@rule("PC714", "llamafactory-pure-bf16-fp16", Severity.ERROR, fix_safety=FixSafety.UNSAFE, frameworks=("llamafactory",))
def llamafactory_pure_bf16_fp16(ctx: Context) -> Iterator[Finding]:
    """
    Finds LLaMA-Factory `pure_bf16: true` with `fp16: true` in a full or freeze fine-tune.

    ## What it does
    Reports a full or freeze fine-tune (`finetuning_type: full|freeze`) with `pure_bf16:
    true` and `fp16: true` (and not `bf16: true`, which is PC205), without a DeepSpeed
    config (DeepSpeed's fp16 engine casts the model to fp16 itself).

    ## Why is this bad?
    `pure_bf16` makes the compute dtype bf16 (`get_train_args`: `if training_args.bf16 or
    finetuning_args.pure_bf16: compute_dtype = torch.bfloat16`) and `init_adapter` keeps the
    trainable weights in it ("Pure bf16 / BAdam detected, remaining trainable params in half
    precision."). `fp16: true` still turns on fp16 AMP, whose GradScaler unscales the bf16
    gradients at the first step: `NotImplementedError:
    "_amp_foreach_non_finite_check_and_unscale_cuda" not implemented for 'BFloat16'` (the
    CUDA kernel covers float, double and half only).

    ## Example
    ```yaml
    finetuning_type: full
    pure_bf16: true
    fp16: true
    ```
    Use instead:
    ```yaml
    finetuning_type: full
    pure_bf16: true
    ```

    ## Fix
    Drop `fp16`: pure bf16 needs no loss scaling. That removes fp16 autocast, so the fix is
    marked unsafe.
    """
    config = ctx.config
    pure = _pure_bf16(config)
    kind = str(config.train_type.value).strip().lower() if config.train_type is not None else "lora"
    if pure is None or not _on(config.fp16) or _on(config.bf16) or kind not in ("full", "freeze"):
        return
    if "deepspeed" in config.attached or "deepspeed" in config.references:
        return
    assert config.fp16 is not None
    yield Finding(
        config.fp16.origin,
        "`fp16: true` with `pure_bf16: true`: the trainable weights stay bf16 and fp16 AMP's GradScaler "
        f'unscales their bf16 gradients: "NotImplementedError: {quote("torch.unscale_bf16_cuda")}" at the first step',
        Fix("drop fp16: pure bf16 needs no loss scaling", edits_for(config.fp16, config.path, False)),
        related=(pure.origin,),
    )


# --- llama-cookbook -------------------------------------------------------------------------


@rule(
    "PC715",
    "llama-cookbook-fp16-pure-bf16-fsdp",
    Severity.ERROR,
    fix_safety=FixSafety.UNSAFE,
    frameworks=("llama-cookbook",),
)
def llama_cookbook_fp16_pure_bf16_fsdp(ctx: Context) -> Iterator[Finding]:
    """
    Finds llama-cookbook `use_fp16` with `pure_bf16` under FSDP (full fine-tune).

    ## What it does
    Reports `use_fp16: true`, `enable_fsdp: true` and `pure_bf16: true` together in a
    full fine-tune (no `use_peft: true`) of an unquantized model.

    ## Why is this bad?
    `finetuning.py` `main` loads the model in fp16 (`torch_dtype=torch.float16 if
    train_config.use_fp16`) and then, because `enable_fsdp and fsdp_config.pure_bf16 and
    not train_config.quantization`, casts it with `model.to(torch.bfloat16)`; FSDP gets no
    mixed-precision policy (`mixed_precision=... if not fsdp_config.pure_bf16 else None`).
    `train_utils.train` still runs fp16 autocast with a `ShardedGradScaler()` for
    `use_fp16`, and its unscale of the bf16 gradients fails at the first step:
    `NotImplementedError: "_amp_foreach_non_finite_check_and_unscale_cuda" not implemented
    for 'BFloat16'`.

    ## Example
    ```yaml
    enable_fsdp: true
    use_fp16: true
    pure_bf16: true
    ```
    Use instead:
    ```yaml
    enable_fsdp: true
    pure_bf16: true
    ```

    ## Fix
    Drop `use_fp16` to train pure bf16 (no loss scaling needed), or drop `pure_bf16` to
    train with FSDP's fp16 policy. Either changes the run, so the fix is marked unsafe.
    """
    config = ctx.config
    if not (_on(config.fp16) and _on(config.fsdp) and _on(config.pure_bf16)):
        return
    if config.quantization_bits is not None or (config.train_type is not None and config.train_type.value == "lora"):
        return
    assert config.fp16 is not None and config.pure_bf16 is not None
    yield Finding(
        config.fp16.origin,
        "`use_fp16` with `pure_bf16` under FSDP: finetuning.py casts the fp16-loaded model to bf16, and the "
        "ShardedGradScaler use_fp16 adds fails on its bf16 gradients: "
        f'"NotImplementedError: {quote("torch.unscale_bf16_cuda")}"',
        Fix("drop use_fp16 (pure bf16 needs no loss scaling)", edits_for(config.fp16, config.path, False)),
        related=(config.pure_bf16.origin,),
    )


__all__ = [
    "axolotl_float16_ignored",
    "axolotl_fp16_with_bfloat16",
    "lightning_apex_arguments_removed",
    "lightning_fsdp_clip_by_norm",
    "lightning_invalid_precision",
    "lightning_legacy_precision_alias",
    "litgpt_quantize_multi_device",
    "litgpt_quantize_precision",
    "llama_cookbook_fp16_pure_bf16_fsdp",
    "llamafactory_pure_bf16_fp16",
    "llamafactory_pure_bf16_unsupported_gpu",
    "llamafactory_pure_bf16_zero3",
    "nemo_fsdp_fp8",
    "torchtune_dtype_spelling",
    "torchtune_fp16_rejected",
]
