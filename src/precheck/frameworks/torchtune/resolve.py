"""This framework's recipes: pure low-precision training in ``dtype``, no autocast, no loss scaling.

Read upstream (0.1.1, 0.2.1, 0.3.1, 0.5.0 and 0.6.1 wheels, main at
bd2a0fc through the code index); the same in every release unless noted:

- ``recipes/*.py`` ``__init__``: ``self._dtype = training.get_dtype(cfg.dtype, device=self._device)``.
  ``get_dtype`` (``training/precision.py`` of the package; ``utils/precision.py`` up to
  0.2.x): None → float32; a string outside ``PRECISION_STR_TO_DTYPE`` (fp16, bf16, fp32,
  fp64) raises ``ValueError: Dtype {dtype} must be one of fp16, bf16, fp32, fp64 for
  finetuning.``; bf16 on a non-CPU device without ``verify_bf16_support()``
  (``torch.cuda.is_bf16_supported()``, which counts emulation from torch 2.3, and NCCL >=
  2.10) raises ``RuntimeError: bf16 precision was requested but not available on this
  hardware. Please use fp32 precision instead.`` (0.1.x-0.2.x LoRA single-device recipes
  also had ``RuntimeError("Full bf16 training is not supported on this hardware.")``).
- fp16: every training recipe raises ``ValueError`` right after ``get_dtype``:
  ``"full fp16 training is not supported with this recipe. Please use bf16 or fp32
  instead."`` (full_finetune_single_device/distributed, lora_finetune_distributed,
  lora_dpo_distributed, full_dpo_distributed, ppo_full_finetune_single_device,
  qat_distributed, qat_lora_finetune_distributed, dev/early_exit, dev/grpo) or
  ``"fp16 precision is not supported in this recipe. Please use fp32 or bf16."``
  (lora_finetune_single_device, lora_dpo_single_device, knowledge_distillation_*). The
  plan still shows fp16, with that error as its origin.
- ``_setup_model``: ``with training.set_default_dtype(self._dtype), self._device:
  model = config.instantiate(cfg_model)`` (distributed: on the meta device, then
  ``load_from_full_model_state_dict``), and ``validate_expected_param_dtype(...,
  dtype=self._dtype)``: every parameter, LoRA A/B included (``LoRALinear`` builds
  ``lora_a``/``lora_b`` as ``nn.Linear`` under that default dtype), is in ``dtype``. No
  fp32 copy is kept; no recipe wraps the forward in ``torch.autocast`` and none creates a
  ``GradScaler`` (0.1.x had unused ``utils.get_autocast``/``get_gradient_scaler``; main's
  ``self._grad_scaler = training.scale_grads_`` divides gradients by the token count, it
  is not a loss scaler). Gradients and ``torch.optim`` states (``zeros_like(param)``) are in
  ``dtype``; bitsandbytes 32-bit optimizers (``PagedAdamW``...) keep float32 states
  (``Optimizer2State.init_state``: ``optim_bits == 32`` → float32 buffers), their 8-bit ones
  uint8 blockwise states.
- QLoRA (``qlora_*`` builders, ``quantize_base=True``): ``LoRALinear`` stores the base weight
  as torchao ``to_nf4(...)``; ``linear_nf4`` computes ``F.linear(input, weight.to(input.dtype))``,
  i.e. in ``dtype``.
- Distributed recipes: ``training.shard_model`` → ``fully_shard(m, reshard_after_forward=...,
  mesh=..., offload_policy=CPUOffloadPolicy() if fsdp_cpu_offload)`` with no
  ``MixedPrecisionPolicy``: parameters stay in ``dtype`` and gradients are reduce-scattered
  in it. Each process trains on ``cuda:LOCAL_RANK`` (``utils/_device.py`` ``_setup_device``).
- Single-device recipes: ``utils.get_device(cfg.device)``: ``cuda`` → ``cuda:0`` (no
  LOCAL_RANK), ``cuda:N`` → that index, ``cpu`` → no GPU (the bf16 check is skipped).
"""

