"""OpenRLHF (the registry demo: one package, one registry line): its ``--ds.*`` launch flags
mapped onto the model, and the DeepSpeed config it writes from them resolved by DeepSpeed's
own rules. Semantics read in OpenRLHF 0.11.0 (see the dialect's docstring)."""

from __future__ import annotations

from pathlib import Path

from precheck import frameworks, resolve
from precheck.engine import run
from precheck.hardware import from_specs
from precheck.plan import PrecisionPlan
from precheck.versions import Versions

from .samples import ROOT, at, read_file

MIXTRAL_LORA = ROOT / "tests" / "fixtures" / "openrlhf" / "train_sft_mixtral_lora.sh"
H100 = from_specs(["8xH100"], {})


def plan_for(path: Path) -> PrecisionPlan:
    return resolve.resolve(read_file(path, "openrlhf"), H100, Versions())


def test_registered_by_its_entry_modules() -> None:
    framework = frameworks.named("openrlhf")
    assert framework is not None and framework.distribution == "openrlhf"
    assert framework.dialect.priority == 0 and not framework.launchers  # named by `-m openrlhf.cli.*` only


def test_upstream_mixtral_lora_example_maps_with_provenance() -> None:
    config = read_file(MIXTRAL_LORA, "openrlhf")
    assert at(config.model) == ("mistralai/Mixtral-8x7B-v0.1", 12, "--model.model_name_or_path")
    assert at(config.precision) == ("bf16", 19, "--ds.param_dtype")
    assert at(config.train_type) == ("lora", 23, "--ds.lora.rank")
    assert at(config.gradient_checkpointing) == (True, 20, "--model.gradient_checkpointing_enable")
    assert at(config.attn_implementation) == ("flash_attention_2", 21, "--ds.attn_implementation")
    assert at(config.batch_size) == (4, 10, "--train.micro_batch_size")
    assert at(config.seq_len) == (2048, 5, "--data.max_len")
    deepspeed = config.attached["deepspeed"]  # what get_train_ds_config writes
    assert at(deepspeed.zero_stage) == (3, 17, "--ds.zero_stage")
    assert deepspeed.bf16 is not None and deepspeed.bf16.value is True and deepspeed.bf16.origin.line == 19
    assert deepspeed.fp16 is not None and deepspeed.fp16.value is False
    assert config.notes == []


def test_bf16_run_is_deepspeed_bf16_mode() -> None:
    plan = plan_for(MIXTRAL_LORA)
    assert plan.sharding is not None and plan.sharding.value == "ZeRO-3"
    assert (plan.load_dtype.value, plan.param_dtype.value, plan.autocast_dtype.value) == ("bfloat16", "bfloat16", None)
    assert plan.master_weights is not None and plan.master_weights.value == "float32"
    assert plan.loss_scaling.value == "none"


