"""Issue 29, "False errors and warnings seen on new repositories": each class of false error
seen on fresh repositories, tested on the repository's own files (``tests/fixtures/fresh``,
their sources in its README) and on a second real file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from precheck import api
from precheck.pins import pins_in
from precheck.rules.base import Severity
from precheck.versions import VersionInfo, Versions

FRESH = Path(__file__).parent / "fixtures" / "fresh"


def _found(path: Path, gpu: str = "8xA100-80GB", **kw: object) -> list[tuple[str, Severity, str, int]]:
    report = api.check(str(path), gpu, use_project=False, **kw)  # type: ignore[arg-type]
    return [(f.rule, f.severity, str(f.origin.path), f.origin.line or 0) for f in report.findings]


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(FRESH / name, root)
    (root / ".git").mkdir()  # the repository's root: pins above it are not the run's
    return root


# --- a version range is the set of releases it allows (DESIGN.md, "Findings rest on facts") ---


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("2.6.1", "none"),
        ("1.9.5", "all"),
        (">=2.6.1", "none"),  # read as release 0 before: every '-true' name was refused
        (">2.0", "some"),
        (">=2.0,<3", "some"),
        ("<2.1", "all"),
        ("<=2.0.9", "all"),
        ("~=2.6", "none"),
        ("~=2.0.1", "all"),  # 2.0.x only
        ("~=2.0", "some"),  # 2.0 to the last 2.x
        ("==2.6.*", "none"),
        ("==2.0.*", "all"),
        ("!=2.0.0", "some"),  # only removes one release: 1.x is allowed too
        ("!=2.6.0,>=2.5", "none"),
        ("===2.6.1", "none"),
    ],
)
def test_older_than_judges_a_range_by_the_releases_it_allows(spec: str, expected: str) -> None:
    versions = Versions({"lightning": VersionInfo("lightning", spec, "pyproject.toml:30")})
    assert versions.older_than("lightning", "2.1.0") == expected
    assert Versions().older_than("lightning", "2.1.0") == "none"  # not known: the newest release


def test_pins_with_markers_extras_and_conda_ranges(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "lightning[extra] >= 2.6.1 ; python_version >= '3.8'\ntorch~=2.4\ndeepspeed==0.16.*\n"
    )
    (tmp_path / "environment.yml").write_text("dependencies:\n  - pytorch-lightning=2.1\n  - deepspeed==0.14.4\n")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[project.optional-dependencies]\nhf = ["torch>=2.1"]\n\n'
        '[project.dependencies-later]\n[dependency-groups]\ndev = ["peft>=0.10"]\n'
    )
    pins = {(p.name, n): v for p, n, v, _ in pins_in(tmp_path / "requirements.txt")}
    assert pins == {
        ("requirements.txt", "lightning"): ">=2.6.1",
        ("requirements.txt", "torch"): "~=2.4",
        ("requirements.txt", "deepspeed"): "==0.16.*",
    }
    conda = {n: v for _, n, v, _ in pins_in(tmp_path / "environment.yml")}
    assert conda == {"pytorch-lightning": "==2.1.*", "deepspeed": "0.14.4"}  # conda's `=2.1` is 2.1.x


def test_optional_extras_are_not_the_runs_pins(tmp_path: Path) -> None:
    """``[project.optional-dependencies]`` (precheck's own ``hf = ["torch>=2.1", ...]``, read as
    the torch of every config in its examples/) and dependency groups say what a feature or a
    tool needs, not what the run installs."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["lightning>=2.6.1"]\n[project.optional-dependencies]\n'
        'hf = ["torch>=2.1", "transformers>=4.40"]\n[dependency-groups]\ndev = ["peft>=0.10"]\n'
        '[tool.poetry.group.dev.dependencies]\ndeepspeed = "0.14.4"\n'
    )
    assert [(n, v) for _, n, v, _ in pins_in(tmp_path / "pyproject.toml")] == [("lightning", ">=2.6.1")]


def test_lightning_range_is_not_release_zero_on_litgpt(tmp_path: Path) -> None:
    """litgpt's ``lightning>=2.6.1`` (pyproject.toml:30): its `bf16-true` / `bf16-mixed`
    configs were refused as if Lightning were 1.x (22 PC703 errors on every target)."""
    root = _copy(tmp_path, "litgpt")
    for config in ("config_hub/finetune/phi-2/lora.yaml", "config_hub/pretrain/tinyllama.yaml"):
        assert [f for f in _found(root / config) if f[0] == "PC703"] == []
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('"lightning>=2.6.1"', '"lightning>=2.0,<3"'))
    ranged = [f for f in _found(root / "config_hub/finetune/phi-2/lora.yaml") if f[0] == "PC703"]
    assert [(r, s) for r, s, _, _ in ranged] == [("PC703", Severity.WARNING)]  # 2.0.x refuses 'bf16-true'
    pyproject.write_text(text.replace('"lightning>=2.6.1"', '"lightning~=1.9.0"'))
    old = [f for f in _found(root / "config_hub/finetune/phi-2/lora.yaml") if f[0] == "PC703"]
    assert [(r, s, line) for r, s, _, line in old] == [("PC703", Severity.ERROR, 8)]


