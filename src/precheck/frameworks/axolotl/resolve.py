"""This framework: how ``bf16``/``fp16``/``bfloat16``/``float16`` become load, compute and weight dtypes.

Read in the released sdists/wheels 0.9.0, 0.10.0, 0.11.0, 0.12.0, 0.14.0, 0.15.0,
0.16.0 and 0.19.0 (and the GitHub tree of the corpus, 067b021):

- ``cli/config.py`` ``load_cfg`` → ``validate_config`` → ``prepare_optim_env`` →
  ``normalize_config`` → ``resolve_dtype`` (``utils/config/__init__.py``):

  * ``if not cfg.fp16 and cfg.bf16 == "auto"``: ``is_torch_bf16_gpu_available()``
    (transformers; ``torch.cuda.is_bf16_supported()``, which counts emulation from torch
    2.3, so a V100 passes) sets ``bf16 = True``, else ``bf16 = False`` and, ``if cfg.fp16
    is None and not cfg.float16``, ``fp16 = True``. ``bf16`` defaults to ``"auto"`` when the
    key is absent (an explicit ``bf16:`` with no value is None: no detection). 0.9.0 had
    no ``not cfg.fp16`` guard (0.10.0 has): there ``bf16: auto`` on a bf16 GPU also turned
    an explicit ``fp16: true`` off, and fp16 was switched on even with ``float16: true``.
  * ``if cfg.fp16 and cfg.bf16 == "auto": cfg.bf16 = False``; off MPS ``if cfg.bf16:
    cfg.fp16 = False`` — fp16 and bf16 both true silently trains bf16.
  * ``torch_dtype`` (the ``from_pretrained`` dtype, ``loaders/model.py``
    ``_set_device_map_config``: ``model_kwargs["torch_dtype"] = model_kwargs["dtype"] =
    cfg.torch_dtype``): bfloat16 if ``bf16 or bfloat16``, float16 if ``load_in_8bit or
    fp16 or float16``, else float32. A ``torch_dtype`` key in the YAML is not a schema
    field and is dropped. AMP therefore runs on half-precision weights: a full fine-tune
    with ``fp16: true`` hits the GradScaler's "Attempting to unscale FP16 gradients."
    (upstream PR #3189, open, proposes loading fp32 for AMP).
- ``core/builders/base.py`` ``_configure_precision_settings`` (``core/trainer_builder.py``
  in 0.9): TrainingArguments ``fp16 = (cfg.fp16 and not cfg.bf16) or False``; ``bf16 =
  cfg.bf16 or cfg.bfloat16`` from 0.10.0 (0.9.0: ``bf16 = cfg.bf16``), so ``bfloat16:
  true`` is bf16 weights *with* bf16 autocast from 0.10; ``float16: true`` stays fp16
  weights without autocast or GradScaler. ``tf32 = cfg.tf32``.
- ``utils/schemas/config.py`` ``...ConfigWCapabilities.check_bf16`` (capabilities
  from ``is_torch_bf16_gpu_available()``): ``bf16: true``/``bfloat16: true`` without bf16
  support raised "bf16 requested, but AMP is not supported on this GPU. Requires Ampere
  series or above." up to 0.15.0; from 0.16.0 it only warns ("bf16 requested, but AMP is not
  supported on this GPU. Requires Ampere series or above. Training will fail, but other
  operations (such as merging) are still functional."). ``check_tf32`` (0.16.0+):
  ``tf32: auto`` (the new default) becomes ``is_torch_tf32_available()``. ``check_fp8``:
  "fp8 requested, but fp8 is not supported on this GPU" below sm_90
  (``compute_supports_fp8``).
- Quantisation (``_set_quantization_config``): ``adapter: qlora`` + ``load_in_4bit`` builds
  ``BitsAndBytesConfig(bnb_4bit_compute_dtype=cfg.torch_dtype, nf4, double quant,
  bnb_4bit_quant_storage=bfloat16)``, updated with ``bnb_config_kwargs``; ``adapter:
  lora`` + ``load_in_8bit`` builds an 8-bit config.
- Adapters (``loaders/adapter.py`` ``load_lora``): ``get_peft_model(model, config,
  **kwargs)``: peft's ``autocast_adapter_dtype=True`` makes LoRA weights float32;
  ``peft_autocast_adapter_dtype: false`` passes False (key read from 0.14.0; absent in
  0.12.0). A full fine-tune trains the loaded weights (norms/embeddings are upcast to
  fp32 and, for adapters/FSDP/flash attention, cast back: ``_configure_embedding_dtypes``).
- ``utils/trainer.py`` ``prepare_optim_env``: writes ``ACCELERATE_MIXED_PRECISION``
  itself (fp8 | bf16 | fp16 | no), so the user's variable does not decide anything; fp8
  hands ``mixed_precision="fp8"`` with torchao's ``AORecipeKwargs`` to the Accelerator
  (``core/trainers/base.py`` ``additional_accelerator_args``), which autocasts the rest
  to bf16 (accelerate ``get_mixed_precision_context_manager``).
- FSDP: ``fsdp_config`` → TrainingArguments ``fsdp``/``fsdp_config`` and ``FSDP_*``
  variables; accelerate's policy is ``MixedPrecision(param_dtype, reduce_dtype[,
  buffer_dtype])`` all in the autocast dtype (``set_mixed_precision``). FSDP1 upcasts
  trainable low-precision flat parameters to float32 when mixed precision is on
  (accelerate 1.15 ``Accelerator.prepare_model``); with ``fsdp_version: 2`` the framework
  replaces ``fsdp2_prepare_model`` (``monkeypatch/accelerate/fsdp2.py``) by one that does
  not upcast.
"""

