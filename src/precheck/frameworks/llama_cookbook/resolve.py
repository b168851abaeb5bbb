"""This framework's ``finetuning.main`` and ``train_utils.train``.

Read upstream: the model loads with ``torch_dtype=torch.float16 if
use_fp16 else "auto"`` (the checkpoint's dtype; some earlier releases used
bfloat16, the first ones float32); ``use_fp16`` adds ``torch.cuda.amp.autocast`` and a
GradScaler (``ShardedGradScaler`` under FSDP); without it there is no autocast.
``pure_bf16`` with FSDP casts the model to bf16. A quantised model is placed with
``device_map="auto"`` (every visible GPU); FSDP uses every GPU; otherwise
``model.to("cuda")`` (the first visible device).
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...hardware import Hardware
from ...models import family_of
from ...provenance import Origin, Sourced
from ...resolve.common import scaler_for, trainable_dtype, value
from ...resolve.plan import PrecisionPlan, same_dtype_plan
from ...versions import Versions


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    fp16 = config.fp16
    fsdp = bool(value(config.fsdp, False))
    if fp16 is not None and fp16.value:
        load: Sourced[str] = Sourced("float16", fp16.origin.derived("use_fp16 loads the model in float16"))
    elif fsdp and value(config.pure_bf16, False) and config.pure_bf16 is not None:
        load = Sourced("bfloat16", config.pure_bf16.origin.derived("pure_bf16 casts the model to bfloat16"))
    else:
        family = family_of(str(value(config.model, "")))
        if family is not None:
            load = Sourced(
                family.native_dtype, Origin.default(f'torch_dtype="auto": the {family.name} checkpoint\'s dtype')
            )
        else:
            load = Sourced("auto", Origin.default('torch_dtype="auto": the checkpoint\'s dtype'))
    autocast: Sourced[str | None] = (
        Sourced("float16", fp16.origin)
        if fp16 is not None and fp16.value
        else Sourced(None, Origin.default("no autocast without use_fp16"))
    )
    params = trainable_dtype(config, load, "full", versions)
    scaling, scaler = scaler_for(
        autocast, "use_fp16 creates a GradScaler" + (" (ShardedGradScaler under FSDP)" if fsdp else "")
    )
    if fsdp:
        devices = Sourced("all", config.fsdp.origin if config.fsdp else Origin.default("FSDP"))
    elif config.quantization_bits is not None:
        devices = Sourced(
            "all", config.quantization_bits.origin.derived('quantised models load with device_map="auto"')
        )
    else:
        devices = Sourced("first", Origin.default('model.to("cuda"): the first visible GPU'))
    return same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=devices,
    )