# --- a script that is not TRL's entry point is not read with TRL's defaults ---

SHARED = Path(__file__).resolve().parents[2] / "shared"


def test_a_config_of_the_repositorys_own_parser_gets_no_trl_default(tmp_path: Path) -> None:
    """open-instruct's SFT configs (``with_tracking``, ``checkpointing_steps``: its own
    ``FlatArguments``, parsed by its ``ArgumentParserPlus``; TrlParser refuses those keys) were
    read as TRL configs: TRL's bf16 default made PC101 an error on a V100, and the HF Trainer's
    `adamw_torch` a PC303 error on an A100. The script is not read: at most warnings, naming it."""
    root = _copy(tmp_path, "open-instruct")
    config = root / "configs/train_configs/sft/tulu2_7b.yaml"
    for gpu in ("8xA100-80GB", "V100"):
        found = _found(config, gpu)
        assert found and all(s <= Severity.WARNING for _, s, _, _ in found), found
    second = SHARED / "corpus/hf-trainer/allenai__open-instruct__configs__train_configs__tulu3__tulu3_sft.yaml"
    if not second.is_file():
        pytest.skip("../shared/corpus is not here")
    assert [f for f in _found(second, "V100") if f[1] is Severity.ERROR] == []


def test_trl_recipe_keys_are_trls_own() -> None:
    """A TRL recipe's keys are all TRL's (``dataset_num_proc``, ``loss_type``, ``use_vllm``): it
    stays a TRL config."""
    from precheck.frameworks.hf_trainer.dialect import Trl, _foreign_keys

    keys = {"model_name_or_path", "dataset_num_proc", "loss_type", "use_vllm", "learning_rate", "bf16", "beta"}
    assert _foreign_keys(keys, Trl.known_keys) == []
    assert _foreign_keys({*keys, "with_tracking"}, Trl.known_keys) == ["with_tracking"]


# --- values left to run time: OmegaConf/Hydra ``${...}``, template ``${{ }}`` ---


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("${oc.env:PRECISION,fp16}", [("PC703", Severity.WARNING)]),  # its default, an assumption
        ("${oc.env:PRECISION}", []),  # unknown: nothing to refuse
        ("${{ matrix.precision }}", []),
        ("fp16", [("PC703", Severity.ERROR)]),  # as written: refused (the test can fail)
    ],
)
def test_an_interpolated_precision_is_not_refused_as_written(tmp_path: Path, written: str, expected: list) -> None:
    """``precision: ${oc.env:PRECISION,bf16}`` gave `PC703 error ... is refused before training`
    (the interpolation read as the precision's name). On litgpt's tinyllama recipe."""
    root = _copy(tmp_path, "litgpt")
    config = root / "config_hub/pretrain/tinyllama.yaml"
    config.write_text(config.read_text().replace("precision: bf16-mixed", f'precision: "{written}"'))
    found = [(r, s) for r, s, _, _ in _found(config) if r == "PC703"]
    assert found == expected
    if expected and expected[0][1] is Severity.WARNING:
        report = api.check(str(config), "8xA100-80GB", use_project=False)
        (finding,) = [f for f in report.findings if f.rule == "PC703"]
        assert "PRECISION" in " ".join(finding.assumptions)
        assert finding.fix is None or not finding.fix.edits  # never writes a constant over it


def test_interpolations_in_every_format() -> None:
    from precheck.sources import parse
    from precheck.sources.interpolation import INTERPOLATED

    yaml_doc = parse(
        "a.yaml", "dtype: bf16\nm:\n  p: ${dtype}\n  q: ${oc.env:Q,'16-mixed'}\n  r: x-${now:%Y}\n", "yaml"
    )
    m = yaml_doc.root.value["m"].value
    assert (m["p"].value, m["q"].value, m["r"].value) == ("${dtype}", "16-mixed", None)  # a reference: a fact
    assert [n.key for n in yaml_doc.notes if n.kind == INTERPOLATED] == ["q", "r"]
    json_doc = parse("ds.json", '{"fp16": {"enabled": "${{ inputs.fp16 }}"}}', "json")
    assert json_doc.root.value["fp16"].value["enabled"].value is None
    toml_doc = parse("c.toml", 'bf16 = "${oc.env:BF16,true}"\n', "toml")
    assert toml_doc.root.value["bf16"].value == "True"  # oc.env returns str(default)