from __future__ import annotations

from typing import Any

from ...config import TrainingConfig
from ...dialects.base import to_bool, to_int
from ...facts import span
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import frameworks_see_bf16, is_adapter_training, scaler_for, trainable_dtype
from ...resolve.complete import quantized
from ...resolve.plan import Override, PrecisionPlan, same_dtype_plan
from ...versions import VersionRange, Versions
from .keys import NAME

#: 0.9.1 added ``not cfg.fp16 and`` to the ``bf16: auto`` check and ``and not cfg.float16``
#: to its fp16 fallback (utils/config/__init__.py:62,70@0.9.1); 0.9.0 resolved ``auto`` whatever fp16 said
AUTO_RESPECTS_FP16 = span(f"{NAME}.auto_respects_fp16")
#: 0.10.0: TrainingArguments ``bf16 = cfg.bf16 or cfg.bfloat16`` (0.9.0: ``cfg.bf16``)
BFLOAT16_AUTOCASTS = span(f"{NAME}.bfloat16_autocasts")
#: 0.16.0: ``tf32: Literal["auto"] | bool = "auto"`` resolved by ``check_tf32``
TF32_AUTO = span(f"{NAME}.tf32_auto")
#: ``peft_autocast_adapter_dtype`` is read by ``load_lora`` (loaders/adapter.py:146@0.13.1; absent in 0.12.2)
ADAPTER_AUTOCAST_KEY = span(f"{NAME}.adapter_autocast_key")

HALF = ("float16", "bfloat16")


def _known(versions: Versions) -> str:
    info = versions.get(NAME)
    return f"{NAME} {info.version} ({info.source})" if info else f"{NAME} version not known: newest behaviour"


def _has(versions: Versions, behaviour: VersionRange) -> bool:
    info = versions.get(NAME)
    return info is None or behaviour.contains(info.version)


def _derive(origin: Origin, detail: str) -> Origin:
    """``origin`` as the source of a value derived from it, keeping the steps so far."""
    if origin.in_file:
        return origin.derived(f"{origin.detail}; {detail}" if origin.kind == "derived" and origin.detail else detail)
    return Origin.default(f"{origin.detail}; {detail}" if origin.detail else detail)


def _flag(config: TrainingConfig, key: str) -> Sourced[bool] | None:
    """A top-level boolean of the file (keys precheck has no field for)."""
    item = config.keys.get(key)
    if item is None or to_bool(item.value) is None:
        return None
    return Sourced(bool(to_bool(item.value)), item.origin)


def _on(item: Sourced[Any] | None) -> bool:
    return item is not None and bool(item.value)


def _bf16_as_written(config: TrainingConfig, versions: Versions) -> Sourced[Any]:
    """``bf16`` as the framework validates it: True, False, None or ``"auto"`` (the default)."""
    raw = config.keys.get("bf16")
    if raw is None:
        return Sourced("auto", Origin.default(f"{NAME} default bf16: auto [{_known(versions)}]"))
    if isinstance(raw.value, str) and raw.value.strip().lower() == "auto":
        return Sourced("auto", raw.origin)
    if config.bf16 is not None:
        return config.bf16
    return Sourced(None, raw.origin)


