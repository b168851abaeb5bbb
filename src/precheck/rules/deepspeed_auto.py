"""PC603, PC604: ``"auto"`` values of a DeepSpeed config, and who fills them.

Which file the rules read and which launchers fill ``"auto"``: :mod:`precheck.rules.deepspeed_file`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..facts import quote
from ..provenance import Sourced
from .base import Context, Finding, Fix, Severity, rule
from .deepspeed_file import BATCH_KEYS, SWITCHES, deepspeed_config, launcher

STR_COMPARE = "TypeError: '>' not supported between instances of 'str' and 'int'"


# --- PC603 / PC604 ------------------------------------------------------------------------


def _auto_consequence(path: str, refusal: tuple[str, str] | None) -> str:
    """What DeepSpeed does with an unfilled ``"auto"`` at ``path``; ``refusal``: the framework
    whose Trainer refuses ``gradient_accumulation_steps`` in the file, and the fact id of what it raises."""
    if path == "zero_optimization.stage":
        return "DeepSpeed drops it and uses ZeRO stage 0: nothing is sharded, every device holds full states"
    if path.startswith("zero_optimization."):
        return "DeepSpeed drops it and uses its default"
    if path == "gradient_accumulation_steps" and refusal is not None:
        return f'{refusal[0]}\'s Trainer refuses the key itself: MisconfigurationException "{quote(refusal[1])}"'
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
    Reports `"auto"` in a DeepSpeed file named by the config of a framework known to hand the
    file to DeepSpeed as written (its `DeepSpeedStrategy(config=...)`): each `fp16`/`bf16`
    switch and the ZeRO stage on their own, the other keys together.

    ## Why is this bad?
    `"auto"` is a placeholder for the HF Trainer and accelerate, which replace it from
    TrainingArguments. Such a framework's strategy (`_format_precision_config`) adds an
    `fp16`/`bf16` section only when the file has none and never fills one. DeepSpeed then drops the
    `"auto"` of its pydantic sections (`DeepSpeedConfigModel.__init__`): `bf16.enabled:
    "auto"` means bf16 off and the run trains in fp32, `zero_optimization.stage: "auto"`
    means stage 0. Top-level values stay the string `"auto"`, and
    `DeepSpeedConfig._batch_assertion` fails with `TypeError: '>' not supported between
    instances of 'str' and 'int'`. Its Trainer also refuses `gradient_accumulation_steps` in
    the file (`_format_batch_size_and_grad_accum_config`).

    ## Example
    ```json
    {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": "auto"}}
    ```
    named by `strategy: {class_path: <the framework's DeepSpeedStrategy>, init_args: {config:
    ds.json}}`. Use instead:
    ```json
    {"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}
    ```

    ## Fix
    Write the values the run needs (the precision the Trainer's `precision` implies, the
    ZeRO stage), and leave batch size and accumulation to the Trainer
    (`accumulate_grad_batches`).
    """
    ds = deepspeed_config(ctx)
    if ds is None or ds is ctx.config or launcher(ctx) != "keeps" or not ds.auto_keys:
        return
    traits = ctx.config.traits
    label = traits.label
    refused_by = traits.refuses_deepspeed_accumulation
    own_loop = ctx.config.variant in traits.own_loop_variants
    refusal = (label, refused_by) if refused_by is not None and not own_loop else None
    precision, unified = ctx.config.precision, ctx.config.precision_mode
    mode = (unified.value if unified is not None else None) if precision is not None else "32-true"
    wanted = "bf16" if mode and mode.startswith("bf16") else "fp16" if mode and mode.startswith("16") else None
    rest: list[Sourced[str]] = []
    for item in ds.auto_keys:
        if item.value in SWITCHES:
            name = "bf16" if item.value.startswith("bf") else "fp16"
            if name != wanted:
                continue  # dropped, and off is what this precision wants
            yield Finding(
                item.origin,
                f'`{item.value}: "auto"` is not filled by {label}: DeepSpeed drops it '
                f"(DeepSpeedConfigModel.__init__) and {name} stays off, and {label} adds its own `{name}` "
                "section only when the file has none: "
                f"the run trains in fp32 although `precision` is {mode}",
                Fix(f"write `{item.value}: true` in {ds.path}"),
                related=(ctx.config.precision.origin,) if ctx.config.precision is not None else (),
            )
        elif item.value == "zero_optimization.stage":
            yield Finding(
                item.origin,
                f'`{item.value}: "auto"` is not filled by {label}: {_auto_consequence(item.value, refusal)}',
                Fix(f"write the ZeRO stage in {ds.path}"),
            )
        else:
            rest.append(item)
    if rest:
        first = rest[0]
        others = ", ".join(f"`{r.value}`" for r in rest[1:4]) + (" ..." if len(rest) > 4 else "")
        tail = f" (and {len(rest) - 1} more: {others})" if len(rest) > 1 else ""
        refused = ""
        if refusal and first.value != "gradient_accumulation_steps" and "gradient_accumulation_steps" in ds.keys:
            refused = "; before that, " + _auto_consequence("gradient_accumulation_steps", refusal)
        yield Finding(
            first.origin,
            f'`{first.value}: "auto"`{tail} is not filled by {label}: {_auto_consequence(first.value, refusal)}'
            f"{refused}",
            Fix(f"write explicit values in {ds.path}, or remove the keys {label} sets itself"),
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
    Under the HF Trainer (and the frameworks built on it) or accelerate, `"auto"` is filled
    from the training arguments (`HfTrainerDeepSpeedConfig.fill_match`,
    `DeepSpeedPlugin.set_mixed_precision`). Launched any other way (plain `deepspeed` with
    `deepspeed.initialize(config=...)`, a framework's own DeepSpeed strategy), nothing fills
    it: DeepSpeed drops `"auto"` in its sections (`DeepSpeedConfigModel.__init__`), so
    `bf16.enabled: "auto"` trains in fp32 and `zero_optimization.stage: "auto"` does not
    shard; top-level values stay the string `"auto"` and `DeepSpeedConfig._batch_assertion`
    fails with `TypeError: '>' not supported between instances of 'str' and 'int'`.
    precheck cannot tell the launcher from the file alone, hence a note, not a warning.

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
        effects.append(f"{', '.join(f'`{p}`' for p in batch)}: {_auto_consequence(batch[0], None)}")
    if not effects:
        effects.append(
            "the string \"auto\" reaches the optimizer/scheduler or DeepSpeed's own sections' defaults apply"
        )
    count = f" ({len(paths)} `auto` values)" if len(paths) > 1 else ""
    keepers = ", ".join(ds.auto_kept_by)
    yield Finding(
        first.origin,
        f'`{first.value}: "auto"`{count}: "auto" is filled only by the HF Trainer/accelerate; launched without them '
        f"(plain `deepspeed`, {keepers}), " + "; ".join(effects),
        Fix("check the file together with the config that names it, or write explicit values"),
    )
