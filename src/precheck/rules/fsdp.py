"""PC611, PC612: FSDP settings of an accelerate config.

accelerate 1.15.0 (``commands/launch.py`` ``_validate_launch_command`` copies every
``fsdp_config`` entry, ``fsdp_``-prefixed, onto the launch arguments as YAML typed them;
``utils/launch.py`` ``prepare_multi_gpu_env`` exports them; ``utils/dataclasses.py``
``FullyShardedDataParallelPlugin.__post_init__`` reads them back) — checked by running
``accelerate launch --config_file`` on CPU. The FSDP resolver (:mod:`precheck.resolve.accelerate`
``_fsdp_sharding``) records a sharding key the chosen ``fsdp_version`` ignores as a
``fsdp_sharding`` override, which PC612 reads.

Not a rule: fp16 under FSDP always gets a sharding-aware scaler from accelerate (FSDP1
``ShardedGradScaler`` via ``utils/modeling.py`` ``get_grad_scaler``, FSDP2
``get_fsdp2_grad_scaler`` in ``Accelerator.__init__``), and the HF Trainer uses accelerate's,
so no config can pick a plain GradScaler. The FSDP policy dtypes of accelerate and the HF
Trainer are all set from ``mixed_precision`` (``set_mixed_precision``): no config key makes
them disagree with the autocast dtype.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..config import TrainingConfig
from ..facts import quote
from ..provenance import Origin, Sourced
from .base import Context, Finding, Fix, FixSafety, Severity, edits_for, rule
from .setting_text import described, key_of, located, shown

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
        f"`{key_of(loading)}: {shown(loading.value)}`{located(loading)}"
        if loading is not None
        else '`fsdp_cpu_ram_efficient_loading` unset (`accelerate launch` defaults it to "true")'
    )
    yield Finding(
        sync.origin,
        f"`{key_of(sync)}: {shown(sync.value)}` with {why}: `accelerate launch` raises "
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
        fsdp2 = "reshard_after_forward" not in key_of(loser)
        read = "fsdp_reshard_after_forward" if fsdp2 else "fsdp_sharding_strategy"
        yield Finding(
            loser.origin,
            f"`{key_of(loser)}: {shown(loser.value)}` is ignored under FSDP{2 if fsdp2 else 1}, which reads only "
            f"`{read}`: the run shards as {effective.upper()} ({described(winner)})",
            Fix(
                f"remove it and set `{read}`"
                + (" (true: FULL_SHARD, false: SHARD_GRAD_OP)" if fsdp2 else " to the strategy you want"),
                edits_for(loser, ctx.config.path, remove=True),
            ),
            related=(winner.origin,) if winner.origin.in_file else (),
        )