def _sees_bf16(hardware: Hardware, versions: Versions) -> tuple[bool, str]:
    if not hardware.known:
        return True, "the GPUs are not known: assuming one with bf16"
    return frameworks_see_bf16(hardware, versions)


def _switches(
    config: TrainingConfig, hardware: Hardware, versions: Versions, overrides: list[Override]
) -> tuple[Sourced[bool], Sourced[bool] | None]:
    """``resolve_dtype``: the bf16 and fp16 switches after ``auto`` and their precedence."""
    written = _bf16_as_written(config, versions)
    fp16 = config.fp16
    float16 = _flag(config, "float16")
    guarded = _has(versions, AUTO_RESPECTS_FP16)
    if written.value == "auto":
        if _on(fp16) and guarded:
            bf16 = Sourced(False, _derive(written.origin, "bf16: auto stays off when fp16 is true"))
        else:
            sees, why = _sees_bf16(hardware, versions)
            detail = f"bf16: auto → is_torch_bf16_gpu_available() is {sees} ({why})"
            bf16 = Sourced(sees, _derive(written.origin, detail))
            if not sees and fp16 is None and not (guarded and _on(float16)):
                fp16 = Sourced(True, _derive(written.origin, "bf16: auto without bf16 support turns fp16 on"))
    else:
        bf16 = Sourced(bool(written.value), written.origin)
    if bf16.value and _on(fp16):
        assert fp16 is not None
        off = Sourced(False, _derive(bf16.origin, "resolve_dtype sets fp16 = False when bf16 is on"))
        overrides.append(
            Override(field="fp16", winner=off, loser=fp16, reason=f"{NAME} drops fp16 when bf16 is on (resolve_dtype)")
        )
        fp16 = off
    return bf16, fp16


def _load_dtype(
    config: TrainingConfig, bf16: Sourced[bool], fp16: Sourced[bool] | None, versions: Versions
) -> Sourced[str]:
    """``resolve_dtype``'s ``cfg.torch_dtype``, which ``from_pretrained`` loads the weights in."""
    bfloat16 = config.pure_bf16
    if bf16.value:
        return Sourced("bfloat16", _derive(bf16.origin, f"{NAME} loads the weights in bf16 when bf16 is on"))
    if _on(bfloat16):
        assert bfloat16 is not None
        return Sourced("bfloat16", _derive(bfloat16.origin, "bfloat16: true loads the weights in bf16"))
    for item, why in (
        (_flag(config, "load_in_8bit"), "load_in_8bit keeps the unquantised weights in fp16"),
        (fp16, f"{NAME} loads the weights in fp16 when fp16 is on"),
        (_flag(config, "float16"), "float16: true loads the weights in fp16"),
    ):
        if _on(item):
            assert item is not None
            return Sourced("float16", _derive(item.origin, why))
    return Sourced(
        "float32",
        Origin.default(f"{NAME} loads float32 when no 16-bit switch is on (resolve_dtype) [{_known(versions)}]"),
    )


def _autocast(
    config: TrainingConfig, bf16: Sourced[bool], fp16: Sourced[bool] | None, versions: Versions
) -> Sourced[str | None]:
    """TrainingArguments' fp16/bf16 as the trainer builder sets them (or accelerate's fp8)."""
    if config.fp8 is not None and config.fp8.value:
        return Sourced("bfloat16", _derive(config.fp8.origin, "fp8 (torchao) autocasts the other ops to bf16"))
    if _on(fp16) and not bf16.value:
        assert fp16 is not None
        return Sourced("float16", _derive(fp16.origin, "TrainingArguments fp16 = fp16 and not bf16"))
    if bf16.value:
        return Sourced("bfloat16", _derive(bf16.origin, "TrainingArguments bf16 = bf16"))
    bfloat16 = config.pure_bf16
    if _on(bfloat16) and _has(versions, BFLOAT16_AUTOCASTS):
        assert bfloat16 is not None
        return Sourced(
            "bfloat16", _derive(bfloat16.origin, f"{NAME}>=0.10 passes bf16 = bf16 or bfloat16 to TrainingArguments")
        )
    half = next((item for item in (bfloat16, _flag(config, "float16")) if _on(item)), None)
    if half is not None:
        return Sourced(None, _derive(half.origin, "half-precision weights without autocast (no AMP)"))
    return Sourced(None, _derive(bf16.origin, "TrainingArguments gets fp16 = bf16 = False: no autocast"))