from __future__ import annotations

from ...config import TrainingConfig
from ...facts import quote, span
from ...hardware import Hardware
from ...provenance import Origin, Sourced
from ...resolve.common import frameworks_see_bf16, is_adapter_training, value
from ...resolve.plan import PrecisionPlan
from ...versions import Versions
from .label import NAME

#: ``enable_fp8_training`` (torchao float8 in full_finetune_distributed): main after 0.6.1
FP8_TRAINING = span(f"{NAME}.fp8_training")

FP16_REJECTED = (
    f'every {NAME} training recipe rejects fp16 at start with ValueError: "{quote(f"{NAME}.full_fp16_refused")}" '
    f'(full, distributed, PPO, QAT recipes) or "{quote(f"{NAME}.fp16_refused")}" '
    "(lora_finetune_single_device, lora_dpo_single_device, knowledge_distillation_*); "
    "generate, eleuther_eval and quantize take fp16"
)
BF16_UNAVAILABLE = f'get_dtype raises RuntimeError: "{quote(f"{NAME}.bf16_unavailable")}"'
VALID = ("fp16", "bf16", "fp32", "fp64")


def _dtype(config: TrainingConfig, hardware: Hardware, versions: Versions) -> Sourced[str]:
    """The training dtype as ``get_dtype`` returns it (or would, when it raises)."""
    raw = config.precision
    load = config.torch_dtype
    if load is None:
        if raw is not None:  # not a dtype at all (``dtype: auto``)
            message = quote(f"{NAME}.dtype_spelling", dtype=raw.value, choices=", ".join(VALID))
            return Sourced("float32", raw.origin.derived(f"get_dtype raises ValueError: {message}"))
        return Sourced(
            "float32",
            Origin.default(
                "dtype unset: the recipes read cfg.dtype, which OmegaConf refuses for a missing key "
                f"(ConfigAttributeError: {quote('omegaconf.missing_key', key='dtype')}); "
                "`dtype: null` trains in float32 (get_dtype(None))"
            ),
        )
    if raw is not None and raw.value not in (*VALID, "null"):
        message = quote(f"{NAME}.dtype_spelling", dtype=raw.value, choices=", ".join(VALID))
        return Sourced(load.value, raw.origin.derived(f"get_dtype raises ValueError: {message}"))
    # the ``dtype`` key itself (the load dtype's own origin names no key, see the dialect)
    at = raw.origin if raw is not None and raw.origin.in_file else load.origin
    if load.value == "float16" and "optimizer" in config.keys:  # a training recipe's config
        return Sourced("float16", at.derived(FP16_REJECTED))
    if load.value == "bfloat16" and _uses_gpu(config) and hardware.known and hardware.devices:
        sees, why = frameworks_see_bf16(hardware, versions)
        if not sees:
            return Sourced("bfloat16", at.derived(f"{BF16_UNAVAILABLE} ({why})"))
    return Sourced(load.value, at)


def _uses_gpu(config: TrainingConfig) -> bool:
    device = config.keys.get("device")
    return device is None or str(device.value).split(":")[0].lower() not in ("cpu", "mps")


def _devices(config: TrainingConfig) -> Sourced[str]:
    if config.fsdp is not None and config.fsdp.value:
        return Sourced(
            "all",
            config.fsdp.origin.derived(
                "tune run starts one process per GPU (--nproc_per_node); each trains on cuda:LOCAL_RANK"
            ),
        )
    device = config.keys.get("device")
    if device is None or device.value is None:
        return Sourced("first", Origin.default("get_device(None) picks cuda: cuda:0 in a single-process run"))
    text = str(device.value).strip().lower()
    kind, _, index = text.partition(":")
    if kind in ("cpu", "mps"):
        return Sourced("", device.origin.derived(f"device {text}: no CUDA device is used"))
    if index.isdecimal():
        return Sourced(index, device.origin.derived(f"get_device('{text}'): that index"))
    return Sourced(
        "first", device.origin.derived(f"get_device('{text}'): {kind}:0 without a distributed launch (LOCAL_RANK)")
    )


