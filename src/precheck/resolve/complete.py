"""Fill the plan fields a framework's resolver left unset, from the config and library defaults.

Each default names the library that decides it:

- ``master_weights``: with no ZeRO/FSDP/apex optimizer wrapper, torch optimizers update
  the parameters themselves: no separate master copy.
- ``grad_accum_dtype`` / ``reduce_dtype``: gradients accumulate in ``.grad``, in the
  parameter dtype, and DDP all-reduces them in that dtype (``DistributedDataParallel``
  buckets take the gradient dtype).
- ``initial_scale``: ``torch.amp.GradScaler(init_scale=2.0**16)``.
- ``tf32``: ``torch.backends.cuda.matmul.allow_tf32`` is False since torch 1.12;
  ``NVIDIA_TF32_OVERRIDE=0`` forces TF32 off whatever the code asks.
- ``quantization``: ``BitsAndBytesConfig(bnb_4bit_compute_dtype=None)`` computes in float32
  (transformers ``utils/quantization_config.py:413-414@4.51.3``: ``if bnb_4bit_compute_dtype is
  None: self.bnb_4bit_compute_dtype = torch.float32``). The value cites the compute dtype and,
  through :attr:`~precheck.provenance.Origin.through`, the switch that quantizes.
- ``devices``: a resolver's default "every visible GPU" is the launcher's workers when the
  launch says how many it starts on the machine (``LOCAL_WORLD_SIZE``: torchrun
  ``--nproc_per_node``, accelerate ``num_processes``): worker ``LOCAL_RANK`` computes on
  ``cuda:LOCAL_RANK`` (transformers ``TrainingArguments._setup_devices``: ``torch.device("cuda",
  self.local_rank)``; accelerate ``PartialState``: ``cuda:{local_process_index}``), so
  ``torchrun --nproc_per_node=4`` on an 8-GPU machine shards over 4.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..config import TrainingConfig
from ..counts import decimal
from ..provenance import Origin, Sourced
from .deepspeed import power_of_two
from .plan import PLAN_FIELDS, PrecisionPlan

TORCH_INIT_SCALE = 2.0**16


def _same_as(plan: PrecisionPlan, name: str, detail: str) -> Sourced[Any]:
    source: Sourced[Any] = getattr(plan, name)
    origin = source.origin.derived(detail) if source.origin.in_file else Origin.default(f"{detail} ({source.origin})")
    return Sourced(source.value, origin)


def _initial_scale(config: TrainingConfig, plan: PrecisionPlan) -> Sourced[float | None]:
    if plan.loss_scaling.value == "none":
        return Sourced(None, plan.loss_scaling.origin)
    if plan.loss_scaling.value == "static" and config.loss_scale is not None:
        return Sourced(config.loss_scale.value, config.loss_scale.origin)
    if config.initial_scale_power is not None:
        power = config.initial_scale_power
        return Sourced(power_of_two(power.value), power.origin.derived(f"2**{power.value:g}"))
    return Sourced(TORCH_INIT_SCALE, Origin.default("torch GradScaler init_scale=2**16"))


def _tf32(config: TrainingConfig) -> Sourced[bool]:
    override = config.env.get("NVIDIA_TF32_OVERRIDE")
    if override is not None and override.value.strip() == "0":
        return Sourced(False, override.origin)
    if config.tf32 is not None:
        return config.tf32
    return Sourced(False, Origin.default("torch default since 1.12: matmul allow_tf32 = False"))


def quantized(bits: Sourced[int], compute: Sourced[Any]) -> Sourced[str]:
    """``"4-bit, compute float16"`` at the compute dtype, citing the line that quantizes
    (``load_in_4bit=True``) too: both decide the value."""
    origin = compute.origin.with_through(bits.origin.places) if bits.origin.in_file else compute.origin
    return Sourced(f"{bits.value}-bit, compute {compute.value}", origin)


def _quantization(config: TrainingConfig) -> Sourced[str]:
    if config.quantization_bits is None:
        off = config.quantization_off
        if off is not None and off.origin.in_file:  # the file turns it off itself
            return Sourced("none", off.origin.derived("base weights are not quantized"))
        return Sourced("none", Origin.default("base weights are not quantized"))
    bits = config.quantization_bits
    compute = config.quant_compute_dtype
    if bits.value == 8:
        return Sourced("8-bit (LLM.int8)", bits.origin)
    if compute is not None:
        return quantized(bits, compute)
    return Sourced(
        "4-bit, compute float32",
        bits.origin.derived("bitsandbytes bnb_4bit_compute_dtype defaults to float32")
        if bits.origin.in_file
        else bits.origin,
    )


def _sharding(config: TrainingConfig) -> Sourced[str]:
    if config.zero_stage is not None:
        parts = [f"ZeRO-{config.zero_stage.value}"]
        for name, item in (("optimizer", config.offload_optimizer), ("parameters", config.offload_param)):
            if item is not None and item.value not in ("none", "", None):
                parts.append(f"{name} offloaded to {item.value}")
        return Sourced(", ".join(parts), config.zero_stage.origin)
    if config.fsdp is not None and config.fsdp.value:
        kind = f"FSDP {config.fsdp_sharding.value}" if config.fsdp_sharding is not None else "FSDP"
        if config.offload_param is not None and config.offload_param.value not in ("none", ""):
            kind += f", parameters offloaded to {config.offload_param.value}"
        return Sourced(kind, (config.fsdp_sharding or config.fsdp).origin)
    return Sourced("none", Origin.default("no ZeRO or FSDP: every device holds a full copy"))


def _batch(config: TrainingConfig) -> Sourced[str | None]:
    parts = []
    first: Sourced[Any] | None = None
    for label, item in (
        ("micro-batch", config.batch_size),
        ("accumulation", config.grad_accum_steps),
        ("sequence", config.seq_len),
    ):
        if item is not None:
            parts.append(f"{label} {item.value}")
            first = first or item
    if first is None:
        return Sourced(None, Origin.default("not given in the config"))
    return Sourced(", ".join(parts), first.origin)


def _workers(config: TrainingConfig, plan: PrecisionPlan) -> Sourced[str] | None:
    """The devices of the launcher's workers, where the resolver's default took every visible GPU."""
    if plan.devices is None or plan.devices.value != "all" or plan.devices.origin.in_file:
        return None
    workers = config.env.get("LOCAL_WORLD_SIZE")
    count = decimal(str(workers.value), 1024) if workers is not None and workers.origin.in_file else None
    if workers is None or not count:
        return None
    detail = f"the launcher starts {count} worker{'s' if count > 1 else ''} a machine, each on cuda:LOCAL_RANK"
    return Sourced(",".join(str(i) for i in range(count)), workers.origin.derived(detail))


def complete(config: TrainingConfig, plan: PrecisionPlan) -> PrecisionPlan:
    """The plan with every field of :data:`PLAN_FIELDS` set."""
    filled: dict[str, Any] = {}  # field name -> Sourced value, for dataclasses.replace

    def want(name: str) -> bool:
        return getattr(plan, name) is None

    workers = _workers(config, plan)
    if workers is not None:
        filled["devices"] = workers
    if want("master_weights"):
        filled["master_weights"] = Sourced(None, Origin.default("the optimizer updates the parameters themselves"))
    if want("grad_accum_dtype"):
        filled["grad_accum_dtype"] = _same_as(plan, "grad_dtype", "gradients accumulate in .grad, in their own dtype")
    if want("reduce_dtype"):
        filled["reduce_dtype"] = _same_as(plan, "grad_dtype", "DDP all-reduces gradients in their own dtype")
    if want("initial_scale"):
        filled["initial_scale"] = _initial_scale(config, plan)
    if want("fp8"):
        filled["fp8"] = config.fp8 or Sourced(None, Origin.default("no fp8 setting"))
    if want("tf32"):
        filled["tf32"] = _tf32(config)
    if want("attention"):
        filled["attention"] = config.attn_implementation or Sourced(
            "default", Origin.default("the framework's default attention")
        )
    if want("quantization"):
        filled["quantization"] = _quantization(config)
    if want("sharding"):
        filled["sharding"] = _sharding(config)
    if want("gradient_checkpointing"):
        filled["gradient_checkpointing"] = config.gradient_checkpointing or Sourced(
            False, Origin.default("off unless enabled")
        )
    if want("batch"):
        filled["batch"] = _batch(config)
    missing = [name for name in PLAN_FIELDS if name not in filled and getattr(plan, name) is None]
    if missing:  # a resolver bug: every core field must be set
        raise ValueError(f"resolver for {plan.framework} left {', '.join(missing)} unset")
    return replace(plan, **filled)
