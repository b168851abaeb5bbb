import json
from importlib import resources

import pytest

from precheck.errors import UsageError
from precheck.gpu_db import database, normalise
from precheck.hardware import expand_specs, from_specs, model_for


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("V100", "Tesla V100-SXM2-32GB"),
        ("Tesla V100-SXM2-32GB", "Tesla V100-SXM2-32GB"),
        ("v100 sxm2 16gb", "Tesla V100-SXM2-16GB"),
        ("A100-80GB", "NVIDIA A100-SXM4-80GB"),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
        ("GTX 1080 Ti", "NVIDIA GeForce GTX 1080 Ti"),
        ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
        ("TITAN RTX", "NVIDIA TITAN RTX"),
        ("T4", "Tesla T4"),
    ],
)
def test_names_users_and_drivers_type(spec: str, name: str) -> None:
    assert model_for(spec).name == name


def test_counts_and_order() -> None:
    models = expand_specs(["8xH100", "2 x A100-80GB"])
    assert len(models) == 10 and models[0].arch == "Hopper" and models[-1].memory_gib == 80


def test_unknown_gpu_suggests_close_names() -> None:
    with pytest.raises(UsageError, match="did you mean"):
        model_for("A100-90GB")


def test_custom_card_by_compute_capability() -> None:
    model = model_for("sm_86:48GB")
    assert (model.compute_capability, model.memory_gib, model.bf16, model.fp8) == ("8.6", 48.0, True, False)


def test_visibility_selects_and_renumbers() -> None:
    hw = from_specs(["TITAN RTX", "GTX 1080 Ti"], {"CUDA_VISIBLE_DEVICES": "1"})
    assert [(d.index, d.model.id) for d in hw.devices] == [(0, model_for("GTX 1080 Ti").id)]
    truncated = from_specs(["4xA100"], {"CUDA_VISIBLE_DEVICES": "0,2,-1,1"})
    assert len(truncated.devices) == 2 and truncated.notes


def test_database_is_consistent() -> None:
    data = json.loads(resources.files("precheck.data").joinpath("gpus.json").read_text())
    db = database()
    assert len(db.models) >= 60
    owners: dict[str, str] = {}
    for model in db.models:
        for spelling in (model.id, model.name, *model.aliases):
            key = normalise(spelling)
            assert owners.setdefault(key, model.id) == model.id, f"{spelling} names two GPUs"
        for key in model.source:
            assert key in data["sources"], f"{model.id}: unknown source {key}"
        cc = model.cc
        if model.vendor == "nvidia" and cc is not None:
            assert model.bf16 == (cc >= (8, 0)), model.id
            assert model.tf32 == (cc >= (8, 0)), model.id
            assert model.fp16_tensor_cores == (cc >= (7, 0)), model.id
            assert model.fp8 == (cc >= (8, 9)), model.id
            if model.flash_attention_2:
                assert cc >= (8, 0), model.id
            # FlashAttention-3's hopper/ build: sm_80 and sm_90 kernels (hopper/setup.py@v2.8.3)
            assert model.flash_attention_3 == ((8, 0) <= cc <= (9, 0)), model.id


def test_profiles_hold_the_memory_cuda_reports() -> None:
    """A T4 (GDDR6, ECC on) reports 15079 MiB of its 16 GB; each MI250X die is its own 64 GB device."""
    t4 = from_specs(["T4"], {}).devices[0]
    assert t4.memory_gib == pytest.approx(15079 / 1024, abs=0.01) and t4.model.memory_gib == 16
    a10 = from_specs(["A10"], {}).devices[0]
    assert a10.memory_gib == pytest.approx(24 * 0.9375)
    assert from_specs(["V100"], {}).devices[0].memory_gib == 32
    for name in ("MI250", "MI250X", "AMD Instinct MI250X/MI250"):
        assert from_specs([name], {}).devices[0].memory_gib == 64


def test_custom_card_capability_takes_the_last_digit_as_minor() -> None:
    # CUDA's sm_XY: sm_100 is 10.0 (B200), sm_120 12.0 (RTX 5090), sm_90a 9.0 — not 1.0 / 1.20
    assert model_for("sm_100:180GB").cc == (10, 0)
    assert model_for("sm_120:32GB").cc == (12, 0)
    assert model_for("sm_90a:80GB").cc == (9, 0)
    blackwell = model_for("sm_100:180GB")
    assert blackwell.bf16 and blackwell.tf32 and blackwell.fp8 and blackwell.flash_attention_2


def test_memory_is_what_cuda_reports_where_a_log_shows_it() -> None:
    # data/gpus.json sources (observed-device-strings): B200 179 GiB, GB200 185, H200 140, MI300X 191.98
    reported = {"B200": 179.0, "GB200": 185.0, "H200": 140.0, "MI300X": 191.98}
    hardware = from_specs(list(reported), {})
    assert [d.memory_gib for d in hardware.devices] == list(reported.values())
