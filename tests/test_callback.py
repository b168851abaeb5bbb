"""``PrecheckCallback`` on a real tiny ``transformers.Trainer`` (CPU, max_steps=1)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.hf

from precheck.integrations.transformers import (  # noqa: E402  (needs transformers)
    PrecheckCallback,
    PrecheckCallbackError,
    config_from_arguments,
    live_findings,
)

os.environ["HF_HUB_OFFLINE"] = "1"


def tiny_model(dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    config = transformers.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=128,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).to(dtype)


def dataset() -> list[dict[str, torch.Tensor]]:
    ids = torch.randint(0, 128, (4, 8), generator=torch.Generator().manual_seed(0))
    return [{"input_ids": row, "labels": row} for row in ids]


def arguments(tmp_path: Path, **kwargs: object) -> transformers.TrainingArguments:
    return transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=1,
        use_cpu=True,
        report_to=[],
        per_device_train_batch_size=2,
        save_strategy="no",
        disable_tqdm=True,
        **kwargs,
    )


def trainer(tmp_path: Path, model: torch.nn.Module, callback: PrecheckCallback, **kwargs: object):  # type: ignore[no-untyped-def]
    return transformers.Trainer(
        model=model, args=arguments(tmp_path, **kwargs), train_dataset=dataset(), callbacks=[callback]
    )


def test_fp16_model_with_fp16_is_stopped_before_the_first_step(tmp_path: Path) -> None:
    callback = PrecheckCallback(hardware="A100-80GB")
    run = trainer(tmp_path, tiny_model(torch.float16), callback, fp16=True)
    with pytest.raises(PrecheckCallbackError) as stopped:
        run.train()
    assert run.state.global_step == 0
    report = str(stopped.value)
    assert "TrainingArguments.fp16: PC401 error" in report
    assert "Attempting to unscale FP16 gradients." in report
    assert [f.rule for f in stopped.value.findings] == ["PC401"]


def test_bf16_weights_with_fp16_are_stopped(tmp_path: Path) -> None:
    callback = PrecheckCallback(hardware="A100-80GB")
    run = trainer(tmp_path, tiny_model(torch.bfloat16), callback, fp16=True)
    with pytest.raises(PrecheckCallbackError, match="not implemented for 'BFloat16'"):
        run.train()
    assert run.state.global_step == 0
    assert "PC404" in {f.rule for f in callback.findings}


def test_a_good_setup_trains_one_step(tmp_path: Path) -> None:
    callback = PrecheckCallback(hardware="A100-80GB")
    run = trainer(tmp_path, tiny_model(), callback)
    run.train()
    assert run.state.global_step == 1
    assert callback.findings == []


def test_warn_mode_logs_the_report_and_trains(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    callback = PrecheckCallback(hardware="A100-80GB", on_error="warn")
    run = trainer(tmp_path, tiny_model(torch.float16), callback, fp16=True)
    with caplog.at_level(logging.WARNING, logger="precheck"):
        run.train()
    assert run.state.global_step == 1
    assert "PC401 error" in caplog.text


def test_arguments_become_a_config_with_field_origins(tmp_path: Path) -> None:
    config = config_from_arguments(arguments(tmp_path, fp16=True), tiny_model(torch.float16))
    assert config.dialect == "hf-trainer"
    assert config.fp16 is not None and config.fp16.value is True
    assert (config.fp16.origin.path, config.fp16.origin.key) == ("TrainingArguments", "fp16")
    assert config.torch_dtype is not None and config.torch_dtype.value == "float16"
    assert (config.torch_dtype.origin.path, config.torch_dtype.origin.key) == ("model", "torch_dtype")
    assert config.notes == []


def test_probed_cpu_run_has_no_grad_scaler(tmp_path: Path) -> None:
    """accelerate 1.15 creates no GradScaler on the CPU: fp16 weights with fp16=True train there."""
    args = arguments(tmp_path, fp16=True)
    model = tiny_model(torch.float16)
    optimizer = torch.optim.AdamW(model.parameters())
    assert "PC401" not in {f.rule for f in PrecheckCallback(hardware=None).check(args, model, optimizer)}
    assert "PC401" in {f.rule for f in PrecheckCallback(hardware="V100").check(args, model, optimizer)}


def test_live_checks_see_scaler_meta_weights_and_the_optimizer(tmp_path: Path) -> None:
    args = arguments(tmp_path)
    model = tiny_model(torch.float16)
    cpu_scaler = torch.amp.GradScaler("cpu")
    optimizer = SimpleNamespace(optimizer=torch.optim.AdamW(model.parameters()), scaler=cpu_scaler)
    assert [f.name for f in live_findings(args, model, optimizer, [])] == ["grad-scaler-fp16-params"]
    bf16 = tiny_model(torch.bfloat16)
    on_cpu = SimpleNamespace(optimizer=torch.optim.AdamW(bf16.parameters()), scaler=torch.amp.GradScaler("cpu"))
    assert live_findings(args, bf16, on_cpu, []) == []  # the CPU unscale kernel takes bf16
    with torch.device("meta"):
        empty = tiny_model()
    names = {f.name for f in live_findings(args, empty, torch.optim.SGD(list(empty.parameters())[:1], lr=0.1), [])}
    assert names == {"parameters-on-meta-device", "trainable-not-optimized"}
