"""PC6xx: sharded training: DeepSpeed config files (PC601-PC610) and FSDP (PC611+).

The DeepSpeed rules read the DeepSpeed file itself: the run's own config when precheck
checks a ``ds_config.json`` on its own (``framework == "deepspeed"``), or the file the run
names (``config.attached["deepspeed"]``: a HF/TRL/axolotl/LLaMA-Factory/ms-swift
``deepspeed:`` key, an accelerate ``deepspeed_config_file``, a Lightning
``DeepSpeedStrategy(config=...)``). Findings point at the key in the DeepSpeed file.

Who fills ``"auto"`` (the launcher) decides what a DeepSpeed file means:

- the HF integrations fill it: transformers ``HfTrainerDeepSpeedConfig.trainer_config_process``
  (``fill_match``), accelerate ``DeepSpeedPlugin.set_mixed_precision`` / ``deepspeed_config_process``
  (transformers 5.23.0 ``integrations/deepspeed.py``, accelerate 1.15.0 ``utils/dataclasses.py``);
- Lightning does not: ``_format_precision_config`` (``lightning/fabric/strategies/deepspeed.py``)
  only adds an ``fp16``/``bf16`` section when the file has none, and
  ``_format_batch_size_and_grad_accum_config`` only sets keys the file lacks; plain
  ``deepspeed.initialize`` fills nothing either;
- a DeepSpeed file checked on its own has no launcher: most such files are written for the
  HF Trainer (they are full of ``"auto"``), so precheck does not treat ``"auto"`` there as a
  bug: PC604 explains what the file does under each launcher at ``info`` level, and PC603
  reports it as an error only when the run that names the file is known not to fill it
  (Lightning). When precheck checks the HF config and the DeepSpeed file together, the
  DeepSpeed file's standalone findings are dropped (``engine.group_runs``) and the run's own
  findings, with ``"auto"`` filled, stand.

DeepSpeed facts (deepspeedai/DeepSpeed master, read 2026; the resolver
:mod:`precheck.resolve.deepspeed` records the engine's decisions and refusals as plan fields
and ``plan.overrides``, which these rules read):

- ``runtime/config_utils.py`` ``DeepSpeedConfigModel.__init__`` drops ``"auto"`` values of its
  pydantic sections (``fp16``, ``bf16``, ``zero_optimization``...), so their defaults apply;
  top-level scalars are read with ``get_scalar_param`` (``dict.get``) and stay the string
  ``"auto"``: ``DeepSpeedConfig._batch_assertion`` then fails on ``train_batch > 0`` with
  ``TypeError: '>' not supported between instances of 'str' and 'int'``.
- ``engine.py`` ``communication_data_type``: the config value, else fp16 if fp16, bf16 if bf16,
  else fp32. ``get_data_types``: ``data_types.grad_accum_dtype`` defaults to the model dtype
  (up to 0.17.5: fp32 for bf16 without ZeRO). ``_do_optimizer_sanity_check`` warns "**** BF16
  gradient accumulation is not safe numerically with large number of accumulation steps,
  proceed with caution *****" (pipeline case); ZeRO accumulates in ``grad_accum_dtype``
  (``stage_1_and_2.py`` / ``stage3.py``: ``grad_buffer.add_(...)`` in
  ``gradient_accumulation_dtype``) and takes ``fp32`` there since PR #2847 ("ZeRO Gradient
  Accumulation Dtype"); issues #1800 and #2768 report divergence from bf16 accumulation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..config import TrainingConfig
from ..facts import quote, span
from ..frameworks.lightning.dialect import unify
from ..frameworks.lightning.resolve import flavour
from ..plan import OverrideKind
from ..provenance import Origin, Sourced
from ..resolve.deepspeed import BOTH_ENABLED, HF_TRAINER
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from .device import used_devices

#: main frameworks whose launch fills DeepSpeed "auto" values (the HF Trainer, accelerate)
FILLS_AUTO = HF_TRAINER | {"accelerate"}
#: main frameworks known to hand the file to DeepSpeed without filling "auto"
KEEPS_AUTO = frozenset(("lightning",))

#: DeepSpeed's spelling of a dtype (``communication_data_type``, ``data_types.grad_accum_dtype``)
DS_DTYPE = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}
SWITCHES = ("fp16.enabled", "bf16.enabled", "bfloat16.enabled")
BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")

HF_MISMATCH_HEAD, _, HF_MISMATCH_TAIL = quote("transformers.ds_config_mismatch").split("\n")
#: micro-batches per step from which bf16 accumulation is reported (PC607): DeepSpeed warns of
#: "large number of accumulation steps" without a number; every bf16 addition rounds the running
#: sum to 8 significant bits, and with 16 or more additions the rounding of partial sums that
#: cancel (micro-batch gradients differ in sign) is no longer small against the final sum.
#: 2-8 steps, the common fine-tuning setting, are left alone (one to a few roundings).
MANY_STEPS = 16
STR_COMPARE = "TypeError: '>' not supported between instances of 'str' and 'int'"


def deepspeed_config(ctx: Context) -> TrainingConfig | None:
    """The DeepSpeed file of this run: the config itself, or the one it names."""
    if ctx.config.framework == "deepspeed":
        return ctx.config
    return ctx.config.attached.get("deepspeed")


def launcher(ctx: Context) -> str:
    """Who hands the DeepSpeed file to the engine: "standalone", "hf", "lightning" or "other"."""
    framework = ctx.config.framework
    if framework == "deepspeed":
        return "standalone"
    if framework in FILLS_AUTO:
        return "hf"
    if framework in KEEPS_AUTO:
        return "lightning"
    return "other"


def _where(item: Sourced[Any] | None) -> str:
    origin = item.origin if item is not None else None
    return f" ({origin.location()})" if origin is not None and origin.in_file else ""


def _key(item: Sourced[Any]) -> str:
    return item.origin.key or "?"


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _spelled(item: Sourced[Any]) -> str:
    """The value as its file spells it (``yes``), else as precheck writes it."""
    origin = item.origin
    return origin.written if origin.kind == "file" and origin.written else _shown(item.value)


def _describe(item: Sourced[Any]) -> str:
    """The other side of a disagreement, as the user wrote it or as the default it is."""
    origin = item.origin
    if origin.in_file and origin.key:
        return f"`{origin.key}: {_spelled(item)}` ({origin.location()})"
    if origin.kind == "env":
        return f"{origin.key}={_shown(item.value)}"
    return origin.detail or str(origin)


# --- PC601 --------------------------------------------------------------------------------


@rule("PC601", "ds-fp16-and-bf16", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_fp16_and_bf16(ctx: Context) -> Iterator[Finding]:
    """
    Finds a DeepSpeed config that enables both fp16 and bf16.

    ## What it does
    Reports `fp16.enabled: true` together with `bf16.enabled: true` (or the legacy
    `bfloat16.enabled: true`, which DeepSpeed reads when there is no `bf16` key) in a
    DeepSpeed file, checked on its own or named by the run. Under the HF Trainer or
    accelerate the legacy section is ignored (accelerate always adds a `bf16` section), so
    only `bf16` counts there.

    ## Why is this bad?
    `DeepSpeedConfig._initialize_params` (`deepspeed/runtime/config.py`) asserts
    `AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled` before the
    engine exists: the run stops at `deepspeed.initialize`. Under the HF Trainer,
    accelerate's `DeepSpeedPlugin.set_mixed_precision` or transformers' mismatch check
    raises even earlier (PC605).

    ## Example
    ```json
    {"fp16": {"enabled": true}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```
    Use instead (on an Ampere or newer GPU):
    ```json
    {"fp16": {"enabled": false}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Turn one off: bf16 where every device supports it, otherwise fp16. Which one was meant
    is not in the file and the choice changes the numerics, so the fix is unsafe.
    """
    ds = deepspeed_config(ctx)
    if ds is None or ds.fp16 is None or ds.bf16 is None or not (ds.fp16.value and ds.bf16.value):
        return
    fp16, bf16 = ds.fp16, ds.bf16
    if _key(bf16).startswith("bfloat16") and launcher(ctx) == "hf":
        return  # accelerate adds a `bf16` section: the legacy one is ignored (PC602)
    keep_bf16 = ctx.hardware.known and all(d.bf16 for d in used_devices(ctx))
    drop = fp16 if keep_bf16 else bf16
    later = bf16 if (bf16.origin.line or 0) > (fp16.origin.line or 0) else fp16
    yield Finding(
        anchor(ds.path, later.origin, fp16.origin),
        f"`{_key(fp16)}` and `{_key(bf16)}` are both true: DeepSpeed asserts "
        f'"{BOTH_ENABLED}" (DeepSpeedConfig._initialize_params) and the engine is never created',
        Fix(
            "keep bf16 (every device supports it)" if keep_bf16 else "keep fp16 (bf16 is not known to be native here)",
            edits_for(drop, ds.path, False),
        ),
        related=(fp16.origin, bf16.origin),
    )


# --- PC602 --------------------------------------------------------------------------------


@rule("PC602", "ds-legacy-bfloat16-key", Severity.WARNING)
def ds_legacy_bfloat16_key(ctx: Context) -> Iterator[Finding]:
    """
    Finds the legacy `bfloat16` section of a DeepSpeed config.

    ## What it does
    Reports a top-level `bfloat16` key in a DeepSpeed file and says what happens to it in
    this run: ignored beside a `bf16` key, ignored under the HF Trainer/accelerate (which
    always add a `bf16` section), or read only because nothing else is there.

    ## Why is this bad?
    DeepSpeed reads `bfloat16` only as a fallback: `get_bfloat16_config`
    (`deepspeed/runtime/precision_config.py`) takes `param_dict.get("bf16")` and falls back
    to `param_dict.get("bfloat16", {})` ("keeping for backwards compatibility") only when
    there is no `bf16` key. accelerate's `DeepSpeedPlugin.set_mixed_precision` adds
    `bf16: {"enabled": true}` for bf16/fp8 runs and `{"enabled": false}` otherwise whenever
    the file has no `bf16` key, and transformers fills and checks only `bf16.enabled`: under
    the HF integrations the legacy section is dead, and `bfloat16: {"enabled": true}` in a run
    whose flags do not say bf16 trains in fp32 without an error (a `bf16` key there would
    have raised the mismatch error, PC605).

    ## Example
    ```json
    {"bfloat16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Rename the section to `bf16` (and drop it where a `bf16` section already exists).
    """
    ds = deepspeed_config(ctx)
    legacy = ds.keys.get("bfloat16") if ds is not None else None
    if ds is None or legacy is None:
        return
    where = launcher(ctx)
    if "bf16" in ds.keys:
        what = (
            f"the file also has `bf16`{_where(ds.keys['bf16'])}, and DeepSpeed then ignores `bfloat16` entirely "
            "(get_bfloat16_config reads `bfloat16` only without a `bf16` key)"
        )
    elif where == "hf":
        lost = ctx.plan.override_of("bf16")
        if lost is not None and _key(lost.loser).startswith("bfloat16"):
            what = (
                'accelerate\'s set_mixed_precision adds `bf16: {"enabled": false}` because the file has no `bf16` '
                "key, so DeepSpeed ignores `bfloat16`: this run trains without bf16"
            )
        else:
            what = (
                "accelerate's set_mixed_precision always adds a `bf16` section when the file has none "
                "(enabled for bf16/fp8 runs, disabled otherwise), so DeepSpeed ignores `bfloat16`: "
                "the run's bf16/fp16 flags decide, not this section"
            )
    else:
        what = (
            "DeepSpeed still reads it here because there is no `bf16` key, but it is the deprecated spelling: "
            "under the HF Trainer or accelerate a `bf16` section is added and this one is ignored"
        )
        if any(item.value == "bfloat16.enabled" for item in ds.auto_keys):
            what += ', and its `"enabled": "auto"` is filled by no one (transformers fills only `bf16.enabled`)'
    yield Finding(
        legacy.origin,
        f"`bfloat16` is DeepSpeed's legacy name for the `bf16` section: {what}",
        Fix("rename `bfloat16` to `bf16` (remove it where `bf16` exists)"),
    )


# --- PC603 / PC604 ------------------------------------------------------------------------


def _auto_consequence(path: str, lightning_trainer: bool) -> str:
    """What DeepSpeed does with an unfilled ``"auto"`` at ``path``."""
    if path == "zero_optimization.stage":
        return "DeepSpeed drops it and uses ZeRO stage 0: nothing is sharded, every device holds full states"
    if path.startswith("zero_optimization."):
        return "DeepSpeed drops it and uses its default"
    if path == "gradient_accumulation_steps" and lightning_trainer:
        return (
            "Lightning's Trainer refuses the key itself: "
            f'MisconfigurationException "{quote("lightning.deepspeed_accumulation")}"'
        )
    if path in BATCH_KEYS:
        return (
            "top-level values are read as written (get_scalar_param), so DeepSpeedConfig's batch-size arithmetic "
            f'meets the string "auto" and raises TypeError (all three "auto": "{STR_COMPARE}" in _batch_assertion)'
        )
    return 'the string "auto" is handed on as the value (optimizer/scheduler arguments, top-level scalars) and fails'


@rule("PC603", "ds-auto-not-filled", Severity.ERROR)
def ds_auto_not_filled(ctx: Context) -> Iterator[Finding]:
    """
    Finds `"auto"` values in a DeepSpeed file used by a launcher that does not fill them.

    ## What it does
    Reports `"auto"` in a DeepSpeed file named by a Lightning config
    (`DeepSpeedStrategy(config=...)`): each `fp16`/`bf16` switch and the ZeRO stage on
    their own, the other keys together.

    ## Why is this bad?
    `"auto"` is a placeholder for the HF Trainer and accelerate, which replace it from
    TrainingArguments. Lightning's `_format_precision_config` adds an `fp16`/`bf16`
    section only when the file has none and never fills one. DeepSpeed then drops the
    `"auto"` of its pydantic sections (`DeepSpeedConfigModel.__init__`): `bf16.enabled:
    "auto"` means bf16 off and the run trains in fp32, `zero_optimization.stage: "auto"`
    means stage 0. Top-level values stay the string `"auto"`, and
    `DeepSpeedConfig._batch_assertion` fails with `TypeError: '>' not supported between
    instances of 'str' and 'int'`. Lightning's Trainer also refuses
    `gradient_accumulation_steps` in the file (`_format_batch_size_and_grad_accum_config`).

    ## Example
    ```json
    {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": "auto"}}
    ```
    named by `strategy: {class_path: lightning.pytorch.strategies.DeepSpeedStrategy,
    init_args: {config: ds.json}}`. Use instead:
    ```json
    {"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Write the values the run needs (the precision the Trainer's `precision` implies, the
    ZeRO stage), and leave batch size and accumulation to the Trainer
    (`accumulate_grad_batches`).
    """
    ds = deepspeed_config(ctx)
    if ds is None or ds is ctx.config or launcher(ctx) != "lightning" or not ds.auto_keys:
        return
    trainer = flavour(ctx.config) != "litgpt"
    mode = unify(ctx.config.precision.value) if ctx.config.precision is not None else "32-true"
    wanted = "bf16" if mode and mode.startswith("bf16") else "fp16" if mode and mode.startswith("16") else None
    rest: list[Sourced[str]] = []
    for item in ds.auto_keys:
        if item.value in SWITCHES:
            name = "bf16" if item.value.startswith("bf") else "fp16"
            if name != wanted:
                continue  # dropped, and off is what this precision wants
            yield Finding(
                item.origin,
                f'`{item.value}: "auto"` is not filled by Lightning: DeepSpeed drops it '
                f"(DeepSpeedConfigModel.__init__) and {name} stays off, and Lightning adds its own `{name}` "
                "section only when the file has none: "
                f"the run trains in fp32 although `precision` is {mode}",
                Fix(f"write `{item.value}: true` in {ds.path}"),
                related=(ctx.config.precision.origin,) if ctx.config.precision is not None else (),
            )
        elif item.value == "zero_optimization.stage":
            yield Finding(
                item.origin,
                f'`{item.value}: "auto"` is not filled by Lightning: {_auto_consequence(item.value, trainer)}',
                Fix(f"write the ZeRO stage in {ds.path}"),
            )
        else:
            rest.append(item)
    if rest:
        first = rest[0]
        others = ", ".join(f"`{r.value}`" for r in rest[1:4]) + (" ..." if len(rest) > 4 else "")
        tail = f" (and {len(rest) - 1} more: {others})" if len(rest) > 1 else ""
        refused = ""
        if trainer and first.value != "gradient_accumulation_steps" and "gradient_accumulation_steps" in ds.keys:
            refused = "; before that, " + _auto_consequence("gradient_accumulation_steps", True)
        yield Finding(
            first.origin,
            f'`{first.value}: "auto"`{tail} is not filled by Lightning: {_auto_consequence(first.value, trainer)}'
            f"{refused}",
            Fix(f"write explicit values in {ds.path}, or remove the keys Lightning sets itself"),
            related=tuple(r.origin for r in rest[1:]),
        )


@rule("PC604", "ds-auto-needs-hf-launcher", Severity.INFO)
def ds_auto_needs_hf_launcher(ctx: Context) -> Iterator[Finding]:
    """
    Explains what the `"auto"` values of a DeepSpeed file checked on its own depend on.

    ## What it does
    For a DeepSpeed file checked without the config that names it, points at its first
    `"auto"` (a precision switch first) and says what the file means under each launcher.
    When precheck checks the naming config too, this note is dropped in favour of that
    run's own findings (with `"auto"` filled).

    ## Why is this bad?
    Under the HF Trainer, TRL, axolotl, LLaMA-Factory, ms-swift or accelerate, `"auto"` is
    filled from the training arguments (`HfTrainerDeepSpeedConfig.fill_match`,
    `DeepSpeedPlugin.set_mixed_precision`). Launched any other way (plain `deepspeed` with
    `deepspeed.initialize(config=...)`, Lightning), nothing fills it: DeepSpeed drops
    `"auto"` in its sections (`DeepSpeedConfigModel.__init__`), so `bf16.enabled: "auto"`
    trains in fp32 and `zero_optimization.stage: "auto"` does not shard; top-level values
    stay the string `"auto"` and `DeepSpeedConfig._batch_assertion` fails with
    `TypeError: '>' not supported between instances of 'str' and 'int'`. precheck cannot
    tell the launcher from the file alone, hence a note, not a warning.

    ## Example
    ```json
    {"bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}
    ```
    Fine under the HF Trainer; for a plain DeepSpeed launch use instead:
    ```json
    {"bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Check it together with the training config that names it (`precheck train.yaml`), or
    write explicit values if the file is launched without the HF integrations.
    """
    ds = ctx.config
    if ds.framework != "deepspeed" or not ds.auto_keys:
        return
    paths = [item.value for item in ds.auto_keys]
    ordered = sorted(ds.auto_keys, key=lambda item: (item.value not in SWITCHES, item.origin.line or 0))
    first = ordered[0]
    effects = []
    switches = [p for p in paths if p in SWITCHES]
    if switches:
        effects.append(f"DeepSpeed drops {', '.join(f'`{p}`' for p in switches)} and the run trains in fp32")
    if "zero_optimization.stage" in paths:
        effects.append("`zero_optimization.stage` falls back to stage 0 (no sharding)")
    batch = [p for p in BATCH_KEYS if p in paths]
    if batch:
        effects.append(f"{', '.join(f'`{p}`' for p in batch)}: {_auto_consequence(batch[0], False)}")
    if not effects:
        effects.append(
            "the string \"auto\" reaches the optimizer/scheduler or DeepSpeed's own sections' defaults apply"
        )
    count = f" ({len(paths)} `auto` values)" if len(paths) > 1 else ""
    yield Finding(
        first.origin,
        f'`{first.value}: "auto"`{count}: "auto" is filled only by the HF Trainer/accelerate; launched without them '
        f"(plain `deepspeed`, Lightning), " + "; ".join(effects),
        Fix("check the file together with the config that names it, or write explicit values"),
    )


# --- PC605 --------------------------------------------------------------------------------


def _is_dual_enable(ds: TrainingConfig | None) -> bool:
    return ds is not None and bool(ds.fp16 and ds.fp16.value and ds.bf16 and ds.bf16.value)


@rule("PC605", "ds-launcher-mismatch", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_launcher_mismatch(ctx: Context) -> Iterator[Finding]:
    """
    Finds explicit DeepSpeed values that disagree with the run's TrainingArguments or accelerate settings.

    ## What it does
    Reports what the resolver found when it applied the DeepSpeed file to the run: an
    explicit `fp16.enabled`/`bf16.enabled`, `train_micro_batch_size_per_gpu`,
    `gradient_accumulation_steps` or `gradient_clipping` that differs from the HF Trainer's
    value, a DeepSpeed dtype that contradicts accelerate's `mixed_precision`, a precision
    section without `enabled`, and an accelerate config that sets `mixed_precision` next to
    a `deepspeed_config_file`.

    ## Why is this bad?
    transformers (`HfTrainerDeepSpeedConfig.trainer_config_finalize`, in `train()`) raises
    `ValueError: Please correct the following DeepSpeed config values that mismatch
    TrainingArguments values:\\n- ds fp16.enabled=True vs hf fp16|fp16_full_eval=False\\nThe
    easiest method is to set these DeepSpeed config values to 'auto'.` accelerate
    (`DeepSpeedPlugin.set_mixed_precision`) raises `` `--mixed_precision` arg cannot be set
    to `bf16` when `fp16` is set in the DeepSpeed config file. `` when the other dtype is
    enabled, keeps an explicit `false` without a word (`fill_match(..., must_match=False)`),
    and fills only an `"enabled": "auto"`, so a section without `enabled` stays off; `accelerate
    launch` refuses `mixed_precision` in its config with a `deepspeed_config_file`
    (`_deepspeed_config_checks`: "When using `deepspeed_config_file`, the following
    accelerate config variables will be ignored: [...]").

    ## Example
    ```yaml
    bf16: true
    deepspeed:
      fp16:
        enabled: true
      zero_optimization:
        stage: 2
    ```
    Use instead:
    ```yaml
    bf16: true
    deepspeed:
      fp16:
        enabled: auto
      zero_optimization:
        stage: 2
    ```

    ## Fix
    Set the DeepSpeed value to `"auto"` so the launcher fills it (transformers' own advice),
    or make the two agree. Which side was meant is not in the files, so the fix is unsafe.
    """
    ds = deepspeed_config(ctx)
    if ds is None or ds is ctx.config:
        return
    dual = _is_dual_enable(ds)
    for override in ctx.plan.overrides:
        kind = override.kind
        field, winner, loser = override.field, override.winner, override.loser
        if kind is OverrideKind.ACCELERATE_IGNORED:
            yield Finding(
                anchor(ctx.config.path, loser.origin),
                f"`{_key(loser)}` is set in the accelerate config next to a DeepSpeed config file: `accelerate launch` "
                f'raises ValueError "{quote("accelerate.ds_config_file_ignores", ignored="[...]")}" '
                "(DeepSpeedPlugin._deepspeed_config_checks); "
                "the DeepSpeed file decides precision",
                Fix(
                    "remove `mixed_precision` from the accelerate config",
                    edits_for(loser, ctx.config.path, remove=True),
                ),
                related=(winner.origin,) if winner.origin.in_file else (),
            )
            continue
        if field in ("fp16", "bf16") and dual:
            continue  # both switches on in the file: PC601
        key = _key(winner)
        against = _describe(loser)
        texts: list[str] = []
        accelerate = override.error if kind is OverrideKind.ACCELERATE_OTHER_DTYPE else override.accelerate_error
        if accelerate and field in ("fp16", "bf16") and winner.value is True:
            texts.append(f'accelerate raises ValueError "{accelerate}" (DeepSpeedPlugin.set_mixed_precision)')
        line = override.mismatch if kind is OverrideKind.HF_MISMATCH else None
        if line is not None:
            texts.append(
                f'transformers raises ValueError in train() (trainer_config_finalize): "{HF_MISMATCH_HEAD} '
                f'{line} {HF_MISMATCH_TAIL}"'
            )
        head = f"`{key}: {_spelled(winner)}` in the DeepSpeed config contradicts {against}"
        if kind is OverrideKind.SILENT_KEEP:
            head = f"`{key}: {_spelled(winner)}` in the DeepSpeed config is kept although {against}"
            texts.append(
                'accelerate fills only `"auto"` (fill_match(..., must_match=False)), so the run trains without '
                f"{field}, silently"
            )
        if kind is OverrideKind.NOT_ENABLED:
            head = f"the DeepSpeed `{field}` section has no `enabled` key while {against}"
            texts.append(
                'transformers fills only `"enabled": "auto"` and accelerate adds only a missing section, so '
                f"DeepSpeed's default false applies: the run trains without {field}, silently"
            )
        if not texts:
            continue
        edits: tuple[Edit, ...] = ()
        if key.endswith(".enabled") or key in (*BATCH_KEYS, "gradient_clipping"):
            edits = edits_for(winner, ds.path, "auto")
        fix = Fix(
            f'set `{key}` to "auto" so the launcher fills it, or make both sides agree'
            if edits
            else f'add `"enabled": "auto"` to the `{field}` section so the launcher fills it',
            edits,
        )
        yield Finding(
            anchor(ds.path, winner.origin),
            f"{head}: " + "; ".join(texts),
            fix,
            related=(loser.origin,) if loser.origin.in_file else (),
        )


# --- PC606 --------------------------------------------------------------------------------


@rule("PC606", "ds-apex-amp-conflict", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_apex_amp_conflict(ctx: Context) -> Iterator[Finding]:
    """
    Finds DeepSpeed's apex `amp` section combined with ZeRO or with fp16/bf16 mode.

    ## What it does
    Reports `amp.enabled: true` in a DeepSpeed file whose ZeRO stage is above 0, or whose
    `fp16`/`bf16` mode is on (after the launcher filled `"auto"`). Every release refuses it:
    see below. An `amp` key in any other form is PC613 (DeepSpeed 0.19.8 and later).

    ## Why is this bad?
    Up to 0.19.7 `DeepSpeedEngine._do_optimizer_sanity_check`
    (`runtime/engine.py:2260-2282@0.19.7`) asserts `Amp and ZeRO are not currently
    compatible, please use (legacy) fp16 mode which performs similar to amp opt_mode=O2`
    with ZeRO and raises `NotImplementedError: Cannot enable both amp with (legacy) fp16 or
    bfloat16 mode` with fp16/bf16. From 0.19.8 `_reject_removed_config_keys`
    (`runtime/config.py:88,136@0.19.8`) refuses the `amp` key itself. The engine is never built.

    ## Example
    ```json
    {"amp": {"enabled": true, "opt_level": "O1"}, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Turn apex AMP off (from 0.19.8 delete the `amp` section) and use DeepSpeed's own fp16
    (or bf16) mode, which keeps fp32 master weights like apex O2; or drop ZeRO.
    """
    ds = deepspeed_config(ctx)
    if ds is None:
        return
    for override in ctx.plan.overrides:
        if override.field != "amp":
            continue
        amp = override.loser
        if override.kind is OverrideKind.AMP_AND_ZERO:
            text = (
                f'with ZeRO stage {override.winner.value}{_where(override.winner)} DeepSpeed asserts "{override.error}"'
            )
        elif override.kind is OverrideKind.AMP_AND_HALF:
            mode = "fp16" if _key(override.winner).startswith("fp16") else "bf16"
            text = f'with {mode} mode{_where(override.winner)} DeepSpeed raises NotImplementedError("{override.error}")'
        else:
            continue
        edits = edits_for(amp, ds.path, False)
        if override.kind is OverrideKind.AMP_AND_ZERO and ds.fp16 is not None:
            edits = (*edits, *edits_for(ds.fp16, ds.path, True))
        yield Finding(
            anchor(ds.path, amp.origin),
            f"apex AMP (`{_key(amp)}`) cannot run here: {text} (_do_optimizer_sanity_check; "
            "from 0.19.8 the `amp` key itself is refused)",
            Fix("turn apex AMP off and use DeepSpeed's fp16/bf16 mode (fp32 master weights, like apex O2)", edits),
            related=(override.winner.origin,) if override.winner.origin.in_file else (),
        )


@rule(
    "PC613",
    "ds-amp-key-removed",
    Severity.ERROR,
    versions=(span("deepspeed.amp_removed"),),
    affects_latest=False,
    fix_safety=FixSafety.UNSAFE,
)
def ds_amp_key_removed(ctx: Context) -> Iterator[Finding]:
    """
    Finds an `amp` key in a DeepSpeed config, which DeepSpeed 0.19.8 and later refuse.

    ## What it does
    Reports a top-level `amp` section, enabled or not, with or without ZeRO, that PC606 has
    not already reported. An error with DeepSpeed 0.19.8 or later; a warning when the
    version is not known (every earlier release accepts the section when it is off or used
    without ZeRO and fp16/bf16).

    ## Why is this bad?
    0.19.8 removed the apex integration: `_reject_removed_config_keys`
    (`runtime/config.py:88,136@0.19.8`) raises `DeepSpeedConfigError: NVIDIA Apex AMP
    integration has been removed. Use DeepSpeed 'fp16', 'bf16', or 'torch_autocast'
    instead.` while reading the config, before anything is built.

    ## Example
    ```json
    {"amp": {"enabled": false}, "fp16": {"enabled": true}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": true}}
    ```

    ## Fix
    Delete the `amp` section; use DeepSpeed's fp16 (or bf16) mode.
    """
    ds = deepspeed_config(ctx)
    if ds is None:
        return
    section = ds.setting("amp")
    if section is None or not section.origin.in_file or any(o.field == "amp" for o in ctx.plan.overrides):
        return
    yield Finding(
        anchor(ds.path, section.origin),
        f'`amp` is refused while DeepSpeed reads the config: "{quote("deepspeed.amp_removed")}" '
        "(_reject_removed_config_keys)",
        Fix("delete the `amp` section; use DeepSpeed's fp16/bf16 mode (fp32 master weights, like apex O2)"),
    )


# --- PC607 --------------------------------------------------------------------------------


def _accumulation_steps(ctx: Context, ds: TrainingConfig) -> Sourced[int] | None:
    """Micro-batches accumulated per optimizer step, where a file says."""
    if ds.grad_accum_steps is not None and ds.grad_accum_steps.value is not None:
        return ds.grad_accum_steps
    if ds is not ctx.config and launcher(ctx) in ("hf", "lightning"):
        return ctx.config.grad_accum_steps  # the launcher writes it into the DeepSpeed config
    return None


@rule("PC607", "ds-bf16-grad-accumulation", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def ds_bf16_grad_accumulation(ctx: Context) -> Iterator[Finding]:
    """
    Warns when DeepSpeed accumulates gradients in bf16 across 16 or more micro-batches.

    ## What it does
    Reports a DeepSpeed run whose gradient accumulation dtype is bf16 (an explicit
    `data_types.grad_accum_dtype: bf16`, or DeepSpeed's default for a bf16 model: ZeRO
    stages 1-3, and from 0.17.6 also without ZeRO) while 16 or more micro-batches are
    accumulated per step (`gradient_accumulation_steps`, in the DeepSpeed file or filled
    from the training arguments). Fewer steps (the usual 2-8 of a fine-tune) cost a few
    roundings and are not reported.

    ## Why is this bad?
    bf16 keeps 8 significant bits: adding a micro-batch's gradient to a running bf16 sum
    rounds away the low bits of the smaller one each time, and the error grows with the
    number of micro-batches. DeepSpeed's own engine warns "**** BF16 gradient accumulation
    is not safe numerically with large number of accumulation steps, proceed with caution
    *****" (`_do_optimizer_sanity_check`, pipeline case), and its issues #1800 ("ZeRO/bf16
    grad accumulation in bf16 needs fixing") and #2768 ("Training occasionally diverges when
    I train in BF16 with ZeRO enabled because accumulation is also done in BF16") describe
    the effect. `get_data_types` defaults `grad_accum_dtype` to the model dtype.

    ## Example
    ```json
    {"bf16": {"enabled": true}, "gradient_accumulation_steps": 16, "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true}, "gradient_accumulation_steps": 16, "zero_optimization": {"stage": 2},
     "data_types": {"grad_accum_dtype": "fp32"}}
    ```

    ## Fix
    With ZeRO set `data_types.grad_accum_dtype: fp32` (every stage accepts it since
    PR #2847; ZeRO-1 without offload then uses `BF16_Optimizer`). Without ZeRO, DeepSpeed
    accepts it through 0.18.4 (`BF16_Optimizer`, `runtime/engine.py:1476-1477@0.18.4`) and
    refuses it from 0.18.5 ("unsupported mix", `runtime/engine.py:1498-1499@0.18.5`): there
    use ZeRO stage 1. Costs 4 bytes per parameter of gradient memory.
    """
    ds = deepspeed_config(ctx)
    accum = ctx.plan.grad_accum_dtype
    if ds is None or accum is None or accum.value != "bfloat16":
        return
    steps = _accumulation_steps(ctx, ds)
    if steps is None or not isinstance(steps.value, int) or steps.value < MANY_STEPS:
        return
    if ctx.plan.override_of("grad_accum_dtype") is not None:
        return  # the engine refuses the combination: PC609
    explicit = ds.grad_accum_dtype
    zero = ds.zero_stage is not None and ds.zero_stage.value > 0
    edits = edits_for(explicit, ds.path, "fp32") if explicit is not None and zero else ()
    origin = anchor(ds.path, *(o.origin for o in (explicit, steps) if o is not None), accum.origin)
    place = _where(steps) if steps.origin != origin else ""
    yield Finding(
        origin,
        f"{steps.value} micro-batches{place} are accumulated into bf16 gradients "
        f"({'data_types.grad_accum_dtype: bf16' if explicit is not None else 'DeepSpeed default for a bf16 model'}): "
        "each addition rounds to 8 significant bits, and DeepSpeed itself warns that "
        f'"{quote("deepspeed.bf16_accumulation_warning")}"',
        Fix(
            "accumulate in fp32: `data_types.grad_accum_dtype: fp32` (without ZeRO only on deepspeed<0.18.5; "
            "from 0.18.5 add ZeRO stage 1)",
            edits,
        ),
        related=(steps.origin,) if steps.origin.in_file and steps.origin != origin else (),
    )


# --- PC608 --------------------------------------------------------------------------------


@rule("PC608", "ds-low-precision-reduce", Severity.WARNING, fix_safety=FixSafety.UNSAFE)
def ds_low_precision_reduce(ctx: Context) -> Iterator[Finding]:
    """
    Warns when `communication_data_type` all-reduces gradients in a 16-bit format that loses their range or bits.

    ## What it does
    Reports an explicit `communication_data_type` of `fp16` for bf16 or fp32 gradients, or of
    `bf16` for fp16 or fp32 gradients. The default (the model's own dtype: fp16 under fp16,
    bf16 under bf16, fp32 otherwise) is not reported.

    ## Why is this bad?
    `DeepSpeedEngine.communication_data_type` (`deepspeed/runtime/engine.py`) returns the
    configured value before the model dtype, and the ZeRO optimizers cast each gradient
    bucket to it before the reduce. fp16 holds magnitudes between about 6e-8 and 65504:
    bf16 or fp32 gradients carry no loss scale, so small ones flush to zero and large ones
    become inf. bf16 keeps 8 significant bits against fp16's 11 and fp32's 24: every
    gradient loses precision in the sum over ranks. accelerate sets
    `communication_data_type: fp32` itself for bf16 DeepSpeed runs on ROCm because of the
    overflow path ("bf16 DeepSpeed training can silently produce NaN weights",
    `DeepSpeedPlugin.set_mixed_precision`).

    ## Example
    ```json
    {"bf16": {"enabled": true}, "communication_data_type": "fp16", "zero_optimization": {"stage": 2}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true}, "communication_data_type": "fp32", "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    `communication_data_type: fp32` (twice the reduce traffic), or remove the key to reduce
    in the gradients' own dtype.
    """
    ds = deepspeed_config(ctx)
    if ds is None or ds.communication_dtype is None:
        return
    comm, grads = ds.communication_dtype.value, ctx.plan.grad_dtype.value
    if comm == "float16" and grads in ("bfloat16", "float32"):
        why = (
            f"{DS_DTYPE[grads]} gradients carry no loss scale, and fp16 flushes magnitudes below ~6e-8 to zero "
            "and turns those above 65504 into inf"
        )
    elif comm == "bfloat16" and grads in ("float16", "float32"):
        why = f"bf16 keeps 8 significant bits of the {DS_DTYPE[grads]} gradients ({11 if grads == 'float16' else 24})"
    else:
        return
    item = ds.communication_dtype
    yield Finding(
        item.origin,
        f"`{_key(item)}: {DS_DTYPE[comm]}` all-reduces {DS_DTYPE[grads]} gradients in {DS_DTYPE[comm]}: {why}",
        Fix("reduce in fp32 (or remove the key to reduce in the gradients' dtype)", edits_for(item, ds.path, "fp32")),
        related=(ctx.plan.grad_dtype.origin,) if ctx.plan.grad_dtype.origin.in_file else (),
    )


# --- PC609 --------------------------------------------------------------------------------


@rule("PC609", "ds-grad-accum-dtype-unsupported", Severity.ERROR, fix_safety=FixSafety.UNSAFE)
def ds_grad_accum_dtype_unsupported(ctx: Context) -> Iterator[Finding]:
    """
    Finds a `data_types.grad_accum_dtype` DeepSpeed refuses without ZeRO.

    ## What it does
    Reports `data_types.grad_accum_dtype` differing from the model dtype (fp16/bf16/fp32
    mode) in a DeepSpeed run without ZeRO, where the engine has no optimizer for the mix
    (bf16 with fp32 accumulation is accepted through 0.18.4).

    ## Why is this bad?
    `DeepSpeedEngine._do_optimizer_sanity_check` (`deepspeed/runtime/engine.py`) picks an
    optimizer wrapper by dtype pair and raises `NotImplementedError: unsupported mix of
    model_dtype=torch.bfloat16 and grad_accum_dtype=torch.float32` (0.17.6+; older:
    "unsupported mix of model dtype and gradient accumulation type") for any pair it lacks.
    bf16 with fp32 accumulation keeps its `BF16_Optimizer` branch through 0.18.4
    (`runtime/engine.py:1476-1477@0.18.4`); 0.18.5 removed it (`runtime/engine.py:1498-1499@0.18.5`),
    so there it is only reachable through ZeRO stage 1.

    ## Example
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 0}}
    ```
    Use instead:
    ```json
    {"bf16": {"enabled": true}, "data_types": {"grad_accum_dtype": "fp32"}, "zero_optimization": {"stage": 1}}
    ```

    ## Fix
    bf16 with fp32 accumulation: ZeRO stage 1 (`BF16_Optimizer`). Otherwise remove
    `grad_accum_dtype` (it defaults to the model dtype).
    """
    ds = deepspeed_config(ctx)
    override = ctx.plan.override_of("grad_accum_dtype")
    if ds is None or override is None or override.kind is not OverrideKind.UNSUPPORTED_MIX:
        return
    explicit = override.loser
    model = override.winner.value
    wants_fp32_bf16 = model == "bfloat16" and explicit.value == "float32"
    if wants_fp32_bf16 and ds.zero_stage is not None:
        fix = Fix("use ZeRO stage 1, which accumulates bf16 gradients in fp32", edits_for(ds.zero_stage, ds.path, 1))
    else:
        fix = Fix(
            f"accumulate in the model dtype ({DS_DTYPE.get(str(model), model)})",
            edits_for(explicit, ds.path, DS_DTYPE.get(str(model), model)),
        )
    tail = f"[{override.basis}]" if override.basis else ""
    yield Finding(
        anchor(ds.path, explicit.origin),
        f"`{_key(explicit)}: {DS_DTYPE.get(str(explicit.value), explicit.value)}` with a "
        f"{DS_DTYPE.get(str(model), model)} model and no ZeRO: DeepSpeed raises NotImplementedError"
        f'("{override.error or "unsupported mix"}") (_do_optimizer_sanity_check) {tail}'.rstrip(),
        fix,
    )


# --- PC610 --------------------------------------------------------------------------------


@rule("PC610", "ds-dead-fp16-loss-scale", Severity.INFO)
def ds_dead_fp16_loss_scale(ctx: Context) -> Iterator[Finding]:
    """
    Notes fp16 loss-scale settings in a DeepSpeed run that does not train in fp16.

    ## What it does
    Reports an `fp16.loss_scale` other than 0 or an `fp16.initial_scale_power` other than
    16 when the run has no loss scaling (bf16 or fp32 training). A file checked on its own
    whose `fp16.enabled` is `"auto"` is not reported (the launcher decides).

    ## Why is this bad?
    Only fp16 scales the loss: `LossScaleConfig`/`CreateLossScaler` use grad scaling only
    for `low_precision_dtype == torch.float16`, and bf16 keeps a scale of 1.0. A tuned
    scale in a bf16 run does nothing, which misleads whoever reads the file into thinking
    overflow is being managed.

    ## Example
    ```json
    {"fp16": {"enabled": false, "initial_scale_power": 32}, "bf16": {"enabled": true}}
    ```
    Use instead:
    ```json
    {"fp16": {"enabled": false}, "bf16": {"enabled": true}}
    ```

    ## Fix
    Nothing breaks. Remove the settings, or keep them if the same file also serves fp16
    runs (the usual `"enabled": "auto"` template).
    """
    ds = deepspeed_config(ctx)
    if ds is None or ctx.plan.loss_scaling.value != "none":
        return
    if launcher(ctx) == "standalone" and any(item.value == "fp16.enabled" for item in ds.auto_keys):
        return
    mode = "bf16" if ctx.plan.uses_bf16 else "fp32"
    for item, default in ((ds.loss_scale, 0.0), (ds.initial_scale_power, 16.0)):
        if item is None or item.value == default or not item.origin.in_file:
            continue
        yield Finding(
            item.origin,
            f"`{_key(item)}: {item.value:g}` has no effect: this run trains in {mode}, and DeepSpeed scales the "
            "loss only in fp16 (CreateLossScaler)",
            Fix("remove it, or keep it if the file also serves fp16 runs"),
        )


# --- FSDP (PC611+) ------------------------------------------------------------------------
#
# accelerate 1.15.0 (``commands/launch.py`` ``_validate_launch_command`` copies every
# ``fsdp_config`` entry, ``fsdp_``-prefixed, onto the launch arguments as YAML typed them;
# ``utils/launch.py`` ``prepare_multi_gpu_env`` exports them; ``utils/dataclasses.py``
# ``FullyShardedDataParallelPlugin.__post_init__`` reads them back) — checked by running
# ``accelerate launch --config_file`` on CPU. The FSDP resolver (:mod:`precheck.resolve.accelerate`
# ``_fsdp_sharding``) records a sharding key the chosen ``fsdp_version`` ignores as a
# ``fsdp_sharding`` override, which PC612 reads.
#
# Not a rule: fp16 under FSDP always gets a sharding-aware scaler from accelerate (FSDP1
# ``ShardedGradScaler`` via ``utils/modeling.py`` ``get_grad_scaler``, FSDP2
# ``get_fsdp2_grad_scaler`` in ``Accelerator.__init__``), and the HF Trainer uses accelerate's,
# so no config can pick a plain GradScaler. The FSDP policy dtypes of accelerate and the HF
# Trainer are all set from ``mixed_precision`` (``set_mixed_precision``): no config key makes
# them disagree with the autocast dtype.

#: ``prepare_multi_gpu_env`` (accelerate 1.15.0 ``utils/launch.py``)
RAM_EFFICIENT_SYNC = quote("accelerate.ram_efficient_sync")
#: ``commands/launch.py`` argparse defaults (strings: any value is truthy)
LAUNCH_DEFAULT_TRUE = ("fsdp_cpu_ram_efficient_loading", "fsdp_sync_module_states")


def _accelerate_fsdp_entry(config: TrainingConfig, name: str) -> Sourced[Any] | None:
    """An ``fsdp_config`` entry of an accelerate config by its launch name (``fsdp_x``), as typed."""
    block = config.keys.get("fsdp_config")
    entries = block.value if block is not None and isinstance(block.value, dict) else {}
    for key, node in entries.items():
        if (key if key.startswith("fsdp_") else f"fsdp_{key}") == name and hasattr(node, "anchor"):
            line, column = node.anchor
            return Sourced(node.plain(), Origin("file", config.path, line, column, f"fsdp_config.{key}"))
    return None


def _accelerate_fsdp(ctx: Context) -> bool:
    """An accelerate config whose own ``distributed_type`` is FSDP (``args.use_fsdp``)."""
    kind = ctx.config.distributed_type
    return ctx.config.framework == "accelerate" and kind is not None and kind.value == "FSDP"


# --- PC611 --------------------------------------------------------------------------------


@rule(
    "PC611",
    "fsdp-ram-efficient-loading-without-sync",
    Severity.ERROR,
    fix_safety=FixSafety.SAFE,
    frameworks=("accelerate",),
)
def fsdp_ram_efficient_loading_without_sync(ctx: Context) -> Iterator[Finding]:
    """
    Finds an accelerate FSDP config with `fsdp_sync_module_states: false` while CPU-RAM-efficient loading is on.

    ## What it does
    Reports an accelerate config with `distributed_type: FSDP` whose
    `fsdp_config.fsdp_sync_module_states` is false while `fsdp_cpu_ram_efficient_loading`
    is true — or absent: `accelerate launch` defaults it to `"true"`, so
    `fsdp_sync_module_states: false` on its own is enough. The FSDP version does not
    matter: the launcher checks before the plugin exists.

    ## Why is this bad?
    `accelerate launch` refuses to start: `prepare_multi_gpu_env` (accelerate 1.15.0
    `utils/launch.py`) raises `ValueError: When using `--fsdp_cpu_ram_efficient_loading`
    set `--fsdp_sync_module_states` to `True`` when `args.fsdp_cpu_ram_efficient_loading`
    is truthy and `args.fsdp_sync_module_states` is not (both default to the string
    `"true"` in `commands/launch.py`; `_validate_launch_command` copies the config's
    values over them). With efficient loading only rank 0 reads the checkpoint and the
    other ranks hold empty weights, so the weights must be broadcast from rank 0.

    ## Example
    ```yaml
    distributed_type: FSDP
    mixed_precision: bf16
    fsdp_config:
      fsdp_cpu_ram_efficient_loading: true
      fsdp_sync_module_states: false
    ```
    Use instead:
    ```yaml
    distributed_type: FSDP
    mixed_precision: bf16
    fsdp_config:
      fsdp_cpu_ram_efficient_loading: true
      fsdp_sync_module_states: true
    ```

    ## Fix
    Set `fsdp_sync_module_states: true` (what `accelerate config` writes whenever
    efficient loading is on, and what the FSDP1 plugin would force anyway: "sync_module_states
    cannot be False since efficient cpu ram loading enabled. Setting sync_module_states to
    True."; FSDP2 does not read it). Or set `fsdp_cpu_ram_efficient_loading: false`.
    """
    if not _accelerate_fsdp(ctx):
        return
    sync = _accelerate_fsdp_entry(ctx.config, "fsdp_sync_module_states")
    loading = _accelerate_fsdp_entry(ctx.config, "fsdp_cpu_ram_efficient_loading")
    if sync is None or sync.value or (loading is not None and not loading.value):
        return
    why = (
        f"`{_key(loading)}: {_shown(loading.value)}`{_where(loading)}"
        if loading is not None
        else '`fsdp_cpu_ram_efficient_loading` unset (`accelerate launch` defaults it to "true")'
    )
    yield Finding(
        sync.origin,
        f"`{_key(sync)}: {_shown(sync.value)}` with {why}: `accelerate launch` raises "
        f'ValueError("{RAM_EFFICIENT_SYNC}") (prepare_multi_gpu_env) before training starts',
        Fix(
            "sync the module states from rank 0 (or turn fsdp_cpu_ram_efficient_loading off)",
            edits_for(sync, ctx.config.path, True),
        ),
        related=(loading.origin,) if loading is not None else (),
    )


# --- PC612 --------------------------------------------------------------------------------

#: FSDP2's ``reshard_after_forward`` bool as the FSDP1 strategy it matches
_RESHARD_AS_STRATEGY = {True: "full_shard", False: "shard_grad_op"}


def _as_strategy(value: Any) -> str | None:
    if isinstance(value, bool):
        return _RESHARD_AS_STRATEGY[value]
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return _RESHARD_AS_STRATEGY[text == "true"]
    return text or None


@rule(
    "PC612",
    "fsdp-sharding-key-ignored",
    Severity.WARNING,
    fix_safety=FixSafety.SAFE,
    frameworks=("accelerate",),
)
def fsdp_sharding_key_ignored(ctx: Context) -> Iterator[Finding]:
    """
    Warns when an accelerate FSDP config sets the sharding with the key its `fsdp_version` does not read.

    ## What it does
    Reports `fsdp_reshard_after_forward` under FSDP1 (`fsdp_version` 1, the default) and
    `fsdp_sharding_strategy` under FSDP2 when the value asks for a different sharding than
    the run gets. A redundant key that agrees (FSDP1 `fsdp_reshard_after_forward:
    FULL_SHARD` with the default `FULL_SHARD` strategy) is not reported.

    ## Why is this bad?
    The setting is silently dropped, so the run shards differently from what the file says
    (memory and communication change, not the numerics). `accelerate launch` always exports
    `FSDP_SHARDING_STRATEGY` (argparse default `FULL_SHARD`, `prepare_multi_gpu_env`), and
    FSDP1's `FullyShardedDataParallelPlugin.__post_init__` (accelerate 1.15.0
    `utils/dataclasses.py`) falls back to `reshard_after_forward` only "if `sharding_strategy`
    is not set"; `Accelerator.prepare_model` then passes `fsdp_plugin.sharding_strategy or
    fsdp_plugin.reshard_after_forward`. FSDP2 (`fsdp2_prepare_model`) passes only
    `reshard_after_forward` to `fully_shard`; `sharding_strategy` just logs
    "sharding_strategy is deprecated in favor of reshard_after_forward.".

    ## Example
    ```yaml
    distributed_type: FSDP
    fsdp_config:
      fsdp_version: 2
      fsdp_sharding_strategy: SHARD_GRAD_OP
    ```
    Use instead:
    ```yaml
    distributed_type: FSDP
    fsdp_config:
      fsdp_version: 2
      fsdp_reshard_after_forward: false
    ```

    ## Fix
    Remove the ignored key (safe: the run does not read it) and say the sharding with the
    key the version reads: FSDP2 `fsdp_reshard_after_forward` (true = FULL_SHARD, false =
    SHARD_GRAD_OP), FSDP1 `fsdp_sharding_strategy`.
    """
    if not _accelerate_fsdp(ctx):
        return
    for override in ctx.plan.overrides:
        if override.field != "fsdp_sharding" or not override.loser.origin.in_file:
            continue
        loser, winner = override.loser, override.winner
        effective = str(winner.value)
        if _as_strategy(loser.value) == effective:
            continue
        fsdp2 = "reshard_after_forward" not in _key(loser)
        read = "fsdp_reshard_after_forward" if fsdp2 else "fsdp_sharding_strategy"
        yield Finding(
            loser.origin,
            f"`{_key(loser)}: {_shown(loser.value)}` is ignored under FSDP{2 if fsdp2 else 1}, which reads only "
            f"`{read}`: the run shards as {effective.upper()} ({_describe(winner)})",
            Fix(
                f"remove it and set `{read}`"
                + (" (true: FULL_SHARD, false: SHARD_GRAD_OP)" if fsdp2 else " to the strategy you want"),
                edits_for(loser, ctx.config.path, remove=True),
            ),
            related=(winner.origin,) if winner.origin.in_file else (),
        )


__all__ = ["deepspeed_config", "launcher"]
