"""PC8xx and the estimator behind them, against published figures."""

import json
from dataclasses import replace

import pytest

from helpers import Case, check_case
from precheck.config import TrainingConfig
from precheck.memory import GIB, Dims, estimate
from precheck.provenance import Origin, Sourced
from precheck.resolve.plan import PrecisionPlan

#: LLaMA-Factory examples/train_lora/qwen3_lora_sft.yaml without `finetuning_type` (its default is
#: "lora", hparams/finetuning_args.py:464@0.9.5), on an 8B model
LLAMA_FACTORY_DEFAULT_METHOD = """
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
trust_remote_code: true
stage: sft
do_train: true
lora_rank: 8
lora_target: all
dataset: identity,alpaca_en_demo
template: qwen3_nothink
cutoff_len: 2048
output_dir: saves/qwen3-4b/lora/sft
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
learning_rate: 1.0e-4
bf16: true
"""

#: h2o-llmstudio examples/example_oasst2.yaml without the keys at their defaults (backbone_dtype int4,
#: gradient_checkpointing true, lora true: python_configs/text_causal_language_modeling_config.py@v1.14.9)
H2O_DEFAULTS = """
environment:
    mixed_precision: true
    mixed_precision_dtype: bfloat16
    gpus:
    - '0'
experiment_name: example_oasst2
llm_backbone: meta-llama/Meta-Llama-3-8B
problem_type: text_causal_language_modeling
tokenizer:
    max_length: 512
training:
    batch_size: 2
    lora_r: 4
    optimizer: AdamW
"""

FULL_7B = """
model_name_or_path: meta-llama/Llama-2-7b-hf
output_dir: out
learning_rate: 1.0e-5
per_device_train_batch_size: 1
max_seq_length: 512
"""
ZERO3 = {
    "train_micro_batch_size_per_gpu": "auto",
    "bf16": {"enabled": "auto"},
    "zero_optimization": {"stage": 3},
}

