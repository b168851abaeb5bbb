"""A plan value cites every line that decides it (``Origin.via``), not only the first.

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
    value, lines = plan_places(path, "quantization")
    assert value == "4-bit, compute float16"
    assert switch in lines
