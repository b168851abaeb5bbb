"""Classes of false or misworded findings seen on the lead's development audit (issues 27, 29),
each tested on the file that showed it and on a second, different real file."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import engine
from precheck.errors import DataFile
from precheck.hardware import from_specs
from precheck.sources.script_path import clear

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "devset"
PROJECTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "projects"
needs_projects = pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects is not present")


def findings(path: Path, gpu: str) -> list[engine.Finding]:
    clear()
    result = engine.run([str(path)], from_specs([gpu], {}), env={})
    return list(result.findings)


def test_deepspeed_num_gpus_past_the_machine_names_the_flag_and_the_count() -> None:
    """DeepSpeedExamples' test_tune.sh: `deepspeed --num_gpus=$NGPUS` with NGPUS=16 on 8 GPUs. The error
    named a CUDA_VISIBLE_DEVICES the script never writes; the launcher's own flag decides."""
    script = FIXTURES / "DeepSpeedExamples" / "training" / "autotuning" / "hf" / "bert-large" / "test_tune.sh"
    found = [f for f in findings(script, "8xA100-80GB") if f.rule == "PC502"]
    assert {f.origin.line for f in found} >= {31, 45}
    for f in found:
        assert f.message.startswith("`--num_gpus=16` asks for 16 GPUs on a node with 8")
        assert "CUDA_VISIBLE_DEVICES" not in f.message
        assert f.fix is not None and "--num_gpus=8" in f.fix.description


@needs_projects
@pytest.mark.parametrize("project", ["THUDM__ChatGLM-6B", "THUDM__ChatGLM2-6B"])
def test_deepspeed_num_gpus_against_the_card_count_of_a_second_script(project: str) -> None:
    """ChatGLM's ptuning/ds_train_finetune.sh: `deepspeed --num_gpus=4`: an error on two cards, naming
    the flag; none on four."""
    script = PROJECTS / project / "ptuning" / "ds_train_finetune.sh"
    two = [f for f in findings(script, "2xA100-80GB") if f.rule == "PC502"]
    assert [f.origin.line for f in two] == [6]
    assert two[0].message.startswith("`--num_gpus=4` asks for 4 GPUs on a node with 2")
    assert not [f for f in findings(script, "4xA100-80GB") if f.rule == "PC502"]


REPORTS = Path(__file__).resolve().parents[1] / ".." / "shared" / "reports" / "cases"


def test_glm4_is_a_bf16_released_family_and_chatglm_is_not() -> None:
    """GLM-4's config.json says bfloat16 (models.py cites it); ChatGLM-6B's says float16."""
    from precheck.models import family_of

    for name in ("THUDM/glm-4-9b-chat", "/home/u/models/glm-4-9b-chat", "THUDM/glm-4-9b-chat-1m", "glm4-9b"):
        family = family_of(name)
        assert family is not None and family.native_dtype == "bfloat16", name
    for name in ("THUDM/chatglm-6b", "THUDM/chatglm2-6b", "THUDM/chatglm3-6b"):
        assert family_of(name) is None, name


@pytest.mark.skipif(not REPORTS.is_dir(), reason="../shared/reports is not present")
def test_fp16_on_a_local_glm4_checkpoint_warns() -> None:
    """Report case 123 (LlamaFactory#4116): a LLaMA-Factory YAML with a local glm-4-9b-chat and fp16: true."""
    case = REPORTS / "123-llamafactory-glm4-9b-fp16-titan-rtx-cvd" / "examples" / "lora_multi_gpu"
    found = [f for f in findings(case / "llama3_lora_sft.yaml", "4xTITAN RTX") if f.rule == "PC202"]
    assert [(f.origin.line, f.severity.name) for f in found] == [(28, "WARNING")]
    assert "GLM-4" in found[0].message


GORILLA = FIXTURES / "LLaMA-Adapter" / "gorilla" / "gorilla-main" / "data" / "apibench"
ZERO_NLP = FIXTURES / "zero_nlp" / "train_qwen" / "data" / "custom_data001"


@pytest.mark.parametrize("folder", [GORILLA, ZERO_NLP])
def test_json_lines_named_json_is_a_data_file(folder: Path) -> None:
    """LLaMA-Adapter's gorilla apibench/*_eval.json (first 20 of its records, holding 'precision' and
    'optim') and zero_nlp's train_qwen data_0.json: one JSON record a line. A folder search passes them
    over with a note (the run exited 2); named, the error says what the file is."""
    clear()
    result = engine.run([str(folder)], from_specs(["8xA100-80GB"], {}), env={})
    files = [r for r in result.files if r.path.endswith(".json")]
    assert files and all(r.error is None and r.skipped and "not a config" in r.skipped for r in files)
    clear()
    named = engine.run([str(files[0].path)], from_specs(["8xA100-80GB"], {}), env={})
    [report] = named.files
    if report.error is not None:  # words of a config in it: reported, as every file named
        assert isinstance(report.error, DataFile) and report.error.line == 2
        assert "JSON Lines" in report.error.message
    else:  # no config words: passed over even when named, saying why
        assert report.skipped is not None and "JSON Lines" in report.skipped


@pytest.mark.parametrize(
    "script",
    [
        FIXTURES / "trlx" / "examples" / "hh" / "ppo_hh.py",  # PPOConfig from trlx.data.default_configs
        FIXTURES / "open-instruct" / "open_instruct" / "grpo.py",  # RewardConfig from open_instruct.ground_truth_utils
    ],
)
def test_a_trl_config_name_another_package_defines_is_not_trl(script: Path) -> None:
    """trlx's PPOConfig and open-instruct's RewardConfig share a name with TRL's configs: they were read
    as TRL's, with its bf16 default (PC101 errors on a V100 at the call). The class is the package's."""
    clear()
    result = engine.run([str(script)], from_specs(["V100"], {}), env={})
    assert not [f for f in result.findings if f.severity.name == "ERROR"]
    assert all(r.dialect is None for r in result.files)


def test_a_trl_config_imported_from_trl_is_still_trl() -> None:
    from precheck.sources.python_calls import kind_of

    assert kind_of("trl.PPOConfig") == "trl" and kind_of("trl.trainer.sft_config.SFTConfig") == "trl"
    assert kind_of("SFTConfig") == "trl"  # origin unknown (a star import): TRL's, as before
    assert kind_of("trlx.data.default_configs.PPOConfig") is None


@pytest.mark.parametrize(
    "template",
    [
        FIXTURES / "DeepSpeedExamples" / "compression" / "bert" / "config" / "ds_config_TEMPLATE.json",
        FIXTURES
        / "DeepSpeedExamples"
        / "training"
        / "data_efficiency"
        / "gpt_finetuning"
        / "finetune"
        / "ds_config_gpt2_TEMPLATE.json",
    ],
)
def test_a_json_template_with_placeholders_is_passed_over_in_a_folder(template: Path) -> None:
    """DeepSpeedExamples' ds_config_*_TEMPLATE.json (`"train_micro_batch_size_per_gpu": BATCH_SIZE_PER_GPU`,
    filled in by sed in the scripts): the folder search exited 2; named, the error names the placeholder."""
    clear()
    result = engine.run([str(template.parent)], from_specs(["8xA100-80GB"], {}), env={})
    [report] = [r for r in result.files if r.path.endswith(template.name)]
    assert report.error is None and report.skipped is not None and "template" in report.skipped
    clear()
    [named] = engine.run([str(template)], from_specs(["8xA100-80GB"], {}), env={}).files
    assert isinstance(named.error, DataFile) and "placeholders" in named.error.message