CASES = [
    # frameworks whose default method is LoRA: the estimate counts adapters (the lora_by_default trait)
    Case("LLaMA-Factory's default finetuning_type is lora", "PC801", LLAMA_FACTORY_DEFAULT_METHOD, ["1xRTX 4090"]),
    Case(
        "LLaMA-Factory full fine-tune stated",
        "PC801",
        LLAMA_FACTORY_DEFAULT_METHOD + "finetuning_type: full\n",
        ["1xRTX 4090"],
        {(11, 1)},
    ),
    Case("H2O LLM Studio defaults: int4 backbone, LoRA, checkpointing", "PC801", H2O_DEFAULTS, ["1xRTX 4090"]),
    Case("H2O LLM Studio defaults near no limit", "PC802", H2O_DEFAULTS, ["1xRTX 4090"]),
    Case(
        "7B full fine-tune, fp32 AdamW, one 24 GB card",
        "PC801",
        FULL_7B,
        ["RTX 4090"],
        {(4, 1)},
        versions={"transformers": "4.46.1"},
    ),
    Case(
        "fixed: the same run with ZeRO-3 on 8×A100-80GB",
        "PC801",
        FULL_7B + "bf16: true\ndeepspeed: ds_zero3.json\n",
        ["8xA100-80GB"],
        versions={"transformers": "4.46.1"},
        files={"ds_zero3.json": json.dumps(ZERO3)},
    ),
    Case(
        "7B LoRA in bf16, batch 7 of 2048 tokens, one 80 GB card: near the limit",
        "PC802",
        "model_name_or_path: meta-llama/Llama-2-7b-hf\noutput_dir: o\nlearning_rate: 1\n"
        "torch_dtype: bfloat16\nuse_peft: true\nbf16: true\nper_device_train_batch_size: 7\nmax_seq_length: 2048\n"
        "gradient_checkpointing: false\n",  # TRL's configs (use_peft) turn it on by default from 0.22
        ["A100-80GB"],
        {(7, 1)},
    ),
    Case(
        "fixed: gradient checkpointing",
        "PC802",
        "model_name_or_path: meta-llama/Llama-2-7b-hf\noutput_dir: o\nlearning_rate: 1\n"
        "torch_dtype: bfloat16\nuse_peft: true\nbf16: true\nper_device_train_batch_size: 7\nmax_seq_length: 2048\n"
        "gradient_checkpointing: true\n",
        ["A100-80GB"],
    ),
    Case(
        "unknown model: no estimate", "PC801", "model_name_or_path: my/model\noutput_dir: o\nlearning_rate: 1\n", ["T4"]
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


def _plan(dtype: str, master: str | None) -> PrecisionPlan:
    d = Origin.default("test")
    return PrecisionPlan(
        framework="deepspeed",
        load_dtype=Sourced(dtype, d),
        param_dtype=Sourced(dtype, d),
        autocast_dtype=Sourced(None, d),
        grad_dtype=Sourced(dtype, d),
        optimizer_state_dtype=Sourced("float32", d),
        loss_scaling=Sourced("dynamic", d),
        grad_scaler=Sourced(False, d),
        devices=Sourced("all", d),
        master_weights=Sourced(master, d),
    )


@pytest.mark.parametrize(
    ("stage", "published_gb"),
    [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_model_states_match_the_zero_paper(stage: int, published_gb: float) -> None:
    """ZeRO (Rajbhandari et al. 2020), Figure 1: Ψ = 7.5B, Nd = 64, mixed-precision Adam (K = 12)."""
    dims = Dims(7_500_000_000, 4096, 32, 11008, 32, 32000, "ZeRO paper")
    config = TrainingConfig(dialect="deepspeed", framework="deepspeed", path="ds.json")
    if stage:
        config.zero_stage = Sourced(stage, Origin.default("test"))
    est = estimate(config, _plan("float16", "float32"), dims, 64)
    states = est.weights + est.master + est.gradients + est.optimizer
    assert states / 1e9 == pytest.approx(published_gb, abs=0.05)


def test_full_fine_tune_in_fp32_is_16_bytes_a_parameter() -> None:
    """HF's "Model training anatomy": AdamW in fp32 keeps 4 (weights) + 4 (gradients) + 8 (states) B a parameter."""
    dims = Dims(1_000_000_000, 2048, 22, 5632, 32, 32000, "test")
    config = TrainingConfig(dialect="hf-trainer", framework="transformers", path="c.yaml")
    est = estimate(config, _plan("float32", None), dims, 1)
    assert est.weights + est.gradients + est.optimizer == pytest.approx(16e9)
    assert est.activations is None and est.total == pytest.approx(16e9 + GIB)


def test_optimizer_in_backward_frees_gradients_and_paged_states_are_not_resident() -> None:
    dims = Dims(1_000_000_000, 2048, 22, 5632, 32, 32000, "test")
    config = TrainingConfig(dialect="torchtune", framework="torchtune", path="c.yaml")
    config.optimizer_in_backward = Sourced(True, Origin.default("test"))
    est = estimate(config, _plan("bfloat16", None), dims, 1)
    assert est.gradients == 0 and est.optimizer == pytest.approx(8e9)
    config.optimizer = Sourced("bitsandbytes.optim.PagedAdamW", Origin.default("test"))
    assert estimate(config, _plan("bfloat16", None), dims, 1).optimizer == 0


def test_mixed_precision_adamw_is_18_bytes_a_parameter() -> None:
    """HF "Model training anatomy": mixed precision keeps fp32 weights plus 16-bit copies (6 B),
    fp32 gradients (4 B) and AdamW's two fp32 states (8 B)."""
    dims = Dims(1_000_000_000, 2048, 22, 5632, 32, 32000, "test")
    config = TrainingConfig(dialect="hf-trainer", framework="transformers", path="c.yaml")
    plan = replace(_plan("float32", None), autocast_dtype=Sourced("float16", Origin.default("t")))
    est = estimate(config, plan, dims, 1)
    assert est.weights == pytest.approx(6e9)
    assert est.weights + est.gradients + est.optimizer == pytest.approx(18e9)


def test_autocast_copies_of_a_frozen_base_are_held_for_backward() -> None:
    """Autocast caches only casts of leaf tensors that require grad (aten autocast_mode.cpp
    ``cached_cast``), so a frozen fp32 base under LoRA is cast per op: yet each 16-bit copy is
    saved by the matmul for the input's gradient, which LoRA needs, and is held until the
    backward pass. The estimate's 2 B a parameter for those copies stays (issue 18 proposed
    dropping it; this measures it)."""
    torch = pytest.importorskip("torch")
    hidden, layers = 64, 4
    base = [torch.nn.Linear(hidden, hidden, bias=False).requires_grad_(False) for _ in range(layers)]
    lora = [(torch.nn.Parameter(torch.randn(hidden, 4)), torch.nn.Parameter(torch.zeros(4, hidden))) for _ in base]
    saved: list[tuple[torch.dtype, tuple[int, ...]]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved.append((t.dtype, tuple(t.shape)))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.randn(8, hidden)
        for layer, (a, b) in zip(base, lora, strict=True):
            y = layer(y) + (y @ a) @ b
    copies = [s for s in saved if s == (torch.bfloat16, (hidden, hidden))]
    assert len(copies) == layers - 1  # every layer after the first LoRA output needs its input's gradient
