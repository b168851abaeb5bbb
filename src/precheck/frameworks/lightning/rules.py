"""PC703-PC706: Lightning Trainer precision traps (LightningCLI, and the LitGPT and NeMo variants
where they share them); the variants' own traps are in :mod:`.variant_rules`.

Source: Lightning-AI/pytorch-lightning (2.0.0 to 2.6.x): ``fabric/connector.py``
``_convert_precision_to_unified_args`` (the invalid-precision ``ValueError`` and the
"historical reasons" warning, used by the Trainer and by Fabric); ``pytorch/plugins/precision/
fsdp.py`` ``FSDPPrecision.clip_grad_by_norm`` (``MisconfigurationException:
`gradient_clip_algorithm='norm'` is currently not supported for `FSDPPrecision```; 2.0's
``FSDPMixedPrecisionPlugin`` raised the same) reached from ``Precision.clip_gradients`` when
``clip_val > 0`` and the algorithm is NORM, the default of ``LightningModule.clip_gradients``
(``self.trainer.gradient_clip_algorithm or "norm"``); CHANGELOG 2.0.0 "nvidia/apex removal
(#16149): Removed the `Trainer(amp_backend=...)` argument ... Removed the
`Trainer(amp_level=...)` argument". More in the framework's resolver.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...config import TrainingConfig
from ...facts import quote, span
from ...provenance import Sourced
from ...rules.base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule
from ...versions import VersionInfo
from .modes import ALIASES, MODES, NEMO_PLUGIN_INPUTS, alias_warning

#: "16-true", "bf16-true", "transformer-engine[-float16]" from 2.1.0
LIGHTNING_HALF_TRUE = span("lightning.half_true")
#: the ``-mixed``/``-true`` names from 2.0.0 (#16783); apex removed in 2.0.0 (#16149)
LIGHTNING_2 = span("lightning.unified_names")
ALLOWED = (*MODES, 64, 32, 16, "64", "32", "16", "bf16")
ALLOWED_2_0 = ("16-mixed", "bf16-mixed", "32-true", "64-true", 64, 32, 16, "64", "32", "16", "bf16")
#: Lightning 2.x name → the 1.x spelling of the same mode
TO_1X = {value: key for key, value in ALIASES.items()}


def in_file(item: Sourced[str] | None) -> bool:
    return item is not None and item.origin.in_file and item.origin.key is not None


def all_bf16(ctx: Context) -> bool | None:
    """Whether every device the run uses has native bf16 (None: the devices are not known)."""
    if not ctx.hardware.known:
        return None
    devices = ctx.hardware.devices
    used = [devices[i] for i in ctx.plan.device_indices(len(devices))]
    return all(d.bf16 for d in used) if used else None


def _lightning(ctx: Context) -> VersionInfo | None:
    return ctx.versions.get("lightning")


def _known_before(ctx: Context, version: str) -> bool:
    """The run's Lightning is older than ``version``: an exact release, or a range whose
    newest allowed release is (a range such as ``>=2.6.1`` is not read as release 0)."""
    return ctx.versions.older_than("lightning", version) == "all"


def _maybe_before(ctx: Context, version: str) -> bool:
    """The run's Lightning range allows releases older than ``version``, and newer ones."""
    return ctx.versions.older_than("lightning", version) != "none"


def _named(ctx: Context, version: str) -> str:
    """The run's Lightning as a message names it: ``lightning 1.9.5``; for a range, its
    releases before ``version``."""
    info = _lightning(ctx)
    if info is None:
        return "lightning"
    if info.version[:1].isdigit():
        return f"lightning {info.version}"
    return f"lightning releases before {version} (allowed by {info.version})"


def _precision(config: TrainingConfig) -> Sourced[str] | None:
    """``trainer.precision`` / LitGPT ``precision`` as the file writes it (not a plugin's)."""
    item = config.precision
    if not in_file(item) or item is None or config.precision_plugin is not None:
        return None
    return item


def _written_for_2x(config: TrainingConfig) -> bool:
    """The file uses a precision name only Lightning 2.x knows (``bf16-mixed``, ``16-true``...)."""
    return config.precision is not None and str(config.precision.value) in MODES


def _lightning_1x_file(ctx: Context) -> bool:
    """No Lightning version is known and the file is a Lightning 1.x config (apex keys, no 2.x names)."""
    return _lightning(ctx) is None and bool(ctx.config.apex_args) and not _written_for_2x(ctx.config)


def bnb_quantize(config: TrainingConfig) -> Sourced[str] | None:
    """LitGPT ``quantize: bnb.*`` (which takes the precision out of Fabric's hands)."""
    item = config.quantize
    if config.variant != "litgpt" or item is None or not item.value.startswith("bnb."):
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


