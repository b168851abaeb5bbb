"""The DeepSpeed file a run uses and who hands it to the engine (shared by the PC60x rules).

The DeepSpeed rules read the DeepSpeed file itself: the run's own config when precheck
checks a ``ds_config.json`` on its own (``framework == "deepspeed"``), or the file the run
names (``config.attached["deepspeed"]``: a training config's ``deepspeed:`` key, an
accelerate ``deepspeed_config_file``, a framework's ``DeepSpeedStrategy(config=...)``).
Findings point at the key in the DeepSpeed file.

Who fills ``"auto"`` (the launcher) decides what a DeepSpeed file means; each framework
declares which it does in its traits (:class:`~precheck.traits.Traits`):

- ``fills_deepspeed_auto``: the HF integrations fill it: transformers
  ``HfTrainerDeepSpeedConfig.trainer_config_process`` (``fill_match``), accelerate
  ``DeepSpeedPlugin.set_mixed_precision`` / ``deepspeed_config_process`` (transformers 5.23.0
  ``integrations/deepspeed.py``, accelerate 1.15.0 ``utils/dataclasses.py``);
- ``keeps_deepspeed_auto``: a framework known not to: its DeepSpeed strategy's
  ``_format_precision_config`` only adds an ``fp16``/``bf16`` section when the file has none,
  and ``_format_batch_size_and_grad_accum_config`` only sets keys the file lacks; plain
  ``deepspeed.initialize`` fills nothing either;
- a DeepSpeed file checked on its own has no launcher: most such files are written for the
  HF Trainer (they are full of ``"auto"``), so precheck does not treat ``"auto"`` there as a
  bug: PC604 explains what the file does under each launcher at ``info`` level, and PC603
  reports it as an error only when the run that names the file is known not to fill it.
  When precheck checks the HF config and the DeepSpeed file together, the DeepSpeed file's
  standalone findings are dropped (``engine.group_runs``) and the run's own findings, with
  ``"auto"`` filled, stand.
"""

from __future__ import annotations

from ..config import TrainingConfig
from .base import Context

#: DeepSpeed's spelling of a dtype (``communication_data_type``, ``data_types.grad_accum_dtype``)
DS_DTYPE = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}
SWITCHES = ("fp16.enabled", "bf16.enabled", "bfloat16.enabled")
BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def deepspeed_config(ctx: Context) -> TrainingConfig | None:
    """The DeepSpeed file of this run: the config itself, or the one it names."""
    if ctx.config.framework == "deepspeed":
        return ctx.config
    return ctx.config.attached.get("deepspeed")


def launcher(ctx: Context) -> str:
    """Who hands the DeepSpeed file to the engine: "standalone" (the file checked on its own),
    "fills" (a launch that fills ``"auto"``), "keeps" (one known to leave ``"auto"`` as
    written) or "other" (not known)."""
    traits = ctx.config.traits
    if ctx.config.framework == "deepspeed":
        return "standalone"
    if traits.fills_deepspeed_auto:
        return "fills"
    if traits.keeps_deepspeed_auto:
        return "keeps"
    return "other"


__all__ = ["BATCH_KEYS", "DS_DTYPE", "SWITCHES", "deepspeed_config", "launcher"]
