"""A plan value cites every line that decides it (``Origin.through``), not only the first.

Each case is an excerpt of a real file (origin in its docstring) and a second, different one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def notebook(folder: Path, name: str, *cells: str) -> Path:
    """An ``.ipynb`` of code cells (each written as in the notebook's JSON, one line a string)."""
    sources = [[line + "\n" for line in textwrap.dedent(c).strip("\n").split("\n")] for c in cells]
    document = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 0,
    }
    path = folder / name
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def plan_places(path: Path, field: str, gpu: str = "V100") -> tuple[str, set[int]]:
    """The value of a plan field and every line of ``path`` it cites (its own and ``via``)."""
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    results = [r for r in report.files if r.plan is not None]
    assert results, "no run"
    item = getattr(results[0].plan, field)
    lines = {line for p, line in item.origin.places if Path(p).name == path.name}
    return str(item.value), lines


#: InternLM/xtuner ``xtuner/configs/llama/llama2_7b/llama2_7b_qlora_alpaca_e3.py`` (lines 1-14, 59-100, 113-120)
XTUNER_QLORA = """
import torch
from mmengine.optim import AmpOptimWrapper
from peft import LoraConfig
from torch.optim import AdamW
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from xtuner.model import SupervisedFinetune

pretrained_model_name_or_path = "meta-llama/Llama-2-7b-hf"
model = dict(
    type=SupervisedFinetune,
    use_varlen_attn=False,
    llm=dict(
        type=AutoModelForCausalLM.from_pretrained,
        pretrained_model_name_or_path=pretrained_model_name_or_path,
        trust_remote_code=True,
        torch_dtype=torch.float16,
        quantization_config=dict(
            type=BitsAndBytesConfig,
            load_in_4bit=True,
            load_in_8bit=False,
            llm_int8_threshold=6.0,
            llm_int8_has_fp16_weight=False,
            bnb_4bit_compute_dtype=torch.float16,
            bnb_4bit_use_double_quant=True,
            bnb_4bit_quant_type="nf4",
        ),
    ),
    lora=dict(type=LoraConfig, r=64, lora_alpha=16, lora_dropout=0.1, bias="none", task_type="CAUSAL_LM"),
)
optim_wrapper = dict(
    type=AmpOptimWrapper,
    optimizer=dict(type=AdamW, lr=2e-4, betas=(0.9, 0.999), weight_decay=0),
    clip_grad=dict(max_norm=1, error_if_nonfinite=False),
    accumulative_counts=16,
    loss_scale="dynamic",
    dtype="float16",
)
"""


def test_the_quantization_cites_the_switch_that_quantizes_and_the_one_written_off(tmp_path: Path) -> None:
    value, lines = plan_places(write(tmp_path, "qlora.py", XTUNER_QLORA), "quantization")
    assert value == "4-bit, compute float16"
    assert {19, 20, 23} <= lines  # load_in_4bit=True, load_in_8bit=False, the compute dtype


def test_an_unsloth_notebook_cites_the_cell_that_turns_4bit_on(tmp_path: Path) -> None:
    """unslothai/notebooks ``nb/Qwen2.5_(7B)-Alpaca.ipynb`` cells 6, 7 and 13 (abridged): the
    switch is set in one cell, passed in the next."""
    path = notebook(
        tmp_path,
        "alpaca.ipynb",
        """
        from unsloth import FastLanguageModel
        import torch
        max_seq_length = 2048 # Choose any! We auto support RoPE Scaling internally!
        dtype = None # None for auto detection. Float16 for Tesla T4, V100, Bfloat16 for Ampere+
        load_in_4bit = True # Use 4bit quantization to reduce memory usage. Can be False.
        """,
        """
        model, tokenizer = FastLanguageModel.from_pretrained(
            model_name = "unsloth/Qwen2.5-7B",
            max_seq_length = max_seq_length,
            dtype = dtype,
            load_in_4bit = load_in_4bit,
        )
        """,
        """
        from trl import SFTConfig, SFTTrainer
        trainer = SFTTrainer(
            model = model,
            tokenizer = tokenizer,
            args = SFTConfig(
                per_device_train_batch_size = 2,
                gradient_accumulation_steps = 4,
                max_steps = 60,
                learning_rate = 2e-4,
                output_dir = "outputs",
            ),
        )
        """,
    )
    text = path.read_text(encoding="utf-8").split("\n")
    switch = next(i for i, t in enumerate(text, 1) if "load_in_4bit = True" in t)
    passed = next(i for i, t in enumerate(text, 1) if "load_in_4bit = load_in_4bit" in t)
    value, lines = plan_places(path, "quantization")
    assert value == "4-bit, compute float16"
    assert {switch, passed} <= lines  # where it is decided, and the keyword that passes it on


