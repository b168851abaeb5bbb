import json

import pytest

from helpers import Case, check_case, run_case

HF = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\nlearning_rate: 1.0e-5\n"
HF_BF16 = HF + "torch_dtype: bfloat16\nbf16: true\n"
AXOLOTL = (
    "base_model: meta-llama/Llama-3.2-1B\ndatasets:\n  - path: x\nmicro_batch_size: 1\nlearning_rate: 2e-5\n"
    "bf16: true\noptimizer: adamw_torch_fused\n"
)
TORCHTUNE = (
    "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: bf16\n"
    "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\nbatch_size: 1\ndevice: cuda\n"
)
LLAMA_FACTORY = (
    "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\ndo_train: true\n"
    "finetuning_type: full\npure_bf16: true\nlearning_rate: 1.0e-5\noutput_dir: out\n"
)
LITGPT_FULL = (
    "checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3-8B\nout_dir: out/full\nprecision: bf16-true\ndevices: 1\n"
    "train:\n  micro_batch_size: 1\n  global_batch_size: 8\n"
    "optimizer:\n  class_path: torch.optim.AdamW\n  init_args:\n    lr: 2.0e-05\n"
)
T5 = "model_name_or_path: google/flan-t5-xl\noutput_dir: out\nlearning_rate: 1.0e-4\nfp16: true\n"
T5_CONFIG = '{"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 512}'
GEMMA3 = "model_name_or_path: google/gemma-3-4b-it\noutput_dir: out\nlearning_rate: 1.0e-4\nfp16: true\n"
LAUNCHER = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\n"