def _fsdp_version(config: TrainingConfig) -> int:
    top = config.keys.get("fsdp_version")
    if top is not None and to_int(top.value) is not None:
        return int(str(top.value))
    block = config.keys.get("fsdp_config")
    if block is not None and isinstance(block.value, dict):
        for key in ("fsdp_version", "version"):
            node = block.value.get(key)
            if node is not None and to_int(node.value) is not None:
                return int(str(node.value))
    return 1  # check_fsdp_version_in_fsdp_config pins FSDP1 for unversioned configs


def _params(
    config: TrainingConfig, load: Sourced[str], autocast: Sourced[str | None], versions: Versions
) -> Sourced[str]:
    if is_adapter_training(config, "full"):
        upcast = _flag(config, "peft_autocast_adapter_dtype")
        if (
            upcast is not None
            and not upcast.value
            and _has(versions, ADAPTER_AUTOCAST_KEY)
            and load.value in HALF
            and config.quantization_bits is None
        ):
            return Sourced(
                load.value,
                upcast.origin.derived("get_peft_model(autocast_adapter_dtype=False): adapters in the base dtype"),
            )
        return trainable_dtype(config, load, "full", versions)
    params = trainable_dtype(config, load, "full", versions)
    if _on(config.fsdp) and _fsdp_version(config) == 1 and autocast.value is not None and params.value != "float32":
        return Sourced(
            "float32",
            Origin.default(
                "accelerate's FSDP1 prepare_model upcasts low-precision trainable parameters "
                "to float32 under mixed precision"
            ),
        )
    return params


def _quantization(config: TrainingConfig, load: Sourced[str]) -> Sourced[str] | None:
    bits = config.quantization_bits
    if bits is None:
        return None
    if bits.value == 8:
        return Sourced("8-bit (LLM.int8)", bits.origin)
    compute = config.quant_compute_dtype or Sourced(
        load.value, _derive(load.origin, "bnb_4bit_compute_dtype = the load dtype (_set_quantization_config)")
    )
    return quantized(bits, compute)  # cites the `load_in_4bit` line too: both decide the value


def _tf32(config: TrainingConfig, hardware: Hardware, versions: Versions) -> Sourced[bool] | None:
    """``tf32: auto`` (the 0.16+ default) is ``is_torch_tf32_available()``; a bool is kept."""
    if config.tf32 is not None:
        return None  # completed from the config
    raw = config.keys.get("tf32")
    written_auto = raw is not None and isinstance(raw.value, str) and raw.value.strip().lower() == "auto"
    if raw is not None and not written_auto:
        return None
    if not _has(versions, TF32_AUTO):
        return None
    if not hardware.known:
        on, why = True, "GPUs not known: assuming Ampere or newer"
    else:
        on = all(d.model.tf32 for d in hardware.devices)
        why = "every GPU is Ampere or newer" if on else "a GPU before Ampere"
    detail = f"tf32: auto → is_torch_tf32_available() is {on} ({why})"
    if raw is not None:
        return Sourced(on, raw.origin.derived(detail))
    return Sourced(on, Origin.default(f"{NAME} default {TF32_AUTO}: {detail} [{_known(versions)}]"))


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    overrides: list[Override] = []
    bf16, fp16 = _switches(config, hardware, versions, overrides)
    load = _load_dtype(config, bf16, fp16, versions)
    autocast = _autocast(config, bf16, fp16, versions)
    params = _params(config, load, autocast, versions)
    scaling, scaler = scaler_for(autocast, f"the HF Trainer (under {NAME}) creates a GradScaler for fp16")
    extra: dict[str, Any] = {}
    quantization = _quantization(config, load)
    if quantization is not None:
        extra["quantization"] = quantization
    tf32 = _tf32(config, hardware, versions)
    if tf32 is not None:
        extra["tf32"] = tf32
    if _on(config.fsdp) and autocast.value is not None:
        extra["reduce_dtype"] = Sourced(
            autocast.value, Origin.default("accelerate's FSDP MixedPrecision reduces gradients in the autocast dtype")
        )
    return same_dtype_plan(
        config.framework,
        load=load,
        params=params,
        autocast=autocast,
        loss_scaling=scaling,
        grad_scaler=scaler,
        devices=Sourced(
            "all", Origin.default(f"{NAME} trains on every visible GPU (device_map auto or one rank per GPU)")
        ),
        overrides=overrides,
        **extra,
    )
