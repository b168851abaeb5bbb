"""This framework: ``torch_dtype`` decides fp16/bf16 (``ModelArguments._init_mixed_precision``).

Read upstream (released wheels): ``torch_dtype`` float16 or float32 sets
fp16 AMP, bfloat16 sets bf16. From 3.3.1 (PR #3909) this only fills flags left unset
(``fp16: Optional[bool] = None``); 3.0.0 to 3.3.0.post1 overwrote explicit flags too
(``_init_torch_dtype``: ``self.fp16, self.bf16 = True, False``). With no torch_dtype,
``get_default_torch_dtype`` takes the checkpoint's config.json dtype (from 3.1.0), else
bf16 when ``is_torch_bf16_gpu_available()`` (which counts emulation on torch >= 2.3, so a
V100 qualifies), else fp16. ``train_type`` defaults to lora; the framework converts fp16
adapter weights to float32 itself (bf16 ones follow peft).
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...facts import span
from ...hardware import Hardware
from ...models import family_of
from ...provenance import Origin, Sourced
from ...resolve.common import frameworks_see_bf16, is_adapter_training, scaler_for, trainable_dtype
from ...resolve.plan import Override, PrecisionPlan, same_dtype_plan
from ...versions import Versions
from .label import NAME

#: ``llm/train/tuner.py`` of the package (3.0.0; ``pipelines/train/tuner.py`` in 4.6.0), adapter
#: branch only: ``if p.requires_grad and p.dtype == torch.float16: p.data = p.data.to(torch.float32)``
FP16_UPCAST = f"{NAME} converts fp16 trainable (adapter) parameters to float32 (tuner.py)"

#: the releases whose explicit ``--fp16 false`` lost to ``torch_dtype``
OVERRIDES_FLAGS = span(f"{NAME}.overrides_flags")


def overrides_flags(versions: Versions) -> bool:
    info = versions.get(NAME)
    return info is not None and OVERRIDES_FLAGS.contains(info.version)


#: ``get_default_torch_dtype`` from 3.0.1 returns the checkpoint's config.json dtype first;
#: 3.0.0 chose by the bf16 check first (``llm/model/register.py``:1082-1085@3.0.1)
CONFIG_DTYPE_FIRST = span(f"{NAME}.config_dtype_first")


def default_dtype(config: TrainingConfig, hardware: Hardware, versions: Versions) -> Sourced[str]:
    """The framework's ``get_default_torch_dtype`` when the file names no ``torch_dtype``."""
    family = family_of(str(config.model.value)) if config.model is not None else None
    native = family.native_dtype if family is not None else None
    if not hardware.known:
        return Sourced(native or "auto", Origin.default(f"{NAME} default: the checkpoint's dtype, else by GPU"))
    sees_bf16, why = frameworks_see_bf16(hardware, versions)
    info = versions.get(NAME)
    if info is not None and not CONFIG_DTYPE_FIRST.contains(info.version):
        pick = (native if native in ("float16", "bfloat16") else "bfloat16") if sees_bf16 else "float16"
        return Sourced(pick, Origin.default(f"{NAME} {info.version} default by the bf16 check: {why}"))
    if native is not None:
        assert family is not None
        return Sourced(native, Origin.default(f"{NAME} default: the {family.name} checkpoint's config.json dtype"))
    pick = "bfloat16" if sees_bf16 else "float16"
    return Sourced(pick, Origin.default(f"{NAME} default with no config.json dtype: {why}"))


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    load = config.torch_dtype or default_dtype(config, hardware, versions)
    derived_fp16 = load.value in ("float16", "float32")
    derived_bf16 = load.value == "bfloat16"
    detail = f"{NAME} derives fp16/bf16 from torch_dtype {load.value}"
    old = overrides_flags(versions)
    overrides: list[Override] = []

    def flag(name: str, explicit: Sourced[bool] | None, derived: bool) -> Sourced[bool]:
        made = Sourced(derived, load.origin.derived(detail) if load.origin.in_file else Origin.default(detail))
        if explicit is None:
            return made
        if old and explicit.value != derived:
            overrides.append(
                Override(field=name, winner=made, loser=explicit, reason=f"{NAME}<3.3.1 ignores explicit fp16/bf16")
            )
            return made
        return explicit

    fp16 = flag("fp16", config.fp16, derived_fp16)
    bf16 = flag("bf16", config.bf16, derived_bf16)
    if fp16.value:
        autocast: Sourced[str | None] = Sourced("float16", fp16.origin)
    elif bf16.value:
        autocast = Sourced("bfloat16", bf16.origin)
    else:
        autocast = Sourced(None, fp16.origin)
    if load.value == "float16" and is_adapter_training(config, "lora"):
        params: Sourced[str] = Sourced("float32", Origin.default(FP16_UPCAST))
    else:
        params = trainable_dtype(config, load, "lora", versions)
    scaling, scaler = scaler_for(autocast, f"HF Trainer (under {NAME}) creates a GradScaler for fp16")
    return same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced("all", Origin.default(f"{NAME} uses every visible GPU")),
        gradient_checkpointing=config.gradient_checkpointing
        or Sourced(True, Origin.default(f"default of {NAME}: gradient_checkpointing = True (TrainArgumentsMixin)")),
        overrides=overrides,
    )
