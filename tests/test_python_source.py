"""Python training scripts and notebooks: read with ``ast`` into runs, never executed."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from precheck import api, dialects, engine
from precheck.errors import InputError
from precheck.hardware import Hardware, from_specs
from precheck.sources import Document, load_runs
from precheck.sources.python_source import parse_code

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "scripts"
UNSLOTH_FP16 = SCRIPTS / "unsloth-tinyllama-rtx4090" / "tinyllama_fp16.py"
UNSLOTH_BF16 = SCRIPTS / "unsloth-tinyllama-rtx4090" / "tinyllama_bf16.py"
LOOP_BROKEN = SCRIPTS / "pytorch-grad-scaler-bf16-a100" / "train_bf16_with_grad_scaler.py"
LOOP_FIXED = SCRIPTS / "pytorch-grad-scaler-bf16-a100" / "train_bf16_autocast_fp32_weights.py"


def gpus(*names: str) -> Hardware:
    return from_specs(list(names), {})


def runs(text: str, hardware: Hardware | None = None, kind: str = "python", path: str = "train.py") -> list[Document]:
    return parse_code(path, textwrap.dedent(text).lstrip("\n"), kind, hardware)


def run(text: str, hardware: Hardware | None = None) -> Document:
    found = runs(text, hardware)
    assert len(found) == 1, found
    return found[0]


def values(document: Document) -> dict[str, Any]:
    return {key: node.plain() for key, node in document.mapping().items()}


def notes(document: Document, kind: str = "unresolved-value") -> list[str]:
    return [n.message for n in document.notes if n.kind == kind]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    return subprocess.run(
        [sys.executable, "-m", "precheck", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


# --- the seeds, as a user runs them -----------------------------------------------------------


def test_unsloth_fp16_on_a_bf16_model_warns_at_the_argument() -> None:
    result = cli("--gpu", "RTX 4090", "--format", "json", str(UNSLOTH_FP16.relative_to(ROOT)))
    assert result.returncode == 0, result.stderr  # a warning: exit 0 unless --fail-on warning
    document = json.loads(result.stdout)
    assert [(f["rule"], f["severity"], f["line"], f["column"], f["key"]) for f in document["findings"]] == [
        ("PC202", "warning", 42, 9, "fp16")
    ]
    assert document["files"][0]["dialect"] == "hf-trainer"
    text = cli("--gpu", "RTX 4090", str(UNSLOTH_FP16.relative_to(ROOT))).stdout
    assert "tinyllama_fp16.py:42:9: PC202 warning unsloth/tinyllama-bnb-4bit was released in bf16" in text
    assert "set `fp16=False`" in text and "set `bf16=True`" in text  # the fix in Python syntax


def test_unsloth_idiom_passes_on_an_rtx_4090() -> None:
    result = cli("--gpu", "RTX 4090", "--fail-on", "warning", str(UNSLOTH_BF16.relative_to(ROOT)))
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1].startswith("0 errors, 0 warnings")


def test_grad_scaler_over_bf16_weights_is_an_error_at_the_grad_scaler() -> None:
    result = cli("--gpu", "A100", "--format", "json", str(LOOP_BROKEN.relative_to(ROOT)))
    assert result.returncode == 1
    document = json.loads(result.stdout)
    errors = [(f["rule"], f["line"], f["column"]) for f in document["findings"] if f["severity"] == "error"]
    assert errors == [("PC404", 13, 10)]
    assert {f["rule"]: f["key"] for f in document["findings"]}["PC404"] == "torch.cuda.amp.GradScaler"
    assert "not implemented for 'BFloat16'" in next(f["message"] for f in document["findings"] if f["rule"] == "PC404")
    assert document["files"][0]["dialect"] == "pytorch"
    fixed = cli("--gpu", "A100", "--fail-on", "warning", str(LOOP_FIXED.relative_to(ROOT)))
    assert fixed.returncode == 0, fixed.stdout


def test_folder_of_scripts_and_never_importing_torch() -> None:
    code = (
        "import sys\n"
        "from precheck.cli import main\n"
        "try:\n"
        "    main(['--gpu', 'A100', 'examples/scripts/unsloth-tinyllama-rtx4090',"
        " 'examples/scripts/pytorch-grad-scaler-bf16-a100'])\n"
        "except SystemExit as exit:\n"
        "    print('EXIT', exit.code)\n"
        "print('HEAVY', sorted(m for m in ('torch', 'transformers', 'unsloth', 'trl') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "HEAVY []" in result.stdout and "EXIT 1" in result.stdout, result.stdout + result.stderr
    assert "train_bf16_with_grad_scaler.py:13:10: PC404 error" in result.stdout


# --- Unsloth and runtime questions, against the target hardware -------------------------------


def test_unsloth_idiom_resolves_per_gpu() -> None:
    text = UNSLOTH_BF16.read_text()
    v100 = parse_code("t.py", text, "python", gpus("V100"))[0]
    a100 = parse_code("t.py", text, "python", gpus("A100"))[0]
    assert (values(v100)["fp16"], values(v100)["bf16"]) == (True, False)
    assert (values(a100)["fp16"], values(a100)["bf16"]) == (False, True)
    # dtype=None: Unsloth loads fp16 where the card has no bf16, and computes 4-bit layers in it
    assert values(v100)["torch_dtype"] == values(v100)["bnb_4bit_compute_dtype"] == "float16"
    assert values(a100)["torch_dtype"] == values(a100)["bnb_4bit_compute_dtype"] == "bfloat16"
    assert values(a100)["load_in_4bit"] is True and values(a100)["use_peft"] is True
    fp16 = v100.mapping()["fp16"]
    assert (fp16.key, fp16.key_line, fp16.key_column, fp16.line, fp16.column) == ("fp16", 42, 9, 42, 14)
    assert fp16.raw == "not is_bfloat16_supported()"
    dtype = v100.mapping()["torch_dtype"]
    # `dtype = None` (line 10) decides it; `dtype = dtype` (line 16) passes it on
    assert (dtype.key, dtype.key_line, dtype.key_column, dtype.raw) == ("dtype", 10, 1, "None")
    assert any("loads float16 on Tesla V100" in n for n in notes(v100, "runtime-value"))
    assert (
        v100.dialect == "hf-trainer" and v100.format == "python" and v100.label == "`TrainingArguments(...)` at line 36"
    )


def test_unknown_hardware_leaves_runtime_values_out_with_a_note() -> None:
    document = parse_code("t.py", UNSLOTH_BF16.read_text(), "python", None)[0]
    assert not {"fp16", "bf16", "torch_dtype", "bnb_4bit_compute_dtype"} & values(document).keys()
    assert values(document)["model_name_or_path"] == "unsloth/tinyllama-bnb-4bit"
    missing = notes(document)
    assert any(m.startswith("`fp16=not is_bfloat16_supported()` is left out") and "--gpu" in m for m in missing)
    assert any(m.startswith("`dtype=None` is left out") for m in missing)  # as `dtype = None` decides it


def test_unsloth_defaults_and_requested_bf16_on_a_card_without_it() -> None:
    script = """
    from unsloth import FastLanguageModel
    from transformers import TrainingArguments
    model, tok = FastLanguageModel.from_pretrained("unsloth/Qwen2.5-7B")
    args = TrainingArguments(output_dir="o", fp16=True)
    """
    plain = values(run(script, gpus("T4")))
    assert plain["load_in_4bit"] is True  # loader.py: load_in_4bit = True
    assert plain["torch_dtype"] == "float16"  # dtype=None on a T4
    assert run(script, gpus("T4")).mapping()["torch_dtype"].raw == "FastLanguageModel.from_pretrained(...)"
    asked = script.replace('"unsloth/Qwen2.5-7B")', '"unsloth/Qwen2.5-7B", dtype=torch.bfloat16)')
    assert values(run("import torch\n" + textwrap.dedent(asked), gpus("T4")))["torch_dtype"] == "float16"
    full = script.replace('"unsloth/Qwen2.5-7B")', '"unsloth/Qwen2.5-7B", full_finetuning=True)')
    full_values = values(run(full, gpus("A100")))
    assert "load_in_4bit" not in full_values and full_values["use_peft"] is False


@pytest.mark.parametrize(
    ("call", "gpu", "expected"),
    [
        ("torch.cuda.is_bf16_supported()", "A100", True),
        ("torch.cuda.is_bf16_supported()", "V100", True),  # torch>=2.3 counts emulation
        ("torch.cuda.is_bf16_supported(including_emulation=False)", "V100", False),
        ("torch.cuda.get_device_capability()[0] >= 8", "V100", False),
        ("torch.cuda.get_device_capability()[0] >= 8", "RTX 4090", True),
        ("torch.cuda.get_device_properties(0).major >= 8", "A100", True),
        ("torch.cuda.is_available() and torch.cuda.device_count() > 1", "2xA100", True),
    ],
)
def test_torch_runtime_questions(call: str, gpu: str, expected: bool) -> None:
    document = run(
        f"import torch\nfrom transformers import TrainingArguments\nTrainingArguments(bf16={call})\n", gpus(gpu)
    )
    assert values(document)["bf16"] is expected


def test_importing_unsloth_makes_is_bf16_supported_native_only() -> None:
    script = (
        "import unsloth\nimport torch\nimport transformers\n"
        "transformers.TrainingArguments(bf16=torch.cuda.is_bf16_supported())\n"
    )
    assert values(run(script, gpus("V100")))["bf16"] is False
    assert values(run(script, gpus("A100")))["bf16"] is True


def test_cuda_visible_devices_set_in_the_script() -> None:
    script = """
    import os
    os.environ["CUDA_VISIBLE_DEVICES"] = "1"
    from unsloth import is_bfloat16_supported
    from trl import SFTConfig
    SFTConfig(output_dir="o", bf16=is_bfloat16_supported())
    """
    document = run(script, gpus("V100", "A100"))  # device 1 is the A100
    assert values(document)["bf16"] is True
    env = document.env["CUDA_VISIBLE_DEVICES"]
    assert (env.value, env.line, env.key_line, env.key_column) == ("1", 2, 2, 1)


# --- what is recognised -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "dialect"),
    [
        ("import transformers\ntransformers.TrainingArguments(output_dir='o', fp16=True)", "hf-trainer"),
        ("import transformers as tf\ntf.Seq2SeqTrainingArguments(output_dir='o', fp16=True)", "hf-trainer"),
        ("import trl\ntrl.SFTConfig(output_dir='o', fp16=True)", "trl"),
        ("from trl import GRPOConfig as G\nG(output_dir='o', fp16=True)", "trl"),
        ("from unsloth import UnslothTrainingArguments\nUnslothTrainingArguments(fp16=True)", "hf-trainer"),
    ],
)
def test_config_classes_by_any_name(source: str, dialect: str) -> None:
    document = run(source)
    assert document.dialect == dialect and values(document)["fp16"] is True


def test_transformers_model_with_bitsandbytes_config() -> None:
    script = """
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B", dtype=torch.bfloat16,
                                                 quantization_config=bnb)
    trainer = SFTTrainer(model=model, args=SFTConfig(output_dir="o", bf16=True), peft_config=LoraConfig(r=8))
    """
    document = run(script)
    assert values(document) == {
        "output_dir": "o",
        "bf16": True,
        "model_name_or_path": "meta-llama/Llama-3.1-8B",
        "torch_dtype": "bfloat16",
        "load_in_4bit": True,
        "bnb_4bit_compute_dtype": "bfloat16",
        "use_peft": True,
        # the script loads the model and hands it over: TRL's own load dtype default does not apply
        "from_pretrained": "AutoModelForCausalLM.from_pretrained",
    }
    compute = document.mapping()["bnb_4bit_compute_dtype"]
    assert (compute.key_line, compute.key_column, compute.raw) == (6, 45, "torch.bfloat16")


def test_trainer_given_a_model_name_and_model_init_kwargs() -> None:
    script = """
    from trl import SFTConfig, SFTTrainer
    cfg = SFTConfig(output_dir="o", fp16=True, model_init_kwargs={"torch_dtype": "bfloat16"})
    SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=cfg)
    """
    document = run(script)
    assert values(document)["model_name_or_path"] == "Qwen/Qwen2.5-0.5B"
    assert values(document)["model_init_kwargs"] == {"torch_dtype": "bfloat16"}


def test_two_configs_are_two_runs() -> None:
    script = """
    from trl import DPOConfig, SFTConfig
    sft = SFTConfig(output_dir="sft", bf16=True)
    dpo = DPOConfig(output_dir="dpo", fp16=True)
    """
    first, second = runs(script)
    assert (first.label, values(first)["bf16"]) == ("`SFTConfig(...)` at line 2", True)
    assert (second.label, values(second)["fp16"]) == ("`DPOConfig(...)` at line 3", True)


@pytest.mark.parametrize(
    "source",
    [
        "import os\nprint(os.getcwd())\n",
        "def f():\n    return 1\n",
        # an inference script: a model in fp16, autocast under no_grad, no training call
        "import torch\nfrom transformers import AutoModelForCausalLM\n"
        "m = AutoModelForCausalLM.from_pretrained('m', torch_dtype=torch.float16)\n"
        "with torch.no_grad(), torch.autocast('cuda'):\n    m.generate()\n",
        # a library module that only mentions the words
        "# TrainingArguments and GradScaler are documented elsewhere\nx = 1\n",
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n",
    ],
)
def test_files_without_training_calls_hold_no_runs(source: str) -> None:
    assert runs(source) == []


def test_a_file_without_training_words_is_not_even_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(ast, "parse", refuse)
    assert parse_code("util.py", "import os\n\ndef helper(x):\n    return x * 2\n" * 500, "python", None) == []


# --- values: simple constant propagation ------------------------------------------------------


def test_constant_propagation() -> None:
    script = """
    import torch
    from transformers import TrainingArguments

    USE_BF16 = True
    lr = 2e-5 * 2
    steps = 10
    name = f"run-{steps}"
    precision = "bf16" if USE_BF16 else "fp16"
    common = dict(gradient_accumulation_steps=4, optim="adamw_torch")
    if USE_BF16:
        tf32 = True
    else:
        tf32 = False

    TrainingArguments(
        output_dir=name,
        learning_rate=lr,
        bf16=USE_BF16,
        fp16=not USE_BF16,
        tf32=tf32,
        gradient_checkpointing=precision == "bf16",
        **common,
    )
    """
    assert values(run(script)) == {
        "output_dir": "run-10",
        "learning_rate": 4e-5,
        "bf16": True,
        "fp16": False,
        "tf32": True,
        "gradient_checkpointing": True,
        "gradient_accumulation_steps": 4,
        "optim": "adamw_torch",
    }


def test_functions_see_module_constants_but_not_their_parameters() -> None:
    script = """
    from transformers import TrainingArguments
    BF16 = True

    def build(fp16):
        return TrainingArguments(output_dir="o", bf16=BF16, fp16=fp16)

    if __name__ == "__main__":
        MAIN = True
    """
    document = run(script)
    assert values(document) == {"output_dir": "o", "bf16": True}
    assert notes(document) == ["`fp16=fp16` is left out: `fp16` is a parameter of `build`"]


def test_unknown_values_are_left_out_never_guessed() -> None:
    script = """
    import os, sys
    from transformers import TrainingArguments
    flag = os.environ.get("USE_FP16") == "1"
    if len(sys.argv) > 1:
        bf16 = True
    else:
        bf16 = False
    TrainingArguments(output_dir="o", fp16=flag, bf16=bf16, tf32=get_tf32(), **extra)
    """
    document = run(script)
    assert values(document) == {"output_dir": "o"}
    missing = notes(document)
    assert len(missing) == 4
    assert any("`bf16=bf16`" in m and "depends on which way the if at line 4 goes" in m for m in missing)
    assert any("`**extra`" in m for m in missing)


# --- hand-written loops -----------------------------------------------------------------------


def test_loop_keys_point_at_the_calls() -> None:
    script = """
    import torch
    from torch.cuda.amp import GradScaler, autocast
    model = Net().cuda()
    model.half()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(enabled=True)
    for x in data:
        with autocast(dtype=torch.float16):
            loss = model(x)
        scaler.scale(loss).backward()
    """
    document = run(script)
    assert document.dialect == "pytorch" and document.label == "training loop at line 8"
    assert values(document) == {
        "torch_dtype": "float16",
        "autocast": True,
        "autocast_dtype": "float16",
        "grad_scaler": True,
    }
    places = {k: (n.key, n.key_line, n.key_column, n.line, n.column) for k, n in document.mapping().items()}
    assert places["torch_dtype"] == (None, 4, 7, 4, 7)  # at `half`
    assert places["grad_scaler"] == ("enabled", 6, 21, 6, 29)
    assert places["autocast"] == ("autocast", 8, 10, 8, 10)  # enabled by default: at the call, named by it
    assert places["autocast_dtype"] == ("dtype", 8, 19, 8, 25)


def test_loop_defaults_and_cpu_autocast() -> None:
    script = """
    import torch
    model = torch.nn.Linear(4, 4).cuda()
    opt = torch.optim.AdamW(model.parameters())
    for x in data:
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            a = model(x)
        with torch.amp.autocast("cuda"):
            loss = model(x).sum()
        loss.backward()
    """
    document = run(script)
    assert values(document) == {"autocast": True, "autocast_dtype": "float16"}  # torch.get_autocast_dtype("cuda")


def test_notebook_positions_are_in_the_ipynb_file(tmp_path: Path) -> None:
    lines = UNSLOTH_FP16.read_text().splitlines(keepends=True)
    split = next(i for i, line in enumerate(lines) if line.startswith("dataset ="))
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Unsloth: TinyLlama \u00e9t\u00e9\n"]},
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": 1,
            "source": ["%%capture\n", "!pip install unsloth\n"],
        },
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 2, "source": lines[:split]},
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": 3,
            "source": ["!nvidia-smi\n", "x = %env\n"],
        },
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 4, "source": lines[split:]},
    ]
    notebook = tmp_path / "tinyllama.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    document = load_runs(notebook, "tinyllama.ipynb", gpus("RTX 4090"))[0]
    assert document.format == "python" and document.label == "`TrainingArguments(...)` in cell 5, line 10"
    fp16 = document.mapping()["fp16"]
    file_lines = notebook.read_text().splitlines()
    assert file_lines[fp16.key_line - 1][fp16.key_column - 1 :].startswith('fp16=True,\\n"')
    report = engine.run([str(notebook)], gpus("RTX 4090"))
    assert [(f.rule, f.origin.line, f.origin.column) for f in report.findings] == [
        ("PC202", fp16.key_line, fp16.key_column)
    ]
    assert report.files[0].label == document.label


def test_notebook_syntax_errors(tmp_path: Path) -> None:
    def notebook(*sources: list[str]) -> Path:
        cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources]
        path = tmp_path / "nb.ipynb"
        path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5}, indent=1))
        return path

    ok = notebook(["print 'python 2 cell'\n"], ["from trl import SFTConfig\n", "SFTConfig(bf16=True)\n"])
    assert values(load_runs(ok, "nb.ipynb", None)[0]) == {"bf16": True}
    broken = notebook(["from trl import SFTConfig\n", "SFTConfig(bf16=True\n"])
    with pytest.raises(InputError) as error:
        load_runs(broken, "nb.ipynb", None)
    assert error.value.line is not None and error.value.line > 1 and "cell 1" in error.value.message
    with pytest.raises(InputError, match="not a Jupyter notebook"):
        parse_code("nb.ipynb", '{"cells": 3, "x": "SFTConfig"}', "notebook", None)


# --- broken input, and never running anything ------------------------------------------------


def test_syntax_error_in_a_training_script(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("from transformers import TrainingArguments\nargs = TrainingArguments(fp16=True\n")
    with pytest.raises(InputError) as error:
        load_runs(script, "train.py", None)
    assert error.value.location().startswith("train.py:2:") and "syntax error" in error.value.message
    named = cli("--gpu", "A100", str(script))
    assert named.returncode == 2 and f"{script}:2:" in named.stdout + named.stderr
    assert "Traceback" not in named.stderr
    folder = cli("--gpu", "A100", str(tmp_path))
    assert folder.returncode == 0, folder.stdout + folder.stderr  # skipped quietly in a folder search


def test_no_code_is_ever_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            f"""
            open({str(marker)!r}, "w").write("ran")
            __import__("pathlib").Path({str(marker)!r}).touch()
            from transformers import TrainingArguments
            def side_effect():
                open({str(marker)!r}, "w").write("ran")
                return True
            args = TrainingArguments(output_dir="o", fp16=side_effect(), bf16=exec("1"))
            """
        )
    )
    document = load_runs(script, "train.py", gpus("A100"))[0]
    assert values(document) == {"output_dir": "o"}
    report = engine.run([str(script)], gpus("A100"))
    assert report.files[0].dialect == "hf-trainer"
    assert not marker.exists()


def test_notebook_columns_count_json_escapes(tmp_path: Path) -> None:
    line = 's = "caf\u00e9 \\"quoted\\"\\t\U0001f600"; args = TrainingArguments(output_dir="o", fp16=True)\n'
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "source": ["from transformers import TrainingArguments\n", line],
        }
    ]
    for ascii_only in (True, False):
        notebook = tmp_path / f"nb{ascii_only}.ipynb"
        notebook.write_text(
            json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5}, indent=1, ensure_ascii=ascii_only),
            encoding="utf-8",
        )
        fp16 = load_runs(notebook, notebook.name, None)[0].mapping()["fp16"]
        row = notebook.read_text(encoding="utf-8").splitlines()[fp16.key_line - 1]
        assert row[fp16.key_column - 1 :].startswith("fp16=True)"), (ascii_only, row, fp16.key_column)
        assert row[fp16.column - 1 :].startswith("True)")


def test_a_misspelled_keyword_is_a_type_error_in_a_script() -> None:
    document = run("from transformers import TrainingArguments\nTrainingArguments(output_dir='o', bf61=True)\n")
    config = dialects.BY_NAME["hf-trainer"].read(document, {})
    typo = next(n for n in config.notes if n.kind == "unknown-key")
    assert (typo.line, typo.column) == (2, 35) and "raises TypeError" in typo.message and "`bf16`" in typo.message


def test_suppression_comments_in_scripts_and_notebooks(tmp_path: Path) -> None:
    text = UNSLOTH_FP16.read_text().replace("fp16=True,", "fp16=True,  # precheck: ignore[PC202]")
    script = tmp_path / "train.py"
    script.write_text(text)
    silenced = api.check(str(script), "RTX 4090", use_project=False)
    assert (silenced.findings, silenced.suppressed) == ([], 1)
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": text.splitlines(keepends=True)}]
    notebook = tmp_path / "train.ipynb"
    notebook.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    assert api.check(str(notebook), "RTX 4090", use_project=False).suppressed == 1
    notebook.write_text(notebook.read_text().replace("  # precheck: ignore[PC202]", ""))
    assert [f.rule for f in api.check(str(notebook), "RTX 4090", use_project=False).findings] == ["PC202"]


def test_fixes_are_never_written_into_scripts(tmp_path: Path) -> None:
    from precheck.fix import plan_fixes

    script = tmp_path / "train.py"
    script.write_text(UNSLOTH_FP16.read_text())
    findings = engine.run([str(script)], gpus("RTX 4090")).findings
    assert findings and findings[0].fix is not None and findings[0].fix.edits
    fixes = plan_fixes(findings, unsafe=True)
    assert fixes.changes == [] and "does not rewrite scripts" in fixes.skipped[0][1]
    assert script.read_text() == UNSLOTH_FP16.read_text()


def test_unsloth_get_peft_model_checkpoints_by_default() -> None:
    """FastLanguageModel.get_peft_model(..., use_gradient_checkpointing = "unsloth") by default
    (unsloth models/llama.py:4579@2026.10.9); peft's own get_peft_model has no such switch."""
    script = """
    from unsloth import FastLanguageModel
    from transformers import TrainingArguments
    model, tok = FastLanguageModel.from_pretrained("unsloth/Qwen2.5-7B")
    model = FastLanguageModel.get_peft_model(model, r=16)
    args = TrainingArguments(output_dir="o", bf16=True)
    """
    assert values(run(script, gpus("A100")))["gradient_checkpointing"] is True
    off = script.replace("r=16)", "r=16, use_gradient_checkpointing=False)")
    assert "gradient_checkpointing" not in values(run(off, gpus("A100")))
    plain = script.replace(
        "model = FastLanguageModel.get_peft_model(model, r=16)", "model = get_peft_model(model, cfg)"
    )
    plain = "from peft import get_peft_model\n" + textwrap.dedent(plain)
    assert "gradient_checkpointing" not in values(run(plain, gpus("A100")))
