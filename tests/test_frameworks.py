"""The framework registry: one object per framework, detection by its declared priority, and
traits that agree with what the framework's dialect and resolver really do."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from precheck import dialects, frameworks, resolve
from precheck.config import TrainingConfig
from precheck.dialects.base import Dialect, Priority
from precheck.frameworks import FRAMEWORKS
from precheck.frameworks.base import Framework
from precheck.frameworks.components import DEEPSPEED
from precheck.hardware import from_specs
from precheck.plan import PrecisionPlan
from precheck.provenance import Origin, Sourced
from precheck.sources import Document, load_runs, parse
from precheck.versions import Versions

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = ROOT / "examples"
A100 = from_specs(["A100"], {})
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside this checkout")

#: real files of each framework (public repositories' examples, and this repository's examples)
SAMPLES: dict[str, tuple[str, ...]] = {
    "deepspeed": ("corpus/deepspeed/OpenGVLab__InternVL__internvl_chat__zero_stage1_config.json",),
    "accelerate": ("corpus/accelerate/hiyouga__LLaMA-Factory__examples__accelerate__fsdp2_config.yaml",),
    "fsdp": ("corpus/fsdp/modelscope__ms-swift__swift__config__fsdp2.json",),
    "ms-swift": (
        "corpus/other/modelscope__ms-swift__examples__yaml__deepspeed__sft.yaml",
        "examples/configs/ms-swift-v100/fp16-false-ignored.yaml",
    ),
    "simpletuner": (
        "corpus/simpletuner/bghira__SimpleTuner__simpletuner__examples__auraflow.peft-controlnet-lora__config.json",
        "examples/configs/simpletuner-rtx4090/adamw-bf16-fp32-gradients.json",
    ),
    "h2o-llmstudio": (
        "corpus/other/h2oai__h2o-llmstudio__examples__example_oasst2.yaml",
        "examples/configs/h2o-llmstudio-a100/bf16-without-grad-scaler.yaml",
    ),
    "llama-cookbook": (
        "examples/configs/llama-recipes-titan-rtx-1080ti/full-finetune-fp16.yaml",
        "examples/configs/llama-recipes-titan-rtx-1080ti/lora-fp16-one-card.yaml",
    ),
    "llama-factory": (
        "corpus/llama-factory/hiyouga__LLaMA-Factory__examples__extras__asft__llama2_full_asft.yaml",
        "corpus/llama-factory/hiyouga__LLaMA-Factory__examples__extras__apollo__llama3_full_sft.yaml",
    ),
    "axolotl": ("corpus/axolotl/axolotl-ai-cloud__axolotl__examples__alst__llama3-8b-deepspeed-alst.yaml",),
    "lightning": (
        "corpus/lightning/Lightning-AI__litgpt__config_hub__finetune__gemma-2b__full.yaml",
        "corpus/lightning/NVIDIA__NeMo__examples__nlp__language_modeling__conf__megatron_gpt_config.yaml",
    ),
    "llm-foundry": ("fixtures/llm_foundry/mpt-125m.yaml",),
    "xtuner": ("fixtures/xtuner/llama2_7b_qlora_alpaca_e3.py",),
    "gpt-neox": ("fixtures/gpt_neox/configs/125M.yml", "fixtures/gpt_neox/configs/pythia/160M.yml"),
    "torchtune": (
        "corpus/torchtune/pytorch__torchtune__recipes__configs__dev__3B_full_grpo.yaml",
        "corpus/torchtune/meta-llama__llama-cookbook__getting-started__responsible_ai__llama_guard__torchtune_configs__8B_guard_full.yaml",
    ),
    "trl": (
        "corpus/hf-trainer/huggingface__trl__examples__cli_configs__example_config.yaml",
        "examples/configs/clean/qwen2.5-sft-bf16.yaml",
    ),
    "hf-trainer": ("examples/scripts/accelerate-fp16-launch-bf16-script/train.sh",),
    "pytorch": ("examples/scripts/pytorch-grad-scaler-bf16-a100/train_bf16_with_grad_scaler.py",),
    "openrlhf": ("fixtures/openrlhf/train_sft_mixtral_lora.sh",),
}
#: samples a dialect scores at a tier other than its framework's own (a second kind of file)
OTHER_TIER = {"corpus/fsdp/modelscope__ms-swift__swift__config__fsdp2.json": Priority.FSDP_WRAPPER}


def sample_path(sample: str) -> Path:
    head, _, rest = sample.partition("/")
    return {"corpus": CORPUS, "examples": EXAMPLES, "fixtures": ROOT / "tests" / "fixtures"}[head] / rest


def document(sample: str) -> Document:
    path = sample_path(sample)
    assert path.is_file(), f"{path} is not here"
    return load_runs(path, str(path), A100)[0]


def owner(name: str) -> Framework:
    framework = frameworks.named(name)
    assert framework is not None
    return framework


CASES = [(name, sample) for name, samples in SAMPLES.items() for sample in samples]


# -- the registry ----------------------------------------------------------------------------------


def test_every_framework_has_samples_and_one_name() -> None:
    names = [f.name for f in FRAMEWORKS]
    assert sorted(SAMPLES) == sorted(names)
    every = [n for f in FRAMEWORKS for n in f.names]
    assert len(every) == len(set(every)), "a name or alias names two frameworks"
    distributions = [f.distribution for f in FRAMEWORKS]
    assert len(distributions) == len(set(distributions))


def test_the_registry_binds_its_dialects() -> None:
    for framework in FRAMEWORKS:
        for dialect in framework.dialects:
            assert (dialect.name, dialect.framework) == (framework.name, framework.distribution)
            assert dialect.traits is framework.traits and dialect.priority == framework.priority
    assert dialects.DIALECTS == frameworks.DIALECTS
    assert [d.name for d in frameworks.DIALECTS] == [f.name for f in FRAMEWORKS]
    assert {f.distribution: f.resolver for f in FRAMEWORKS} == resolve.RESOLVERS


def test_trait_queries() -> None:
    honours = {f.name for f in frameworks.with_trait("honours_accelerate_env")}
    assert honours == {f.name for f in FRAMEWORKS if f.traits.honours_accelerate_env}
    assert "hf-trainer" in honours and "torchtune" not in honours
    assert {f.name for f in frameworks.trainers()} == {f.name for f in FRAMEWORKS if not f.traits.component}
    with pytest.raises(KeyError):
        frameworks.with_trait("no_such_trait")


def test_the_hf_dialect_leaves_files_with_another_frameworks_signature() -> None:
    hf = owner("hf-trainer").dialect
    base = "output_dir: out\nper_device_train_batch_size: 4\nlearning_rate: 2.0e-5\nbf16: true\n"
    assert hf.score(parse("t.yaml", base, "yaml")) > 0
    for framework in FRAMEWORKS:
        for key in framework.signature:
            doc = parse("t.yaml", f"{base}{key}: x\n", "yaml")
            assert hf.score(doc) == 0, (framework.name, key)


# -- detection: every sample scored by every dialect ------------------------------------------------


@needs_corpus
@pytest.mark.parametrize(("name", "sample"), CASES, ids=[s.rsplit("/", 1)[-1][:60] for _, s in CASES])
def test_detection_matrix(name: str, sample: str) -> None:
    doc = document(sample)
    framework = owner(name)
    detected = frameworks.detect(doc)
    assert detected is not None and detected.name == name
    if doc.dialect is not None:  # a Python script names its run's framework: it is never scored
        assert doc.dialect == name and framework.priority == Priority.NAMED_ONLY
        assert framework.dialect.score(doc) == 0
        return
    scores = {d.name: d.score(doc) for d in frameworks.DIALECTS}
    mine = scores.pop(name)
    assert all(mine > other for other in scores.values()), (mine, scores)
    assert mine >= OTHER_TIER.get(sample, framework.priority)


@needs_corpus
@pytest.mark.parametrize(("name", "sample"), CASES, ids=[s.rsplit("/", 1)[-1][:60] for _, s in CASES])
def test_detection_priority_is_the_registrys(name: str, sample: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Raising a framework's declared priority raises its score by as much; dropping it below
    zero hands the file to another dialect (or to none)."""
    doc = document(sample)
    if doc.dialect is not None:
        pytest.skip("named by its source, not scored")
    framework = owner(name)
    cls: type[Dialect] = type(framework.dialect)
    before = framework.dialect.score(doc)
    monkeypatch.setattr(cls, "priority", framework.priority + 1000)
    shifted = framework.dialect.score(doc)
    if sample in OTHER_TIER:
        assert shifted == before == OTHER_TIER[sample]
        return
    assert shifted == before + 1000
    monkeypatch.setattr(cls, "priority", -1000)
    taken = frameworks.detect(doc)
    assert taken is None or taken.name != name


