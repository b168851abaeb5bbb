"""A launch line's flags read against the schema and code of the script it starts."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources import Document, load_runs
from precheck.sources.script_effects import SAME, effects, holds
from precheck.sources.script_schema import MISSING, read_schema


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def only_run(path: Path) -> Document:
    documents = load_runs(path)
    assert len(documents) == 1, [d.label for d in documents]
    return documents[0]


def findings(path: Path, gpu: str) -> set[tuple[str, str, int]]:
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return {(f.rule, str(f.severity), f.origin.line or 0) for f in report.findings}


ARGUMENTS = """
from dataclasses import dataclass, field
from typing import Optional
import transformers

@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="facebook/opt-125m")
    use_flash_attn: bool = field(default=False)

@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=512, metadata={"help": "max length"})
"""

TRAIN = """
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer
from arguments import ModelArguments, TrainingArguments

def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    kwargs = {}
    if model_args.use_flash_attn:
        kwargs["attn_implementation"] = "flash_attention_2"
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **kwargs)
    Trainer(model=model, args=training_args).train()
"""


def test_hf_dataclasses_from_a_sibling_module(tmp_path: Path) -> None:
    write(tmp_path, "arguments.py", ARGUMENTS)
    script = write(tmp_path, "train.py", TRAIN)
    schema = read_schema(script)
    assert schema.parsers == ["hf"]
    assert schema.frameworks == {"transformers"}
    assert schema.closed
    assert schema.options["model_max_length"].default == 512
    assert schema.options["use_flash_attn"].kind == "bool"
    assert "bf16" in schema.defined() and "model_max_length" in schema.defined()


def test_own_keys_are_known_and_the_run_is_not_read_as_trl(tmp_path: Path) -> None:
    write(tmp_path, "arguments.py", ARGUMENTS)
    write(tmp_path, "train.py", TRAIN)
    launch = write(
        tmp_path,
        "run.sh",
        """
        torchrun --nproc_per_node 8 train.py \\
            --model_max_length 2048 --max_seq_length 2048 --dataset_name x --packing True \\
            --output_dir out --per_device_train_batch_size 4 --learning_rate 1e-5
        """,
    )
    document = only_run(launch)
    assert document.dialect == "hf-trainer"  # not TRL: its bf16 = not fp16 default does not apply
    found = findings(launch, "V100")
    # max_seq_length, dataset_name and packing are not options of this script: its parser refuses them
    assert {(rule, line) for rule, _, line in found} == {("PC905", 2)}
    report = engine.run([str(launch)], from_specs(["V100"], {}), env={})
    assert sorted(f.origin.key for f in report.findings) == ["dataset_name", "max_seq_length", "packing"]


def test_a_flag_the_script_turns_into_flash_attention(tmp_path: Path) -> None:
    write(tmp_path, "arguments.py", ARGUMENTS)
    write(tmp_path, "train.py", TRAIN)
    on = write(tmp_path, "on.sh", "python train.py --output_dir o --use_flash_attn True --learning_rate 1e-5\n")
    off = write(tmp_path, "off.sh", "python train.py --output_dir o --use_flash_attn False --learning_rate 1e-5\n")
    document = only_run(on)
    node = document.mapping()["attn_implementation"]
    assert node.value == "flash_attention_2"
    assert (node.key_line, node.key_column) == (1, 32)  # the flag that turns it on
    assert ("PC105", "error", 1) in findings(on, "V100")
    assert "attn_implementation" not in only_run(off).mapping()
    assert not any(rule == "PC105" for rule, _, _ in findings(off, "V100"))
    assert not any(severity == "error" for _, severity, _ in findings(on, "8xA100-80GB"))


def test_open_parsers_report_no_unknown_key(tmp_path: Path) -> None:
    write(
        tmp_path,
        "train.py",
        """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=1e-4)
        parser.add_argument("--bf16", action="store_true")
        args, rest = parser.parse_known_args()
        """,
    )
    launch = write(tmp_path, "run.sh", "python train.py --lr 1e-5 --learnin_rate 2 --output_dir o --fp16 True\n")
    assert not only_run(launch).script_closed
    assert not any(rule == "PC905" for rule, _, _ in findings(launch, "A100"))


def test_argparse_schema_and_closed_parser(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "train.py",
        """
        import argparse
        from accelerate import Accelerator
        parser = argparse.ArgumentParser()
        parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
        parser.add_argument("--use_8bit_adam", action="store_true")
        parser.add_argument("--keep_fp32", action="store_false", dest="half")
        parser.add_argument("--gradient_checkpointing", type=bool, default=False)
        parser.add_argument("--max_seq_length", type=int, default=512)
        parser.add_argument("--dataset_name", default="x")
        args = parser.parse_args()
        accelerator = Accelerator(mixed_precision=args.mixed_precision)
        """,
    )
    schema = read_schema(script)
    assert schema.closed and schema.parsers == ["argparse"] and not schema.frameworks
    options = schema.options
    assert options["mixed_precision"].choices == ("no", "fp16", "bf16")
    assert (options["use_8bit_adam"].kind, options["use_8bit_adam"].default) == ("store_true", False)
    assert (options["half"].kind, options["half"].default) == ("store_false", True)
    assert options["gradient_checkpointing"].kind == "type_bool"
    assert options["max_seq_length"].type_name == "int"
    launch = write(
        tmp_path,
        "run.sh",
        'accelerate launch train.py --mixed_precision="fp16" --max_seq_length 1024 --dataset_name d '
        "--output_dir o --learning_rate 1e-5 --packing\n",
    )
    document = only_run(launch)
    assert document.dialect != "trl"
    found = findings(launch, "V100")
    assert not any(severity == "error" for _, severity, _ in found), found  # no TRL bf16 default
    assert ("PC905", "warning", 1) in found  # --learning_rate, --output_dir, --packing: not its options


def test_trl_config_in_the_parser_keeps_trl_defaults(tmp_path: Path) -> None:
    write(
        tmp_path,
        "train.py",
        """
        from dataclasses import dataclass, field
        from transformers import HfArgumentParser
        from trl import SFTConfig

        @dataclass
        class ModelArguments:
            use_peft_lora: bool = field(default=False)

        parser = HfArgumentParser((ModelArguments, SFTConfig))
        model_args, training_args = parser.parse_args_into_dataclasses()
        """,
    )
    launch = write(tmp_path, "run.sh", "python train.py --output_dir o --learning_rate 1e-5 --anything 1\n")
    document = only_run(launch)
    assert document.dialect == "trl"
    assert not document.script_closed  # TRL's configs have fields precheck does not list


def test_effects_follow_conditions_on_the_options() -> None:
    tree = ast.parse(
        textwrap.dedent(
            """
            def load(args):
                if args.use_4bit and args.use_8bit:
                    raise ValueError("one of them")
                elif args.use_4bit:
                    bnb = BitsAndBytesConfig(load_in_4bit=args.use_4bit)
                if args.flash:
                    if torch.xpu.is_available():
                        kwargs["attn_implementation"] = "eager"
                    else:
                        kwargs["attn_implementation"] = "flash_attention_2"
                if torch.cuda.get_device_capability()[0] >= 8:
                    kwargs["torch_dtype"] = torch.bfloat16
                if args.lora and not args.unsloth:
                    config = LoraConfig(r=8)
                model = from_pretrained(name, torch_dtype=torch.bfloat16 if args.bf16 else torch.float32)
            """
        )
    )
    found = effects({Path("utils.py"): tree}, {"use_4bit", "use_8bit", "flash", "lora", "unsloth", "bf16"})
    table = {(e.key, repr(e.value), e.when) for e in found}
    assert ("load_in_4bit", repr(SAME), (("use_4bit", True),)) in table
    assert ("attn_implementation", "'flash_attention_2'", (("flash", True),)) in table
    assert not any(e.value == "eager" for e in found)  # the xpu branch is not taken on an NVIDIA GPU
    assert not any(e.key == "torch_dtype" and e.value == "bfloat16" and not e.when for e in found)
    assert ("use_peft", "True", (("lora", True), ("unsloth", False))) in table
    assert ("torch_dtype", "'bfloat16'", (("bf16", True),)) in table
    assert ("torch_dtype", "'float32'", (("bf16", False),)) in table
    assert holds(("x", True), "True") is True and holds(("x", False), None) is True
    # a string option's value is true when not empty (`if model_args.model_name_or_path:`); the
    # spellings of a boolean keep their meaning
    assert holds(("x", True), "maybe") is True and holds(("x", True), "false") is False


def test_click_and_fire_options(tmp_path: Path) -> None:
    clicked = write(
        tmp_path,
        "c.py",
        """
        import click
        @click.command()
        @click.option("--bf16/--no-bf16", default=True)
        @click.option("--lr", default=1e-4)
        def main(bf16, lr):
            pass
        """,
    )
    schema = read_schema(clicked)
    assert schema.options["bf16"].default is True and schema.options["lr"].default == 1e-4
    fired = write(
        tmp_path,
        "f.py",
        """
        import fire
        def main(model: str, use_fp16: bool = False, *, batch_size=4, **kwargs):
            pass
        fire.Fire(main)
        """,
    )
    schema = read_schema(fired)
    assert schema.options["model"].default is MISSING
    assert schema.options["use_fp16"].default is False and schema.options["batch_size"].default == 4
    assert not schema.closed  # **kwargs takes any flag


def test_a_script_precheck_cannot_find_reports_no_unknown_key(tmp_path: Path) -> None:
    launch = write(tmp_path, "run.sh", "python missing.py --output_dir o --learning_rate 1e-5 --model_max_length 9\n")
    document = only_run(launch)
    assert document.script_keys == frozenset() and not document.script_closed
    assert not any(rule == "PC905" for rule, _, _ in findings(launch, "A100"))


FIREFLY = """
import argparse
from dataclasses import dataclass, field
from transformers import HfArgumentParser, TrainingArguments, BitsAndBytesConfig, AutoModelForCausalLM
from peft import LoraConfig