def _invalid_precision(ctx: Context, raw: str, ranged: bool = False) -> tuple[str, str | None] | None:
    """(what Lightning raises, the value to use instead) when ``raw`` is refused; None when
    valid. ``ranged``: what the older releases a range of Lightning allows raise."""
    if ctx.config.variant == "nemo" and raw in NEMO_PLUGIN_INPUTS:
        return None  # NeMo's MegatronTrainerBuilder turns these into its own plugin
    before = _maybe_before if ranged else _known_before
    mode = ctx.config.precision_mode.value if ctx.config.precision_mode is not None else None
    if mode is None:
        if ranged:
            return None
        allowed = ALLOWED_2_0 if _known_before(ctx, "2.1.0") else ALLOWED
        text = f"ValueError: {quote('lightning.invalid_precision', precision=repr(raw), allowed=allowed)}"
        return text, _suggest_mode(raw)
    if before(ctx, "2.0.0") and raw not in ALIASES:
        text = (
            f"{_named(ctx, '2.0.0')} raise{'' if ranged else 's'} MisconfigurationException: "
            f"{quote('lightning.invalid_precision_1x', precision=repr(raw))} "
            "(Lightning 1.x takes 64, 32, 16 and 'bf16'; the '-mixed'/'-true' names came with 2.0)"
        )
        return text, TO_1X.get(mode)
    if before(ctx, "2.1.0") and mode in (
        "16-true",
        "bf16-true",
        "transformer-engine",
        "transformer-engine-float16",
    ):
        text = (
            f"{_named(ctx, '2.1.0')} raise{'' if ranged else 's'} ValueError: "
            f"{quote('lightning.invalid_precision', precision=repr(raw), allowed=ALLOWED_2_0)} "
            "('16-true', 'bf16-true' and 'transformer-engine' came with 2.1.0)"
        )
        return text, None
    return None


def _bf16_mixed_plugin_scaler(config: TrainingConfig) -> Iterator[Finding]:
    """``MixedPrecision(precision="bf16-mixed", scaler=...)``: the plugin refuses the scaler."""
    item, scaler, mode = config.precision, config.grad_scaler, config.precision_mode
    if item is None or scaler is None or not scaler.value or not scaler.origin.in_file:
        return
    if not str(config.precision_plugin).endswith("MixedPrecision") or mode is None or mode.value != "bf16-mixed":
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
    if item is None or bnb_quantize(config) is not None:
        return
    assumptions: tuple[str, ...] = ()
    found = _invalid_precision(ctx, str(item.value))
    if found is None:  # a range of Lightning whose newest release accepts it: older ones may not
        found = _invalid_precision(ctx, str(item.value), ranged=True)
        if found is None:
            return
        first = "2.0.0" if "MisconfigurationException" in found[0] else "2.1.0"
        assumptions = (ctx.versions.range_note("lightning", first),)
    text, suggestion = found
    edits = edits_for(item, config.path, suggestion) if suggestion is not None and item.origin.kind == "file" else ()
    description = f"use `{suggestion}`" if suggestion else "use a precision this Lightning version accepts"
    if _known_before(ctx, "2.1.0") and not _known_before(ctx, "2.0.0") and suggestion is None:
        description = "upgrade Lightning to 2.1 or later, or use '16-mixed'/'bf16-mixed'"
    yield Finding(
        item.origin,
        f"`precision: {item.value}` is refused before training: {text}",
        Fix(description, edits),
        assumptions=assumptions,
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
    if item is None or bnb_quantize(config) is not None or _known_before(ctx, "2.0.0") or _lightning_1x_file(ctx):
        return
    raw = str(item.value)
    if config.variant == "nemo" and raw in NEMO_PLUGIN_INPUTS:
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
    if config.variant == "litgpt":
        return
    found = config.apex_args
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
    if config.variant != "trainer":
        return
    strategy = config.strategy
    names = ("fsdp", "fsdp_cpu_offload")  # registered names; else a class path
    if strategy is None or (strategy.value not in names and strategy.value.rsplit(".", 1)[-1] != "FSDPStrategy"):
        return  # not Lightning's own FSDPStrategy (NeMo's NLPFSDPStrategy clips itself)
    clip = config.gradient_clip_norm
    if clip is None or clip.value <= 0:
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


__all__ = [
    "lightning_apex_arguments_removed",
    "lightning_fsdp_clip_by_norm",
    "lightning_invalid_precision",
    "lightning_legacy_precision_alias",
]
