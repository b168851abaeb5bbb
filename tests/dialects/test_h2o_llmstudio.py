"""H2O LLM Studio: experiment ``cfg.yaml`` blocks mapped onto the model, with provenance."""

from __future__ import annotations

import pytest

from .samples import CORPUS, EXAMPLES, at, read_file

OASST2 = CORPUS / "other" / "h2oai__h2o-llmstudio__examples__example_oasst2.yaml"


@pytest.mark.skipif(not OASST2.is_file(), reason="../shared/corpus is not beside this checkout")
def test_upstream_example() -> None:
    config = read_file(OASST2, "h2o-llmstudio")
    assert config.framework == "h2o-llmstudio" and config.traits.lora_by_default
    assert at(config.model) == ("h2oai/h2o-danube2-1.8b-base", 55, "llm_backbone")
    # architecture.backbone_dtype: int4 is a 4-bit quantised backbone, not a dtype
    assert at(config.quantization_bits) == (4, 2, "backbone_dtype")
    assert config.torch_dtype is None
    assert at(config.amp) == (True, 48, "mixed_precision")
    assert at(config.amp_dtype) == ("bfloat16", 49, "mixed_precision_dtype")
    assert at(config.train_type) == ("lora", 93, "lora")
    assert at(config.optimizer) == ("AdamW", 100, "optimizer")
    assert at(config.max_grad_norm) == (0.0, 91, "gradient_clip")
    assert at(config.gradient_checkpointing) == (True, 3, "gradient_checkpointing")
    assert config.devices is not None and config.devices.value == "0"


def test_bf16_backbone_without_mixed_precision() -> None:
    config = read_file(EXAMPLES / "configs" / "h2o-llmstudio-a100" / "bf16-without-grad-scaler.yaml", "h2o-llmstudio")
    assert at(config.torch_dtype) == ("bfloat16", 4, "backbone_dtype")
    assert at(config.amp) == (False, 10, "mixed_precision")
    assert config.amp_dtype is None  # v1.4.0 had no mixed_precision_dtype
    assert at(config.train_type) == ("lora", 25, "lora")
    assert config.devices is not None and at(config.devices)[:2] == ("0", 8)
