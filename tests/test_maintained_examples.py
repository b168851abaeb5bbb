"""Issue 28, "Done when": each framework's own maintained examples (small unchanged copies in
``tests/fixtures/maintained`` and ``tests/fixtures/gpt_neox``, origins in their READMEs) raise no
error on ``--gpu 8xH100``, and their plans are what the framework builds; xtuner's launch with
one of its bundled DeepSpeed files fills ``"auto"`` from the device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from precheck.engine import FileResult, run
from precheck.hardware import from_specs
from precheck.versions import parse_assumptions

ROOT = Path(__file__).resolve().parents[1]
MAINTAINED = ROOT / "tests" / "fixtures" / "maintained"
FOLDERS = {
    "xtuner": MAINTAINED / "xtuner",
    "litgpt": MAINTAINED / "litgpt",
    "llm-foundry": MAINTAINED / "llm_foundry",
    "nemo": MAINTAINED / "nemo",
    "gpt-neox": ROOT / "tests" / "fixtures" / "gpt_neox" / "configs",
}
XTUNER = FOLDERS["xtuner"]
PGBOOKS = XTUNER / "llama2_7b_full_pgbooks_400iters_sp1.py"


def _run(paths: list[Path], gpu: str, assume: list[str] | None = None) -> tuple[Any, dict[str, FileResult]]:
    results: dict[str, FileResult] = {}

    def keep(result: FileResult) -> None:
        results[Path(result.path).name] = result

    report = run(
        [str(p) for p in paths],
        from_specs([gpu], {}),
        env={},
        on_file=keep,
        assumed_versions=parse_assumptions(assume or []),
    )
    return report, results


def _plan(result: FileResult) -> dict[str, Any]:
    plan = result.plan
    assert plan is not None
    return {
        "load": plan.load_dtype.value,
        "params": plan.param_dtype.value,
        "autocast": plan.autocast_dtype.value,
        "master": plan.master_weights.value if plan.master_weights else None,
    }


@pytest.mark.parametrize("framework", sorted(FOLDERS))
def test_no_error_on_8xh100(framework: str) -> None:
    report, results = _run([FOLDERS[framework]], "8xH100")
    assert [f"{f.rule} {f.origin.path}:{f.origin.line}" for f in report.findings if f.severity.name == "ERROR"] == []
    assert not report.errors
    if framework != "nemo":  # NeMo's recipe modules build runs for a caller: none is a run itself
        assert any(r.dialect is not None for r in results.values())


def test_plans_on_8xh100() -> None:
    _, results = _run([FOLDERS["litgpt"], FOLDERS["llm-foundry"], XTUNER], "8xH100")
    # litgpt: `precision: bf16-true` in its config_hub LoRA recipe: bf16 weights, no autocast
    lora = _plan(results["finetune_llama-2-7b_lora.yaml"])
    assert (lora["load"], lora["autocast"]) == ("bfloat16", None)
    # llm-foundry: `precision: amp_bf16`: Composer's bf16 autocast over fp32 weights
    mpt = _plan(results["mpt-7b.yaml"])
    assert (mpt["params"], mpt["autocast"]) == ("float32", "bfloat16")
    # xtuner, a config alone: its AmpOptimWrapper (float16 by default) over the weights it loads
    pgbooks = _plan(results[PGBOOKS.name])
    assert (pgbooks["load"], pgbooks["autocast"]) == ("bfloat16", "float16")


def _launch(tmp_path: Path, line: str) -> Path:
    (tmp_path / PGBOOKS.name).write_text(PGBOOKS.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "train.sh").write_text(line + "\n", encoding="utf-8")
    return tmp_path / "train.sh"


def test_xtuner_bundled_deepspeed_fills_bf16_on_h100(tmp_path: Path) -> None:
    script = _launch(tmp_path, f"NPROC_PER_NODE=8 xtuner train {PGBOOKS.name} --deepspeed deepspeed_zero2")
    report, results = _run([script], "8xH100")
    assert not [f for f in report.findings if f.severity.name in ("ERROR", "WARNING")]
    plan = _plan(results["train.sh"])
    # DeepSpeed bf16 (bf16.enabled "auto" filled with is_bf16_supported()): fp32 master weights
    assert (plan["params"], plan["master"]) == ("bfloat16", "float32")
    assert results["train.sh"].plan is not None and "auto_dtype_of_deepspeed_config" in str(
        results["train.sh"].plan.param_dtype.origin
    )
    # without --deepspeed the AmpOptimWrapper trains the bf16 weights in place: PC207
    plain = _launch(tmp_path, f"xtuner train {PGBOOKS.name}")
    report, _ = _run([plain], "8xH100")
    assert {f.rule for f in report.findings} == {"PC207"}


def test_xtuner_bundled_deepspeed_fills_fp16_where_torch_sees_no_bf16(tmp_path: Path) -> None:
    script = _launch(tmp_path, f"xtuner train {PGBOOKS.name} --deepspeed deepspeed_zero3_offload")
    _, results = _run([script], "8xV100", ["torch==2.2.2"])
    plan = _plan(results["train.sh"])
    assert (plan["params"], plan["master"]) == ("float16", "float32")  # fp16 filled: bf16 not supported
    result = results["train.sh"].plan
    assert result is not None and result.loss_scaling.value == "dynamic"


def test_xtuner_unknown_deepspeed_name_is_noted(tmp_path: Path) -> None:
    script = _launch(tmp_path, f"xtuner train {PGBOOKS.name} --deepspeed deepspeed_zero9")
    report, _ = _run([script], "8xH100")
    assert not report.errors


def test_xtuner_70b_full_finetune_names_the_offload_assumption() -> None:
    report, _ = _run([XTUNER / "llama2_70b_full_wizardlm_e1.py"], "8xH100")
    memory = [f for f in report.findings if f.rule == "PC801"]
    assert memory and all(f.severity.name == "WARNING" for f in memory)
    assert any("without CPU offload" in a for f in memory for a in f.assumptions)


def test_xtuner_llava_fp16_projector_is_an_error_only_without_deepspeed(tmp_path: Path) -> None:
    llava = XTUNER / "llava_internlm2_chat_7b_clip_vit_large_p14_336_e1_gpu8_pretrain.py"
    report, _ = _run([llava], "8xH100")
    pc401 = [f for f in report.findings if f.rule == "PC401"]
    assert pc401 and all(f.severity.name == "WARNING" for f in pc401)
    assert any("--deepspeed" in a for f in pc401 for a in f.assumptions)


def test_xtuner_config_alone_names_the_launch_its_warnings_assume() -> None:
    # the README's launch adds --deepspeed deepspeed_zero2: DeepSpeed bf16 keeps fp32 master weights,
    # so the bf16-in-place warning holds only for a launch without it, and says so
    report, _ = _run([PGBOOKS], "8xH100")
    pc207 = [f for f in report.findings if f.rule == "PC207"]
    assert pc207 and all("without `--deepspeed`" in " ".join(f.assumptions) for f in pc207)


def test_xtuner_sequence_parallel_config_runs_under_deepspeed() -> None:
    # sequence_parallel_size > 1 without --deepspeed fails check_cfg's assertion (tools/train.py:132-138@0.2.0):
    # the config alone is read as launched with the README's deepspeed_zero2
    sp8 = XTUNER / "llama2_7b_full_alpaca_enzh_128k_sp8.py"
    report, results = _run([sp8], "8xH100")
    assert not [f for f in report.findings if f.severity.name in ("ERROR", "WARNING")]
    plan = _plan(results[sp8.name])
    assert (plan["params"], plan["master"]) == ("bfloat16", "float32")


def test_xtuner_sequence_parallel_memory_leaves_the_zero_stage_to_the_launch(tmp_path: Path) -> None:
    # every bundled DeepSpeed file fills fp16/bf16 "auto" alike, but their ZeRO stage differs and the
    # 70B configs' READMEs launch deepspeed_zero3: the stage a config alone runs under is the launch's,
    # so its memory estimate is the best case with that assumption named; a launch that names its
    # file is a fact (70B full fine-tune states on 8 cards: no stage fits)
    sp8 = XTUNER / "llama2_70b_full_alpaca_enzh_128k_sp8.py"
    report, _ = _run([sp8], "8xH100")
    memory = [f for f in report.findings if f.rule == "PC801"]
    assert memory and all(f.severity.name == "WARNING" for f in memory)
    assert any("shards without CPU offload" in a for f in memory for a in f.assumptions)
    (tmp_path / sp8.name).write_text(sp8.read_text(encoding="utf-8"), encoding="utf-8")
    for stage in ("deepspeed_zero2", "deepspeed_zero3"):
        launch = tmp_path / f"{stage}.sh"
        launch.write_text(f"NPROC_PER_NODE=8 xtuner train {sp8.name} --deepspeed {stage}\n", encoding="utf-8")
        report, _ = _run([launch], "8xH100")
        assert [f.severity.name for f in report.findings if f.rule == "PC801"] == ["ERROR"], stage


def test_xtuner_memory_reads_the_dataloader_and_activation_checkpointing(tmp_path: Path) -> None:
    # train_dataloader's batch_size and its dataset's max_length are the micro-batch and sequence;
    # SupervisedFinetune checkpoints activations unless use_activation_checkpointing=False
    # (model/sft.py:90@0.2.0)
    _, results = _run([PGBOOKS], "8xH100")
    plan = results[PGBOOKS.name].plan
    config = results[PGBOOKS.name].config
    assert plan is not None and config is not None
    assert plan.gradient_checkpointing is not None and plan.gradient_checkpointing.value is True
    assert config.batch_size is not None and config.batch_size.value == 1
    assert config.seq_len is None  # a pre-tokenized dataset: the module's max_length is not the dataset's
    # a second real config (EmoLLM's, fresh report case 222): micro-batch 8 x 2048 on a 24 GB card
    emollm = ROOT / "tests/fixtures/fresh_reports/cases/222-emollm-xtuner-internlm2-7b-qlora-batch8-3090ti-memory"
    config_file = emollm / "internlm2_7b_chat_qlora_e3.py"
    report, results = _run([config_file], "1xRTX3090Ti")
    near = [f for f in report.findings if f.rule in ("PC801", "PC802")]
    assert near and "micro-batch 1" in (near[0].fix.description if near[0].fix else "")
    off = tmp_path / config_file.name
    off.write_text(
        config_file.read_text(encoding="utf-8").replace(
            "type=SupervisedFinetune,", "type=SupervisedFinetune,\n    use_activation_checkpointing=False,"
        ),
        encoding="utf-8",
    )
    _, results = _run([off], "1xRTX3090Ti")
    plan = results[off.name].plan
    assert plan is not None and plan.gradient_checkpointing is not None
    assert plan.gradient_checkpointing.value is False and plan.gradient_checkpointing.origin.line is not None


def test_xtuner_launch_without_deepspeed_is_ddp_unsharded(tmp_path: Path) -> None:
    # `xtuner train CONFIG` without --deepspeed sets no strategy (tools/train.py:278-366@0.2.0): mmengine
    # wraps the model in MMDistributedDataParallel, a full copy per GPU (InternLM/xtuner#88, fresh case 224):
    # the memory estimate is the unsharded one and rests on no launcher assumption; the config alone
    # (the launch unknown) keeps the best case with that assumption named
    config = XTUNER / "llama2_70b_full_wizardlm_e1.py"
    (tmp_path / config.name).write_text(config.read_text(encoding="utf-8"), encoding="utf-8")
    launch = tmp_path / "ddp.sh"
    launch.write_text(f"NPROC_PER_NODE=8 xtuner train {config.name}\n", encoding="utf-8")
    report, _ = _run([launch], "8xH100")
    memory = [f for f in report.findings if f.rule == "PC801"]
    assert [f.severity.name for f in memory] == ["ERROR"]
    assert "sharded" not in memory[0].message and not memory[0].assumptions
    report, _ = _run([config], "8xH100")
    alone = [f for f in report.findings if f.rule == "PC801"]
    assert alone and all(f.severity.name == "WARNING" for f in alone)
    assert "ZeRO-3" in alone[0].message


def test_nemo_example_recipe_runs_in_bf16() -> None:
    # auto_config.py builds its run from `partial(llm.llama3_8b.pretrain_recipe, ...)()`
    # (NVIDIA/NeMo@8cfedd7 examples/llm/auto_configurator/auto_config.py:51): the recipe's trainer,
    # with its bf16_mixed() plugin (llama3_8b.py:138): none on 8xH100 (above), bf16 on a V100
    report, _ = _run([FOLDERS["nemo"] / "auto_config.py"], "8xV100")
    errors = [
        (f.rule, Path(f.origin.path or "").name, f.origin.line) for f in report.findings if f.severity.name == "ERROR"
    ]
    assert errors == [("PC101", "auto_config.py", 51)]