@dataclass
class CustomizedArguments:
    model_name_or_path: str = field(metadata={"help": "model"})
    train_mode: str = field(default="qlora", metadata={"help": "full, lora or qlora"})

def setup_everything():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_args_file", type=str, default="train_args/default.json")
    args = parser.parse_args()
    train_args_file = args.train_args_file
    parser = HfArgumentParser((CustomizedArguments, TrainingArguments))
    return parser.parse_json_file(json_file=train_args_file)

def load_model(args):
    if args.train_mode == "qlora":
        quantization = BitsAndBytesConfig(load_in_4bit=True)
    else:
        quantization = None
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, quantization_config=quantization)
    if args.train_mode in ("lora", "qlora"):
        model = get_peft_model(model, LoraConfig(r=8))
"""


def test_a_json_arguments_file_named_by_an_option(tmp_path: Path) -> None:
    """Firefly: `--train_args_file` names the JSON the script parses; its `train_mode` picks the method."""
    write(tmp_path, "train.py", FIREFLY)
    write(tmp_path, "train_args/qlora.json", '{"model_name_or_path": "m", "train_mode": "qlora", "bf16": true}\n')
    write(tmp_path, "train_args/full.json", '{"model_name_or_path": "m", "train_mode": "full", "bf16": true}\n')
    write(tmp_path, "train_args/default.json", '{"model_name_or_path": "m", "output_dir": "o", "bf16": true}\n')
    assert read_schema(tmp_path / "train.py").config_options == {"train_args_file"}
    qlora = only_run(write(tmp_path, "q.sh", "deepspeed train.py --train_args_file train_args/qlora.json\n"))
    values = qlora.root.plain()
    assert (values["bf16"], values["load_in_4bit"], values["use_peft"]) == (True, True, True)
    assert qlora.mapping()["load_in_4bit"].path == str(tmp_path / "train_args/qlora.json")
    full = only_run(write(tmp_path, "f.sh", "deepspeed train.py --train_args_file train_args/full.json\n"))
    assert "load_in_4bit" not in full.mapping() and "use_peft" not in full.mapping()
    default = only_run(write(tmp_path, "d.sh", "python train.py\n"))
    # the option's default file; train_mode's own default (qlora) picks the method
    assert default.root.plain()["output_dir"] == "o" and default.root.plain()["load_in_4bit"] is True


def test_trl_parser_config_file(tmp_path: Path) -> None:
    """open-r1: `TrlParser((ScriptArguments, SFTConfig, ModelConfig))` with `--config recipe.yaml`;
    its SFTConfig is a local subclass of trl.SFTConfig imported from the package."""
    write(
        tmp_path,
        "src/open_r1/configs.py",
        """
        from dataclasses import dataclass, field
        import trl

        @dataclass
        class SFTConfig(trl.SFTConfig):
            benchmarks: list[str] = field(default_factory=list)
        """,
    )
    write(
        tmp_path,
        "src/open_r1/sft.py",
        """
        from trl import ModelConfig, ScriptArguments, TrlParser
        from open_r1.configs import SFTConfig
        parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_and_config()
        """,
    )
    write(tmp_path, "recipes/r.yaml", "model_name_or_path: m\nbf16: true\nattn_implementation: flash_attention_2\n")
    launch = write(tmp_path, "run.sh", "accelerate launch src/open_r1/sft.py --config recipes/r.yaml --benchmarks x\n")
    document = only_run(launch)
    assert document.dialect == "trl"
    assert document.root.plain()["attn_implementation"] == "flash_attention_2"
    assert document.mapping()["bf16"].path == str(tmp_path / "recipes/r.yaml")
    assert ("PC105", "error", 3) in findings(launch, "V100")


def test_abbreviations_and_negations_are_options(tmp_path: Path) -> None:
    write(
        tmp_path,
        "train.py",
        """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--learning_rate", type=float, default=1e-4)
        parser.add_argument("--tf32", action=argparse.BooleanOptionalAction, default=True)
        parser.add_argument("--output_dir")
        parser.add_argument("--per_device_train_batch_size", type=int)
        args = parser.parse_args()
        """,
    )
    launch = write(
        tmp_path, "run.sh", "python train.py --output_dir o --per_device 2 --learning 1e-5 --no-tf32 --fp16 True\n"
    )
    document = only_run(launch)
    assert document.script_closed
    report = engine.run([str(launch)], from_specs(["A100"], {}), env={})
    assert [f.origin.key for f in report.findings if f.rule == "PC905"] == ["fp16"]


def test_a_parser_only_in_an_imported_module_leaves_the_schema_open(tmp_path: Path) -> None:
    write(tmp_path, "helpers.py", "import argparse\np = argparse.ArgumentParser()\np.add_argument('--x')\n")
    script = write(tmp_path, "train.py", "from helpers import p\nfrom mylib.cli import parse\nargs = parse()\n")
    schema = read_schema(script)
    assert "x" in schema.options and not schema.closed


def test_an_expression_of_an_option_is_not_its_value() -> None:
    tree = ast.parse(
        "TrainingArguments(fp16=not args.no_fp16, bf16=args.precision == 'bf16', tf32=args.tf32 or False)\n"
    )
    found = effects({Path("t.py"): tree}, {"no_fp16", "precision", "tf32"})
    table = {(e.key, repr(e.value), e.when) for e in found}
    assert ("fp16", "False", (("no_fp16", True),)) in table and ("fp16", "True", (("no_fp16", False),)) in table
    assert not any(e.value is SAME for e in found)  # bf16 and tf32 are computed: not the option's value


def test_deepspeed_add_config_arguments_defines_its_options(tmp_path: Path) -> None:
    """``deepspeed.add_config_arguments(parser)`` (DeepSpeedExamples' and Yi's scripts) adds
    ``--deepspeed``/``--deepspeed_config``: a launch that passes them is not refused (PC905)."""
    script = write(
        tmp_path,
        "main.py",
        """
        import argparse
        import deepspeed
        def parse_args():
            parser = argparse.ArgumentParser()
            parser.add_argument("--zero_stage", type=int, default=0)
            parser = deepspeed.add_config_arguments(parser)
            return parser.parse_args()
        """,
    )
    schema = read_schema(script)
    assert schema.closed
    assert (schema.options["deepspeed"].kind, schema.options["deepspeed"].default) == ("store_true", False)
    assert schema.options["deepspeed_config"].default is None
    launch = write(tmp_path, "run.sh", "deepspeed main.py --zero_stage 2 --deepspeed --deepspeed_config ds.json\n")
    assert not {f for f in findings(launch, "8xA100-80GB") if f[0] == "PC905"}


def test_jsonargparse_cli_function_is_the_schema(tmp_path: Path) -> None:
    """``CLI(main)`` (jsonargparse): ``main``'s parameters, typed, with ``Literal`` choices; the
    parser refuses any other flag (issue 28: the same reading as frameworks' released CLIs)."""
    write(
        tmp_path,
        "train.py",
        """
        from typing import Literal, Optional
        from jsonargparse import CLI

        def main(model: str, precision: Optional[Literal["bf16-true", "32-true"]] = None, lr: float = 1e-4,
                 bf16: bool = False):
            pass

        if __name__ == "__main__":
            CLI(main)
        """,
    )
    schema = read_schema(tmp_path / "train.py")
    assert schema.parsers == ["jsonargparse"] and schema.closed
    assert schema.options["precision"].choices == ("bf16-true", "32-true", None)
    assert (schema.options["lr"].default, schema.options["lr"].type_name) == (1e-4, "float")
    assert schema.options["bf16"].kind == "bool" and schema.options["model"].default is MISSING
    launch = write(tmp_path, "run.sh", "python train.py --model m --bf16 true --learning_rate 1e-5\n")
    assert only_run(launch).script_closed
    report = engine.run([str(launch)], from_specs(["A100"], {}), env={})
    assert [f.origin.key for f in report.findings if f.rule == "PC905"] == ["learning_rate"]
