"""transformers ``TrainingArguments`` files and flags mapped onto the model, with provenance."""

from __future__ import annotations

from helpers import read_as

from .samples import EXAMPLES, at, read_file


def test_script_flags_under_accelerate_launch() -> None:
    config = read_file(EXAMPLES / "scripts" / "accelerate-fp16-launch-bf16-script" / "train.sh", "hf-trainer")
    assert config.framework == "transformers" and config.traits.arguments_for_user_script
    assert at(config.model) == ("Qwen/Qwen2.5-1.5B", 6, "--model_name_or_path")
    assert at(config.torch_dtype) == ("float32", 7, "--torch_dtype")
    assert at(config.batch_size) == (4, 9, "--per_device_train_batch_size")
    assert at(config.bf16) == (True, 11, "--bf16")
    # what `accelerate launch --mixed_precision fp16 --num_processes 2` exports to the script
    assert at(config.env["ACCELERATE_MIXED_PRECISION"]) == ("fp16", 5, "--mixed_precision")
    assert config.env["LOCAL_WORLD_SIZE"].value == "2"


def test_training_arguments_yaml() -> None:
    config = read_as(
        "hf-trainer",
        """
        output_dir: out
        per_device_train_batch_size: 8
        gradient_accumulation_steps: 4
        learning_rate: 2.0e-5
        fp16: true
        optim: adamw_torch_fused
        gradient_checkpointing: true
        max_grad_norm: 1.0
        fsdp: full_shard offload auto_wrap
        """,
    )
    assert at(config.batch_size) == (8, 2, "per_device_train_batch_size")
    assert at(config.grad_accum_steps) == (4, 3, "gradient_accumulation_steps")
    assert at(config.fp16) == (True, 5, "fp16")
    assert at(config.optimizer) == ("adamw_torch_fused", 6, "optim")
    assert at(config.gradient_checkpointing) == (True, 7, "gradient_checkpointing")
    assert at(config.max_grad_norm) == (1.0, 8, "max_grad_norm")
    # the fsdp option string: sharding on, its strategy, and CPU offload
    assert at(config.fsdp) == (True, 9, "fsdp")
    assert at(config.fsdp_sharding) == ("full_shard", 9, "fsdp")
    assert at(config.offload_param) == ("cpu", 9, "fsdp")


def test_unknown_key_is_named_with_a_close_match() -> None:
    config = read_as("hf-trainer", "output_dir: out\nper_device_train_batch_size: 8\nlearning_rate: 1e-5\nbf61: true\n")
    notes = [(n.kind, n.key) for n in config.notes]
    assert ("unknown-key", "bf61") in notes
