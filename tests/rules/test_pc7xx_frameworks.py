"""PC7xx: framework-specific precision traps (torchtune, Lightning/LitGPT/NeMo, axolotl,
LLaMA-Factory, llama-cookbook)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import precheck
from helpers import Case, check_case, read_as, run_case

TORCHTUNE = """
# tune run --nproc_per_node 8 full_finetune_distributed --config llama3_1/8B_full
model:
  _component_: torchtune.models.llama3_1.llama3_1_8b
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/tokenizer.model
optimizer:
  _component_: torch.optim.AdamW
  lr: 2e-5
dtype: {dtype}
"""

#: torchtune 0.6.1 recipes/configs/generation.yaml, dtype fp16 (a T4 has no bf16)
TORCHTUNE_GENERATION = """
# To launch, run the following command from root torchtune directory:
#    tune run generate --config generation
output_dir: ./
model:
  _component_: torchtune.models.llama2.llama2_7b
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Llama-2-7b-hf/
  checkpoint_files: [pytorch_model-00001-of-00002.bin, pytorch_model-00002-of-00002.bin]
  output_dir: ${output_dir}
  model_type: LLAMA2
device: cuda
dtype: fp16
seed: 1234
tokenizer:
  _component_: torchtune.models.llama2.llama2_tokenizer
  path: /tmp/Llama-2-7b-hf/tokenizer.model
prompt:
  system: null
  user: "Tell me a joke."
max_new_tokens: 300
enable_kv_cache: True
quantizer: null
"""

#: torchtune 0.6.1 recipes/configs/llama3_3/70B_generation_distributed.yaml, dtype fp16
TORCHTUNE_GENERATION_LLAMA3 = """
# tune run --nproc_per_node 8 dev/generate_v2_distributed --config llama3_3/70B_generation_distributed
output_dir: ./
model:
  _component_: torchtune.models.llama3_3.llama3_3_70b
tensor_parallel_plan:
  _component_: torchtune.models.llama3.base_llama_tp_plan
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /tmp/Llama-3.3-70B-Instruct/original/tokenizer.model
  prompt_template: null
  max_seq_len: 8192
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Llama-3.3-70B-Instruct/
  checkpoint_files:
    filename_format: model-{}-of-{}.safetensors
    max_filename: "00030"
  recipe_checkpoint: null
  output_dir: ${output_dir}
  model_type: LLAMA3
device: cuda
dtype: fp16
seed: 1234
prompt:
  system: null
  user:
    text: Tell a joke.
max_new_tokens: 200
"""

TORCHTUNE_NESTED = """
model:
  _component_: torchtune.models.llama3_2.lora_llama3_2_1b
optimizer:
  _component_: torch.optim.AdamW
training:
  dtype: {dtype}
"""

TRAINER = """
trainer:
  accelerator: gpu
  devices: 8
  precision: {precision}
  max_epochs: 3
model:
  class_path: my.Module
"""

PLUGIN = """
trainer:
  accelerator: gpu
  plugins:
    - class_path: lightning.pytorch.plugins.precision.MixedPrecision
      init_args:
        precision: {precision}
        device: cuda
        scaler:
          class_path: torch.amp.GradScaler
model:
  class_path: my.Module
"""

FSDP_CLIP = """
trainer:
  accelerator: gpu
  strategy: {strategy}
  precision: bf16-mixed
  gradient_clip_val: {clip}
model:
  class_path: my.Module
"""

APEX = """
trainer:
  accelerator: gpu
  devices: 2
  precision: {precision}
  amp_backend: apex
  amp_level: O2
model:
  class_path: my.Module
"""

NEMO = """
trainer:
  devices: 8
  accelerator: gpu
  precision: {precision}
  gradient_clip_val: 1.0
model:
  megatron_amp_O2: False
  tensor_model_parallel_size: 1
  fsdp: {fsdp}
  fp8: {fp8}
