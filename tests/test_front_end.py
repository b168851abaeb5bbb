"""Issue 28, item 3: a repository's YAML front-end whose block its code hands to
``TrainingArguments``/``SFTConfig`` is read with that class's semantics. Real files: THUDM
GLM-4 and ChatGLM3 (``finetune/configs/*.yaml``, ``Seq2SeqTrainingArguments(**training_args)``
in ``finetune.py`` / ``finetune_hf.py``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from precheck.engine import run
from precheck.hardware import from_specs
from precheck.sources import load_runs

PROJECTS = Path(__file__).resolve().parents[2] / "shared" / "projects"
GLM4 = PROJECTS / "THUDM__GLM-4" / "finetune" / "configs"
CHATGLM3 = PROJECTS / "THUDM__ChatGLM3" / "finetune_demo" / "configs"
needs_projects = pytest.mark.skipif(not GLM4.is_dir(), reason="the shared real projects are not here")

FRONT_END = """\
model_name: Qwen/Qwen2.5-0.5B
data_config:
  train_file: train.jsonl
training_args:
  output_dir: ./out
  per_device_train_batch_size: 2
  bf16: true
  deepspeed: configs/ds.json
"""
DS = '{"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}'


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def errors(path: Path, gpu: str) -> set[tuple[str, str, int | None]]:
    report = run([str(path)], from_specs([gpu], {}), env={})
    return {
        (f.rule, Path(f.origin.path or "").name, f.origin.line) for f in report.findings if f.severity.name == "ERROR"
    }


@pytest.mark.parametrize(
    ("code", "dialect"),
    [
        ("args = TrainingArguments(**config['training_args'])\n", "hf-trainer"),
        ("args = SFTConfig(**cfg.training_args, report_to='none')\n", "trl"),
    ],
)
def test_block_handed_over_by_the_code_is_read(tmp_path: Path, code: str, dialect: str) -> None:
    write(tmp_path, "train.py", "import yaml\n" + code)
    config = write(tmp_path, "configs/run.yaml", FRONT_END)
    write(tmp_path, "configs/ds.json", DS)  # next to the code (the run's working folder), not the YAML
    documents = load_runs(config, str(config))
    assert [d.dialect for d in documents] == [dialect]
    assert set(documents[0].mapping()) == {"output_dir", "per_device_train_batch_size", "bf16", "deepspeed"}
    assert ("PC101", "run.yaml", 7) in errors(config, "V100")  # bf16: true, where the YAML says it
    assert errors(config, "A100") == set()
    report = run([str(config)], from_specs(["A100"], {}), env={})
    # the DeepSpeed file the block names, found from the code's folder (the run's working folder)
    assert [Path(p).name for r in report.files for p in r.attached] == ["ds.json"]


def test_load_runs_looks_at_every_top_level_block(tmp_path: Path) -> None:
    # a block of any name the code names itself (`SFTConfig(` `**config["training"])`) is read
    write(tmp_path, "requirements.txt", "")
    config = write(tmp_path, "run.json", '{"models": {"student": "m"},\n "training": {"bf16": true}}\n')
    write(tmp_path, "train.py", 'config = json.load(open("run.json"))\nSFTConfig(' + '**config["training"])\n')
    assert errors(config, "V100") == {("PC101", "run.json", 2)}
    # a bare name is a block only when it is one of BLOCKS or bound to one (`kwargs` is neither)
    from precheck.sources import front_end

    write(tmp_path, "train.py", "training = 1\nSFTConfig(" + "**training)\n")
    front_end.clear()
    assert errors(config, "V100") == set()
    write(tmp_path, "train.py", "kwargs = config.training\nSFTConfig(" + "**kwargs)\n")
    front_end.clear()
    assert errors(config, "V100") == {("PC101", "run.json", 2)}


def test_no_handoff_in_the_code_leaves_the_file_alone(tmp_path: Path) -> None:
    write(tmp_path, "train.py", "args = TrainingArguments(output_dir='o')\n")
    config = write(tmp_path, "run.yaml", FRONT_END)
    assert [d.dialect for d in load_runs(config, str(config))] == [None]
    assert errors(config, "V100") == set()


@needs_projects
@pytest.mark.parametrize("folder", [GLM4, CHATGLM3], ids=["GLM-4", "ChatGLM3"])
def test_glm_front_ends(folder: Path) -> None:
    for path in sorted(folder.glob("*.yaml")):
        documents = load_runs(path, str(path))
        assert [d.dialect for d in documents] == ["hf-trainer"], path
        assert errors(path, "8xH100") == set() and errors(path, "V100") == set()


#: Hydra configs that build TRL's GRPOConfig from a `_target_` block: gensyn-ai/rl-swarm's
#: rgym_exp/config/rg-swarm.yaml@4d44599 (3f32e09^, the file of rl-swarm#396), and its
#: code-gen-swarm.yaml@9c95410, whose `_target_: code_gen_exp.src.proposer.PPOConfig` is the
#: repository's own class, not TRL's
HYDRA = Path(__file__).parent / "fixtures" / "hydra_front_end"


def test_hydra_target_block_is_read_as_its_class() -> None:
    # TRL's GRPOConfig: bf16 None -> `not fp16` (trl/trainer/grpo_config.py:530@0.19.1): fp16: false
    # leaves bf16 on, which a T4 lacks; cited at the block's `_target_:` (a default of the class)
    config = HYDRA / "rl-swarm-rg-swarm.yaml"
    (run_,) = load_runs(config)
    assert run_.dialect == "trl" and "fp16" in run_.mapping() and "_target_" in run_.mapping()
    assert errors(config, "T4") == {("PC101", config.name, 61)}
    assert errors(config, "A100") == set()


def test_hydra_reference_is_the_referred_value(tmp_path: Path) -> None:
    # the community's fix of rl-swarm#396 (fp16/bf16 false under `training:`, referred to by the
    # block): no bf16 left; the same file with `bf16: true` there is an error
    text = (HYDRA / "rl-swarm-rg-swarm.yaml").read_text(encoding="utf-8")
    fixed = text.replace("  fp16: false #", "  bf16: false\n  fp16: false #").replace(
        "      fp16: ${training.fp16}\n", "      fp16: ${training.fp16}\n      bf16: ${training.bf16}\n"
    )
    assert fixed != text
    path = write(tmp_path, "rg-swarm.yaml", fixed)
    assert errors(path, "T4") == set()
    path.write_text(fixed.replace("  bf16: false\n", "  bf16: true\n"), encoding="utf-8")
    assert {rule for rule, _, _ in errors(path, "T4")} == {"PC101"}


def test_hydra_target_of_another_package_or_partial_is_not_a_run(tmp_path: Path) -> None:
    (own,) = load_runs(HYDRA / "rl-swarm-code-gen-swarm.yaml")
    assert own.dialect is None
    partial = write(
        tmp_path, "c.yaml", "args:\n  _target_: transformers.TrainingArguments\n  _partial_: true\n  bf16: true\n"
    )
    (read,) = load_runs(partial)
    assert read.dialect is None
    whole = write(tmp_path, "d.yaml", "args:\n  _target_: transformers.TrainingArguments\n  bf16: true\n")
    assert errors(whole, "V100") == {("PC101", "d.yaml", 3)}


def test_block_bound_to_a_name_then_handed_over(tmp_path: Path) -> None:
    # `args = cfg["training_args"]` ... `TrainingArguments(**args)`: the name holds the whole block
    write(tmp_path, "requirements.txt", "")
    config = write(tmp_path, "config.yaml", FRONT_END.replace("  deepspeed: configs/ds.json\n", ""))
    write(
        tmp_path,
        "train.py",
        'cfg = yaml.safe_load(open("config.yaml"))\nargs = cfg["training_args"]\nTrainingArguments(**args)\n',
    )
    assert errors(config, "V100") == {("PC101", "config.yaml", 7)}
    # one section of the block, chosen at run time: not read
    write(tmp_path, "train.py", 'args = cfg.get("training_args", {}).get(device, {})\nTrainingArguments(**args)\n')
    from precheck.sources import front_end

    front_end.clear()
    assert errors(config, "V100") == set()


def test_code_in_a_folder_beside_the_config(tmp_path: Path) -> None:
    # configs/train.yaml and src/train.py under the repository's root: the code that names the
    # config file hands its block over; code that does not name it is not taken for its reader
    from precheck.sources import front_end

    write(tmp_path, "pyproject.toml", "")
    config = write(tmp_path, "configs/train.yaml", FRONT_END.replace("  deepspeed: configs/ds.json\n", ""))
    code = write(tmp_path, "src/other.py", "TrainingArguments(**cfg['training_args'])\n")
    front_end.clear()
    assert errors(config, "V100") == set()
    code.write_text('cfg = yaml.safe_load(open("configs/train.yaml"))\nTrainingArguments(**cfg["training_args"])\n')
    front_end.clear()
    assert errors(config, "V100") == {("PC101", "train.yaml", 7)}


EASYDISTILL = Path(__file__).parent / "fixtures" / "front_end_launch" / "easydistill"
KD = "configs/kd_black_box_local.json"
LAST = '"lr_scheduler_type": "cosine"'  # the `training` block's last key


def launched(tmp_path: Path, command: str, edit: dict[str, str] | None = None) -> Path:
    """A copy of the trimmed easydistill tree with ``run.sh`` holding ``command``."""
    import shutil

    tree = tmp_path / "easydistill"
    shutil.copytree(EASYDISTILL, tree)
    for name, text in (edit or {}).items():
        path = tree / name
        path.write_text(path.read_text(encoding="utf-8").replace(*text.split("=>")), encoding="utf-8")
    return write(tree, "run.sh", command + "\n")


def test_config_named_by_a_launch_flag_hands_its_block(tmp_path: Path) -> None:
    # `python easydistill/kd/train.py --config configs/x.json`; the script does
    # `config = json.load(open(args.config))` and `SFTConfig(**config["training"])`: the block's
    # settings are the run's (TRL's SFTConfig, its defaults for what the block leaves out)
    run_sh = launched(
        tmp_path,
        "python easydistill/kd/train.py --config configs/kd_black_box_local.json",
        {KD: f'{LAST}=>{LAST},\n "bf16": true'},
    )
    (document,) = load_runs(run_sh, str(run_sh))
    assert document.dialect == "trl" and "config" not in document.mapping()
    assert {"bf16", "learning_rate", "output_dir"} <= set(document.mapping())
    assert {(rule, name) for rule, name, _ in errors(run_sh, "V100")} == {("PC101", "kd_black_box_local.json")}
    assert errors(run_sh, "8xA100-80GB") == set()
    # fp16 stated in the block: no error on a V100; no unknown-option warning for the block's keys
    fixed = launched(
        tmp_path / "fp16",
        "python easydistill/kd/train.py --config configs/kd_black_box_local.json",
        {KD: f'{LAST}=>{LAST}, "bf16": false, "fp16": true'},
    )
    report = run([str(fixed)], from_specs(["V100"], {}), env={})
    assert [f.rule for f in report.findings if f.severity.name in ("ERROR", "WARNING")] == []


def test_config_flag_of_a_script_that_hands_no_block_stays_a_flag(tmp_path: Path) -> None:
    run_sh = launched(
        tmp_path,
        "python easydistill/rl/grpo_train.py --config configs/rl_grpo.json",
        {"easydistill/rl/grpo_train.py": 'config["training"]=>config["other"]'},
    )
    assert load_runs(run_sh, str(run_sh)) == []  # as before: the file is not the run's settings
    handed = launched(tmp_path / "handed", "python easydistill/rl/grpo_train.py --config configs/rl_grpo.json")
    (document,) = load_runs(handed, str(handed))
    assert document.dialect == "trl" and "learning_rate" in document.mapping()


@pytest.mark.parametrize(
    "call",
    [
        # the forms public front-ends use: OmegaConf's container of the block, and keyword arguments
        # the code sets itself before the block's
        "TrainingArguments(**OmegaConf.to_container(cfg.training, resolve=True))",
        "TrainingArguments(\n    output_dir=output_dir,\n    overwrite_output_dir=True,\n"
        "    **OmegaConf.to_container(cfg.training, resolve=True)\n)",
        "SFTConfig(**dict(cfg.training), report_to='none')",
    ],
)
def test_block_through_a_conversion_or_after_keywords(tmp_path: Path, call: str) -> None:
    from precheck.sources import front_end

    write(tmp_path, "requirements.txt", "")
    config = write(tmp_path, "config.yaml", "model: gpt2\ntraining:\n  num_train_epochs: 1\n  bf16: true\n")
    write(tmp_path, "train.py", 'cfg = OmegaConf.load("config.yaml")\nargs = ' + call + "\n")
    front_end.clear()
    assert errors(config, "V100") == {("PC101", "config.yaml", 4)}
    assert errors(config, "8xA100-80GB") == set()
