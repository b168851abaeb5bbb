"""Per-device training memory for a resolved plan: model states plus activations.

The estimate is the sum of:

- **weights**: every parameter in its load dtype (4-bit NF4 is 0.5 B plus one fp32
  absmax per 64-value block = 0.5625 B; LLM.int8 1 B), plus the trainable adapter
  weights in their own dtype when the base is frozen, plus, under fp16/bf16 autocast of
  float32 weights, the 16-bit copies autocast makes and the matmuls keep for the backward
  pass (2 B a parameter: HF's "Model training anatomy" counts mixed-precision weights as
  6 B a parameter; one layer's worth with gradient checkpointing). A frozen base under
  LoRA counts too: autocast does not cache its casts (only leaf tensors that require
  grad), but each matmul saves its 16-bit weight copy for the input's gradient until the
  backward pass (measured in tests/rules/test_pc8xx_memory.py);
- **master weights**: a float32 copy of the trainable parameters where the plan keeps one
  (DeepSpeed fp16/bf16, ZeRO): 4 B per trainable parameter;
- **gradients**: one per trainable parameter, in the gradient dtype;
- **optimizer states**, per trainable parameter: Adam/AdamW two states in the state dtype
  (8 B in fp32), 8-bit Adam 2 B, Lion one state, SGD with momentum one, plain SGD none,
  Adafactor its factored row and column statistics (about 8/hidden B); paged
  (bitsandbytes ``Paged*``) states live in CUDA unified memory and page out to the CPU,
  so they are not counted; with the optimizer in the backward pass (a framework's
  ``optimizer_in_bwd``) each gradient is freed as soon as it is applied;
- **sharding**: ZeRO-1 divides optimizer states and master weights by the number of
  devices, ZeRO-2 also the gradients, ZeRO-3 and FSDP ``full_shard`` also the weights
  (FSDP ``shard_grad_op`` is ZeRO-2); offloading moves those parts to the CPU;
- **activations**, per micro-batch of ``b`` sequences of ``s`` tokens through ``L``
  layers of width ``h`` with ``a`` heads: ``s·b·h·(34 + 5·a·s/h)`` bytes a layer in 16-bit
  (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
  Models", eq. 1 without tensor parallelism); the ``5·a·s/h`` attention-score term is
  dropped for memory-efficient attention (sdpa, FlashAttention), and float32
  activations count double. With gradient checkpointing only each layer's 16-bit input
  (``2·s·b·h``) is kept, plus one layer's full activations during recomputation. The
  logits add ``b·s·V`` values kept in float32 with their gradient (8 B each);
- **overhead**: 1 GiB for the CUDA context and the caching allocator.

With mixed-precision AdamW (fp32 weights, gradients and states) the model states are the
16 B per parameter of the ZeRO paper (Rajbhandari et al. 2020, §3.1: "2Ψ + 2Ψ + KΨ"
with K = 12 for fp16 weights, fp16 gradients and fp32 master + Adam states).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .config import TrainingConfig
from .model_sizes import ModelSize, count_params, dims_from_config, size_for
from .plan import PrecisionPlan

GIB = 1024**3
OVERHEAD = 1.0 * GIB

DTYPE_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0, "float64": 8.0}
NF4_BYTES = 0.5 + 4 / 64
INT8_BYTES = 1.0

#: LoRA rank assumed when the file does not say (PEFT LoraConfig default r=8; many
#: recipes use 16: the larger is the safer estimate)
DEFAULT_LORA_RANK = 16


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Dims:
    """What the estimate needs to know of the model."""

    params: int
    hidden_size: int
    num_hidden_layers: int
    intermediate_size: int
    num_attention_heads: int
    vocab_size: int
    #: where the dims came from (a config.json, the built-in table)
    source: str


@dataclass(slots=True, eq=False, repr=False)
class Estimate:
    """Bytes per device, by part, and how they were counted."""

    devices: int
    weights: float = 0.0
    master: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    activations: float | None = None
    overhead: float = OVERHEAD
    trainable: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def states(self) -> float:
        """Weights, master weights, gradients, optimizer states and the CUDA context."""
        return self.weights + self.master + self.gradients + self.optimizer + self.overhead

    @property
    def total(self) -> float:
        return self.weights + self.master + self.gradients + self.optimizer + (self.activations or 0.0) + self.overhead

    def parts(self) -> list[tuple[str, float]]:
        out = [
            ("weights", self.weights),
            ("master weights", self.master),
            ("gradients", self.gradients),
            ("optimizer states", self.optimizer),
        ]
        if self.activations is not None:
            out.append(("activations", self.activations))
        out.append(("CUDA context", self.overhead))
        return out

    def breakdown(self) -> str:
        shown = ", ".join(f"{name} {gib(value)}" for name, value in self.parts() if value)
        return f"{gib(self.total)} per device ({shown})"


def dims_for(config: TrainingConfig) -> Dims | None:
    """The model's size: its local config.json, else precheck's table by name; None if unknown."""
    size: ModelSize | None = None
    if config.model_dims:
        first = next(iter(config.model_dims.values()))
        name = first.origin.path or "config.json"
        size = dims_from_config({k: v.value for k, v in config.model_dims.items()}, name)
    if size is None and config.model is not None:
        size = size_for(str(config.model.value))
    if size is None:
        return None
    exact = config.model_params  # --deep: counted on the meta device, preferred to the formula
    source = size.source if config.model_dims else f"{size.name} in precheck's model table"
    return Dims(
        params=exact.value if exact is not None else count_params(size),
        hidden_size=size.hidden_size,
        num_hidden_layers=size.num_hidden_layers
        + ((size.num_decoder_layers or size.num_hidden_layers) if size.encoder_decoder else 0),
        intermediate_size=size.intermediate_size,
        num_attention_heads=size.num_attention_heads,
        vocab_size=size.vocab_size,
        source=str(exact.origin) if exact is not None else source,
    )


def trains_adapters(config: TrainingConfig) -> bool:
    """Whether the run trains adapters on a frozen base (LoRA, QLoRA) rather than every weight."""
    if config.train_type is None:
        # a framework whose default training method is LoRA (the trait; each framework cites its source)
        adapters = config.traits.lora_by_default
    else:
        adapters = str(config.train_type.value).lower() not in ("full", "none", "")
    return adapters or config.quantization_bits is not None


def quantized_bits(config: TrainingConfig, plan: PrecisionPlan) -> int | None:
    """4 or 8 when the base is quantized: a file's key, or the plan's load dtype ``int4``/``int8``
    (a framework's default 4-bit backbone)."""
    if config.quantization_bits is not None:
        return int(config.quantization_bits.value)
    load = str(plan.load_dtype.value)
    return int(load[3:]) if load in ("int4", "int8") else None


def gib(value: float) -> str:
    return f"{value / GIB:.1f} GiB"


def _dtype_bytes(dtype: str | None, fallback: str = "float32") -> float:
    return DTYPE_BYTES.get(dtype or fallback, DTYPE_BYTES.get(fallback, 4.0))


def lora_params(dims: Dims, rank: int = DEFAULT_LORA_RANK) -> int:
    """Adapter parameters on every linear layer: r·(in + out) each (q, k, v, o and a gated MLP)."""
    h, i = dims.hidden_size, dims.intermediate_size
    per_layer = rank * (4 * (h + h) + 3 * (h + i))
    return per_layer * dims.num_hidden_layers


def optimizer_bytes(name: str | None, state_dtype: str, dims: Dims) -> tuple[float, str]:
    """Bytes of optimizer state per trainable parameter, and the optimizer as counted."""
    text = (name or "adamw").lower()
    state = _dtype_bytes(state_dtype)
    if "8bit" in text or "8_bit" in text or ("bnb" in text and "32bit" not in text):
        return (1.0 if "lion" in text else 2.0), "8-bit states"
    if "adafactor" in text:
        return 8.0 / max(dims.hidden_size, 1), "Adafactor factored statistics"
    if "lion" in text:
        return state, "Lion: one state"
    if "sgd" in text:
        return 0.0, "SGD without momentum"
    return 2 * state, f"Adam: two {state_dtype} states"


def run_value(config: TrainingConfig, name: str) -> Any:
    """A setting of the run: the config's own, else the first file it names that sets it."""
    for source in (config, *config.attached.values()):
        item = getattr(source, name)
        if item is not None:
            return item.value
    return None


def _sharded(stage: int, fsdp: str | None) -> int:
    """The ZeRO stage the sharding amounts to (FSDP full_shard is 3, shard_grad_op 2)."""
    if fsdp is not None:
        kind = fsdp.lower()
        if "shard_grad_op" in kind or kind.strip() in ("2", "grad"):
            return 2
        if "no_shard" in kind:
            return 0
        return 3
    return stage


def activation_bytes(config: TrainingConfig, plan: PrecisionPlan, dims: Dims) -> tuple[float | None, str]:
    if config.seq_len is None:
        return None, "activations not counted: the config gives no sequence length"
    s = config.seq_len.value
    b = config.batch_size.value if config.batch_size is not None else 1
    h, layers, heads = dims.hidden_size, dims.num_hidden_layers, dims.num_attention_heads
    attention = str(plan.attention.value if plan.attention is not None else "default").lower()
    scores = 5 * heads * s / h if attention == "eager" else 0.0
    width = 2.0 if plan.autocast_dtype.value or plan.param_dtype.value in ("float16", "bfloat16") else 4.0
    full_layer = s * b * h * (34 + scores) * (width / 2)
    checkpointing = bool(plan.gradient_checkpointing.value) if plan.gradient_checkpointing else False
    # checkpointing keeps each layer's 16-bit input and recomputes one layer at a time
    layers_bytes = layers * 2 * s * b * h + full_layer if checkpointing else layers * full_layer
    logits = b * s * dims.vocab_size * 8.0
    how = f"micro-batch {b} × sequence {s}, {'with' if checkpointing else 'without'} gradient checkpointing"
    return layers_bytes + logits, how


def estimate(config: TrainingConfig, plan: PrecisionPlan, dims: Dims, devices: int) -> Estimate:
    devices = max(devices, 1)
    out = Estimate(devices)
    n = dims.params
    adapters = trains_adapters(config) or quantized_bits(config, plan) is not None
    counted = config.trainable_params  # --deep: the adapters PEFT adds, counted on the meta device
    trainable = (counted.value if counted is not None else lora_params(dims)) if adapters else n
    out.trainable = trainable
    param = _dtype_bytes(plan.param_dtype.value)
    bits = quantized_bits(config, plan)
    if bits is not None:
        base = NF4_BYTES if bits == 4 else INT8_BYTES
    elif adapters:  # the frozen base stays as loaded
        base = _dtype_bytes(plan.load_dtype.value if plan.load_dtype.value != "auto" else None)
    else:  # a full fine-tune trains the weights in the parameter dtype (DeepSpeed casts them)
        base = param
    weights = n * base + (trainable * param if adapters else 0.0)
    master_dtype = plan.master_weights.value if plan.master_weights is not None else None
    master = trainable * 4.0 if master_dtype else 0.0
    accumulate = plan.grad_accum_dtype.value if plan.grad_accum_dtype is not None else None
    grads = trainable * max(_dtype_bytes(plan.grad_dtype.value), _dtype_bytes(accumulate, plan.grad_dtype.value))
    if config.optimizer_in_backward is not None and config.optimizer_in_backward.value:
        grads = 0.0  # each gradient is freed as soon as its parameter has stepped
        out.notes.append("optimizer in the backward pass: gradients freed as they are applied")
    per_param, how = optimizer_bytes(
        config.optimizer.value if config.optimizer else None, plan.optimizer_state_dtype.value, dims
    )
    optimizer = trainable * per_param
    if "paged" in str(config.optimizer.value if config.optimizer else "").lower():
        optimizer = 0.0  # CUDA unified memory: the states page out to the CPU under pressure
        how += ", paged (states page out to CPU memory when the GPU is full)"
    out.notes.append(how)
    zero, fsdp, sharding = (
        run_value(config, "zero_stage"),
        run_value(config, "fsdp"),
        run_value(config, "fsdp_sharding"),
    )
    stage = _sharded(
        int(zero) if zero is not None else 0,
        (str(sharding) if sharding else "full_shard") if fsdp else None,
    )
    if stage >= 1:
        optimizer, master = optimizer / devices, master / devices
    if stage >= 2:
        grads /= devices
    if stage >= 3:
        weights /= devices
    offload_opt = run_value(config, "offload_optimizer") or "none"
    offload_par = run_value(config, "offload_param") or "none"
    if stage and offload_opt not in ("none", ""):
        optimizer = master = 0.0
        out.notes.append(f"optimizer states offloaded to {offload_opt}")
    if stage >= 3 and offload_par not in ("none", ""):
        weights = 0.0
        out.notes.append(f"parameters offloaded to {offload_par}")
    if stage:
        out.notes.append(f"sharded ZeRO-{stage}-style over {devices} device{'s' if devices > 1 else ''}")
    if plan.autocast_dtype.value in ("float16", "bfloat16") and base == 4.0:
        # autocast casts each float32 weight to 16 bit in the forward pass and the matmuls
        # save those copies for the backward pass: 2 B a parameter at the peak
        copies = n * 2.0 / (devices if stage >= 3 else 1)
        checkpointing = plan.gradient_checkpointing is not None and bool(plan.gradient_checkpointing.value)
        if checkpointing:  # recomputation keeps one layer's copies at a time
            copies /= max(dims.num_hidden_layers, 1)
        weights += copies
        out.notes.append(f"{plan.autocast_dtype.value} autocast copies of the float32 weights")
    out.weights, out.master, out.gradients, out.optimizer = weights, master, grads, optimizer
    out.activations, how = activation_bytes(config, plan, dims)
    out.notes.append(how)
    return out