CASES = [
    # PC207: accidental pure bf16
    Case("HF full fine-tune loaded in bf16 on one GPU", "PC207", HF_BF16, ["A100"], {(4, 1)}),
    Case(
        "fixed: fp32 master weights under bf16 autocast",
        "PC207",
        HF_BF16.replace("torch_dtype: bfloat16", "torch_dtype: float32"),
        ["A100"],
    ),
    Case("LoRA adapters are fp32", "PC207", HF_BF16 + "use_peft: true\n", ["A100"]),
    Case("a script's own LoRA switch", "PC207", HF_BF16 + "use_lora: true\nlora_rank: 64\n", ["A100"]),
    Case("multi-GPU Trainer runs are usually sharded by the launcher", "PC207", HF_BF16, ["8xA100"]),
    Case("on a V100 the bf16 itself is wrong: PC101", "PC207", HF_BF16, ["V100"]),
    Case("optimi's Kahan summation compensates", "PC207", HF_BF16 + "optim: stable_adamw\n", ["A100"]),
    Case(
        "a DeepSpeed ZeRO config keeps fp32 master weights",
        "PC207",
        HF_BF16 + "deepspeed:\n  bf16:\n    enabled: auto\n  zero_optimization:\n    stage: 2\n",
        ["A100"],
    ),
    Case("axolotl full fine-tune with bf16", "PC207", AXOLOTL, ["8xA100"], {(6, 1)}),
    Case(
        "fixed: axolotl with optimi's AdamW",
        "PC207",
        AXOLOTL.replace("adamw_torch_fused", "optimi_adamw"),
        ["8xA100"],
    ),
    Case("torchtune trains pure bf16 by design: PC208", "PC207", TORCHTUNE, ["A100"]),
    # PC208: deliberate pure bf16
    Case("torchtune full fine-tune in bf16", "PC208", TORCHTUNE, ["A100"], {(3, 1)}),
    Case(
        "fixed: torchao stochastic rounding",
        "PC208",
        TORCHTUNE.replace("  lr: 2e-5\n", "  lr: 2e-5\n  bf16_stochastic_round: True\n"),
        ["A100"],
    ),
    Case(
        "torchtune LoRA adapters",
        "PC208",
        TORCHTUNE.replace("llama3_2_1b", "lora_llama3_2_1b\n  lora_attn_modules: [q_proj, v_proj]"),
        ["A100"],
    ),
    Case("LLaMA-Factory pure_bf16", "PC208", LLAMA_FACTORY, ["A100"], {(5, 1)}),
    Case("LLaMA-Factory pure_bf16 with LoRA", "PC208", LLAMA_FACTORY.replace("full", "lora"), ["A100"]),
    Case("LitGPT full fine-tune with bf16-true", "PC208", LITGPT_FULL, ["A100"], {(3, 1)}),
    Case(
        "fixed: LitGPT bf16-mixed keeps fp32 weights",
        "PC208",
        LITGPT_FULL.replace("bf16-true", "bf16-mixed"),
        ["A100"],
    ),
    Case("accidental pure bf16 is PC207", "PC208", HF_BF16, ["A100"]),
    Case(
        "DeepSpeed keeps bf16 master weights on request",
        "PC208",
        json.dumps(
            {
                "train_micro_batch_size_per_gpu": 1,
                "bf16": {"enabled": True, "bf16_master_weights_and_grads": True, "bf16_optimizer_states": True},
                "zero_optimization": {"stage": 2},
            },
            indent=2,
        )
        + "\n",
        expect={(4, 5)},
        fmt="json",
    ),
    Case(
        "DeepSpeed ZeRO's fp32 partition",
        "PC208",
        json.dumps(
            {"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True}, "zero_optimization": {"stage": 2}},
            indent=2,
        )
        + "\n",
        fmt="json",
    ),
    # PC209: fp16 on T5 / Gemma 3
    Case("Flan-T5 in fp16", "PC209", T5, ["A100"], {(4, 1)}),
    Case("fixed: Flan-T5 in bf16", "PC209", T5.replace("fp16: true", "bf16: true"), ["A100"]),
    Case(
        "a local T5 checkpoint, recognised from its config.json",
        "PC209",
        T5.replace("google/flan-t5-xl", "local-model"),
        ["A100"],
        {(4, 1)},
        files={"local-model/config.json": T5_CONFIG},
    ),
    Case(
        "a local T5Gemma checkpoint is not T5",
        "PC209",
        T5.replace("google/flan-t5-xl", "local-model"),
        ["A100"],
        files={
            "local-model/config.json": '{"model_type": "t5gemma", "architectures": ["T5GemmaForConditionalGeneration"]}'
        },
    ),
    Case("CodeT5 is not matched by name", "PC209", T5.replace("google/flan-t5-xl", "Salesforce/codet5-base"), ["A100"]),
    Case("Gemma 3 in fp16 on a V100", "PC209", GEMMA3, ["V100"], {(4, 1)}),
    Case("Gemma 3 in fp32", "PC209", GEMMA3.replace("fp16: true", "fp16: false"), ["V100"]),
    Case(
        "Llama 3 in fp16 is PC202's (released in bf16)",
        "PC209",
        T5.replace("google/flan-t5-xl", "meta-llama/Llama-3.1-8B"),
        ["A100"],
    ),
    # PC210: launcher mixed precision against the flags
    Case(
        "bf16 flag beats the launcher's fp16",
        "PC210",
        LAUNCHER + "bf16: true\n",
        expect={(4, 1)},
        env={"ACCELERATE_MIXED_PRECISION": "fp16"},
    ),
    Case("fixed: both bf16", "PC210", LAUNCHER + "bf16: true\n", env={"ACCELERATE_MIXED_PRECISION": "bf16"}),
    Case(
        "explicit false flags lose to the launcher",
        "PC210",
        LAUNCHER + "fp16: false\nbf16: false\n",
        expect={(4, 1)},
        env={"ACCELERATE_MIXED_PRECISION": "bf16"},
    ),
    Case(
        "no flags: the launcher decides, nothing contradicts it",
        "PC210",
        LAUNCHER,
        env={"ACCELERATE_MIXED_PRECISION": "bf16"},
    ),
    Case("launcher says no", "PC210", LAUNCHER + "fp16: true\n", env={"ACCELERATE_MIXED_PRECISION": "no"}),
]


def _case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


def test_pure_bf16_names_the_learning_rate() -> None:
    message = run_case(_case("HF full fine-tune loaded in bf16 on one GPU"))[0].message
    assert "learning rate 1e-05" in message
    assert "above 0.0051" in message


def test_overflow_names_the_family_and_evidence() -> None:
    message = run_case(_case("Gemma 3 in fp16 on a V100"))[0].message
    assert "Gemma 3 model" in message and "#36822" in message


def test_fix_on_a_gpu_without_bf16_is_fp32() -> None:
    fix = run_case(_case("Gemma 3 in fp16 on a V100"))[0].fix
    assert fix is not None and not fix.edits and "fp32" in fix.description


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


UNSLOTH_GEMMA3 = """
from unsloth import FastLanguageModel
from trl import SFTTrainer, SFTConfig
model, tokenizer = FastLanguageModel.from_pretrained(model_name="google/gemma-3-4b-it", dtype=None, load_in_4bit=False)
model = FastLanguageModel.get_peft_model(model, r=16, use_gradient_checkpointing="unsloth")
args = SFTConfig(per_device_train_batch_size=8, fp16=True, output_dir="out")
trainer = SFTTrainer(model=model, tokenizer=tokenizer, train_dataset=None, args=args)
trainer.train()
"""


def test_unsloth_forces_fp32_for_gemma3_itself() -> None:
    """unsloth/models/loader.py:2999-3010@2026.10.9: UNSLOTH_FORCE_FLOAT32 for gemma3/gpt_oss under fp16."""
    assert run_case(Case("", "PC209", UNSLOTH_GEMMA3, ["T4"], fmt="py")) == []
    plain = (
        UNSLOTH_GEMMA3.replace("from unsloth import FastLanguageModel\n", "")
        .replace(
            'model, tokenizer = FastLanguageModel.from_pretrained(model_name="google/gemma-3-4b-it", dtype=None, '
            "load_in_4bit=False)",
            "from transformers import AutoModelForCausalLM\n"
            'model = AutoModelForCausalLM.from_pretrained("google/gemma-3-4b-it")',
        )
        .replace('model = FastLanguageModel.get_peft_model(model, r=16, use_gradient_checkpointing="unsloth")\n', "")
    )
    assert [f.rule for f in run_case(Case("", "PC209", plain, ["T4"], fmt="py"))] == ["PC209"]


def test_unsloth_gradient_checkpointing_is_checkpointing(tmp_path) -> None:
    """unsloth/models/llama.py:5081@2026.10.9: use_gradient_checkpointing="unsloth" checkpoints (and offloads)."""
    from helpers import hardware_for, write
    from precheck import dialects
    from precheck.sources import load_runs

    script = write(tmp_path, "train.py", UNSLOTH_GEMMA3)
    doc = load_runs(script, "train.py", hardware_for(["T4"], {}))[0]
    dialect = dialects.detect(doc)
    assert dialect is not None
    item = dialect.read(doc, {}).gradient_checkpointing
    assert item is not None and item.value is True and item.origin.line == 4
