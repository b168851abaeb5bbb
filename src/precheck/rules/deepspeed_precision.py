"""PC601, PC602, PC605: the precision sections of a DeepSpeed config, against each other and the run.

Which file the rules read and who fills its ``"auto"`` values: :mod:`precheck.rules.deepspeed_file`.
The resolver records the launcher's fill-in and its refusals as ``plan.overrides`` with a typed
:class:`~precheck.plan.OverrideKind`, which PC605 reads (never the prose).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..config import TrainingConfig
from ..facts import quote
from ..hardware import Device
from ..plan import OverrideKind
from .base import Context, Edit, Finding, Fix, FixSafety, Severity, anchor, edits_for, rule
from .deepspeed_file import BATCH_KEYS, deepspeed_config, launcher
from .setting_text import described, key_of, located, spelled

HF_MISMATCH_HEAD, _, HF_MISMATCH_TAIL = quote("transformers.ds_config_mismatch").split("\n")
#: `accelerate launch`'s refusal of accelerate settings beside a DeepSpeed file, its list elided
IGNORED_BESIDE_FILE = quote("accelerate.ds_config_file_ignores", ignored="[...]")


def _used_devices(ctx: Context) -> list[Device]:
    devices = ctx.hardware.devices
    return [devices[i] for i in ctx.plan.device_indices(len(devices))]


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
    if key_of(bf16).startswith("bfloat16") and launcher(ctx) == "fills":
        return  # accelerate adds a `bf16` section: the legacy one is ignored (PC602)
    keep_bf16 = ctx.hardware.known and all(d.bf16 for d in _used_devices(ctx))
    drop = fp16 if keep_bf16 else bf16
    later = bf16 if (bf16.origin.line or 0) > (fp16.origin.line or 0) else fp16
    yield Finding(
        anchor(ds.path, later.origin, fp16.origin),
        f"`{key_of(fp16)}` and `{key_of(bf16)}` are both true: DeepSpeed asserts "
        f'"{quote("deepspeed.both_enabled")}" (DeepSpeedConfig._initialize_params) and the engine is never created',
        Fix(
            "keep bf16 (every device supports it)" if keep_bf16 else "keep fp16 (bf16 is not known to be native here)",
            edits_for(drop, ds.path, False),
        ),
        related=(fp16.origin, bf16.origin),
    )


# --- PC602 --------------------------------------------------------------------------------


@rule("PC602", "ds-legacy-bfloat16-key", Severity.WARNING)
def ds_legacy_bfloat16key_of(ctx: Context) -> Iterator[Finding]:
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
            f"the file also has `bf16`{located(ds.keys['bf16'])}, and DeepSpeed then ignores `bfloat16` entirely "
            "(get_bfloat16_config reads `bfloat16` only without a `bf16` key)"
        )
    elif where == "fills":
        lost = ctx.plan.override_of("bf16")
        if lost is not None and key_of(lost.loser).startswith("bfloat16"):
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
                f"`{key_of(loser)}` is set in the accelerate config next to a DeepSpeed config file: "
                f'`accelerate launch` raises ValueError "{IGNORED_BESIDE_FILE}" '
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
        key = key_of(winner)
        against = described(loser)
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
        head = f"`{key}: {spelled(winner)}` in the DeepSpeed config contradicts {against}"
        if kind is OverrideKind.SILENT_KEEP:
            head = f"`{key}: {spelled(winner)}` in the DeepSpeed config is kept although {against}"
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
