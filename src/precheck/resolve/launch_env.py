"""Sharding switched on by the environment ``accelerate launch`` exports.

``accelerate launch`` with a DeepSpeed or FSDP accelerate config exports
``ACCELERATE_USE_DEEPSPEED=true`` / ``ACCELERATE_USE_FSDP=true`` (and the plugin's settings)
to the training process; a run whose own files name neither still shards:

- transformers 5.23.0 ``TrainingArguments.__post_init__``: with no ``deepspeed`` argument,
  ``elif strtobool(os.environ.get("ACCELERATE_USE_DEEPSPEED", "false")):`` builds
  ``DeepSpeedPlugin()`` and calls ``set_mixed_precision(self.mixed_precision)``;
  accelerate 1.15.0 ``DeepSpeedPlugin.__post_init__`` reads the stage from
  ``ACCELERATE_DEEPSPEED_ZERO_STAGE`` (default 2) and the offload devices from
  ``ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE`` / ``..._OFFLOAD_PARAM_DEVICE``
  (default ``none``), with no ``fp16``/``bf16`` section, which ``set_mixed_precision`` adds.
- accelerate 1.15.0 ``Accelerator.__init__``: ``os.environ.get("ACCELERATE_USE_FSDP",
  "false").lower() == "true"`` creates a ``FullyShardedDataParallelPlugin()``.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import TrainingConfig
from ..counts import decimal
from ..provenance import Origin, Sourced

DEEPSPEED_VARIABLES = (
    "ACCELERATE_USE_DEEPSPEED",
    "ACCELERATE_DEEPSPEED_ZERO_STAGE",
    "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE",
    "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE",
)


def _true(config: TrainingConfig, name: str) -> Sourced[str] | None:
    item = config.env.get(name)
    return item if item is not None and item.value.strip().lower() in ("true", "1", "yes") else None


def with_launch_env(config: TrainingConfig) -> TrainingConfig:
    """``config`` with the sharding its launch environment switches on: a new config when
    the environment adds any (a run whose framework honours ``ACCELERATE_*``,
    ``traits.honours_accelerate_env``), else ``config`` itself. Applied once, before the
    run is resolved; the config read from the files is left as it was."""
    if not config.traits.honours_accelerate_env:
        return config
    attached = config.attached
    use_ds = _true(config, "ACCELERATE_USE_DEEPSPEED")
    if use_ds is not None and "deepspeed" not in config.attached and "deepspeed" not in config.references:
        stage_env = config.env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE")
        stage = (
            Sourced(stage, stage_env.origin)
            if stage_env is not None and (stage := decimal(stage_env.value)) is not None
            else Sourced(2, Origin.default("accelerate DeepSpeedPlugin: ACCELERATE_DEEPSPEED_ZERO_STAGE defaults to 2"))
        )
        plugin = TrainingConfig(dialect="deepspeed", framework="deepspeed", path="env:ACCELERATE_USE_DEEPSPEED")
        plugin.zero_stage = stage
        for field, name in (
            ("offload_optimizer", "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE"),
            ("offload_param", "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE"),
        ):
            item = config.env.get(name)
            if item is not None:
                setattr(plugin, field, Sourced(item.value, item.origin))
        attached = {**config.attached, "deepspeed": plugin}
    fsdp = config.fsdp
    use_fsdp = _true(config, "ACCELERATE_USE_FSDP")
    if use_fsdp is not None and (config.fsdp is None or not config.fsdp.value):
        fsdp = Sourced(True, use_fsdp.origin)
    if attached is config.attached and fsdp is config.fsdp:
        return config
    return replace(config, attached=attached, fsdp=fsdp)
