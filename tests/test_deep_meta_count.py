"""``--deep`` exact parameter counts: the model built on the meta device from its config.json.

Tiny models of each family are written in code (no download), counted on the meta device
and compared with the same model really built on the CPU; the static formula of
:mod:`precheck.model_sizes` is compared with both.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

import torch
import transformers

from helpers import write
from precheck import engine
from precheck.deep.lora import LoraSettings
from precheck.deep.meta_count import NotCountable, build_on_meta, count
from precheck.hardware import from_specs
from precheck.memory import dims_for
from precheck.model_sizes import count_params, dims_from_config

pytestmark = pytest.mark.hf

SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}
CONFIGS: dict[str, Any] = {
    "llama": lambda: transformers.LlamaConfig(**SMALL, num_key_value_heads=2, vocab_size=1000),
    "qwen2": lambda: transformers.Qwen2Config(**SMALL, num_key_value_heads=2, vocab_size=1000),
    "mistral": lambda: transformers.MistralConfig(**SMALL, num_key_value_heads=2, vocab_size=1000),
    "gpt2": lambda: transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=128),
    "t5": lambda: transformers.T5Config(d_model=64, d_ff=128, num_layers=2, num_heads=4, d_kv=16, vocab_size=1000),
}
#: how far the static formula (model_sizes.count_params) may be from the counted total, for
#: these families: it is exact for every family its table covers
STATIC_TOLERANCE = 0.0


def save(tmp_path: Path, family: str) -> Path:
    folder = tmp_path / f"tiny-{family}"
    CONFIGS[family]().save_pretrained(folder)
    return folder


def real_model(folder: Path) -> torch.nn.Module:
    """The same model with real weights on the CPU."""
    config = transformers.AutoConfig.from_pretrained(folder, local_files_only=True)
    auto = transformers.AutoModelForSeq2SeqLM if config.is_encoder_decoder else transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    return auto.from_config(config)


@pytest.mark.parametrize("family", list(CONFIGS))
def test_meta_count_equals_the_real_model_and_the_static_formula(tmp_path: Path, family: str) -> None:
    folder = save(tmp_path, family)
    counted = count(folder, None)
    real = sum(p.numel() for p in real_model(folder).parameters())
    assert counted.total == real
    assert counted.trainable is None
    assert "on the meta device with transformers" in counted.built
    static = count_params(dims_from_config(json.loads((folder / "config.json").read_text())))
    assert abs(static - real) <= STATIC_TOLERANCE * real, (family, static, real)


def test_a_mixture_of_experts_is_counted_with_its_experts(tmp_path: Path) -> None:
    """The static formula reads Mixtral as a dense Llama (no experts); the meta count does not."""
    folder = tmp_path / "tiny-mixtral"
    transformers.MixtralConfig(**SMALL, num_key_value_heads=2, vocab_size=1000, num_local_experts=4).save_pretrained(
        folder
    )
    real = sum(p.numel() for p in real_model(folder).parameters())
    assert count(folder, None).total == real
    static = count_params(dims_from_config(json.loads((folder / "config.json").read_text())))
    assert static < real  # why --deep matters for MoE models


def test_lora_adapters_on_named_modules(tmp_path: Path) -> None:
    """r·(in + out) per adapted Linear: q and o are 64→64, k and v 64→32 (2 KV heads of 16)."""
    folder = save(tmp_path, "llama")
    counted = count(folder, LoraSettings(8, ("q_proj", "k_proj", "v_proj", "o_proj")))
    assert counted.trainable == 2 * 8 * ((64 + 64) + (64 + 32) + (64 + 32) + (64 + 64))


def test_lora_all_linear_leaves_out_the_output_layer(tmp_path: Path) -> None:
    folder = save(tmp_path, "llama")
    attention = (64 + 64) + 2 * (64 + 32) + (64 + 64)
    mlp = 3 * (64 + 128)
    assert count(folder, LoraSettings(4, "all-linear")).trainable == 2 * 4 * (attention + mlp)


def test_lora_on_gpt2_conv1d_and_dora_and_modules_to_save(tmp_path: Path) -> None:
    folder = save(tmp_path, "gpt2")
    plain = count(folder, LoraSettings(8, ("c_attn",))).trainable
    assert plain == 2 * 8 * (64 + 3 * 64)  # c_attn: Conv1D 64 → 192
    dora = count(folder, LoraSettings(8, ("c_attn",), dora=True)).trainable
    assert dora == plain + 2 * 3 * 64  # a magnitude per output feature
    saved = count(folder, LoraSettings(8, ("c_attn",), modules_to_save=("wte",))).trainable
    assert saved == plain + 1000 * 64


def run_config(tmp_path: Path, text: str) -> engine.FileResult:
    path = write(tmp_path, "train.yaml", text)
    report = engine.run([str(path)], from_specs(["A100-80GB"], {}), deep=True)
    assert not report.errors and not report.internal_errors
    return report.files[0]


def test_the_run_s_lora_keys_feed_the_memory_estimate(tmp_path: Path) -> None:
    save(tmp_path, "llama")
    result = run_config(
        tmp_path,
        """
        model_name_or_path: tiny-llama
        output_dir: out
        learning_rate: 1.0e-4
        per_device_train_batch_size: 2
        use_peft: true
        lora_r: 4
        """,
    )
    config = result.config
    assert config is not None and config.model_params is not None and config.trainable_params is not None
    # TRL with no lora_target_modules: PEFT's default for llama, q_proj and v_proj
    assert config.trainable_params.value == 2 * 4 * ((64 + 64) + (64 + 32))
    assert "PEFT's default for llama" in str(config.trainable_params.origin)
    dims = dims_for(config)
    assert dims is not None and dims.params == config.model_params.value
    assert dims.source.startswith("counted: LlamaForCausalLM on the meta device with transformers")


def test_a_full_fine_tune_gets_no_adapter_count(tmp_path: Path) -> None:
    save(tmp_path, "llama")
    result = run_config(tmp_path, "model_name_or_path: tiny-llama\noutput_dir: o\nlearning_rate: 1\n")
    assert result.config is not None
    assert result.config.model_params is not None and result.config.trainable_params is None


def test_the_memory_rule_reports_the_counted_size(tmp_path: Path) -> None:
    folder = tmp_path / "llama-7b"
    transformers.LlamaConfig(
        hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, vocab_size=32000
    ).save_pretrained(folder)
    path = write(tmp_path, "full.yaml", "model_name_or_path: llama-7b\noutput_dir: o\nlearning_rate: 1.0e-5\n")
    report = engine.run([str(path)], from_specs(["A100-40GB"], {}), deep=True)
    (finding,) = [f for f in report.findings if f.rule == "PC801"]
    assert "6.74B parameters (counted: LlamaForCausalLM on the meta device" in finding.message


def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("precheck --deep opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_a_hub_id_is_read_from_the_local_cache_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    _no_network(monkeypatch)
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = cache / "models--acme--tiny-llama" / "snapshots" / commit
    CONFIGS["llama"]().save_pretrained(snapshot)
    (cache / "models--acme--tiny-llama" / "refs").mkdir(parents=True)
    (cache / "models--acme--tiny-llama" / "refs" / "main").write_text(commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    path = write(tmp_path, "train.yaml", "model_name_or_path: acme/tiny-llama\noutput_dir: o\nlearning_rate: 1\n")
    config = engine.run([str(path)], from_specs(["T4"], {}), deep=True).files[0].config
    assert config is not None and config.model_params is not None
    assert config.model_params.value == sum(p.numel() for p in real_model(snapshot).parameters())
    assert config.model_dims["hidden_size"].value == 64  # the cached config.json was read as a local one
    # a hub id the cache does not hold: nothing counted, nothing downloaded
    missing = write(tmp_path, "other.yaml", "model_name_or_path: acme/absent\noutput_dir: o\nlearning_rate: 1\n")
    other = engine.run([str(missing)], from_specs(["T4"], {}), deep=True).files[0].config
    assert other is not None and other.model_params is None


def test_remote_code_is_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_network(monkeypatch)
    folder = tmp_path / "custom"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "my_custom_model",
                "auto_map": {"AutoConfig": "configuration_custom.CustomConfig"},
                "hidden_size": 64,
            }
        )
    )
    (folder / "configuration_custom.py").write_text("raise SystemExit('remote code ran')\n")
    with pytest.raises(NotCountable):
        build_on_meta(folder)
    path = write(tmp_path, "train.yaml", "model_name_or_path: custom\noutput_dir: o\nlearning_rate: 1\n")
    report = engine.run([str(path)], from_specs(["T4"], {}), deep=True)
    config = report.files[0].config
    assert not report.internal_errors and config is not None and config.model_params is None