# --- accelerate refuses mixed precision beside a DeepSpeed file only from its config file ---


def test_mixed_precision_flag_beside_a_deepspeed_file_is_accepted(tmp_path: Path, monkeypatch) -> None:
    """open-instruct's ``accelerate launch --mixed_precision bf16 --use_deepspeed
    --deepspeed_config_file ...conf``: PC605 called it refused in one script and not in its
    sibling. accelerate refuses it only from a config file (``mp_from_config_flag``,
    accelerate/commands/launch.py:1287-1292, 1392-1397@1.15.0)."""
    root = _copy(tmp_path, "open-instruct")
    monkeypatch.chdir(root)  # the scripts name their files from the repository's root
    for script in ("scripts/finetune_with_accelerate_config.sh", "scripts/finetune_with_accelerate.sh"):
        assert [f for f in _found(Path(script)) if f[0] == "PC605"] == []
    # the same setting from an accelerate config file is refused (the repository's own zero3 config)
    config = root / "configs/ds_configs/deepspeed_zero3.yaml"
    config.write_text(
        config.read_text().replace(
            "deepspeed_config:\n",
            "deepspeed_config:\n  deepspeed_config_file: configs/ds_configs/stage3_no_offloading_accelerate.conf\n",
        )
    )
    refused = [(r, s, line) for r, s, _, line in _found(Path("configs/ds_configs/deepspeed_zero3.yaml"))]
    assert ("PC605", Severity.ERROR, 15) in refused  # `mixed_precision: bf16`, line 15


# --- a script that builds its own loop is not read with the HF Trainer's defaults ---


@pytest.mark.parametrize("step", ["step1_supervised_finetuning", "step2_dpo_finetuning"])
def test_an_own_deepspeed_loop_gets_no_hf_trainer_default(tmp_path: Path, monkeypatch, step: str) -> None:
    """DeepSpeed-Chat's ``deepspeed main.py --per_device_train_batch_size 4 ...``: ``main.py``
    parses its own argparse options and trains through ``deepspeed.initialize`` (fp16 with
    dynamic loss scaling and fp32 master weights); its TrainingArguments-like flags made
    PC303 an error citing the HF Trainer's default `adamw_torch`. At most warnings naming the
    script, and no fix adds a flag ``main.py`` does not define."""
    root = _copy(tmp_path, "DeepSpeedExamples")
    monkeypatch.chdir(root / "applications/DeepSpeed-Chat/training" / step)
    report = api.check("training_scripts/llama2/run_llama2_7b.sh", "8xA100-80GB", use_project=False)
    assert report.findings
    (adam,) = [f for f in report.findings if f.rule == "PC303"]
    assert any("main.py" in a for a in adam.assumptions)
    for finding in report.findings:
        assert finding.severity <= Severity.WARNING, finding.message
        assert finding.fix is None or all(e.key.lstrip("-") != "torch_dtype" for e in finding.fix.edits)


@pytest.mark.parametrize(
    ("script", "rule"),
    [
        ("training/BingBertGlue/run_glue_classifier_bert_base.py", "PC405"),  # model.half(); fp16 engine scales
        ("training/DeepSpeed-ZenFlow/finetuning/finetune_llama.py", "PC207"),  # bf16 weights; bf16 engine, fp32 master
    ],
)
def test_a_model_handed_to_deepspeed_initialize_is_the_engines(tmp_path: Path, script: str, rule: str) -> None:
    """A loop that hands its model to ``deepspeed.initialize`` trains in DeepSpeed's engine,
    whose config decides loss scaling and the master copy: "nothing scales the loss" (PC405) and
    "no fp32 copy" (PC207) were false. Without the call, the loop's own reading stands."""
    root = _copy(tmp_path, "DeepSpeedExamples")
    assert [f for f in _found(root / script) if f[0] == rule] == []
    path = root / script
    path.write_text(path.read_text().replace("deepspeed.initialize(", "initialize_elsewhere("))
    assert [f[0] for f in _found(path) if f[0] == rule] == [rule]


# --- memory estimates follow the run's own switches ---


