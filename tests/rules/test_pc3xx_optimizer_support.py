import pytest

from helpers import Case, check_case, run_case
from precheck.rules.optimizer_support import is_fp8_optimizer, is_torch_adam

HF = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"
FP16_WEIGHTS = HF + "torch_dtype: float16\n"
LLAMA2 = "model_name_or_path: meta-llama/Llama-2-7b-hf\noutput_dir: out\nlearning_rate: 2.0e-5\n"
OFFLOAD = (
    HF + "bf16: true\noptim: adamw_bnb_8bit\nweight_decay: 0.1\n"
    "deepspeed:\n  bf16:\n    enabled: auto\n  zero_optimization:\n    stage: 2\n"
    "    offload_optimizer:\n      device: cpu\n"
)
AXOLOTL_FP8 = (
    "base_model: meta-llama/Llama-3.2-1B\ndatasets:\n  - path: x\nmicro_batch_size: 1\nbf16: true\n"
    "adapter: lora\noptimizer: ao_adamw_fp8\n"
)
TORCHTUNE_FP8 = (
    "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n  lora_attn_modules: [q_proj, v_proj]\n"
    "dtype: bf16\noptimizer:\n  _component_: torchao.optim.AdamWFp8\n  lr: 2e-5\nbatch_size: 1\ndevice: cuda\n"
)
SIMPLETUNER = """
{
    "--model_family": "flux",
    "--mixed_precision": "no",
    "--optimizer": "adamw_bf16",
    "--gradient_checkpointing": "true"
}
"""

CASES = [
    # PC303: torch Adam over fp16 weights and fp16 moments
    Case("full fine-tune of fp16 weights with the default AdamW", "PC303", FP16_WEIGHTS, expect={(4, 1)}),
    Case(
        "fixed: fp32 weights",
        "PC303",
        FP16_WEIGHTS.replace("float16", "float32") + "fp16: true\n",
    ),
    Case("torch.optim.AdamW named explicitly", "PC303", FP16_WEIGHTS + "optim: adamw_torch_fused\n", expect={(4, 1)}),
    Case(
        "transformers 5 loads Llama 2's own float16",
        "PC303",
        LLAMA2,
        expect={(1, 1)},
        versions={"transformers": "5.0.0"},
    ),
    Case("transformers 4 loads float32", "PC303", LLAMA2, versions={"transformers": "4.57.1"}),
    Case(
        "Lightning 16-true with torch.optim.AdamW",
        "PC303",
        "trainer:\n  precision: 16-true\n  devices: 1\n  max_epochs: 1\nmodel:\n  class_path: m.M\n"
        "optimizer:\n  class_path: torch.optim.AdamW\n  init_args:\n    lr: 1.0e-5\n",
        ["V100"],
        {(2, 3)},
    ),
    Case(
        "Lightning 16-mixed keeps fp32 weights",
        "PC303",
        "trainer:\n  precision: 16-mixed\n  devices: 1\n  max_epochs: 1\nmodel:\n  class_path: m.M\n"
        "optimizer:\n  class_path: torch.optim.AdamW\n",
        ["V100"],
    ),
    Case("bitsandbytes 8-bit AdamW computes in fp32", "PC303", FP16_WEIGHTS + "optim: adamw_bnb_8bit\n"),
    Case("LoRA adapters are fp32", "PC303", FP16_WEIGHTS + "use_peft: true\n"),
    Case("a script's own LoRA switch", "PC303", FP16_WEIGHTS + "use_lora: true\n"),
    Case("with a GradScaler the run stops earlier (PC401)", "PC303", FP16_WEIGHTS + "fp16: true\n"),
    # PC304: ZeRO optimizer offload swaps the Trainer's optimizer
    Case("8-bit AdamW with weight decay under optimizer offload", "PC304", OFFLOAD, expect={(5, 1)}),
    Case(
        "fixed: torch AdamW becomes DeepSpeedCPUAdam in AdamW mode",
        "PC304",
        OFFLOAD.replace("adamw_bnb_8bit", "adamw_torch"),
    ),
    Case(
        "8-bit AdamW without weight decay: Adam and AdamW agree",
        "PC304",
        OFFLOAD.replace("weight_decay: 0.1\n", ""),
    ),
    Case("Adafactor becomes Adam", "PC304", OFFLOAD.replace("adamw_bnb_8bit", "adafactor"), expect={(5, 1)}),
    Case("Adagrad has a DeepSpeed CPU twin", "PC304", OFFLOAD.replace("adamw_bnb_8bit", "adagrad")),
    Case(
        "a DeepSpeed optimizer section",
        "PC304",
        OFFLOAD + "  optimizer:\n    type: AdamW\n    params:\n      lr: auto\n",
    ),
    Case(
        "zero_force_ds_cpu_optimizer: false keeps the client optimizer",
        "PC304",
        OFFLOAD + "  zero_force_ds_cpu_optimizer: false\n",
    ),
    Case("no offload", "PC304", OFFLOAD.replace("      device: cpu\n", "      device: none\n")),
    # PC305: torchao FP8 optimizers below sm_89
    Case("axolotl ao_adamw_fp8 on an A100", "PC305", AXOLOTL_FP8, ["A100"], {(7, 1)}),
    Case("fixed: 8-bit optimizer", "PC305", AXOLOTL_FP8.replace("ao_adamw_fp8", "adamw_torch_8bit"), ["A100"]),
    Case("on an H100", "PC305", AXOLOTL_FP8, ["H100"]),
    Case("torchtune AdamWFp8 component on an RTX 3090", "PC305", TORCHTUNE_FP8, ["RTX 3090"], {(6, 3)}),
    Case(
        "SimpleTuner ao-adamwfp8 on an L4 (sm_89)",
        "PC305",
        SIMPLETUNER.replace("adamw_bf16", "ao-adamwfp8").replace('"no"', '"bf16"'),
        ["L4"],
        fmt="json",
    ),
    # PC306: SimpleTuner adamw_bf16 over non-bf16 weights
    Case("adamw_bf16 with mixed_precision no", "PC306", SIMPLETUNER, ["RTX 4090"], {(4, 5)}, fmt="json"),
    Case("fixed: optimi-adamw", "PC306", SIMPLETUNER.replace("adamw_bf16", "optimi-adamw"), ["RTX 4090"], fmt="json"),
    Case("bf16 weights", "PC306", SIMPLETUNER.replace('"no"', '"bf16"'), ["RTX 4090"], fmt="json"),
    Case(
        "quantised base: SimpleTuner switches to optimi-adamw itself",
        "PC306",
        SIMPLETUNER.replace('"--optimizer"', '"--base_model_precision": "int8-quanto",\n    "--optimizer"'),
        ["RTX 4090"],
        fmt="json",
    ),
]


def _case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


def test_names() -> None:
    assert is_torch_adam("torch.optim.AdamW") and is_torch_adam("adamw_torch_fused") and is_torch_adam("AdamW")
    assert not is_torch_adam("bitsandbytes.optim.PagedAdamW8bit") and not is_torch_adam("adamw_bnb_8bit")
    assert is_fp8_optimizer("ao_adamw_fp8") and is_fp8_optimizer("torchao.optim.AdamFp8")
    assert not is_fp8_optimizer("adamw_torch_8bit")


def test_offload_message_says_what_changes() -> None:
    message = run_case(_case("8-bit AdamW with weight decay under optimizer offload"))[0].message
    assert "DeepSpeedCPUAdam(adamw_mode=False)" in message and "L2" in message
    message = run_case(_case("Adafactor becomes Adam"))[0].message
    assert "trains with Adam, not `adafactor`" in message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)
