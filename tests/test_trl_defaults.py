"""TRL's own defaults, read in its source (issue 29): a config TRL reads loads the model in
float32 from 0.27.0 unless it names a dtype, and turns gradient checkpointing on from 0.22.0."""

from __future__ import annotations

from pathlib import Path

from helpers import Case, run_case
from precheck.frameworks.hf_trainer.resolve import resolve_trl
from precheck.plan import PrecisionPlan
from precheck.rules.base import Severity

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf-trainer"
#: huggingface/trl examples/cli_configs/example_config.yaml (`trl sft --config config.yaml`)
TRL_CLI = """
model_name_or_path:
  Qwen/Qwen2.5-0.5B
dataset_name:
  stanfordnlp/imdb
report_to:
  none
learning_rate:
  0.0001
lr_scheduler_type:
  cosine
"""
#: the corpus copy, where the shared corpus is present: the snippet above is that file
_REAL = CORPUS / "huggingface__trl__examples__cli_configs__example_config.yaml"


def test_the_snippet_is_trl_s_example_config() -> None:
    if _REAL.is_file():
        body = "\n".join(line for line in _REAL.read_text().splitlines() if line and not line.startswith("#"))
        assert body == TRL_CLI.strip("\n")


def _findings(code: str, text: str, gpu: str, **versions: str) -> list[tuple[str, Severity]]:
    found = run_case(Case("trl", code, text, [gpu], versions=versions))
    return [(f.rule, f.severity) for f in found]


def test_fp16_on_trl_s_float32_weights_is_sound_amp() -> None:
    """`fp16: true` in a `trl sft` config on an A100: TRL >= 0.27 loads float32 weights (create_model_from_path
    kwargs.get("dtype", "float32"), trainer/utils.py:1332@1.16.0), so fp16 AMP has fp32 masters: no PC404 error,
    no PC207; before 0.27, transformers 5 loads Qwen's bf16 and the GradScaler meets bf16 gradients."""
    text = TRL_CLI + "fp16: true\n"
    assert _findings("PC404", text, "A100") == []
    assert _findings("PC207", text + "bf16: false\n", "A100") == []
    assert _findings("PC404", text, "A100", trl="1.16.0", transformers="5.23.0") == []
    assert _findings("PC404", text, "A100", trl="0.26.2", transformers="5.23.0") == [("PC404", Severity.ERROR)]


def test_a_stated_dtype_wins_over_trl_s_float32() -> None:
    text = TRL_CLI + "fp16: true\ndtype: bfloat16\n"
    assert _findings("PC404", text, "A100", trl="1.16.0") == [("PC404", Severity.ERROR)]


def test_an_8b_base_in_float32_does_not_fit_24_gb() -> None:
    """LoRA on Llama 3.1 8B: TRL's float32 base is 32 GB of weights alone (missed when read as bf16)."""
    text = TRL_CLI.replace("Qwen/Qwen2.5-0.5B", "meta-llama/Llama-3.1-8B") + "use_peft: true\n"
    assert _findings("PC801", text, "1xRTX 4090") == [("PC801", Severity.ERROR)]
    assert _findings("PC801", text, "1xRTX 4090", trl="0.26.2", transformers="5.23.0") == []


def test_load_in_4bit_without_dtype_computes_in_float32() -> None:
    text = TRL_CLI + "load_in_4bit: true\nuse_peft: true\n"
    plan = _plan(text, trl="1.16.0")
    assert plan.quantization is not None and plan.quantization.value == "4-bit, compute float32"


def test_trl_configs_checkpoint_by_default_from_0_22() -> None:
    """sft_config.py:111@0.22.0 (base_config.py:62@1.16.0): gradient_checkpointing = True; 0.21 inherits False."""
    assert _plan(TRL_CLI, trl="0.22.0").gradient_checkpointing.value is True
    assert _plan(TRL_CLI).gradient_checkpointing.value is True
    assert _plan(TRL_CLI, trl="0.21.0").gradient_checkpointing is None
    assert _plan(TRL_CLI + "gradient_checkpointing: false\n", trl="1.16.0").gradient_checkpointing is None


def _plan(text: str, **versions: str) -> PrecisionPlan:
    import textwrap

    from precheck import dialects
    from precheck.hardware import from_specs
    from precheck.sources import parse
    from precheck.versions import VersionInfo, Versions

    doc = parse(Path("sft.yaml"), textwrap.dedent(text).lstrip("\n"), "yaml")
    dialect = dialects.detect(doc)
    assert dialect is not None and dialect.name == "trl"
    config = dialect.read(doc, {})
    known = Versions({n: VersionInfo(n, v, "flag") for n, v in versions.items()})
    return resolve_trl(config, from_specs(["A100"], {}), known)


def test_a_script_that_loads_the_model_itself_gets_from_pretrained_s_dtype() -> None:
    """TRL's float32 applies where TRL loads the model (a model id handed to SFTTrainer); a script's own
    from_pretrained without dtype keeps transformers' default ("auto" in 5.x)."""
    import textwrap

    from precheck import dialects
    from precheck.hardware import from_specs
    from precheck.sources.python_source import parse_code
    from precheck.versions import Versions

    own = """
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")
    args = SFTConfig(output_dir="o", fp16=True)
    SFTTrainer(model=model, args=args)
    """
    by_id = """
    from trl import SFTConfig, SFTTrainer
    args = SFTConfig(output_dir="o", fp16=True)
    SFTTrainer(model="Qwen/Qwen2.5-0.5B", args=args)
    """
    loads = {}
    for name, script in (("own", own), ("by_id", by_id)):
        doc = parse_code("train.py", textwrap.dedent(script).lstrip("\n"), "python", from_specs(["A100"], {}))[0]
        dialect = dialects.detect(doc)
        assert dialect is not None and dialect.name == "trl"
        plan = resolve_trl(dialect.read(doc, {}), from_specs(["A100"], {}), Versions({}))
        loads[name] = plan.load_dtype.value
    assert loads == {"own": "bfloat16", "by_id": "float32"}
