"""PyTorch Lightning ``Trainer`` configs, with its LitGPT and NeMo variants."""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect, modes
from .modes import NEMO2_PRECISION_PLUGINS

#: Lightning's own precision plugins (``plugins=`` of ``Fabric``/``Trainer``), each taking its
#: ``precision=`` (lightning 2.1.3 ``fabric/plugins/precision/half.py:35`` ``HalfPrecision(precision=
#: "16-true")``, ``amp.py:38`` ``MixedPrecision(precision, device, scaler)``, ``fsdp.py:52``,
#: ``deepspeed.py``; the ``...Plugin`` names are lightning 2.0's ``pytorch/plugins/precision``), and
#: ``BitsandbytesPrecision(mode, dtype)`` (``bitsandbytes.py:66-71``), whose ``dtype`` decides
#: (``python_source._plugin_dtype``)
LIGHTNING_PRECISION_PLUGINS: tuple[tuple[str, str | None], ...] = tuple(
    (name, None)
    for base in ("HalfPrecision", "MixedPrecision", "FSDPPrecision", "DeepSpeedPrecision", "BitsandbytesPrecision")
    for name in (base, f"{base}Plugin")
)
#: their positional parameters where the first is not ``precision``. ``BitsandbytesPrecision``
#: creates the layers it does not quantize under its dtype (``tensor_init_context``/
#: ``module_init_context``: ``_DtypeContextManager(self.dtype)``), runs the forward in it
#: (``forward_context``), sets it as the 4-bit layers' compute dtype (``convert_module``) and
#: creates no GradScaler (``fabric/plugins/precision/bitsandbytes.py:74-81,99-139``@2.1.3): the run
#: trains as "<dtype>-true"; with ``dtype=None`` it picks bf16 where the GPU has it, else fp16 (int8
#: modes: fp16). Fabric with ``precision=None`` takes a precision plugin, and raises "Received both
#: `precision=...` and `plugins=...`" for both (``fabric/connector.py:249-255``@2.1.3)
LIGHTNING_PLUGIN_PARAMETERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("BitsandbytesPrecision", ("mode", "dtype", "ignore_modules")),
    ("BitsandbytesPrecisionPlugin", ("mode", "dtype", "ignore_modules")),
)

FRAMEWORK = Framework(
    name="lightning",
    distribution="lightning",
    traits=Traits(
        keeps_deepspeed_auto=True,
        precision_without_bf16=("16-mixed", "use fp16 mixed precision"),
        precision_modes=True,
        # LitGPT's `quantize: bnb.*`: `if "mixed" in precision: raise ValueError("Quantization and mixed
        # precision is not supported.")`, then `{"16-true": torch.float16, "bf16-true": torch.bfloat16,
        # "32-true": torch.float32}[precision]` (litgpt/finetune/lora.py:142-149@0.5.13)
        quantized_precisions=(("bf16-true", "bf16 weights and compute"), ("32-true", "fp32")),
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
    python_precision_plugins=NEMO2_PRECISION_PLUGINS + LIGHTNING_PRECISION_PLUGINS,
    python_plugin_parameters=LIGHTNING_PLUGIN_PARAMETERS,
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
