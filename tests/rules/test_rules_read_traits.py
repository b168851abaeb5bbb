"""The generic rule modules decide by a config's traits, never by its framework's name."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from helpers import hardware_for, plan_for, read_as
from precheck.config import TrainingConfig
from precheck.rules import RULES
from precheck.rules.base import Context, Finding
from precheck.versions import Versions

RULES_DIR = Path(__file__).resolve().parents[2] / "src" / "precheck" / "rules"
GENERIC = (
    "consistency",
    "device",
    "kernels",
    "loss_scale",
    "memory",
    "optimizer_support",
    "precision",
    "quantization",
    "scaling",
    "topology",
)
#: what a rule may not import: stages before it
FORBIDDEN = ("dialects", "resolve", "sources", "engine")
#: ``resolve.deepspeed``'s ``raw``/``HF_TRAINER``, which the DeepSpeed rules' split moves
PENDING = {("loss_scale", "resolve.deepspeed"), ("optimizer_support", "resolve.deepspeed")}

TORCHTUNE_FP16 = (
    "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ndtype: fp16\n"
    "optimizer:\n  _component_: torch.optim.AdamW\nbatch_size: 1\ndevice: cuda\n"
)
TORCHTUNE_BF16 = TORCHTUNE_FP16.replace("dtype: fp16", "dtype: bf16").replace("AdamW\n", "AdamW\n  lr: 2e-5\n")
HF_TF32 = "model_name_or_path: m\noutput_dir: out\nlearning_rate: 1.0e-5\ntf32: true\n"


def _modules() -> list[tuple[str, ast.Module]]:
    return [(name, ast.parse((RULES_DIR / f"{name}.py").read_text(encoding="utf-8"))) for name in GENERIC]


def test_generic_rules_never_read_the_framework_name() -> None:
    reads = [
        f"{name}.py:{node.lineno}"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "framework"
    ]
    assert reads == []


def test_generic_rules_import_only_the_model_layer() -> None:
    bad = []
    for name, tree in _modules():
        for node in ast.walk(tree):  # functions' own imports too
            if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module:
                target = node.module if node.level == 2 else f"rules.{node.module}"
                if target.split(".")[0] in FORBIDDEN and (name, target) not in PENDING:
                    bad.append(f"{name}.py:{node.lineno} imports {target}")
    assert bad == []


def _run(code: str, config: TrainingConfig, gpus: list[str]) -> list[Finding]:
    """The rule's findings; the plan is resolved by the dialect's own framework (the resolver's key)."""
    plan = plan_for(replace(config, framework=config.dialect.replace("hf-trainer", "transformers")), gpus)
    context = Context(config, plan, hardware_for(gpus, {}), Versions({}))
    return list(RULES[code].check(context))


def test_a_trait_not_a_name_decides() -> None:
    """The same files, read by the same dialect: only the trait changes the finding; a new name does not."""
    config = read_as("torchtune", TORCHTUNE_FP16)
    assert _run("PC405", config, ["V100"]) == []  # refuses fp16 before training
    renamed = replace(config, framework="another-framework")
    assert _run("PC405", renamed, ["V100"]) == []
    accepting = replace(config, traits=replace(config.traits, refuses_fp16=False))
    assert [f.message.split(":")[0] for f in _run("PC405", accepting, ["V100"])] == [
        "gradients are float16 and nothing scales the loss"
    ]

    hf = read_as("hf-trainer", HF_TF32)
    assert len(_run("PC103", hf, ["V100"])) == 1
    assert _run("PC103", replace(hf, traits=replace(hf.traits, hf_trainer=False)), ["V100"]) == []


def test_a_trait_carries_the_frameworks_own_words() -> None:
    config = read_as("torchtune", TORCHTUNE_BF16)
    (finding,) = _run("PC208", config, ["A100"])
    assert finding.message.startswith("torchtune trains in `dtype` with no fp32 copy by design, and ")
    other = replace(config, traits=replace(config.traits, pure_bf16_by_design="X keeps bf16 weights by design"))
    (finding,) = _run("PC208", other, ["A100"])
    assert finding.message.startswith("X keeps bf16 weights by design, and ")
    plain = replace(config, traits=replace(config.traits, pure_bf16_by_design=None))
    assert _run("PC208", plain, ["A100"]) == []  # then it is an accident: PC207's