def _optimizer_states(config: TrainingConfig, params: Sourced[str]) -> Sourced[str]:
    optimizer = config.optimizer
    if optimizer is None:
        return Sourced(params.value, Origin.default("optimizer states follow the parameters' dtype"))
    name = str(optimizer.value)
    lower = name.lower()
    if "8bit" in lower:
        return Sourced("uint8", optimizer.origin.derived(f"{name}: 8-bit blockwise-quantised states"))
    if lower.startswith("bitsandbytes."):
        return Sourced(
            "float32",
            optimizer.origin.derived(f"{name}: bitsandbytes 32-bit states are float32 whatever the parameter dtype"),
        )
    return Sourced(params.value, optimizer.origin.derived(f"{name} states are zeros_like(param): {params.value}"))


def _fp8(config: TrainingConfig, versions: Versions) -> Sourced[str | None] | None:
    if config.fp8 is None:
        return None
    info = versions.get(NAME)
    if info is not None and not FP8_TRAINING.contains(info.version):
        return Sourced(None, config.fp8.origin.derived(f"{NAME} {info.version} does not read enable_fp8_training"))
    return Sourced("torchao float8 (convert_to_float8_training)", config.fp8.origin)


def resolve(config: TrainingConfig, hardware: Hardware, versions: Versions) -> PrecisionPlan:
    dtype = _dtype(config, hardware, versions)
    adapters = is_adapter_training(config)
    if adapters:
        where = config.train_type.origin if config.train_type is not None else dtype.origin
        params = Sourced(
            dtype.value,
            where.derived(
                f"LoRA A/B are nn.Linear built under set_default_dtype({dtype.value}) "
                "and checked by validate_expected_param_dtype: no float32 adapters"
            ),
        )
    else:
        params = Sourced(
            dtype.value,
            dtype.origin.derived(f"full fine-tune trains the {dtype.value} weights themselves")
            if dtype.origin.in_file
            else dtype.origin,
        )
    no_amp = Origin.default(f"{NAME} recipes run the forward in the parameters' dtype: no torch.autocast")
    no_scaler = Origin.default(f"{NAME} recipes create no GradScaler (fp16 is rejected): no loss scaling")
    master = (
        Sourced(None, dtype.origin.derived(f"pure {dtype.value}: the optimizer updates the parameters in place"))
        if dtype.value in ("bfloat16", "float16")
        else None
    )
    plan = PrecisionPlan(
        framework=config.framework,
        load_dtype=dtype,
        param_dtype=params,
        autocast_dtype=Sourced(None, no_amp),
        grad_dtype=params,
        optimizer_state_dtype=_optimizer_states(config, params),
        loss_scaling=Sourced("none", no_scaler),
        grad_scaler=Sourced(False, no_scaler),
        devices=_devices(config),
        master_weights=master,
        attention=Sourced(
            "sdpa",
            Origin.default(f"{NAME} MultiHeadAttention: F.scaled_dot_product_attention (flex_attention if packed)"),
        ),
        fp8=_fp8(config, versions),
    )
    if config.fsdp is not None and config.fsdp.value:
        plan.reduce_dtype = Sourced(
            params.value,
            config.fsdp.origin.derived("fully_shard without a MixedPrecisionPolicy reduces in the parameter dtype"),
        )
    else:
        plan.reduce_dtype = Sourced(None, Origin.default("single-device recipe: no gradient reduction"))
    bits = config.quantization_bits
    if bits is not None and bits.value == 4:
        plan.quantization = Sourced(
            f"4-bit NF4 (torchao), compute {dtype.value}",
            bits.origin.derived(f"LoRALinear to_nf4 base weights; linear_nf4 dequantises to {dtype.value}"),
        )
    if value(config.gradient_checkpointing) is None:
        plan.gradient_checkpointing = Sourced(
            False, Origin.default("enable_activation_checkpointing defaults to False in the recipes")
        )
    return plan