"""

LITGPT = """
checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3-8B
out_dir: out/finetune/qlora-llama3-8b
precision: {precision}
quantize: {quantize}
devices: {devices}
lora_r: 32
train:
  global_batch_size: 16
  micro_batch_size: 1
  max_seq_length: 512
"""

LITGPT_NO_PRECISION = """
checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3-8B
out_dir: out/finetune/qlora-llama3-8b
quantize: bnb.nf4
devices: 1
lora_r: 32
train:
  global_batch_size: 16
  micro_batch_size: 1
"""

AXOLOTL = """
base_model: NousResearch/Meta-Llama-3-8B
micro_batch_size: 2
sequence_len: 2048
num_epochs: 1
"""

LLAMA_FACTORY = """
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
stage: sft
do_train: true
finetuning_type: full
dataset: alpaca_en_demo
template: llama3
"""

Z3 = json.dumps({"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}, indent=2) + "\n"
Z2 = json.dumps({"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}, indent=2) + "\n"

COOKBOOK = """
model_name: meta-llama/Llama-3.1-8B
enable_fsdp: true
use_peft: {peft}
batch_size_training: 4
use_fp16: {fp16}
pure_bf16: true
"""

#: excerpt of OpenRLHF examples/scripts/train_ppo_ray_hybrid_engine.sh (main), in fp16
OPENRLHF_PPO = (
    "python3 -m openrlhf.cli.train_ppo_ray \\\n"
    "   --vllm.num_engines 4 \\\n"
    "   --vllm.tensor_parallel_size 2 \\\n"
    "   --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \\\n"
    "   --ds.zero_stage 3 \\\n"
    "   --ds.param_dtype fp16\n"
)

CASES = [
    # PC701: torchtune refuses fp16
    Case("torchtune fp16 on A100", "PC701", TORCHTUNE.format(dtype="fp16"), ["A100"], {(10, 1)}),
    Case("torchtune fp16 on V100: fp32 instead", "PC701", TORCHTUNE.format(dtype="fp16"), ["V100"], {(10, 1)}),
    Case("torchtune fp16 under training:", "PC701", TORCHTUNE_NESTED.format(dtype="fp16"), expect={(6, 3)}),
    Case("fixed: torchtune bf16", "PC701", TORCHTUNE.format(dtype="bf16"), ["A100"]),
    Case("torchtune generation.yaml takes fp16 (generate.py)", "PC701", TORCHTUNE_GENERATION, ["T4"]),
    Case("torchtune fp32 is fine", "PC701", TORCHTUNE.format(dtype="fp32"), ["V100"]),
    # a generation config trains nothing: no fp16-on-bf16-model warning, no training-memory estimate
    Case("torchtune Llama 3 generation in fp16 trains nothing", "PC202", TORCHTUNE_GENERATION_LLAMA3, ["8xA100-80GB"]),
    Case("torchtune generation.yaml: no training memory on a V100", "PC801", TORCHTUNE_GENERATION, ["V100"]),
    # PC702: torchtune's own spellings
    Case("torchtune dtype bfloat16", "PC702", TORCHTUNE.format(dtype="bfloat16"), expect={(10, 1)}),
    Case("torchtune dtype float32", "PC702", TORCHTUNE.format(dtype="float32"), expect={(10, 1)}),
    Case(
        "torchtune dtype torch.bfloat16 nested",
        "PC702",
        TORCHTUNE_NESTED.format(dtype="torch.bfloat16"),
        expect={(6, 3)},
    ),
    Case("torchtune dtype auto: no edit", "PC702", TORCHTUNE.format(dtype="auto"), expect={(10, 1)}),
    Case("fixed: torchtune bf16 spelling", "PC702", TORCHTUNE.format(dtype="bf16")),
    Case("torchtune dtype null is float32", "PC702", TORCHTUNE.format(dtype="null")),
    # PC703: precision values Lightning refuses
    Case(
        "MixedPrecision plugin, bf16-mixed with a scaler",
        "PC703",
        PLUGIN.format(precision="bf16-mixed"),
        expect={(8, 9)},
    ),
    Case("fixed: MixedPrecision plugin, 16-mixed with a scaler", "PC703", PLUGIN.format(precision="16-mixed")),
    Case("lightning precision fp16", "PC703", TRAINER.format(precision="fp16"), expect={(4, 3)}),
    Case("lightning precision BF16 (case-sensitive)", "PC703", TRAINER.format(precision="BF16"), expect={(4, 3)}),
    Case("lightning precision bf16_mixed", "PC703", TRAINER.format(precision="bf16_mixed"), expect={(4, 3)}),
    Case(
        "16-true on lightning 2.0",
        "PC703",
        TRAINER.format(precision="16-true"),
        expect={(4, 3)},
        versions={"lightning": "2.0.9"},
    ),
    Case(
        "16-mixed on lightning 1.9",
        "PC703",
        TRAINER.format(precision="16-mixed"),
        expect={(4, 3)},
        versions={"lightning": "1.9.5"},
    ),
    Case("fixed: lightning 16-mixed", "PC703", TRAINER.format(precision="16-mixed")),
    Case("16-true on lightning 2.1", "PC703", TRAINER.format(precision="16-true"), versions={"lightning": "2.1.0"}),
    Case("legacy alias is valid", "PC703", TRAINER.format(precision="16")),
    Case(
        "litgpt invalid precision",
        "PC703",
        LITGPT.format(precision="fp16", quantize="null", devices=1),
        expect={(3, 1)},
    ),
    Case("nemo bf16 goes to NeMo's plugin", "PC703", NEMO.format(precision="bf16", fsdp="false", fp8="false")),
    # PC704: legacy aliases
    Case("lightning precision 16", "PC704", TRAINER.format(precision="16"), expect={(4, 3)}),
    Case("lightning precision bf16", "PC704", TRAINER.format(precision="bf16"), expect={(4, 3)}),
    Case(
        "lightning bf16 on 2.0 (older warning text)",
        "PC704",
        TRAINER.format(precision="bf16"),
        expect={(4, 3)},
        versions={"lightning": "2.0.0"},
    ),
    Case("fixed: lightning bf16-mixed", "PC704", TRAINER.format(precision="bf16-mixed")),
    Case("32 is not warned about", "PC704", TRAINER.format(precision="32")),
    Case("lightning 1.x: no warning", "PC704", TRAINER.format(precision="16"), versions={"lightning": "1.9.5"}),
    Case("nemo megatron 16: NeMo's plugin", "PC704", NEMO.format(precision="16", fsdp="false", fp8="false")),
    Case("1.x apex file without a version", "PC704", APEX.format(precision="16")),
    # PC705: apex arguments removed in Lightning 2.0
    Case(
        "apex arguments on lightning 2.2",
        "PC705",
        APEX.format(precision="16"),
        expect={(5, 3)},
        versions={"lightning": "2.2.0"},
    ),
    Case("apex arguments beside a 2.x precision name", "PC705", APEX.format(precision="16-mixed"), expect={(5, 3)}),
    Case("apex arguments on lightning 1.9", "PC705", APEX.format(precision="16"), versions={"lightning": "1.9.5"}),
    Case("apex arguments, 1.x file, version unknown", "PC705", APEX.format(precision="16")),
    Case("fixed: no apex arguments", "PC705", TRAINER.format(precision="16-mixed"), versions={"lightning": "2.2.0"}),
    # PC706: FSDP and clipping by norm
    Case("fsdp + gradient_clip_val", "PC706", FSDP_CLIP.format(strategy="fsdp", clip="1.0"), expect={(5, 3)}),
    Case(
        "FSDPStrategy class + clip",
        "PC706",
        """
        trainer:
          accelerator: gpu
          strategy:
            class_path: lightning.pytorch.strategies.FSDPStrategy
            init_args:
              sharding_strategy: FULL_SHARD
          gradient_clip_val: 0.5
          gradient_clip_algorithm: norm
        """,
        expect={(7, 3)},
    ),
    Case(
        "fixed: clip by value",
        "PC706",
        FSDP_CLIP.format(strategy="fsdp", clip="1.0").replace("model:", "  gradient_clip_algorithm: value\nmodel:"),
    ),
    Case("no clipping", "PC706", FSDP_CLIP.format(strategy="fsdp", clip="0.0")),
    Case("ddp clips by norm fine", "PC706", FSDP_CLIP.format(strategy="ddp", clip="1.0")),
    # PC707: LitGPT quantize needs a -true precision
    Case(
        "litgpt qlora bf16-mixed",
        "PC707",
        LITGPT.format(precision="bf16-mixed", quantize="bnb.nf4", devices=1),
        expect={(3, 1)},
    ),
    Case(
        "litgpt qlora precision 16 (KeyError)",
        "PC707",
        LITGPT.format(precision="16", quantize="bnb.nf4", devices=1),
        expect={(3, 1)},
    ),
    Case("litgpt qlora without precision", "PC707", LITGPT_NO_PRECISION, ["A100"], {(3, 1)}),
    Case("fixed: litgpt qlora bf16-true", "PC707", LITGPT.format(precision="bf16-true", quantize="bnb.nf4", devices=1)),
    Case("litgpt lora without quantize", "PC707", LITGPT.format(precision="bf16-mixed", quantize="null", devices=1)),
    # PC708: LitGPT quantize on several devices
    Case(
        "litgpt qlora on 4 devices",
        "PC708",
        LITGPT.format(precision="bf16-true", quantize="bnb.nf4", devices=4),
        expect={(5, 1)},
    ),
    Case(
        "litgpt qlora devices auto on 8 GPUs",
        "PC708",
        LITGPT.format(precision="bf16-true", quantize="bnb.nf4", devices="auto"),
        ["8xA100"],
        {(5, 1)},
    ),
    Case(
        "litgpt qlora devices auto, GPUs unknown",
        "PC708",
        LITGPT.format(precision="bf16-true", quantize="bnb.nf4", devices="auto"),
    ),
    Case(
        "litgpt qlora on 2 nodes",
        "PC708",
        LITGPT.format(precision="bf16-true", quantize="bnb.nf4", devices=1) + "num_nodes: 2\n",
        expect={(11, 1)},
    ),
    Case(
        "fixed: litgpt qlora on 1 device", "PC708", LITGPT.format(precision="bf16-true", quantize="bnb.nf4", devices=1)
    ),
    Case("litgpt lora on 4 devices", "PC708", LITGPT.format(precision="bf16-true", quantize="null", devices=4)),
    # PC709: NeMo FSDP + FP8
    Case("nemo fsdp + fp8", "PC709", NEMO.format(precision="bf16", fsdp="true", fp8="true"), expect={(10, 3)}),
    Case("fixed: nemo fsdp without fp8", "PC709", NEMO.format(precision="bf16", fsdp="true", fp8="false")),
    Case("nemo fp8 without fsdp", "PC709", NEMO.format(precision="bf16", fsdp="false", fp8="true")),
    # PC710: axolotl float16 ignored
    Case("axolotl float16, bf16 auto on A100", "PC710", AXOLOTL + "float16: true\n", ["A100"], {(5, 1)}),
    Case("axolotl float16 with bf16 true", "PC710", AXOLOTL + "float16: true\nbf16: true\n", expect={(5, 1)}),
    Case("axolotl float16 with bfloat16", "PC710", AXOLOTL + "float16: true\nbfloat16: true\n", expect={(5, 1)}),
    Case("fixed: axolotl float16 with bf16 false", "PC710", AXOLOTL + "float16: true\nbf16: false\n", ["A100"]),
    Case(
        "axolotl float16 on a V100 with torch 2.2 (auto finds no bf16)",
        "PC710",
        AXOLOTL + "float16: true\n",
        ["V100"],
        versions={"torch": "2.2.2"},
    ),
    # PC711: axolotl fp16 + bfloat16
    Case("axolotl fp16 + bfloat16", "PC711", AXOLOTL + "bfloat16: true\nfp16: true\n", expect={(6, 1)}),
    Case(
        "axolotl fp16 + bfloat16 + bf16 false",
        "PC711",
        AXOLOTL + "bf16: false\nbfloat16: true\nfp16: true\n",
        expect={(7, 1)},
        versions={"axolotl": "0.12.0"},
    ),
    Case(
        "axolotl 0.9: bf16 = cfg.bf16", "PC711", AXOLOTL + "bfloat16: true\nfp16: true\n", versions={"axolotl": "0.9.2"}
    ),
    Case("axolotl bf16 true drops fp16", "PC711", AXOLOTL + "bfloat16: true\nfp16: true\nbf16: true\n"),
    Case("fixed: axolotl bfloat16 alone", "PC711", AXOLOTL + "bfloat16: true\nfp16: false\n"),
    # PC712: LLaMA-Factory pure_bf16 + ZeRO-3
    Case(
        "llamafactory pure_bf16 + ZeRO-3",
        "PC712",
        LLAMA_FACTORY + "pure_bf16: true\ndeepspeed: ds_z3.json\n",
        ["A100"],
        {(7, 1)},
        files={"ds_z3.json": Z3},
    ),
    Case(
        "fixed: llamafactory pure_bf16 + ZeRO-2",
        "PC712",
        LLAMA_FACTORY + "pure_bf16: true\ndeepspeed: ds_z2.json\n",
        ["A100"],
        files={"ds_z2.json": Z2},
    ),
    Case(
        "llamafactory bf16 + ZeRO-3",
        "PC712",
        LLAMA_FACTORY + "bf16: true\ndeepspeed: ds_z3.json\n",
        ["A100"],
        files={"ds_z3.json": Z3},
    ),
    # PC713: LLaMA-Factory pure_bf16 where the bf16 check fails
    Case(
        "llamafactory pure_bf16 on V100, torch 2.2",
        "PC713",
        LLAMA_FACTORY + "pure_bf16: true\n",
        ["V100"],
        {(7, 1)},
        versions={"torch": "2.2.2"},
    ),
    Case(
        "llamafactory pure_bf16 on V100, torch 2.4 counts emulation (PC101's case)",
        "PC713",
        LLAMA_FACTORY + "pure_bf16: true\n",
        ["V100"],
        versions={"torch": "2.4.0"},
    ),
    Case(
        "llamafactory pure_bf16 on V100, torch 2.2: LLaMA-Factory's error (PC713), not PC101's",
        "PC101",
        LLAMA_FACTORY + "pure_bf16: true\n",
        ["V100"],
        versions={"torch": "2.2.2"},
    ),
    Case(
        "llamafactory pure_bf16 on V100, torch 2.4: emulated bf16 (PC101)",
        "PC101",
        LLAMA_FACTORY + "pure_bf16: true\n",
        ["V100"],
        {(7, 1)},
        versions={"torch": "2.4.0"},
    ),
    Case(
        "fixed: llamafactory pure_bf16 on A100",
        "PC713",
        LLAMA_FACTORY + "pure_bf16: true\n",
        ["A100"],
        versions={"torch": "2.2.2"},
    ),
    # PC714: LLaMA-Factory pure_bf16 + fp16
    Case(
        "llamafactory pure_bf16 + fp16, full",
        "PC714",
        LLAMA_FACTORY + "pure_bf16: true\nfp16: true\n",
        ["A100"],
        {(8, 1)},
    ),
    Case("fixed: llamafactory pure_bf16 alone", "PC714", LLAMA_FACTORY + "pure_bf16: true\nfp16: false\n", ["A100"]),
    Case(
        "llamafactory pure_bf16 + fp16, LoRA adapters are fp32",
        "PC714",
        LLAMA_FACTORY.replace("finetuning_type: full", "finetuning_type: lora") + "pure_bf16: true\nfp16: true\n",
        ["A100"],
    ),
    Case(
        "llamafactory pure_bf16 + fp16 under DeepSpeed",
        "PC714",
        LLAMA_FACTORY + "pure_bf16: true\nfp16: true\ndeepspeed: ds_z2.json\n",
        ["A100"],
        files={"ds_z2.json": Z2},
    ),
    # PC715: llama-cookbook use_fp16 + pure_bf16 + FSDP
    Case(
        "cookbook use_fp16 + pure_bf16 + fsdp",
        "PC715",
        COOKBOOK.format(peft="false", fp16="true"),
        ["8xA100"],
        {(5, 1)},
    ),
    Case("fixed: cookbook pure_bf16 alone", "PC715", COOKBOOK.format(peft="false", fp16="false"), ["8xA100"]),
    Case("cookbook peft: not this rule", "PC715", COOKBOOK.format(peft="true", fp16="true"), ["8xA100"]),
    # what the dialect sets for these rules must not widen them (found by comparing with the old module)
    Case(
        "nemo fp8 with fsdp only from trainer.strategy: model.fsdp decides",
        "PC709",
        NEMO.format(precision="bf16", fsdp="false", fp8="true").replace("  devices: 8", "  strategy: fsdp"),
    ),
    Case(
        "lightning fsdp with LitGPT's train.max_norm, no gradient_clip_val",
        "PC706",
        FSDP_CLIP.format(strategy="fsdp", clip="null").replace("  gradient_clip_val: null\n", "")
        + "train:\n  max_norm: 1.0\n",
    ),
    Case(
        "a strategy class named fsdp is not Lightning's FSDPStrategy",
        "PC706",
        FSDP_CLIP.format(strategy="{class_path: my.strategies.fsdp}", clip="1.0"),
    ),
    Case(
        "lightning fsdp clip by value",
        "PC706",
        FSDP_CLIP.format(strategy="fsdp", clip="1.0").replace("1.0\n", "1.0\n  gradient_clip_algorithm: Value\n"),
    ),
    # PC718: OpenRLHF PPO's vLLM engines are bf16 (excerpt of examples/scripts/train_ppo_ray_hybrid_engine.sh)
    Case("openrlhf vLLM engines on V100, fp16 actor", "PC718", OPENRLHF_PPO, ["V100"], {(2, 4)}, fmt="sh"),
    Case("fixed: openrlhf vLLM engines on A100", "PC718", OPENRLHF_PPO, ["A100"], fmt="sh"),
    Case(
        "fixed: openrlhf without vLLM engines",
        "PC718",
        OPENRLHF_PPO.replace("--vllm.num_engines 4", "--vllm.num_engines 0"),
        ["V100"],
        fmt="sh",
    ),
]


def test_messages_quote_the_framework() -> None:
    fp16 = run_case(CASES[0])[0]
    assert "full fp16 training is not supported with this recipe" in fp16.message
    assert fp16.fix is not None and fp16.fix.edits[0].value == "bf16"
    v100 = run_case(CASES[1])[0]
    assert v100.fix is not None and v100.fix.edits[0].value == "fp32"
    spelling = run_case(next(c for c in CASES if c.name == "torchtune dtype bfloat16"))[0]
    assert "Dtype bfloat16 must be one of fp16, bf16, fp32, fp64 for finetuning." in spelling.message
    assert spelling.fix is not None and spelling.fix.edits[0].value == "bf16"
    invalid = run_case(next(c for c in CASES if c.name == "lightning precision bf16_mixed"))[0]
    assert invalid.fix is not None and invalid.fix.edits[0].value == "bf16-mixed"
    old = run_case(next(c for c in CASES if c.name == "16-mixed on lightning 1.9"))[0]
    assert old.fix is not None and old.fix.edits[0].value == "16"
    alias = run_case(next(c for c in CASES if c.name == "lightning precision 16"))[0]
    assert "`precision=16` is supported for historical reasons" in alias.message
    alias_2_0 = run_case(next(c for c in CASES if c.name == "lightning bf16 on 2.0 (older warning text)"))[0]
    assert "Lightning warns: bf16 is supported for historical reasons" in alias_2_0.message
    apex = run_case(next(c for c in CASES if c.name == "apex arguments beside a 2.x precision name"))[0]
    assert apex.fix is not None and len(apex.fix.edits) == 2 and all(e.remove for e in apex.fix.edits)
    assert apex.note is not None  # the Lightning version is not known
    missing = run_case(next(c for c in CASES if c.name == "litgpt qlora without precision"))[0]
    assert missing.fix is not None and missing.fix.edits[0].key == "precision"
    assert missing.fix.edits[0].value == "bf16-true"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: Case) -> None:
    check_case(case)


FRAMEWORKS = Path(precheck.__file__).parent / "frameworks"
#: what a rule module must never import: the stages before the model
FORBIDDEN = ("precheck.dialects", "precheck.resolve", "precheck.sources", "precheck.engine")


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports (relative imports made absolute), also inside functions."""
    package = ".".join(path.relative_to(FRAMEWORKS.parent.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = f"{base}.{node.module}" if node.level and node.module else (node.module or base)
            found += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return found


def test_framework_rules_read_only_the_model() -> None:
    modules = sorted(FRAMEWORKS.glob("*/*rules.py")) + sorted(FRAMEWORKS.glob("*/modes.py"))
    assert len(modules) >= 6
    for path in modules:
        for name in _imports(path):
            assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"
            parts = name.split(".")
            assert not (parts[:2] == ["precheck", "frameworks"] and parts[3:4] in (["dialect"], ["resolve"])), name
        text = path.read_text(encoding="utf-8")
        assert ".reason" not in text, f"{path} reads an override's prose"


def test_the_dialects_set_what_the_framework_rules_read() -> None:
    trainer = read_as("lightning", FSDP_CLIP.format(strategy="FSDP ", clip="0.5"))
    assert trainer.variant == "trainer" and trainer.strategy is not None and trainer.strategy.value == "fsdp"
    assert trainer.gradient_clip_norm is not None and trainer.gradient_clip_norm.value == 0.5
    assert trainer.gradient_clip_norm.origin.key == "gradient_clip_val"
    by_value = read_as(
        "lightning",
        FSDP_CLIP.format(strategy="fsdp", clip="0.5").replace("0.5\n", "0.5\n  gradient_clip_algorithm: value\n"),
    )
    assert by_value.gradient_clip_norm is None
    apex = read_as("lightning", APEX.format(precision="16"))
    assert [item.origin.key for item in apex.apex_args] == ["amp_backend", "amp_level"]
    assert apex.precision_mode is not None and apex.precision_mode.value == "16-mixed"
    plugin = read_as("lightning", PLUGIN.format(precision="bf16-mixed"))
    assert plugin.precision_plugin == "MixedPrecision" and trainer.precision_plugin is None
    litgpt = read_as("lightning", LITGPT.format(precision="bf16-mixed", quantize="bnb.nf4", devices="2"))
    assert litgpt.variant == "litgpt" and litgpt.quantize is not None and litgpt.quantize.value == "bnb.nf4"
    nemo = read_as("lightning", NEMO.format(precision="bf16", fsdp="true", fp8="true"))
    assert nemo.variant == "nemo" and nemo.quantize is None
    v0 = read_as("llama-factory", LLAMA_FACTORY)
    assert v0.variant is None and v0.megatron_backend is None
    mca = read_as("llama-factory", LLAMA_FACTORY, env={"USE_MCA": "1"})
    assert mca.megatron_backend is not None and mca.megatron_backend.value == "mcore_adapter"
    v1 = read_as("llama-factory", "model: Qwen/Qwen3-0.6B\nmodel_class: llm\ntrain_dataset: data/v1_sft_demo.yaml\n")
    assert v1.variant == "v1"