LAUNCHES = {
    "ms-swift": "swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --torch_dtype bfloat16\n",
    "llama-factory": "llamafactory-cli train cfg.yaml\n",
    "axolotl": "axolotl train cfg.yaml --learning-rate 1e-4\n",
    "torchtune": "tune run --nproc_per_node 2 lora_finetune_distributed --config cfg.yaml dtype=bf16\n",
    "lightning": "litgpt finetune_lora checkpoints/meta-llama/Llama-3.2-1B --precision bf16-true\n",
    "trl": "trl sft --model_name_or_path Qwen/Qwen2.5-0.5B --dataset_name trl-lib/Capybara --bf16\n",
    "llama-cookbook": "torchrun --nproc_per_node 1 -m llama_cookbook.finetuning --use_peft --use_fp16\n",
    "openrlhf": "deepspeed --module openrlhf.cli.train_dpo --ds.zero_stage 3 --ds.param_dtype bf16\n",
    "llm-foundry": "composer -n 8 train.py cfg.yaml precision=amp_fp16\n",
    "gpt-neox": "python ./deepy.py train.py cfg\n",
    "xtuner": "NPROC_PER_NODE=8 xtuner train cfg.py --deepspeed deepspeed_zero2\n",
}
CONFIG_FOR = {
    "llama-factory": "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\nbf16: true\n",
    "axolotl": "base_model: NousResearch/Llama-3.2-1B\nadapter: lora\nmicro_batch_size: 2\nbf16: auto\n",
    "torchtune": "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\ndtype: fp32\n",
    "llm-foundry": "model:\n  name: mpt_causal_lm\nmax_duration: 1ba\nglobal_train_batch_size: 8\ntrain_loader: {}\n",
    "gpt-neox": "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 2\nprecision: bfloat16\n",
    "xtuner": "model = dict(type='SupervisedFinetune', llm=dict(pretrained_model_name_or_path='m'))\n"
    "optim_wrapper = dict(type='AmpOptimWrapper')\n",
}
#: the config file each launch names (deepy.py adds .yml to a name without .yml/.json; xtuner's is Python)
CONFIG_NAME = {"gpt-neox": "cfg.yml", "xtuner": "cfg.py"}


