"""NeMo 2 in Python (issue 28): ``nl.Trainer(plugins=...)`` takes its precision from a
``MegatronMixedPrecision`` plugin or a recipe helper (``bf16_mixed()``, ``fp16_mixed()``:
nemo_toolkit 2.4.0 ``nemo/collections/llm/recipes/precision/mixed_precision.py:23``/``:40``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAD = "from nemo import lightning as nl\nfrom nemo.collections import llm\n"
RECIPES = "from nemo.collections.llm.recipes.precision.mixed_precision import bf16_mixed, fp16_mixed\n"


def errors(tmp_path: Path, code: str, gpu: str) -> list[str]:
    script = tmp_path / "train.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, "-m", "precheck", str(script), "--gpu", gpu, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["files"], done.stdout
    return sorted(f["rule"] for f in report["findings"] if f["severity"] == "error")


@pytest.mark.parametrize(
    "plugins",
    [
        'nl.MegatronMixedPrecision(precision="bf16-mixed")',
        '[nl.MegatronMixedPrecision(precision="bf16-mixed")]',
        "bf16_mixed()",
    ],
)
def test_a_bf16_plugin_is_an_error_on_a_v100(tmp_path: Path, plugins: str) -> None:
    code = f"{HEAD}{RECIPES}\ntrainer = nl.Trainer(devices=1, strategy=nl.MegatronStrategy(), plugins={plugins})\n"
    code += "llm.finetune(model=None, data=None, trainer=trainer)\n"
    assert errors(tmp_path, code, "1xV100") == ["PC101"]
    assert errors(tmp_path, code, "8xH100") == []


def test_an_fp16_plugin_runs_on_a_v100(tmp_path: Path) -> None:
    code = f"{HEAD}{RECIPES}\ntrainer = nl.Trainer(devices=1, plugins=fp16_mixed())\n"
    assert errors(tmp_path, code, "1xV100") == []


def test_a_plugin_variable_is_read(tmp_path: Path) -> None:
    code = f"{HEAD}\nplugin = nl.MegatronMixedPrecision(precision='bf16-mixed')\ntrainer = nl.Trainer(plugins=plugin)\n"
    assert errors(tmp_path, code, "1xT4") == ["PC101"]


@pytest.mark.parametrize(
    "plugins",
    ['run.Config(nl.MegatronMixedPrecision, precision="bf16-mixed")', "bf16_mixed()"],
)
def test_nemo_run_config_of_a_trainer_is_that_trainer(tmp_path: Path, plugins: str) -> None:
    # NeMo-Run's run.Config(cls, **kwargs) builds cls(**kwargs) later (nemo_run/config.py): the same run
    code = f"import nemo_run as run\n{HEAD}{RECIPES}\n"
    code += (
        f"trainer = run.Config(nl.Trainer, devices=8, strategy=run.Config(nl.MegatronStrategy), plugins={plugins})\n"
    )
    code += "recipe = run.Partial(llm.finetune, model=None, data=None, trainer=trainer)\nrun.run(recipe)\n"
    assert errors(tmp_path, code, "1xV100") == ["PC101"]
    assert errors(tmp_path, code, "8xH100") == []
    fp16 = code.replace('precision="bf16-mixed"', 'precision="16-mixed"').replace("bf16_mixed()", "fp16_mixed()")
    assert errors(tmp_path, fp16, "1xV100") == []


@pytest.mark.parametrize(
    "plugins",
    ["bf16_with_fp8_mixed()", 'nl.MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid")'],
)
def test_transformer_engine_fp8_needs_sm89(tmp_path: Path, plugins: str) -> None:
    # TE refuses fp8 below sm_89 ("Device compute capability 8.9 or higher required for FP8 execution")
    code = f"{HEAD}from nemo.collections.llm.recipes.precision.mixed_precision import bf16_with_fp8_mixed\n"
    code += f"trainer = nl.Trainer(devices=1, plugins={plugins})\n"
    assert errors(tmp_path, code, "1xA100") == ["PC104"]
    assert errors(tmp_path, code, "1xL40S") == []
    assert errors(tmp_path, code.replace('fp8="hybrid"', "fp8=None"), "1xA100") == (
        [] if "fp8=" in plugins else ["PC104"]
    )


RECIPE = (
    "import nemo_run as run\nfrom nemo import lightning as nl\nfrom nemo.collections import llm\n"
    "from nemo.collections.llm.recipes.precision.mixed_precision import bf16_mixed, bf16_with_fp8_mixed, fp16_mixed\n\n"
    'recipe = llm.{model}.finetune_recipe(name="r", dir="/ckpt", num_nodes=1, num_gpus_per_node=8{extra})\n'
    "recipe.trainer.max_steps = 100\n{after}run.run(recipe, executor=run.LocalExecutor())\n"
)


@pytest.mark.parametrize(
    ("model", "extra", "after", "v100"),
    [
        # finetune_default.py:145 (plugins=bf16_mixed()); qwen2.py:89 (precision: str = "bf16-mixed")
        ("llama3_8b", "", "", ["PC101"]),
        ("qwen2_7b", "", "", ["PC101"]),
        ("qwen2_7b", ', precision="16-mixed"', "", []),  # the recipe's own precision parameter
        # the plugin or its precision changed afterwards (NeMo 2's documented way to change a
        # recipe's precision, docs/source/features/mixed_precision.rst@8cfedd7): the change is the run's
        ("llama3_8b", "", "recipe.trainer.plugins = fp16_mixed()\n", []),
        ("mamba2_780m", "", "recipe.trainer.plugins = bf16_mixed()\n", ["PC101"]),
        ("qwen2_7b", "", 'recipe.trainer.plugins = run.Config(nl.MegatronMixedPrecision, precision="16-mixed")\n', []),
        ("llama3_8b", "", 'recipe.trainer.plugins.precision = "16-mixed"\n', []),
        (
            "llama3_8b",
            "",
            'recipe.trainer.plugins = fp16_mixed()\nrecipe.trainer.plugins.precision = "bf16-mixed"\n',
            ["PC101"],
        ),
        ("llama3_8b", "", "recipe.trainer.plugins = bf16_with_fp8_mixed()\n", ["PC101", "PC104"]),
        # in a branch precheck cannot decide, or the whole trainer replaced: not the factory's default
        ("llama3_8b", "", "if use_fp16:\n    recipe.trainer.plugins = fp16_mixed()\n", []),
        ("llama3_8b", "", "recipe.trainer = my_trainer()\n", []),
        # the HF AutoModel recipe sets no precision plugin (hf_auto_model_for_causal_lm.py:109-120)
        ("hf_auto_model_for_causal_lm", "", "", []),
    ],
)
def test_recipe_factory_builds_its_trainer_in_bf16(
    tmp_path: Path, model: str, extra: str, after: str, v100: list[str]
) -> None:
    code = RECIPE.format(model=model, extra=extra, after=after)
    script = tmp_path / "train.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, "-m", "precheck", str(script), "--gpu", "1xV100", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    assert sorted(f["rule"] for f in report["findings"] if f["severity"] == "error") == v100
    if v100:
        assert errors(tmp_path, code, "8xH100") == []


#: NeMo's own way to change a recipe's precision (docs/source/features/mixed_precision.rst:49-58@8cfedd7)
DOCS_SNIPPET = """\
from functools import partial

from nemo.collections import llm
from nemo.collections.llm.recipes.precision.mixed_precision import bf16_mixed, fp16_mixed

# Load recipe
recipe = partial(llm.llama3_8b.pretrain_recipe)()

# Change precision
recipe.trainer.plugins = fp16_mixed()
"""


def test_a_recipe_called_through_partial_is_the_recipe(tmp_path: Path) -> None:
    # functools.partial(f)() calls f: the recipe, with its bf16_mixed() plugin; the docs' change followed
    assert errors(tmp_path, DOCS_SNIPPET, "1xV100") == []
    unchanged = DOCS_SNIPPET.replace("recipe.trainer.plugins = fp16_mixed()\n", "")
    assert errors(tmp_path, unchanged, "1xV100") == ["PC101"]
    assert errors(tmp_path, unchanged, "8xH100") == []
    bound = unchanged.replace(
        "partial(llm.llama3_8b.pretrain_recipe)()", "partial(llm.qwen2_7b.pretrain_recipe, precision='16-mixed')()"
    )
    assert errors(tmp_path, bound, "1xV100") == []  # the partial's own arguments are the call's
