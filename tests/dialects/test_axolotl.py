"""axolotl: recognition, key mapping, and how bf16/fp16/bfloat16/float16 resolve."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from helpers import Case, check_case, plan_for, read_as
from precheck import dialects
from precheck.config import TrainingConfig
from precheck.resolve.plan import PrecisionPlan
from precheck.sources import parse

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
AXOLOTL_CORPUS = sorted((CORPUS / "axolotl").glob("*.y*ml")) if CORPUS.is_dir() else []


def read(text: str, env: dict[str, str] | None = None) -> TrainingConfig:
    return read_as("axolotl", text, env)


def plan_of(text: str, gpus: list[str] | None = None, versions: dict[str, str] | None = None) -> PrecisionPlan:
    return plan_for(read(text), gpus, versions)


BASE = """
base_model: meta-llama/Llama-3.2-1B
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
sequence_len: 2048
micro_batch_size: 2
gradient_accumulation_steps: 4
"""


def with_base(extra: str) -> str:
    return textwrap.dedent(BASE).lstrip("\n") + textwrap.dedent(extra).lstrip("\n")


# -- recognition ------------------------------------------------------------------------


@pytest.mark.skipif(not AXOLOTL_CORPUS, reason="../shared/corpus is not beside this checkout")
@pytest.mark.parametrize("path", AXOLOTL_CORPUS, ids=lambda p: p.name.removeprefix("axolotl-ai-cloud__axolotl__"))
def test_every_corpus_file_is_read_as_axolotl(path: Path) -> None:
    doc = parse(str(path), path.read_text(encoding="utf-8"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "axolotl"
    config = dialect.read(doc, {})
    assert config.model is None or "${" not in str(config.model.value)
    plan = plan_for(config, ["8xH100"])
    assert plan.load_dtype.value in ("bfloat16", "float16", "float32")


def test_a_realistic_qlora_config_is_axolotl_and_hf_files_are_not() -> None:
    assert read(with_base("adapter: qlora\nload_in_4bit: true\nbf16: auto\n")).framework == "axolotl"
    hf = parse("t.yaml", "output_dir: o\nlearning_rate: 1e-5\nbf16: true\nper_device_train_batch_size: 2\n", "yaml")
    detected = dialects.detect(hf)
    assert detected is not None and detected.name != "axolotl"
    # base_model alone (another tool's key) is not enough
    assert dialects.detect(parse("t.yaml", "base_model: x\nfoo: 1\n", "yaml")) is None


# -- mapping ----------------------------------------------------------------------------


def test_switches_sizes_and_lines() -> None:
    config = read(
        with_base(
            """
            adapter: qlora
            load_in_4bit: true
            bnb_config_kwargs:
              bnb_4bit_compute_dtype: float32
            bf16: auto
            fp16: false
            bfloat16: true
            tf32: true
            optimizer: paged_adamw_8bit
            max_grad_norm: 0.5
            gradient_checkpointing: offload
            flash_attention: true
            """
        )
    )
    assert config.model is not None and config.model.value == "meta-llama/Llama-3.2-1B"
    assert config.bf16 is None and config.keys["bf16"].value == "auto"  # "auto" is resolved later
    assert config.fp16 is not None and config.fp16.value is False and config.fp16.origin.line == 13
    assert config.pure_bf16 is not None and config.pure_bf16.origin.key == "bfloat16"
    assert config.train_type is not None and config.train_type.value == "qlora"
    assert config.quantization_bits is not None and config.quantization_bits.value == 4
    assert config.quantization_bits.origin.line == 9
    assert config.quant_compute_dtype is not None and config.quant_compute_dtype.value == "float32"
    assert config.optimizer is not None and config.optimizer.value == "paged_adamw_8bit"
    assert config.max_grad_norm is not None and config.max_grad_norm.value == 0.5
    assert config.gradient_checkpointing is not None and config.gradient_checkpointing.value is True
    attention = config.attn_implementation
    assert attention is not None and attention.value == "flash_attention_2"
    # the legacy boolean is located but carries no key: a fix must not write "sdpa" into it
    assert attention.origin.line == 19 and attention.origin.key is None
    assert (config.batch_size.value, config.grad_accum_steps.value) == (2, 4)  # type: ignore[union-attr]
    assert config.seq_len is None  # a cap only: rows are padded to the longest in the batch


def test_sequence_length_when_packed_and_split_over_context_parallel_ranks() -> None:
    packed = read(with_base("sample_packing: true\n"))
    assert packed.seq_len is not None and packed.seq_len.value == 2048 and packed.seq_len.origin.line == 5
    split = read(with_base("sample_packing: true\ncontext_parallel_size: 4\n"))
    assert split.seq_len is not None and split.seq_len.value == 512


def test_accumulation_from_batch_size() -> None:
    config = read(
        "base_model: m\ndatasets: []\nsequence_len: 512\nmicro_batch_size: 4\nbatch_size: 32\nnum_epochs: 1\n"
    )
    assert config.grad_accum_steps is not None and config.grad_accum_steps.value == 8
    assert config.grad_accum_steps.origin.line == 5


def test_deepspeed_reference_is_recorded() -> None:
    config = read(with_base("deepspeed: deepspeed_configs/zero2.json\n"))
    ref = config.references["deepspeed"]
    assert ref.value == "deepspeed_configs/zero2.json" and ref.origin.line == 8


def test_fsdp_block_and_legacy_list() -> None:
    config = read(
        with_base(
            """
            fsdp:
              - full_shard
              - auto_wrap
            fsdp_config:
              fsdp_offload_params: true
              fsdp_activation_checkpointing: true
            """
        )
    )
    assert config.fsdp is not None and config.fsdp.value and config.fsdp.origin.line == 11
    assert config.fsdp_sharding is not None and config.fsdp_sharding.value == "full_shard"
    assert config.offload_param is not None and config.offload_param.value == "cpu"
    assert config.offload_optimizer is not None and config.offload_optimizer.value == "cpu"
    assert config.gradient_checkpointing is not None and config.gradient_checkpointing.origin.line == 13


def test_notes_torch_dtype_typos_and_no_quoted_boolean_noise() -> None:
    config = read(with_base('torch_dtype: bfloat16\ngradient_acumulation_steps: 2\nfp16: "true"\n'))
    notes = {(n.kind, n.key) for n in config.notes}
    assert ("unknown-key", "torch_dtype") in notes
    assert ("unknown-key", "gradient_acumulation_steps") in notes
    assert not any(kind == "quoted-boolean" for kind, _ in notes)  # pydantic parses "true"
    assert config.torch_dtype is None  # axolotl drops the key
    assert config.fp16 is not None and config.fp16.value is True


def test_template_placeholders_are_not_values() -> None:
    config = read("base_model: ${BASE_MODEL}\nadapter: ${ADAPTER}\nbf16: ${BF16}\nmicro_batch_size: 1\nlora_r: 8\n")
    assert config.model is None and config.train_type is None and config.bf16 is None


# -- bf16: auto -------------------------------------------------------------------------


@pytest.mark.parametrize("bf16", ["", "bf16: auto\n"], ids=["default", "explicit"])
def test_bf16_auto_follows_the_gpu_and_torch(bf16: str) -> None:
    text = with_base(bf16)
    a100 = plan_of(text, ["A100"], {"torch": "2.2.2"})
    assert (a100.load_dtype.value, a100.autocast_dtype.value, a100.grad_scaler.value) == ("bfloat16", "bfloat16", False)
    assert a100.param_dtype.value == "bfloat16"  # full fine-tune trains the bf16 weights
    old = plan_of(text, ["V100"], {"torch": "2.2.2"})
    assert (old.load_dtype.value, old.autocast_dtype.value, old.grad_scaler.value) == ("float16", "float16", True)
    assert "fp16 on" in str(old.autocast_dtype.origin)
    new = plan_of(text, ["V100"], {"torch": "2.13.0"})
    assert (new.load_dtype.value, new.autocast_dtype.value) == ("bfloat16", "bfloat16")
    assert "emulation" in str(new.load_dtype.origin)
    if bf16:
        assert new.autocast_dtype.origin.line == 8


def test_bf16_auto_on_a_v100_is_reported_when_torch_counts_emulation() -> None:
    case = Case("bf16-auto-v100", "PC101", with_base("bf16: auto\n"), ["V100"], {(8, 1)}, versions={"torch": "2.13.0"})
    check_case(case)
    check_case(
        Case("bf16-auto-v100-old-torch", "PC101", with_base("bf16: auto\n"), ["V100"], versions={"torch": "2.2.2"})
    )


def test_fp16_true_keeps_auto_off_from_0_10_but_lost_to_it_in_0_9() -> None:
    text = with_base("fp16: true\n")
    new = plan_of(text, ["A100"], {"axolotl": "0.12.0"})
    assert new.autocast_dtype.value == "float16" and not new.overrides
    old = plan_of(text, ["A100"], {"axolotl": "0.9.0"})
    assert old.autocast_dtype.value == "bfloat16"
    override = old.override_of("fp16")
    assert override is not None and override.loser.origin.line == 8


def test_bf16_and_fp16_both_true_trains_bf16() -> None:
    plan = plan_of(with_base("bf16: true\nfp16: true\n"), ["H100"])
    assert plan.autocast_dtype.value == "bfloat16" and not plan.grad_scaler.value
    override = plan.override_of("fp16")
    assert override is not None and override.winner.value is False and override.loser.origin.line == 9


# -- pure half precision ----------------------------------------------------------------


def test_float16_is_fp16_weights_without_autocast() -> None:
    plan = plan_of(with_base("float16: true\nbf16: false\nfp16: false\n"), ["V100"])
    assert (plan.load_dtype.value, plan.param_dtype.value) == ("float16", "float16")
    assert plan.autocast_dtype.value is None and not plan.grad_scaler.value
    assert plan.load_dtype.origin.key == "float16"


def test_float16_keeps_auto_from_turning_fp16_on_from_0_10() -> None:
    text = with_base("float16: true\n")
    new = plan_of(text, ["V100"], {"torch": "2.2.2", "axolotl": "0.19.0"})
    assert new.autocast_dtype.value is None and new.load_dtype.value == "float16"
    old = plan_of(text, ["V100"], {"torch": "2.2.2", "axolotl": "0.9.0"})
    assert old.autocast_dtype.value == "float16" and old.grad_scaler.value


def test_bfloat16_autocasts_from_0_10_only() -> None:
    text = with_base("bfloat16: true\nbf16: false\n")
    new = plan_of(text, ["A100"], {"axolotl": "0.19.0"})
    assert (new.load_dtype.value, new.param_dtype.value, new.autocast_dtype.value) == ("bfloat16",) * 3
    assert new.autocast_dtype.origin.key == "bfloat16"
    old = plan_of(text, ["A100"], {"axolotl": "0.9.0"})
    assert old.load_dtype.value == "bfloat16" and old.autocast_dtype.value is None


def test_full_fp16_fine_tune_is_the_grad_scaler_error() -> None:
    text = with_base("fp16: true\n")
    check_case(Case("fp16-fft", "PC401", text, ["V100"], {(8, 1)}))
    check_case(Case("fp16-lora", "PC401", text + "adapter: lora\n", ["V100"]))


# -- adapters and quantisation ----------------------------------------------------------


def test_qlora_compute_dtype_follows_the_load_dtype() -> None:
    text = with_base("adapter: qlora\nload_in_4bit: true\n")
    a100 = plan_of(text, ["A100"])
    assert a100.quantization is not None and a100.quantization.value == "4-bit, compute bfloat16"
    assert a100.param_dtype.value == "float32"
    v100 = plan_of(text, ["V100"], {"torch": "2.2.2"})
    assert v100.quantization is not None and v100.quantization.value == "4-bit, compute float16"
    kwargs = plan_of(text + "bnb_config_kwargs:\n  bnb_4bit_compute_dtype: float32\n", ["A100"])
    assert kwargs.quantization is not None and kwargs.quantization.value == "4-bit, compute float32"
    assert kwargs.quantization.origin.line == 11


def test_load_in_8bit_loads_fp16_without_bf16() -> None:
    plan = plan_of(with_base("adapter: lora\nload_in_8bit: true\nbf16: false\n"), ["A100"])
    assert plan.load_dtype.value == "float16" and plan.autocast_dtype.value is None
    assert plan.quantization is not None and plan.quantization.value.startswith("8-bit")


def test_adapters_follow_peft_autocast_adapter_dtype() -> None:
    text = with_base("adapter: lora\nbf16: true\npeft_autocast_adapter_dtype: false\n")
    assert plan_of(text, ["A100"]).param_dtype.value == "bfloat16"
    assert plan_of(text, ["A100"], {"axolotl": "0.12.0"}).param_dtype.value == "float32"


# -- distribution, tf32, fp8 ------------------------------------------------------------


def test_fsdp1_upcasts_full_fine_tune_weights_fsdp2_does_not() -> None:
    fsdp1 = plan_of(with_base("bf16: true\nfsdp_config:\n  offload_params: false\n"), ["8xA100"])
    assert fsdp1.param_dtype.value == "float32" and fsdp1.load_dtype.value == "bfloat16"
    assert fsdp1.reduce_dtype is not None and fsdp1.reduce_dtype.value == "bfloat16"
    fsdp2 = plan_of(with_base("bf16: true\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n"), ["8xA100"])
    assert fsdp2.param_dtype.value == "bfloat16"


def test_tf32_auto_by_gpu_and_version() -> None:
    assert plan_of(with_base(""), ["A100"]).tf32.value is True  # type: ignore[union-attr]
    assert plan_of(with_base(""), ["V100"]).tf32.value is False  # type: ignore[union-attr]
    assert plan_of(with_base(""), ["A100"], {"axolotl": "0.15.0"}).tf32.value is False  # type: ignore[union-attr]
    explicit = plan_of(with_base("tf32: true\n"), ["V100"])
    assert explicit.tf32 is not None and explicit.tf32.value and explicit.tf32.origin.line == 8


def test_fp8_is_torchao_with_bf16_autocast() -> None:
    plan = plan_of(with_base("fp8: true\n"), ["H100"])
    assert plan.fp8 is not None and plan.fp8.value == "torchao" and plan.autocast_dtype.value == "bfloat16"
    check_case(Case("fp8-a100", "PC104", with_base("fp8: true\n"), ["A100"], {(8, 1)}))


def test_devices_are_all() -> None:
    assert plan_of(with_base(""), ["2xA100"]).devices.value == "all"