def test_fp16_with_adam_offload_and_defaults(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(
        "deepspeed --module openrlhf.cli.train_dpo \\\n"
        "    --model.model_name_or_path meta-llama/Llama-2-7b-hf \\\n"
        "    --ds.param_dtype fp16 \\\n"
        "    --ds.adam_offload\n"
    )
    config = read_file(script, "openrlhf")
    assert config.train_type is not None and config.train_type.value == "full"  # --ds.lora.rank 0
    deepspeed = config.attached["deepspeed"]
    assert deepspeed.zero_stage is not None and deepspeed.zero_stage.value == 2  # default --ds.zero_stage
    assert at(deepspeed.offload_optimizer) == ("cpu", 4, "--ds.adam_offload")
    plan = plan_for(script)
    assert (plan.load_dtype.value, plan.param_dtype.value) == ("float16", "float16")
    assert plan.loss_scaling.value == "dynamic"  # DeepSpeed fp16 mode, loss_scale 0
    assert plan.sharding is not None and plan.sharding.value.startswith("ZeRO-2")


def test_generic_rules_need_no_change_bf16_on_a_v100() -> None:
    report = run([str(MIXTRAL_LORA)], from_specs(["V100"], {}), env={})
    assert [f.dialect for f in report.files] == ["openrlhf"]
    found = {(f.rule, f.origin.line) for f in report.findings}
    assert ("PC101", 19) in found  # bf16 on sm_70, pointing at --ds.param_dtype


# -- train_ppo_ray, packing, and the entry module's own defaults ------------------------------------

#: excerpt of OpenRLHF examples/scripts/train_ppo_with_reward_fn.sh (OpenRLHF main, 2025): a Ray
#: job whose command follows ``--``, packing on and no attention flag
PPO_RAY_JOB = """\
set -x

ray job submit --address="http://127.0.0.1:8265" \\
   --runtime-env-json='{"working_dir": "/openrlhf"}' \\
   -- python3 -m openrlhf.cli.train_ppo_ray \\
   --ref.num_nodes 1 \\
   --actor.num_gpus_per_node 2 \\
   --vllm.num_engines 2 \\
   --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \\
   --train.micro_batch_size 8 \\
   --data.max_len 2048 \\
   --ds.zero_stage 3 \\
   --ds.param_dtype bf16 \\
   --actor.gradient_checkpointing_enable \\
   --ds.packing_samples
"""

#: excerpt of OpenRLHF examples/scripts/train_vlm_math_hybrid_engine.sh: ``python3 -m`` itself,
#: eager attention and no packing (VLM training refuses packing)
PPO_VLM = """\
python3 -m openrlhf.cli.train_ppo_ray \\
   --actor.model_name_or_path Qwen/Qwen2.5-VL-3B-Instruct \\
   --ds.zero_stage 3 \\
   --ds.param_dtype bf16 \\
   --actor.gradient_checkpointing_enable \\
   --ds.attn_implementation eager
"""


def test_ppo_ray_through_a_ray_job_is_openrlhf(tmp_path: Path) -> None:
    script = tmp_path / "train_ppo_with_reward_fn.sh"
    script.write_text(PPO_RAY_JOB)
    config = read_file(script, "openrlhf")
    assert at(config.model) == ("OpenRLHF/Llama-3-8b-sft-mixture", 9, "--actor.model_name_or_path")
    assert at(config.precision) == ("bf16", 13, "--ds.param_dtype")
    assert at(config.gradient_checkpointing) == (True, 14, "--actor.gradient_checkpointing_enable")
    assert at(config.attached["deepspeed"].zero_stage) == (3, 12, "--ds.zero_stage")


def test_ppo_ray_launched_directly_keeps_its_attention(tmp_path: Path) -> None:
    script = tmp_path / "train_vlm_math_hybrid_engine.sh"
    script.write_text(PPO_VLM)
    config = read_file(script, "openrlhf")
    assert at(config.attn_implementation) == ("eager", 6, "--ds.attn_implementation")  # no packing: as written
    assert at(config.gradient_checkpointing) == (True, 5, "--actor.gradient_checkpointing_enable")
    report = run([str(script)], from_specs(["V100"], {}), env={})
    assert "PC105" not in {f.rule for f in report.findings}
    assert ("PC101", 4) in {(f.rule, f.origin.line) for f in report.findings}


def test_packing_replaces_a_non_flash_attention(tmp_path: Path) -> None:
    """``cli/train_sft.py:324-328@0.11.2``: packing sets ``flash_attention_2`` over ``sdpa``;
    the finding points at the packing switch, and no fix writes an attention into it."""
    script = tmp_path / "train_ppo_with_reward_fn.sh"
    script.write_text(
        PPO_RAY_JOB.replace("--ds.packing_samples", "--ds.attn_implementation sdpa \\\n   --ds.packing_samples")
    )
    config = read_file(script, "openrlhf")
    attention = config.attn_implementation
    assert attention is not None and attention.value == "flash_attention_2"
    assert attention.origin.line == 16 and attention.origin.key is None and "`sdpa`" in str(attention.origin)
    report = run([str(script)], from_specs(["V100"], {}), env={})
    (flash,) = [f for f in report.findings if f.rule == "PC105"]
    assert flash.origin.line == 16 and (flash.fix is None or not flash.fix.edits)


def test_dynamic_batch_turns_packing_on(tmp_path: Path) -> None:
    """``train_ppo_ray.py:691-694@0.11.2`` (excerpt of examples/scripts/train_reinforce_baseline_hybrid_engine.sh)."""
    script = tmp_path / "train.sh"
    script.write_text(
        "python3 -m openrlhf.cli.train_ppo_ray \\\n"
        "   --actor.model_name_or_path Qwen/Qwen3-4B \\\n"
        "   --ds.attn_implementation eager \\\n"
        "   --train.dynamic_batch_enable\n"
    )
    attention = read_file(script, "openrlhf").attn_implementation
    assert attention is not None and (attention.value, attention.origin.line) == ("flash_attention_2", 4)


#: excerpt of OpenRLHF openrlhf/cli/train_sft.py (OpenRLHF main, as in 0.11.2: lines 178-193)
TRAIN_SFT_OPTIONS = """\
import argparse

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ds.zero_stage", type=int, default=2, help="DeepSpeed ZeRO stage")
    parser.add_argument(
        "--ds.param_dtype",
        type=str,
        default="fp16",
        choices=["bf16", "fp16"],
        help="Model data type",
    )
    parser.add_argument(
        "--ds.attn_implementation",
        type=str,
        default="flash_attention_2",
    )
    parser.add_argument("--model.model_name_or_path", type=str, default=None)
    args = parser.parse_args()
"""


def test_the_repositorys_own_entry_module_gives_the_defaults(tmp_path: Path) -> None:
    """OpenRLHF's own checkout: the flags a launch leaves out take the ``default=`` of the
    module it runs (here changed to fp16, to tell it from precheck's known default bf16)."""
    cli = tmp_path / "openrlhf" / "cli"
    cli.mkdir(parents=True)
    (cli / "train_sft.py").write_text(TRAIN_SFT_OPTIONS)
    script = tmp_path / "examples" / "train_sft.sh"
    script.parent.mkdir()
    # excerpt of examples/scripts/train_sft.sh, without its --ds.param_dtype and --ds.attn_implementation
    script.write_text(
        "cd ..\n"
        "deepspeed --module openrlhf.cli.train_sft \\\n"
        "   --model.model_name_or_path meta-llama/Meta-Llama-3-8B \\\n"
        "   --ds.zero_stage 3\n"
    )
    config = read_file(script, "openrlhf")
    assert config.precision is not None and config.precision.value == "fp16"
    assert config.precision.origin.path is not None and config.precision.origin.path.endswith("train_sft.py")
    # the add_argument call, or its default= line where the schema reader records that
    assert config.precision.origin.line in (6, 9)
    attention = config.attn_implementation
    assert attention is not None and attention.value == "flash_attention_2"
    assert attention.origin.line in (13, 16) and attention.origin.key == "--ds.attn_implementation"
    assert at(config.attached["deepspeed"].zero_stage) == (3, 4, "--ds.zero_stage")  # the flag beats the default


def test_vllm_engines_on_a_v100_whatever_the_param_dtype(tmp_path: Path) -> None:
    """PC718 on a second real script: the Ray job's ``--vllm.num_engines 2``
    (vllm_engine.py:273@0.11.2 starts them in bf16)."""
    script = tmp_path / "train_ppo_with_reward_fn.sh"
    script.write_text(PPO_RAY_JOB.replace("--ds.param_dtype bf16", "--ds.param_dtype fp16"))
    report = run([str(script)], from_specs(["V100"], {}), env={})
    found = {(f.rule, f.origin.line) for f in report.findings}
    assert ("PC718", 8) in found and not any(rule == "PC101" for rule, _ in found)
    assert not [f for f in run([str(script)], from_specs(["A100"], {}), env={}).findings if f.rule == "PC718"]
