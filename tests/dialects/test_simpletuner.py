"""SimpleTuner: ``config.json`` (with or without the ``--`` of its flags) mapped onto the model."""

from __future__ import annotations

import pytest

from helpers import read_as

from .samples import CORPUS, EXAMPLES, at, read_file

AURAFLOW = (
    CORPUS / "simpletuner" / "bghira__SimpleTuner__simpletuner__examples__auraflow.peft-controlnet-lora__config.json"
)


@pytest.mark.skipif(not AURAFLOW.is_file(), reason="../shared/corpus is not beside this checkout")
def test_upstream_example_without_dashes() -> None:
    config = read_file(AURAFLOW, "simpletuner")
    assert config.framework == "simpletuner" and config.traits.honours_accelerate_env
    assert at(config.train_type) == ("lora", 18, "model_type")
    assert at(config.optimizer) == ("adamw_bf16", 21, "optimizer")
    assert at(config.gradient_checkpointing) == (True, 9, "gradient_checkpointing")
    assert at(config.batch_size) == (1, 31, "train_batch_size")
    assert config.mixed_precision is None  # not in the file: the resolver's default decides


def test_flag_spelt_keys() -> None:
    config = read_file(EXAMPLES / "configs" / "simpletuner-rtx4090" / "adamw-bf16-fp32-gradients.json", "simpletuner")
    assert at(config.model) == ("black-forest-labs/FLUX.1-dev", 3, "--pretrained_model_name_or_path")
    assert at(config.mixed_precision) == ("bf16", 8, "--mixed_precision")
    assert at(config.optimizer) == ("adamw_bf16", 9, "--optimizer")
    assert at(config.gradient_precision) == ("fp32", 10, "--gradient_precision")
    # a quoted "true": SimpleTuner's argparse converts it, so it is a boolean and no note
    assert at(config.gradient_checkpointing) == (True, 11, "--gradient_checkpointing")
    assert at(config.grad_accum_steps) == (4, 12, "--gradient_accumulation_steps")
    assert [n.kind for n in config.notes] == []


def test_toml_config() -> None:
    config = read_as(
        "simpletuner",
        """
        model_family = "sdxl"
        pretrained_model_name_or_path = "stabilityai/stable-diffusion-xl-base-1.0"
        mixed_precision = "fp16"
        optimizer = "adamw_bf16"
        num_processes = 2
        """,
        fmt="toml",
    )
    assert at(config.mixed_precision) == ("fp16", 3, "mixed_precision")
    assert at(config.num_processes) == (2, 5, "num_processes")
