"""Options a training script parses, followed as values into its code (``python_options``).

The excerpts are copied from real repositories (each names its origin) and trimmed to the
lines that decide the run; the scripts are written to a folder, as the options are read
from the file a launch or a check names.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from precheck import engine
from precheck.engine import FileResult
from precheck.hardware import from_specs
from precheck.sources import Document
from precheck.sources.python_source import parse_code

#: huggingface/peft ``examples/lora_dreambooth/train_dreambooth.py`` (the diffusers example
#: pattern): ``parse_args(input_args=None)`` returns ``parser.parse_args()``, ``main(args)`` builds
#: the Accelerator from ``args.mixed_precision``, adapters under ``if args.use_lora``, the frozen
#: text encoder cast to ``weight_dtype``, which ``accelerator.mixed_precision`` decides
DREAMBOOTH = """
import argparse
import os

import torch
from accelerate import Accelerator
from peft import LoraConfig, get_peft_model
from transformers import CLIPTextModel
from diffusers import UNet2DConditionModel


def parse_args(input_args=None):
    parser = argparse.ArgumentParser(description="Simple example of a training script.")
    parser.add_argument(
        "--pretrained_model_name_or_path",
        type=str,
        default=None,
        required=True,
    )
    parser.add_argument("--train_text_encoder", action="store_true", help="Whether to train the text encoder")
    parser.add_argument("--use_lora", action="store_true", help="Whether to use Lora for parameter efficient tuning")
    parser.add_argument(
        "--mixed_precision",
        type=str,
        default=None,
        choices=["no", "fp16", "bf16"],
        help="Whether to use mixed precision. Choose between fp16 and bf16 (bfloat16).",
    )
    parser.add_argument("--local_rank", type=int, default=-1, help="For distributed training: local_rank")

    if input_args is not None:
        args = parser.parse_args(input_args)
    else:
        args = parser.parse_args()

    env_local_rank = int(os.environ.get("LOCAL_RANK", "-1"))
    if env_local_rank != -1 and env_local_rank != args.local_rank:
        args.local_rank = env_local_rank
    return args


def main(args):
    accelerator = Accelerator(
        gradient_accumulation_steps=1,
        mixed_precision=args.mixed_precision,
    )
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    if args.use_lora:
        config = LoraConfig(r=8, lora_alpha=32, target_modules=["to_q", "to_v"])
        unet = get_peft_model(unet, config)
    if not args.train_text_encoder:
        text_encoder.requires_grad_(False)
    params_to_optimize = (
        itertools.chain(unet.parameters(), text_encoder.parameters()) if args.train_text_encoder else unet.parameters()
    )
    optimizer = torch.optim.AdamW(params_to_optimize, lr=1e-4)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16
    if not args.train_text_encoder:
        text_encoder.to(accelerator.device, dtype=weight_dtype)
    for batch in range(10):
        loss = unet(batch).sum()
        accelerator.backward(loss)
        optimizer.step()


if __name__ == "__main__":
    args = parse_args()
    main(args)
"""

#: shibing624/MedicalGPT ``training/dpo_training.py``: one dataclass parsed with
#: ``HfArgumentParser(...).parse_args_into_dataclasses(return_remaining_strings=True)[0]`` in
#: ``main()``, changed on one path of an ``if`` (``args.device_map = None``), its ``fp16``/``bf16``
#: handed to ``DPOConfig``, its quantization chosen by ``if args.qlora``
MEDICALGPT_DPO = """
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, HfArgumentParser
from trl import DPOConfig, DPOTrainer