def test_every_framework_with_a_command_line_has_a_launch_here() -> None:
    declared = {f.name for f in FRAMEWORKS if f.launchers or f.modules}
    assert declared == set(LAUNCHES)


@pytest.mark.parametrize("name", sorted(LAUNCHES))
def test_a_frameworks_launch_names_its_dialect(name: str, tmp_path: Path) -> None:
    (tmp_path / CONFIG_NAME.get(name, "cfg.yaml")).write_text(CONFIG_FOR.get(name, "unused: 1\n"))
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/bash\n" + LAUNCHES[name])
    docs = load_runs(script, str(script), A100)
    assert [d.dialect for d in docs] == [name]
    detected = frameworks.detect(docs[0])
    assert detected is not None and detected.name == name


# -- traits agree with behaviour --------------------------------------------------------------------

#: one sample each trainer framework's behaviour is checked on
TRAIT_SAMPLE = {name: samples[0] for name, samples in SAMPLES.items() if not owner(name).traits.component}

DS_AUTO = '{"bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}'


def read_sample(name: str, env: dict[str, str] | None = None) -> TrainingConfig:
    doc = document(TRAIT_SAMPLE[name])
    dialect = frameworks.detect(doc)
    assert dialect is not None and dialect.name == name
    config = dialect.read(doc, env or {})
    config.attached, config.references = {}, {}  # only what the test attaches
    return config


def plan_of(config: TrainingConfig) -> PrecisionPlan:
    return resolve.resolve(resolve.with_launch_env(config), A100, Versions())


@needs_corpus
@pytest.mark.parametrize("name", sorted(TRAIT_SAMPLE))
def test_fills_deepspeed_auto(name: str) -> None:
    """The HF Trainer's DeepSpeed integration fills a DeepSpeed file's ``"auto"`` from its own
    switches; other frameworks hand the file to DeepSpeed as it is."""
    config = read_sample(name)
    config.bf16 = config.bf16 or Sourced(True, Origin.default("test: bf16 on"))
    config.attached["deepspeed"] = DEEPSPEED.dialect.read(parse("ds.json", DS_AUTO, "json"), {})
    plan = plan_of(config)
    filled = [field for field, value in plan.fields().items() if "auto` filled" in str(value.origin)]
    assert bool(filled) == config.traits.fills_deepspeed_auto, filled


