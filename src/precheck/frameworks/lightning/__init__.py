"""PyTorch Lightning ``Trainer`` configs, with its LitGPT and NeMo variants."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect, modes
from .modes import NEMO2_PRECISION_PLUGINS

FRAMEWORK = Framework(
    name="lightning",
    distribution="lightning",
    traits=Traits(
        keeps_deepspeed_auto=True,
        precision_without_bf16=("16-mixed", "use fp16 mixed precision"),
        precision_modes=True,
        label=modes.LABEL,
        refuses_deepspeed_accumulation=f"{modes.PACKAGE}.deepspeed_accumulation",
        own_loop_variants=frozenset((modes.GPT_VARIANT,)),
    ),
    dialect_class=dialect.TrainerDialect,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    signature=frozenset(("trainer",)),
    # NeMo 2 (``nemo.lightning.Trainer``, a Lightning Trainer) takes its precision as a plugin
    python_trainer_packages=("lightning", "pytorch_lightning", "lightning_fabric", "nemo"),
    python_precision_plugins=NEMO2_PRECISION_PLUGINS,
    # NeMo-Run's deferred constructions (``nemo_run/config.py``: ``Config(cls, **kwargs)`` builds
    # ``cls(**kwargs)``, ``Partial(fn, **kwargs)`` calls ``fn``): recipes build their Trainer so
    # NeMo 2's recipe factories (``llm.llama3_8b.finetune_recipe(...)``) build their Trainer with
    # ``plugins=bf16_mixed()`` (``recipes/finetune_default.py:145``, ``llama3_8b.py:138``@8cfedd7) or a
    # ``precision: str = "bf16-mixed"`` parameter (``qwen2.py:89``, ``bert.py:69``...); the HF AutoModel
    # recipe sets no plugin (``hf_auto_model_for_causal_lm.py:109-120``): left out. A script changes a
    # recipe's precision by its trainer's plugin (``recipe.trainer.plugins = fp16_mixed()``, NeMo's docs
    # ``docs/source/features/mixed_precision.rst:49-58``@8cfedd7): followed by the script reader
    python_recipe_defaults=(
        (r"nemo\.collections\.llm\.(?:recipes\.)?(?!hf_auto_model)\w+\.(?:finetune|pretrain)_recipe$", "bf16-mixed"),
    ),
    python_deferred_calls=("nemo_run.Config", "nemo_run.Partial", "nemo_run.config.Config", "nemo_run.config.Partial"),
    python_model_bases=("LightningModule",),
    # pytorch-lightning X.Y.Z is the Trainer of lightning X.Y.Z: both are built from
    # Lightning-AI/pytorch-lightning (src/lightning, src/pytorch_lightning), released together
    pinned_as=("pytorch-lightning",),
    rules=(
        f"{__name__}.rules",
        f"{__name__}.variant_rules",
    ),
)