def test_memory_estimate_follows_the_repositorys_own_qlora_switch(tmp_path: Path) -> None:
    """open-instruct's ``use_qlora: true`` / ``use_lora: true`` (its own FlatArguments): the
    estimate counted a full fine-tune (53.7 GiB, PC801 on a 24 GB card) and proposed QLoRA, which
    the file already asks for. The switch's name decides the estimate, as an assumption."""
    root = _copy(tmp_path, "open-instruct")
    config = root / "configs/train_configs/sft/tulu2_7b_qlora.yaml"
    assert [f for f in _found(config, "RTX 4090") if f[0].startswith("PC80")] == []
    config.write_text(config.read_text().replace("use_qlora: true", "use_qlora: false"))
    report = api.check(str(config), "RTX 4090", use_project=False)
    lora = [f for f in report.findings if f.rule.startswith("PC80")]
    assert lora == [] or all("`use_lora: true`" in " ".join(f.assumptions) for f in lora)
    config.write_text(config.read_text().replace("use_lora: true", "use_lora: false"))
    full = [f for f in api.check(str(config), "RTX 4090", use_project=False).findings if f.rule == "PC801"]
    assert len(full) == 1 and "a full fine-tune" in " ".join(full[0].assumptions)  # nothing names adapters


def test_findings_of_a_merged_accelerate_config_point_into_it(tmp_path: Path, monkeypatch) -> None:
    """``accelerate launch --config_file X.yaml`` merges the file into the launch's run: a
    refused setting of X.yaml was reported at the launch script's path with X.yaml's line
    (``run.sh:7:3``, a line run.sh does not have). On open-instruct's zero3 accelerate config."""
    root = _copy(tmp_path, "open-instruct")
    monkeypatch.chdir(root)
    config = root / "configs/ds_configs/deepspeed_zero3.yaml"
    config.write_text(
        config.read_text().replace(
            "deepspeed_config:\n",
            "deepspeed_config:\n  deepspeed_config_file: configs/ds_configs/stage3_no_offloading_accelerate.conf\n",
        )
    )
    (root / "train.py").write_text("print('a loop of its own')\n")
    launch = "accelerate launch --config_file configs/ds_configs/deepspeed_zero3.yaml train.py"
    (root / "run.sh").write_text(f"#!/bin/bash\n{launch}\n")
    refused = [(Path(p).name, line) for r, _, p, line in _found(Path("run.sh")) if r == "PC605"]
    assert refused and all(name == "deepspeed_zero3.yaml" for name, _ in refused), refused
    text = config.read_text().split("\n")
    assert {text[line - 1].split(":")[0].strip() for _, line in refused} >= {"zero_stage", "mixed_precision"}


def test_memory_estimate_counts_the_devices_the_config_asks_for(tmp_path: Path) -> None:
    """litgpt's ``devices: 4`` (llama-2-7b full fine-tune, sharded over them): with ``--gpu L4``
    (no count) the estimate took one device (PC801, 52.5 GiB on one L4). The config's own device
    list is the count, as a launch's ``--nproc_per_node`` is."""
    root = _copy(tmp_path, "litgpt")
    config = root / "config_hub/finetune/llama-2-7b/full.yaml"
    assert [f for f in _found(config, "L4") if f[0].startswith("PC80")] == []
    config.write_text(config.read_text().replace("devices: 4", "devices: 1"))
    assert [f[0] for f in _found(config, "L4") if f[0].startswith("PC80")] == ["PC801"]


@pytest.mark.parametrize(
    ("spec", "severity"),
    [
        ("3.2.2", Severity.ERROR),
        (">=3.0,<3.3", Severity.ERROR),  # every allowed release behaves so
        ("~=3.2.0", Severity.ERROR),
        ("<3.3.1", Severity.ERROR),  # the newest allowed release (3.3.0.x) still behaves so
        (">=3.2", Severity.WARNING),  # only older allowed releases behave so: a fresh install does not
        (">=3.3.1", None),
    ],
)
def test_a_version_dependent_rule_judges_a_range_by_its_newest_release(spec: str, severity: Severity | None) -> None:
    """DESIGN.md, "Findings rest on facts": an error when the newest allowed release fails, a
    warning when only older allowed releases do (judge_versions made every straddling range a
    warning)."""
    from precheck.engine import judge_versions
    from precheck.provenance import Origin
    from precheck.rules import RULES
    from precheck.rules.base import Finding

    rule = RULES["PC201"]  # ms-swift>=3.0.0,<3.3.1
    finding = Finding(Origin("file", "c.yaml", 1, 1, "fp16"), "msg", rule="PC201", severity=Severity.ERROR)
    judged = judge_versions(rule, finding, Versions({"ms-swift": VersionInfo("ms-swift", spec, "requirements.txt:1")}))
    assert (judged.severity if judged is not None else None) == severity