@dataclass
class ScriptArguments:
    model_name_or_path: Optional[str] = field(default=None, metadata={"help": "The model checkpoint."})
    load_in_4bit: bool = field(default=False, metadata={"help": "Whether to load the model in 4bit mode or not."})
    device_map: Optional[str] = field(default="auto", metadata={"help": "Device to map model to."})
    per_device_train_batch_size: Optional[int] = field(default=4, metadata={"help": "Train batch size"})
    gradient_checkpointing: Optional[bool] = field(
        default=True, metadata={"help": "Whether to use gradient checkpointing"}
    )
    fp16: Optional[bool] = field(default=True, metadata={"help": "Whether to use fp16"})
    bf16: Optional[bool] = field(default=False, metadata={"help": "Whether to use bf16"})
    qlora: bool = field(default=False, metadata={"help": "Whether to use qlora"})
    output_dir: Optional[str] = field(default="outputs-dpo", metadata={"help": "The output directory"})


def main():
    parser = HfArgumentParser(ScriptArguments)
    args = parser.parse_args_into_dataclasses(return_remaining_strings=True)[0]
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    ddp = world_size != 1
    if ddp:
        args.device_map = None
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        device_map=args.device_map,
        quantization_config=BitsAndBytesConfig(
            load_in_4bit=args.load_in_4bit,
            bnb_4bit_compute_dtype=torch.float16,
        ) if args.qlora else None,
    )
    training_args = DPOConfig(
        per_device_train_batch_size=args.per_device_train_batch_size,
        gradient_checkpointing=args.gradient_checkpointing,
        output_dir=args.output_dir,
        bf16=args.bf16,
        fp16=args.fp16,
    )
    trainer = DPOTrainer(model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    main()
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def read(path: Path) -> Document:
    found = parse_code(str(path), path.read_text(), "python", None)
    assert len(found) == 1, found
    return found[0]


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def plan_of(paths: list[Path], gpu: str = "V100") -> dict[str, FileResult]:
    report = engine.run([str(p) for p in paths], from_specs([gpu], {}), env={})
    assert not report.errors and not report.internal_errors
    return {r.path: r for r in report.files if r.plan is not None}


def values(document: Document) -> dict[str, Any]:
    return {key: node.plain() for key, node in document.mapping().items()}


# --- 1. the namespace flows into functions: main(args), a function returning parse_args() ------


def test_dreambooth_options_reach_main_through_parse_args(tmp_path: Path) -> None:
    script = write(tmp_path, "train_dreambooth.py", DREAMBOOTH)
    document = read(script)
    found = values(document)
    # --mixed_precision's default None: Accelerator falls back on accelerate's "no" run on its own
    assert found["autocast"] is False
    assert "use_peft" not in found  # --use_lora is store_true: False when no launch gives it
    assert not [n for n in document.notes if "parameter of `main`" in n.message]
    autocast = document.mapping()["autocast"]
    assert autocast.line == line_of(script, "mixed_precision=args.mixed_precision")
    assert autocast.via is not None
    assert f"defined at {script}:{line_of(script, '--mixed_precision')}" in autocast.via
    assert f"its default at {script}:{line_of(script, '--mixed_precision') + 2}" in autocast.via
    assert "option default, no launch read gives --mixed_precision" in autocast.via
    assert "accelerate state.py:926@1.15.0" in autocast.via
    # `required=True`: its default never applies (the parser refuses a command line without it)
    assert "model_name_or_path" not in found
    assert [n for n in document.notes if "`--pretrained_model_name_or_path` is required" in n.message]


def test_dataclass_options_reach_the_trainer_config(tmp_path: Path) -> None:
    script = write(tmp_path, "dpo_training.py", MEDICALGPT_DPO)
    document = read(script)
    found = values(document)
    assert found["fp16"] is True and found["bf16"] is False
    assert found["per_device_train_batch_size"] == 4 and found["gradient_checkpointing"] is True
    assert "load_in_4bit" not in found  # `... if args.qlora else None`: qlora's default False
    fp16 = document.mapping()["fp16"]
    assert fp16.line == line_of(script, "fp16=args.fp16")
    assert fp16.via is not None and f"`--fp16` defined at {script}:{line_of(script, 'fp16: Optional')}" in fp16.via
    # `if ddp: args.device_map = None` changes one option on one path: the others stay known
    assert not [n for n in document.notes if "depends on which way" in n.message and "output_dir" in n.message]


def test_a_parse_given_its_own_arguments_is_not_the_command_line(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        DREAMBOOTH.replace("args = parse_args()\n", 'args = parse_args(["--mixed_precision", "bf16"])\n'),
    )
    document = read(script)
    assert "autocast" not in values(document)
    assert [n for n in document.notes if "mixed_precision=args.mixed_precision" in n.message]


def test_an_option_another_function_assigns_is_unknown(tmp_path: Path) -> None:
    text = DREAMBOOTH.replace(
        "def main(args):", 'def tune(args):\n    args.mixed_precision = "bf16"\n\n\ndef main(args):'
    )
    document = read(write(tmp_path, "train.py", text))
    assert "autocast" not in values(document)
    assert [n for n in document.notes if "sets `.mixed_precision` at line" in n.message]


# --- 2. conditions on those values: the branch taken, its values cited ---------------------------


def test_a_launch_flag_decides_the_branches_and_a_frozen_module_cast_is_not_the_weights(tmp_path: Path) -> None:
    script = write(tmp_path, "train_dreambooth.py", DREAMBOOTH)
    launch = write(
        tmp_path,
        "train.sh",
        "accelerate launch train_dreambooth.py --pretrained_model_name_or_path x --use_lora --mixed_precision fp16\n",
    )
    results = plan_of([launch])
    (result,) = [r for r in results.values() if r.path.endswith("train.sh")]
    assert result.plan is not None
    # the flag gives Accelerator fp16: autocast float16 with loss scaling, at the flag
    assert result.plan.autocast_dtype.value == "float16"
    assert result.plan.autocast_dtype.origin.path is not None and result.plan.autocast_dtype.origin.path.endswith(
        "train.sh"
    )
    # `--use_lora` takes the `if args.use_lora` branch: adapters, trained in float32
    assert result.plan.param_dtype.value == "float32"
    # `text_encoder.to(dtype=weight_dtype)` (float16 under fp16) casts the frozen text encoder, not the
    # trained weights: no pure-fp16 training is reported
    assert result.plan.load_dtype.value != "float16"
    assert not [f for f in result.findings if str(f.severity) == "error"]
    assert script.exists()


def test_medicalgpt_branch_on_an_option_default(tmp_path: Path) -> None:
    script = write(tmp_path, "dpo_training.py", MEDICALGPT_DPO.replace("if args.qlora else None", "if True else None"))
    found = values(read(script))
    assert found["load_in_4bit"] is False  # the branch taken is read; its value is the option's default


# --- 3. provenance cites the option's definition in the plan ---------------------------------------


def test_explain_cites_the_option_definition_lines(tmp_path: Path) -> None:
    script = write(tmp_path, "dpo_training.py", MEDICALGPT_DPO)
    (result,) = plan_of([script]).values()
    assert result.plan is not None
    source = str(result.plan.autocast_dtype.origin)
    assert f"{script}:{line_of(script, 'fp16=args.fp16')}" in source
    assert f"{script}:{line_of(script, 'fp16: Optional')}" in source
    assert "help" not in source


def test_a_launch_flag_cites_the_option_the_script_defines(tmp_path: Path) -> None:
    script = write(tmp_path, "dpo_training.py", MEDICALGPT_DPO)
    launch = write(tmp_path, "run_dpo.sh", "python3 dpo_training.py --bf16 True --fp16 False --output_dir o\n")
    results = plan_of([launch], "8xA100-80GB")
    (result,) = [r for r in results.values() if r.path.endswith("run_dpo.sh")]
    assert result.plan is not None
    source = str(result.plan.autocast_dtype.origin)
    assert "run_dpo.sh:1" in source and f"{script}:{line_of(script, 'bf16: Optional')}" in source


@pytest.mark.parametrize("flags", ["", "--mixed_precision no"])
def test_no_mixed_precision_gives_no_error_on_a_v100(tmp_path: Path, flags: str) -> None:
    write(tmp_path, "train_dreambooth.py", DREAMBOOTH)
    launch = write(
        tmp_path, "train.sh", f"accelerate launch train_dreambooth.py --pretrained_model_name_or_path x {flags}\n"
    )
    for result in plan_of([launch, tmp_path / "train_dreambooth.py"]).values():
        assert not [f for f in result.findings if str(f.severity) == "error"], result.findings


# --- the real files, where ../shared is beside the checkout ----------------------------------------

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"


@pytest.mark.shared
@pytest.mark.parametrize(
    ("repository", "script", "key", "use", "definition"),
    [
        (
            "huggingface__peft",
            "examples/lora_dreambooth/train_dreambooth.py",
            "autocast",
            "mixed_precision=args.mixed_precision",
            '"--mixed_precision",',
        ),
        ("shibing624__MedicalGPT", "training/dpo_training.py", "fp16", "fp16=args.fp16,", "fp16: Optional[bool]"),
    ],
)
def test_real_scripts_cite_their_option_definitions(
    repository: str, script: str, key: str, use: str, definition: str
) -> None:
    path = PROJECTS / repository / script
    node = read(path).mapping()[key]
    assert node.line == line_of(path, use)
    assert node.via is not None and f"{path}:{line_of(path, definition)}" in node.via


# --- TF32 set in code, on an option ---------------------------------------------------------------

#: huggingface/peft ``examples/lora_dreambooth/train_dreambooth.py`` (lines 326-333, 762-763): TF32
#: switched on by a store_true option; the loop trimmed to what makes it a run
DREAMBOOTH_TF32 = """
import argparse

import torch
from accelerate import Accelerator


def parse_args(input_args=None):
    parser = argparse.ArgumentParser(description="Simple example of a training script.")
    parser.add_argument(
        "--allow_tf32",
        action="store_true",
        help=(
            "Whether or not to allow TF32 on Ampere GPUs. Can be used to speed up training."
        ),
    )
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    return parser.parse_args(input_args)


def main(args):
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
    if args.allow_tf32 and torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = True
    loss = model(batch)
    accelerator.backward(loss)


if __name__ == "__main__":
    args = parse_args()
    main(args)
"""

#: karpathy/nanoGPT ``train.py`` (lines 104-112): TF32 on every path, the autocast dtype from a config name
NANOGPT_TF32 = """
import torch
from contextlib import nullcontext

dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
device = 'cuda'
torch.backends.cuda.matmul.allow_tf32 = True # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True # allow tf32 on cudnn
device_type = 'cuda' if 'cuda' in device else 'cpu' # for later use in torch.autocast
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
with ctx:
    loss = model(X)
scaler.scale(loss).backward()
"""


@pytest.mark.parametrize(("default", "expected"), [("", None), ("\n        default=True,", True)])
def test_tf32_on_an_option_takes_the_branch_its_default_picks(
    tmp_path: Path, default: str, expected: bool | None
) -> None:
    text = DREAMBOOTH_TF32.replace('"--allow_tf32",\n        action="store_true",', f'"--allow_tf32",{default}')
    text = text if default else DREAMBOOTH_TF32
    script = write(tmp_path, "train_dreambooth.py", text)
    (document,) = parse_code(str(script), script.read_text(), "python", from_specs(["A100"], {}))
    tf32 = document.mapping().get("tf32")
    if expected is None:
        assert tf32 is None  # store_true's False: the branch is not taken, torch's default stands
        return
    assert tf32 is not None and tf32.value is True
    assert tf32.line == line_of(script, "matmul.allow_tf32 = True")
    assert tf32.via is not None and f"at {script}:{line_of(script, 'if args.allow_tf32')} is True" in tf32.via
    assert f"`--allow_tf32` defined at {script}:{line_of(script, '--allow_tf32')}" in tf32.via


def test_tf32_set_on_every_path_is_the_loops(tmp_path: Path) -> None:
    script = write(tmp_path, "train.py", NANOGPT_TF32)
    results = plan_of([script], "A100")
    (result,) = results.values()
    assert result.plan is not None and result.plan.tf32 is not None
    assert result.plan.tf32.value is True
    assert result.plan.tf32.origin.line == line_of(script, "matmul.allow_tf32 = True")


def test_tf32_in_an_undecided_branch_is_unknown(tmp_path: Path) -> None:
    text = NANOGPT_TF32.replace(
        "torch.backends.cuda.matmul.allow_tf32 = True # allow tf32 on matmul",
        "if os.environ.get('TF32'):\n    torch.backends.cuda.matmul.allow_tf32 = True",
    )
    document = read(write(tmp_path, "train.py", "import os\n" + text))
    assert "tf32" not in values(document)
    assert [n for n in document.notes if n.key == "allow_tf32" and "branch" in n.message]


# --- the Accelerator's precision over a validation function's autocast ------------------------------

#: huggingface/diffusers ``examples/dreambooth/train_dreambooth_lora.py`` (``log_validation`` at 124-166,
#: ``main`` from 771): the validation pipeline runs under ``torch.amp.autocast``; training through the
#: Accelerator, whose ``mixed_precision`` an option gives
DIFFUSERS_VALIDATION = """
import argparse

import torch
from accelerate import Accelerator


def log_validation(pipeline, args, accelerator, pipeline_args, epoch, torch_dtype, is_final_validation=False):
    pipeline = pipeline.to(accelerator.device)
    images = []
    for _ in range(args.num_validation_images):
        with torch.amp.autocast(accelerator.device.type):
            image = pipeline(**pipeline_args).images[0]
            images.append(image)
    return images


def parse_args(input_args=None):
    parser = argparse.ArgumentParser(description="Simple example of a training script.")
    parser.add_argument("--num_validation_images", type=int, default=4)
    parser.add_argument(
        "--mixed_precision",
        type=str,
        default=MIXED,
        choices=["no", "fp16", "bf16"],
    )
    return parser.parse_args(input_args)


def main(args):
    accelerator = Accelerator(
        gradient_accumulation_steps=1,
        mixed_precision=args.mixed_precision,
    )
    unet, optimizer = accelerator.prepare(unet, optimizer)
    for step, batch in enumerate(train_dataloader):
        loss = unet(batch).sum()
        accelerator.backward(loss)
        optimizer.step()
    log_validation(pipeline, args, accelerator, pipeline_args, 0, torch.float16)


if __name__ == "__main__":
    args = parse_args()
    main(args)
"""

#: huggingface/diffusers ``examples/text_to_image/train_text_to_image.py`` (``log_validation`` at
#: 141-176, ``main`` at 528): ``autocast_ctx = torch.autocast(...)`` in validation, the option read in
#: ``main`` and rebound to the resolved value (``args.mixed_precision = accelerator.mixed_precision``)
TEXT_TO_IMAGE_VALIDATION = """
import argparse
from contextlib import nullcontext

import torch
from accelerate import Accelerator


def log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, epoch):
    images = []
    for i in range(len(args.validation_prompts)):
        if torch.backends.mps.is_available():
            autocast_ctx = nullcontext()
        else:
            autocast_ctx = torch.autocast(accelerator.device.type)
        with autocast_ctx:
            image = pipeline(args.validation_prompts[i], num_inference_steps=20).images[0]
        images.append(image)
    return images


def parse_args():
    parser = argparse.ArgumentParser(description="Simple example of a training script.")
    parser.add_argument("--mixed_precision", type=str, default=MIXED, choices=["no", "fp16", "bf16"])
    args = parser.parse_args()
    return args


def main():
    args = parse_args()
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
        args.mixed_precision = accelerator.mixed_precision
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16
        args.mixed_precision = accelerator.mixed_precision
    unet, optimizer = accelerator.prepare(unet, optimizer)
    for step, batch in enumerate(train_dataloader):
        with accelerator.accumulate(unet):
            loss = unet(batch).sum()
            accelerator.backward(loss)
    log_validation(vae, text_encoder, tokenizer, unet, args, accelerator, weight_dtype, 0)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("excerpt", [DIFFUSERS_VALIDATION, TEXT_TO_IMAGE_VALIDATION], ids=["dreambooth", "text2img"])
@pytest.mark.parametrize(("mixed", "autocast"), [("None", False), ('"bf16"', True)])
def test_a_validation_autocast_is_not_the_accelerators_training_precision(
    tmp_path: Path, excerpt: str, mixed: str, autocast: bool
) -> None:
    script = write(tmp_path, "train.py", excerpt.replace("MIXED", mixed))
    document = read(script)
    found = values(document)
    assert found["autocast"] is autocast
    assert document.mapping()["autocast"].line == line_of(script, "mixed_precision=args.mixed_precision")
    if autocast:
        assert found["autocast_dtype"] == "bfloat16"  # not the validation autocast's default float16


# --- a function of the module returns the dtype an option names -----------------------------------

#: huggingface/peft ``examples/unilora_finetuning/unilora_finetuning.py`` (``ScriptArguments.bits`` at
#: line 32, ``get_dtype`` at 52-59, ``dtype=get_dtype(script_args.bits)`` at 71); its SFTTrainer
#: (``args=script_args``, a parsed SFTConfig) replaced by a loop here, so the script is a run on its own
UNILORA = """
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import AutoModelForCausalLM, HfArgumentParser


@dataclass
class ScriptArguments:
    base_model_name_or_path: Optional[str] = field(
        default="meta-llama/Llama-2-7b-hf", metadata={"help": "The name or path of the fp32/fp16/bf16 base model."}
    )
    bits: str = field(default="bf16", metadata={"help": "Model dtype to load: bf16, fp16, or fp32."})


def get_dtype(bits: str) -> torch.dtype:
    if bits == "fp16":
        return torch.float16
    if bits == "bf16":
        return torch.bfloat16
    if bits == "fp32":
        return torch.float32
    raise ValueError("UniLoRA example supports only bf16, fp16, and fp32 model loading.")


def main() -> None:
    parser = HfArgumentParser(ScriptArguments)
    script_args = parser.parse_args_into_dataclasses()[0]
    model = AutoModelForCausalLM.from_pretrained(
        script_args.base_model_name_or_path,
        dtype=get_dtype(script_args.bits),
        device_map="auto",
    )
    optimizer = torch.optim.AdamW(model.parameters())
    loss = model(batch).loss
    loss.backward()


if __name__ == "__main__":
    main()
"""

#: huggingface/peft ``examples/psoft_finetuning/psoft_finetuning.py`` (``_dtype_from_bits`` at 87-95,
#: normalising with ``bits.lower()``; ``torch_dtype = _dtype_from_bits(script_args.bits)`` at 111)
PSOFT = (
    UNILORA.replace(
        "def get_dtype(bits: str) -> torch.dtype:\n    if bits",
        "def get_dtype(bits: str) -> torch.dtype:\n    bits = bits.lower()\n    if bits",
    )
    .replace(
        "        dtype=get_dtype(script_args.bits),",
        "        dtype=torch_dtype,",
    )
    .replace(
        "    model = AutoModelForCausalLM",
        "    torch_dtype = get_dtype(script_args.bits)\n    model = AutoModelForCausalLM",
    )
    .replace('default="bf16"', 'default="BF16"')
)


@pytest.mark.parametrize("excerpt", [UNILORA, PSOFT], ids=["unilora", "psoft"])
def test_a_module_function_returns_the_dtype_an_option_names(tmp_path: Path, excerpt: str) -> None:
    script = write(tmp_path, "train.py", excerpt)
    document = read(script)
    dtype = document.mapping()["torch_dtype"]
    assert dtype.value == "bfloat16"
    assert dtype.via is not None
    assert f"returned by `get_dtype` at {script}:{line_of(script, 'return torch.bfloat16')}" in dtype.via
    assert f"`--bits` defined at {script}:{line_of(script, 'bits: str = field')}" in dtype.via


def test_a_function_whose_path_is_not_known_stays_unknown(tmp_path: Path) -> None:
    text = UNILORA.replace(
        '    if bits == "fp16":', "    if os.environ.get('X'):\n        pass\n    if bits == \"fp16\":"
    )
    document = read(write(tmp_path, "train.py", "import os\n" + text))
    assert "torch_dtype" not in values(document)
    raising = UNILORA.replace('default="bf16"', 'default="int4"')
    document = read(write(tmp_path, "other.py", raising))
    assert "torch_dtype" not in values(document)
    assert [n for n in document.notes if "raises" in n.message]


def test_defaults_that_train_nothing_are_not_the_run() -> None:
    """DeepSpeedExamples ``training/BingBertGlue/run_glue_classifier_bert_base.py`` trains under
    ``if args.do_train:`` (store_true): run with no flags it trains nothing, so it is read as
    before, each branch on an option both ways (``if args.fp16: model.half()`` included)."""
    path = (
        Path(__file__).parent
        / "fixtures/fresh/DeepSpeedExamples/training/BingBertGlue/run_glue_classifier_bert_base.py"
    )
    found = values(read(path))
    assert found["torch_dtype"] == "float16"


# --- parse_args imported from a module of the repository -------------------------------------

#: huggingface/peft ``examples/boft_dreambooth/utils/args_loader.py`` (lines 40-45, 312-320, 338-342)
#: and ``examples/boft_controlnet/utils/args_loader.py`` (lines 41, 248-252, 405-409): the parser
#: lives in a module the training script imports ``parse_args`` from
ARGS_LOADER = """
import argparse


def parse_args(input_args=None):
    parser = argparse.ArgumentParser(description="Simple example of a Dreambooth training script.")
    parser.add_argument("--output_dir", type=str, default="out")
    parser.add_argument(
        "--mixed_precision",
        type=str,
        default=None,
        choices=["no", "fp16", "bf16"],
    )
    parser.add_argument("--train_text_encoder", action="store_true")

    if input_args is not None:
        args = parser.parse_args(input_args)
    else:
        args = parser.parse_args()
    return args
"""

#: huggingface/peft ``examples/boft_dreambooth/train_dreambooth.py`` (lines 49-53, 82-92, 254-259,
#: 622-624) and ``examples/boft_controlnet/train_controlnet.py`` (lines 43-46, 84-92, 200-206, 542-544)
IMPORTING_SCRIPT = """
import torch
from accelerate import Accelerator
from diffusers import UNet2DConditionModel
from utils.args_loader import (
    {first}
    parse_args,
)


def main(args):
    accelerator = Accelerator(
        gradient_accumulation_steps=1,
        mixed_precision=args.mixed_precision,
    )
    unet = UNet2DConditionModel.from_pretrained("sd", subfolder="unet")
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16
    for batch in range(10):
        loss = unet(batch).sum()
        accelerator.backward(loss)
        optimizer.step()


if __name__ == "__main__":
    args = parse_args()
    main(args)
"""


@pytest.mark.parametrize(
    ("script_name", "first"),
    [("train_dreambooth.py", ""), ("train_controlnet.py", "import_model_class_from_model_name_or_path,")],
)
def test_parse_args_imported_from_a_module_of_the_repository(tmp_path: Path, script_name: str, first: str) -> None:
    (tmp_path / "utils").mkdir()
    loader = write(tmp_path / "utils", "args_loader.py", ARGS_LOADER)
    write(tmp_path / "utils", "__init__.py", "")
    script = write(tmp_path, script_name, IMPORTING_SCRIPT.replace("{first}", first))
    document = read(script)
    # --mixed_precision's default None in the loader: accelerate's "no" for the script run on its own
    assert values(document)["autocast"] is False
    autocast = document.mapping()["autocast"]
    assert autocast.via is not None
    assert f"defined at {loader}:{line_of(loader, '--mixed_precision')}" in autocast.via
    assert f"its default at {loader}:{line_of(loader, '--mixed_precision') + 2}" in autocast.via