#: karpathy/nanoGPT ``train.py`` lines 73-74, 107-113 (abridged): a choice on the GPU, then a lookup
NANOGPT = """
import torch
from contextlib import nullcontext
device = 'cuda'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
device_type = 'cuda' if 'cuda' in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
model = torch.nn.Linear(4, 4).to(device)
optimizer = torch.optim.AdamW(model.parameters())
with ctx:
    loss = model(torch.randn(2, 4)).sum()
scaler.scale(loss).backward()
"""


def test_a_name_passed_through_a_lookup_cites_the_lines_it_passes(tmp_path: Path) -> None:
    path = write(tmp_path, "train.py", NANOGPT)
    value, lines = plan_places(path, "autocast_dtype", "A100")
    assert value == "bfloat16"
    assert {4, 6} <= lines  # the choice on the GPU, and the lookup it passes through
    assert 5 in lines  # where the autocast's device type is decided: it autocasts on the GPU


#: karpathy/nanoGPT ``bench.py`` lines 13-30 (abridged; the configurator's exec left out)
NANOGPT_BENCH = """
import torch
from contextlib import nullcontext
device = 'cuda'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = True
torch.backends.cuda.matmul.allow_tf32 = True # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True # allow tf32 on cudnn
device_type = 'cuda' if 'cuda' in device else 'cpu' # for later use in torch.autocast
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
model = torch.nn.Linear(4, 4).to(device)
optimizer = torch.optim.AdamW(model.parameters())
scaler = torch.amp.GradScaler(enabled=(dtype == 'float16'))
with ctx:
    loss = model(torch.randn(2, 4)).sum()
scaler.scale(loss).backward()
"""


def test_an_autocast_cites_where_its_device_type_is_decided(tmp_path: Path) -> None:
    value, lines = plan_places(write(tmp_path, "bench.py", NANOGPT_BENCH), "autocast_dtype", "V100")
    assert value == "bfloat16" and 8 in lines  # (torch >= 2.3 counts emulated bf16 on a V100)


#: huggingface/peft ``examples/sft/utils.py`` lines 95-150 (abridged) and ``run_peft.sh`` (abridged)
PEFT_UTILS = """
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


def create_and_prepare_model(args, data_args, training_args):
    bnb_config = None
    quant_storage_dtype = None
    if args.use_4bit_quantization:
        compute_dtype = getattr(torch, args.bnb_4bit_compute_dtype)
        quant_storage_dtype = getattr(torch, args.bnb_4bit_quant_storage_dtype)

        bnb_config = BitsAndBytesConfig(
            load_in_4bit=args.use_4bit_quantization,
            bnb_4bit_quant_type=args.bnb_4bit_quant_type,
            bnb_4bit_compute_dtype=compute_dtype,
            bnb_4bit_use_double_quant=args.use_nested_quant,
            bnb_4bit_quant_storage=quant_storage_dtype,
        )
    dtype = quant_storage_dtype if quant_storage_dtype and quant_storage_dtype.is_floating_point else torch.float32
    model_kwargs = {
        "trust_remote_code": True,
        "dtype": dtype,
    }
    if args.use_flash_attn:
        if torch.xpu.is_available():
            print("XPU hasn't supported flash_attn yet, use eager implementation instead.")
            model_kwargs["attn_implementation"] = "eager"
        else:
            model_kwargs["attn_implementation"] = "flash_attention_2"
    if bnb_config is not None:
        model_kwargs["quantization_config"] = bnb_config
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, **model_kwargs)
    return model
"""
PEFT_TRAIN = """
from dataclasses import dataclass, field
from typing import Optional

from transformers import HfArgumentParser, set_seed
from trl import SFTConfig, SFTTrainer
from utils import create_and_prepare_model


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "Path to pretrained model"})
    use_flash_attn: Optional[bool] = field(default=False)
    use_4bit_quantization: Optional[bool] = field(default=False)
    bnb_4bit_compute_dtype: Optional[str] = field(default="float16")
    bnb_4bit_quant_storage_dtype: Optional[str] = field(default="uint8")
    bnb_4bit_quant_type: Optional[str] = field(default="nf4")
    use_nested_quant: Optional[bool] = field(default=False)


def main(model_args, training_args):
    model = create_and_prepare_model(model_args, None, training_args)
    trainer = SFTTrainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    parser = HfArgumentParser((ModelArguments, SFTConfig))
    model_args, training_args = parser.parse_args_into_dataclasses()
    main(model_args, training_args)
"""