@needs_corpus
@pytest.mark.parametrize("name", sorted(TRAIT_SAMPLE))
def test_lora_by_default(name: str) -> None:
    """With the training method unset, a LoRA-by-default framework trains fp32 adapters (peft
    upcasts them) over half-precision weights; the others train the loaded weights."""
    config = replace(read_sample(name), train_type=None)
    plan = plan_of(config)
    if plan.load_dtype.value == "float32":  # make the difference visible: load in bf16
        config = replace(config, torch_dtype=Sourced("bfloat16", Origin.default("test: bf16 weights")))
        plan = plan_of(config)
    assert plan.load_dtype.value != "float32"
    adapters = plan.param_dtype.value == "float32"
    assert adapters == config.traits.lora_by_default, (plan.load_dtype, plan.param_dtype)


@needs_corpus
@pytest.mark.parametrize("name", sorted(TRAIT_SAMPLE))
def test_honours_accelerate_env(name: str) -> None:
    """``ACCELERATE_USE_DEEPSPEED`` from ``accelerate launch`` shards a run that honours the
    launcher's variables with ZeRO at the stage it exports. (The launch-environment step reads
    the trait; this checks the whole way: the resolvers keep the sharding it adds, and no
    other framework shards on the variable.)"""
    env = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"}
    plain = plan_of(read_sample(name))
    launched = plan_of(read_sample(name, env))
    sharding = launched.sharding.value if launched.sharding is not None else None
    honoured = sharding == "ZeRO-3" and (plain.sharding is None or plain.sharding.value != "ZeRO-3")
    assert honoured == read_sample(name).traits.honours_accelerate_env, (plain.sharding, launched.sharding)


def test_honours_accelerate_env_leaves_the_read_config_alone() -> None:
    doc = parse("t.yaml", "output_dir: out\nper_device_train_batch_size: 4\nbf16: true\n", "yaml")
    config = owner("hf-trainer").dialect.read(doc, {"ACCELERATE_USE_FSDP": "true"})
    launched = resolve.with_launch_env(config)
    assert launched is not config and launched.fsdp is not None and launched.fsdp.value is True
    assert config.fsdp is None and config.attached == {}
    unlaunched = owner("hf-trainer").dialect.read(doc, {})
    assert resolve.with_launch_env(unlaunched) is unlaunched  # nothing to add: the same config


@needs_corpus
@pytest.mark.parametrize("name", sorted(TRAIT_SAMPLE))
def test_accelerate_mixed_precision_reaches_only_runs_that_honour_the_launcher(name: str) -> None:
    """A resolver that lets ``ACCELERATE_MIXED_PRECISION`` decide autocast (the run's own
    switches off) belongs to a framework whose traits say it honours the launcher's variables."""
    config = read_sample(name, {"ACCELERATE_MIXED_PRECISION": "fp16"})
    config = replace(config, fp16=None, bf16=None)
    autocast = plan_of(config).autocast_dtype
    # the variable, or the launch flag that exports it (the hf-trainer sample's `accelerate launch`)
    from_env = autocast.value == "float16" and autocast.origin.key in (
        "ACCELERATE_MIXED_PRECISION",
        "--mixed_precision",
    )
    assert not from_env or config.traits.honours_accelerate_env
    if name == "hf-trainer":  # TrainingArguments with fp16/bf16 off: the environment decides
        assert from_env


def test_an_old_name_still_names_its_framework() -> None:
    cookbook = owner("llama-cookbook")
    assert frameworks.named("llama-recipes") is cookbook
    assert frameworks.BY_NAME["llama-recipes"] is cookbook.dialect
    assert cookbook.dialect.name == cookbook.distribution == "llama-cookbook"


def test_rule_modules_are_the_framework_rule_modules_the_rule_registry_lists() -> None:
    from precheck import frameworks, rules

    listed = [m.__name__ for m in rules._modules() if m.__name__.startswith("precheck.frameworks.")]
    assert [m.__name__ for m in frameworks.rule_modules()] == listed