def test_a_flag_cites_the_script_line_that_turns_it_into_the_setting(tmp_path: Path) -> None:
    write(tmp_path, "utils.py", PEFT_UTILS)
    write(tmp_path, "train.py", PEFT_TRAIN)
    launch = write(
        tmp_path,
        "run_peft.sh",
        """
        python train.py \\
        --model_name_or_path "mistralai/Mistral-7B-v0.1" \\
        --output_dir "out" \\
        --bf16 True \\
        --use_4bit_quantization True \\
        --bnb_4bit_compute_dtype "bfloat16" \\
        --use_flash_attn True
        """,
    )
    report = engine.run([str(launch)], from_specs(["A100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    attention = result.plan.attention
    assert attention.value == "flash_attention_2" and Path(attention.origin.path or "").name == "run_peft.sh"
    assert ("utils.py", 29) in {(Path(p).name, line) for p, line in attention.origin.through}


#: ymcui/Chinese-LLaMA-Alpaca-2 ``scripts/training/run_clm_sft_with_peft.py`` (abridged; lines 376-380, 406-418)
CHINESE_LLAMA = """
import torch
from dataclasses import dataclass, field
from typing import Optional
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    torch_dtype: Optional[str] = field(
        default=None,
        metadata={"choices": ["auto", "bfloat16", "float16", "float32"]},
    )


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    torch_dtype = (
        model_args.torch_dtype
        if model_args.torch_dtype in ["auto", None]
        else getattr(torch, model_args.torch_dtype)
    )
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        torch_dtype=torch_dtype,
        low_cpu_mem_usage=True,
    )
    trainer = Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_a_flag_passed_through_a_choice_cites_the_test_and_the_branch_taken(tmp_path: Path) -> None:
    write(tmp_path, "run_clm_sft_with_peft.py", CHINESE_LLAMA)
    launch = write(
        tmp_path,
        "run_sft.sh",
        """
        torchrun --nnodes 1 --nproc_per_node 1 run_clm_sft_with_peft.py \\
            --model_name_or_path llama \\
            --output_dir out \\
            --fp16 \\
            --torch_dtype float16
        """,
    )
    report = engine.run([str(launch)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    load = result.plan.load_dtype
    assert load.value == "float16" and Path(load.origin.path or "").name == "run_sft.sh"
    cited = {line for p, line in load.origin.through if Path(p).name == "run_clm_sft_with_peft.py"}
    assert cited == {19, 21, 22, 26}  # the assignment, the test, the branch taken, the keyword; not line 20


#: artidoro/qlora ``qlora.py`` (abridged: lines 150-155, 300-330, 795-800) and ``scripts/finetune_guanaco_7b.sh``
QLORA = """
import argparse
from dataclasses import dataclass, field
from typing import Optional

import torch
import transformers
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer


@dataclass
class TrainingArguments(transformers.Seq2SeqTrainingArguments):
    bits: int = field(default=4, metadata={"help": "How many bits to use."})
    double_quant: bool = field(default=True)


def get_accelerate_model(args):
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        load_in_4bit=args.bits == 4,
        load_in_8bit=args.bits == 8,
        quantization_config=BitsAndBytesConfig(
            load_in_4bit=args.bits == 4,
            load_in_8bit=args.bits == 8,
            bnb_4bit_use_double_quant=args.double_quant,
        ),
    )
    return model


def train():
    hfparser = transformers.HfArgumentParser((TrainingArguments,))
    (training_args,) = hfparser.parse_args_into_dataclasses()
    args = argparse.Namespace(**vars(training_args))
    model = get_accelerate_model(args)
    trainer = Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    train()
"""


def test_a_switch_computed_from_an_option_is_its_value_for_the_flag_given(tmp_path: Path) -> None:
    write(tmp_path, "qlora.py", QLORA)
    four = write(tmp_path, "four.sh", "python qlora.py --output_dir out --bits 4 --fp16\n")
    value, _ = plan_places(four, "quantization")
    assert value.startswith("4-bit")
    report = engine.run([str(four)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    cited = {(Path(p).name, line) for p, line in result.plan.quantization.origin.places}
    assert ("four.sh", 1) in cited and {("qlora.py", 20), ("qlora.py", 21)} & cited
    sixteen = write(tmp_path, "sixteen.sh", "python qlora.py --output_dir out --bits 16 --fp16\n")
    assert plan_places(sixteen, "quantization")[0] == "none"


#: ymcui/Chinese-LLaMA-Alpaca-2 ``scripts/training/run_clm_sft_with_peft.py`` (abridged: lines 240-250, 381-400)
KBITS = """
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import BitsAndBytesConfig, HfArgumentParser, LlamaForCausalLM, Trainer, TrainingArguments


@dataclass
class MyTrainingArguments(TrainingArguments):
    load_in_kbits: Optional[int] = field(default=16)
    double_quant: Optional[bool] = field(default=True)
    quant_type: Optional[str] = field(default="nf4")


def main():
    parser = HfArgumentParser((MyTrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    if training_args.load_in_kbits in [4, 8]:
        quantization_config = BitsAndBytesConfig(
            load_in_4bit=training_args.load_in_kbits == 4,
            load_in_8bit=training_args.load_in_kbits == 8,
            llm_int8_threshold=6.0,
            bnb_4bit_use_double_quant=training_args.double_quant,
            bnb_4bit_quant_type=training_args.quant_type,
        )
    else:
        quantization_config = None
    model = LlamaForCausalLM.from_pretrained("llama", quantization_config=quantization_config)
    trainer = Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_a_switch_compared_with_an_option_under_a_test_of_it(tmp_path: Path) -> None:
    write(tmp_path, "run_clm_sft_with_peft.py", KBITS)
    eight = write(tmp_path, "eight.sh", "torchrun run_clm_sft_with_peft.py --output_dir o --load_in_kbits 8 --fp16\n")
    report = engine.run([str(eight)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    quantization = result.plan.quantization
    assert quantization.value == "8-bit (LLM.int8)"
    assert ("run_clm_sft_with_peft.py", 21) in {(Path(p).name, line) for p, line in quantization.origin.places}
    plain = write(tmp_path, "plain.sh", "torchrun run_clm_sft_with_peft.py --output_dir o --fp16\n")
    assert plan_places(plain, "quantization")[0] == "none"  # the default 16: no quantization


def test_getattr_torch_of_a_known_name_is_the_dtype_and_of_another_is_unknown() -> None:
    """shibing624/MedicalGPT ``training/dpo_training.py`` line 475: ``getattr(torch, args.torch_dtype)``;
    huggingface/peft ``examples/sft/utils.py``: ``getattr(torch, args.bnb_4bit_compute_dtype)``."""
    import ast

    from precheck.sources.python_values import Dtype, Evaluator, Names, Runtime, Source, Unknown

    code = (
        "import torch\nx = getattr(torch, args.torch_dtype)\ny = getattr(torch, args.bnb_4bit_compute_dtype.lower())\n"
    )
    tree = ast.parse(code)
    names = Names.of(tree)

    def value(line: int, args: dict[str, object]) -> object:
        evaluate = Evaluator({"args": args}, names, Runtime(None), lambda c: Unknown("call"), Source(code))
        statement = tree.body[line - 1]
        assert isinstance(statement, ast.Assign)
        return evaluate(statement.value)

    assert value(2, {"torch_dtype": "bfloat16"}) == Dtype("bfloat16")
    assert isinstance(value(2, {"torch_dtype": "auto"}), Unknown)
    assert value(3, {"bnb_4bit_compute_dtype": "Float16"}) == Dtype("float16")


#: huggingface/peft ``examples/road_finetuning/road_finetuning.py`` lines 59-75 (abridged, the branch made the script's)
ROAD = """
import torch
from peft import prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained(
    "meta-llama/Llama-3.2-1B",
    quantization_config=BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_compute_dtype=(
            torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float16
        ),
        bnb_4bit_use_double_quant=True,
        bnb_4bit_quant_type="nf4",
    ),
)
model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
Trainer(model=model, args=TrainingArguments(output_dir="o", bf16=True)).train()
"""


def test_a_keyword_given_a_choice_over_lines_cites_its_test(tmp_path: Path) -> None:
    value, lines = plan_places(write(tmp_path, "road.py", ROAD), "quantization", "A100")
    assert value == "4-bit, compute bfloat16" and {8, 9, 10} <= lines  # load_in_4bit, the keyword, the choice


def test_a_run_that_turns_4bit_off_cites_the_switch_for_its_unquantized_model(tmp_path: Path) -> None:
    """unslothai/notebooks ``nb/gpt_oss_(20B)_GRPO_BF16.ipynb`` cells 7 and 57 (abridged), and
    LianjiaTech/BELLE ``train/scripts/run_rm.sh`` lines 38-39 (``--load_in_8bit False --load_in_4bit False``)."""
    path = notebook(
        tmp_path,
        "gpt_oss.ipynb",
        """
        from unsloth import FastLanguageModel
        import torch
        max_seq_length = 768 # Can increase for longer RL output
        model, tokenizer = FastLanguageModel.from_pretrained(
            model_name = "unsloth/gpt-oss-20b-BF16",
            max_seq_length = max_seq_length,
            load_in_4bit = False, # False for LoRA 16bit
            offload_embedding = False, # Reduces VRAM by 1GB
        )
        """,
        """
        from trl import GRPOConfig, GRPOTrainer
        training_args = GRPOConfig(
            learning_rate = 5e-5,
            per_device_train_batch_size = 1,
            max_steps = 100,
            output_dir = "outputs",
        )
        """,
    )
    text = path.read_text(encoding="utf-8").split("\n")
    switch = next(i for i, t in enumerate(text, 1) if "load_in_4bit = False" in t)
    value, lines = plan_places(path, "quantization", "A100")
    assert value == "none" and switch in lines
    launch = write(
        tmp_path,
        "run_rm.sh",
        """
        accelerate launch \\
            --num_processes 8 \\
            "src/entry_point/rm_train.py" \\
            --model_name bigscience/bloomz-560m \\
            --learning_rate 1e-5 \\
            --per_device_train_batch_size 2 \\
            --gradient_accumulation_steps 8 \\
            --gradient_checkpointing True \\
            --load_in_8bit False \\
            --load_in_4bit False \\
            --use_lora False \\
            --output_dir out
        """,
    )
    value, lines = plan_places(launch, "quantization")
    assert value == "none" and {9, 10} <= lines


#: ymcui/Chinese-LLaMA-Alpaca ``scripts/training/run_clm_sft_with_peft.py`` lines 338-355 (abridged),
#: the model loaded under ``if model_args.model_name_or_path:`` (shibing624/MedicalGPT's
#: ``training/pretraining.py`` has the same test around its load)
NAMED_MODEL = """
import torch
from dataclasses import dataclass, field
from typing import Optional
from transformers import AutoModelForCausalLM, HfArgumentParser, LlamaForCausalLM, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    torch_dtype: Optional[str] = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    if model_args.model_name_or_path:
        torch_dtype = (
            model_args.torch_dtype
            if model_args.torch_dtype in ["auto", None]
            else getattr(torch, model_args.torch_dtype)
        )
        model = LlamaForCausalLM.from_pretrained(
            model_args.model_name_or_path,
            torch_dtype=torch_dtype,
            low_cpu_mem_usage=True
        )
    else:
        model = AutoModelForCausalLM.from_config(None)
    Trainer(model=model, args=training_args).train()


main()
"""


def test_a_test_on_a_named_string_option_is_true_when_the_launch_names_one(tmp_path: Path) -> None:
    """``if model_args.model_name_or_path:`` with ``--model_name_or_path llama``: a non-empty
    string is true, so the flag's dtype flows through the lines under it."""
    write(tmp_path, "run_clm_sft_with_peft.py", NAMED_MODEL)
    launch = write(
        tmp_path,
        "run.sh",
        "torchrun run_clm_sft_with_peft.py --model_name_or_path llama --output_dir o --torch_dtype float16 --fp16\n",
    )
    report = engine.run([str(launch)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    cited = {line for p, line in result.plan.load_dtype.origin.through if Path(p).name == "run_clm_sft_with_peft.py"}
    assert {17, 19, 20, 24} <= cited  # the assignment, the test, the branch taken, the keyword


#: ymcui/Chinese-LLaMA-Alpaca-2 ``scripts/training/run_clm_pt_with_peft.py`` (abridged: lines 349-361, 567-610;
#: the quantization config left out, so the switches are the names the branches assign)
KBITS_NAMES = """
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import HfArgumentParser, LlamaForCausalLM, Trainer, TrainingArguments


@dataclass
class MyTrainingArguments(TrainingArguments):
    load_in_kbits: Optional[int] = field(default=16)


def main():
    parser = HfArgumentParser((MyTrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    if training_args.load_in_kbits in [4, 8]:
        load_in_4bit = training_args.load_in_kbits == 4
        load_in_8bit = training_args.load_in_kbits == 8
    else:
        load_in_4bit = False
        load_in_8bit = False
    model = LlamaForCausalLM.from_pretrained(
        "llama",
        load_in_4bit=load_in_4bit,
        load_in_8bit=load_in_8bit,
    )
    trainer = Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def test_a_name_assigned_in_both_branches_of_an_option_test_takes_the_branch_the_launch_takes(
    tmp_path: Path,
) -> None:
    write(tmp_path, "run_clm_pt_with_peft.py", KBITS_NAMES)
    four = write(tmp_path, "four.sh", "torchrun run_clm_pt_with_peft.py --output_dir o --load_in_kbits 4 --fp16\n")
    report = engine.run([str(four)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    quantization = result.plan.quantization
    assert quantization.value.startswith("4-bit")
    cited = {(Path(p).name, line) for p, line in quantization.origin.places}
    assert {("four.sh", 1), ("run_clm_pt_with_peft.py", 16), ("run_clm_pt_with_peft.py", 17)} <= cited
    assert ("run_clm_pt_with_peft.py", 20) not in cited  # the branch not taken
    plain = write(tmp_path, "plain.sh", "torchrun run_clm_pt_with_peft.py --output_dir o --fp16\n")
    report = engine.run([str(plain)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    quantization = result.plan.quantization
    assert quantization.value == "none"
    lines = {line for p, line in quantization.origin.places if Path(p).name == "run_clm_pt_with_peft.py"}
    assert {16, 20, 21, 24, 25} <= lines  # the test, the else branch's two names, the keywords


def test_a_name_assigned_in_both_branches_cites_the_branch_taken_in_the_sft_script(tmp_path: Path) -> None:
    """The run_clm_sft_with_peft.py excerpt's ``quantization_config`` choice (KBITS) with the
    switches as names too: ``load_in_4bit = False`` in the else branch is the launch's."""
    text = (
        KBITS.replace(
            '    model = LlamaForCausalLM.from_pretrained("llama", quantization_config=quantization_config)',
            '    model = LlamaForCausalLM.from_pretrained("llama", load_in_8bit=load_in_8bit, '
            "quantization_config=quantization_config)",
        )
        .replace(
            "    else:\n        quantization_config = None",
            "    else:\n        load_in_8bit = False\n        quantization_config = None",
        )
        .replace(
            "    if training_args.load_in_kbits in [4, 8]:\n",
            "    if training_args.load_in_kbits in [4, 8]:\n        load_in_8bit = training_args.load_in_kbits == 8\n",
        )
    )
    write(tmp_path, "run_clm_sft_with_peft.py", text)
    plain = write(tmp_path, "plain.sh", "torchrun run_clm_sft_with_peft.py --output_dir o --fp16\n")
    report = engine.run([str(plain)], from_specs(["V100"], {}), env={})
    (result,) = [r for r in report.files if r.plan is not None]
    quantization = result.plan.quantization
    assert quantization.value == "none"
    lines = {line for p, line in quantization.origin.places if Path(p).name == "run_clm_sft_with_peft.py"}
    assert {18, 28, 30} <= lines  # the test, the else branch's `load_in_8bit = False`
