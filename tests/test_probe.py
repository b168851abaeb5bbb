import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from precheck import probe as probe_mod
from precheck.errors import InputError
from precheck.probe import ProbeResult, load_hardware_file, parse_smi, result_to_json, to_hardware

FIXTURES = Path(__file__).parent / "fixtures" / "probe"


def test_parse_smi_mixed_box_in_pci_order() -> None:
    result = parse_smi((FIXTURES / "mixed_titan_1080ti.csv").read_text())
    assert [g.name for g in result.gpus] == ["NVIDIA GeForce GTX 1080 Ti", "NVIDIA TITAN RTX"]
    assert result.gpus[1].compute_capability == "7.5" and result.driver == "550.54.14"


def test_fastest_first_differs_from_nvidia_smi_on_the_seed_box() -> None:
    result = parse_smi((FIXTURES / "mixed_titan_1080ti.csv").read_text())
    default = to_hardware(result, {})
    assert [(d.index, d.pci_index, d.model.arch) for d in default.devices] == [(0, 1, "Turing"), (1, 0, "Pascal")]
    pci = to_hardware(result, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert [d.pci_index for d in pci.devices] == [0, 1]
    # CUDA_VISIBLE_DEVICES=1 read off nvidia-smi meant the TITAN RTX, but CUDA gives the 1080 Ti
    wrong = to_hardware(result, {"CUDA_VISIBLE_DEVICES": "1"})
    assert [d.model.arch for d in wrong.devices] == ["Pascal"]


def test_uuid_visibility() -> None:
    result = parse_smi((FIXTURES / "mixed_titan_1080ti.csv").read_text())
    hw = to_hardware(result, {"CUDA_VISIBLE_DEVICES": "GPU-1a2b"})
    assert [d.model.arch for d in hw.devices] == ["Turing"]


def test_unknown_card_falls_back_to_compute_capability() -> None:
    result = parse_smi("0, 00000000:01:00.0, NVIDIA Future GPU, GPU-x, 196608, 196000, 12.1, 600.1\n")
    device = to_hardware(result, {}).devices[0]
    assert device.model.bf16 and device.model.fp8 and device.memory_gib == 192


def test_nvml_failure_falls_back_to_nvidia_smi(monkeypatch) -> None:
    def broken() -> ProbeResult:
        raise RuntimeError("NVML_ERROR_DRIVER_NOT_LOADED")

    monkeypatch.setattr(probe_mod, "probe_nvml", broken)
    monkeypatch.setattr(
        probe_mod, "_probe_smi_with_mig", lambda: parse_smi((FIXTURES / "mixed_titan_1080ti.csv").read_text())
    )
    result = probe_mod.probe()
    assert result.method == "nvidia-smi" and len(result.gpus) == 2
    assert any("NVML_ERROR_DRIVER_NOT_LOADED" in n for n in result.notes)


def test_a_hung_nvml_is_abandoned(monkeypatch) -> None:
    monkeypatch.setattr(probe_mod, "TIMEOUT_S", 0.2)
    monkeypatch.setattr(probe_mod, "probe_nvml", lambda: time.sleep(5))
    monkeypatch.setattr(probe_mod, "_probe_smi_with_mig", lambda: ProbeResult(notes=["nvidia-smi not found"]))
    started = time.monotonic()
    result = probe_mod.probe()
    assert time.monotonic() - started < 2
    assert any("no answer" in n for n in result.notes) and not result.gpus


def test_a_hung_nvidia_smi_is_killed(monkeypatch, tmp_path) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nexec /bin/sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(probe_mod, "TIMEOUT_S", 0.3)
    monkeypatch.setattr(probe_mod, "probe_nvml", lambda: ProbeResult())
    started = time.monotonic()
    result = probe_mod.probe()
    assert time.monotonic() - started < 5
    assert any("no answer" in n for n in result.notes)


def test_probe_json_round_trips_through_hardware_file(tmp_path) -> None:
    result = parse_smi((FIXTURES / "mixed_titan_1080ti.csv").read_text())
    path = tmp_path / "hw.json"
    path.write_text(json.dumps(result_to_json(result)))
    hw = load_hardware_file(str(path), {})
    assert hw.source == "file" and [d.name for d in hw.devices] == ["NVIDIA TITAN RTX", "NVIDIA GeForce GTX 1080 Ti"]
    path.write_text("{}")
    with pytest.raises(InputError):
        load_hardware_file(str(path), {})


def test_recorded_h100_matches_the_database() -> None:
    """Recorded on a real NVIDIA H100 80GB HBM3 (driver 580.159.04, CUDA 13.0) through NVML and nvidia-smi."""
    smi = parse_smi((FIXTURES / "h100_single.csv").read_text())
    nvml = load_hardware_file(str(FIXTURES / "h100_probe.json"), {})
    for hardware in (to_hardware(smi, {}), nvml):
        (device,) = hardware.devices
        assert device.model.id.startswith("h100-sxm") and device.model.compute_capability == "9.0"
        assert device.bf16 and device.model.fp8 and device.model.flash_attention_3
        assert device.memory_gib == 79.6  # 81559 MiB as NVML reports it; torch reports 81079 MiB


def test_eight_identical_gpus_keep_pci_order() -> None:
    hardware = to_hardware(parse_smi((FIXTURES / "a100_8x.csv").read_text()), {})
    assert [d.pci_index for d in hardware.devices] == list(range(8)) and not hardware.mixed
    subset = to_hardware(parse_smi((FIXTURES / "a100_8x.csv").read_text()), {"CUDA_VISIBLE_DEVICES": "6,7"})
    assert [d.pci_bus_id for d in subset.devices] == ["00000000:B7:00.0", "00000000:BD:00.0"]


def test_mig_instance_is_a_device_with_the_slice_memory() -> None:
    result = parse_smi((FIXTURES / "a100_mig.csv").read_text())
    probe_mod.attach_mig(result, (FIXTURES / "a100_mig_list.txt").read_text())
    assert [p for _, p in result.gpus[0].mig] == ["3g.20gb", "2g.10gb", "1g.5gb"]
    hardware = to_hardware(result, {"CUDA_VISIBLE_DEVICES": "MIG-a28ad590"})
    (device,) = hardware.devices
    assert device.memory_gib == 10 and device.bf16 and "MIG 2g.10gb" in device.name
    missing = to_hardware(result, {"CUDA_VISIBLE_DEVICES": "MIG-ffffffff"})
    assert missing.devices == [] and missing.notes


def test_rocm_smi_and_hip_visibility() -> None:
    result = probe_mod.parse_rocm_smi((FIXTURES / "mi300x_rocm_smi.json").read_text())
    hardware = to_hardware(result, {"HIP_VISIBLE_DEVICES": "1"})
    (device,) = hardware.devices
    assert device.model.compute_capability == "gfx942" and device.bf16 and device.pci_bus_id == "0000:26:00.0"
    assert hardware.order == "PCI_BUS_ID" and round(device.memory_gib) == 192
    hidden = to_hardware(result, {"ROCR_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "1"})
    assert hidden.devices == [] and any(n.startswith("HIP_VISIBLE_DEVICES") for n in hidden.notes)


def test_probe_tries_rocm_after_nvidia(monkeypatch) -> None:
    monkeypatch.setattr(probe_mod, "probe_nvml", lambda: ProbeResult())
    monkeypatch.setattr(probe_mod, "_probe_smi_with_mig", lambda: ProbeResult(notes=["nvidia-smi not found"]))
    monkeypatch.setattr(
        probe_mod, "probe_rocm_smi", lambda: probe_mod.parse_rocm_smi((FIXTURES / "mi300x_rocm_smi.json").read_text())
    )
    result = probe_mod.probe()
    assert result.method == "rocm-smi" and len(result.gpus) == 2 and "nvidia-smi not found" in result.notes


def test_torch_probe_numbers_devices_as_cuda_does(monkeypatch) -> None:
    import sys
    import types

    props = [
        types.SimpleNamespace(name="NVIDIA TITAN RTX", total_memory=24 * 2**30, major=7, minor=5, uuid="aa"),
        types.SimpleNamespace(name="NVIDIA GeForce GTX 1080 Ti", total_memory=11 * 2**30, major=6, minor=1, uuid="bb"),
    ]
    fake = types.SimpleNamespace(
        version=types.SimpleNamespace(cuda="12.1", hip=None),
        cuda=types.SimpleNamespace(device_count=lambda: 2, get_device_properties=lambda i: props[i]),
    )
    monkeypatch.setitem(sys.modules, "torch", fake)
    result = probe_mod.probe(use_torch=True)
    assert result.method == "torch" and result.cuda == "12.1"
    hardware = to_hardware(result, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert [d.name for d in hardware.devices] == ["NVIDIA TITAN RTX", "NVIDIA GeForce GTX 1080 Ti"]
    assert hardware.devices[0].uuid == "GPU-aa"


# --- the probe never hangs, through the real command (issue 8) -----------------------------

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples" / "configs" / "ms-swift-v100" / "fp16-false-ignored.yaml"


def fake_tools(folder: Path, nvml: str) -> dict[str, str]:
    """A PATH whose ``nvidia-smi`` hangs (its ``sleep`` child keeps the output pipe open, so
    killing the script alone would not end the read), and a ``pynvml`` that ``nvml`` says
    how to break. Returns the environment for the command."""
    tools = folder / "bin"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n/bin/sleep 60 &\necho $! >> {folder}/pids\nwait\n")
    smi.chmod(0o755)
    modules = folder / "modules"
    modules.mkdir()
    (modules / "pynvml.py").write_text(
        "import time\n"
        "class NVMLError(Exception):\n    pass\n"
        "def nvmlInit():\n"
        f"    {nvml}\n"
        "def nvmlShutdown():\n    pass\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_")}
    env.update(PATH=f"{tools}:/usr/bin:/bin", PYTHONPATH=str(modules))
    return env


def reap(folder: Path) -> None:
    """End the ``sleep`` processes the fake nvidia-smi left behind (by their ids)."""
    pids = folder / "pids"
    for line in pids.read_text().split() if pids.exists() else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line), signal.SIGTERM)


@pytest.mark.parametrize(
    ("nvml", "note"),
    [
        ("raise NVMLError('Driver Not Loaded')", "NVML: NVMLError: Driver Not Loaded"),
        ("time.sleep(60)", "NVML: no answer within 5 s"),
    ],
    ids=["nvml-fails", "nvml-hangs"],
)
def test_probe_returns_with_notes_when_nvml_fails_and_nvidia_smi_hangs(tmp_path: Path, nvml: str, note: str) -> None:
    env = fake_tools(tmp_path, nvml)
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "precheck", "probe"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
        )
    finally:
        reap(tmp_path)
    elapsed = time.monotonic() - started
    assert elapsed < 2 * probe_mod.TIMEOUT_S + 8, elapsed  # each tool gets TIMEOUT_S, then a note
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert f"note: {note}" in result.stderr
    if "sleep" in nvml:  # a driver that hangs NVML hangs nvidia-smi too: not run, no second wait
        assert "note: nvidia-smi: not run, as NVML gave no answer" in result.stderr
        assert elapsed < probe_mod.TIMEOUT_S + 8, elapsed
    else:
        assert "note: nvidia-smi: no answer within 5 s" in result.stderr
    assert "no GPU found" in result.stdout


def test_a_check_without_gpu_flags_is_not_held_up_by_a_hung_nvidia_smi(tmp_path: Path) -> None:
    """``precheck config.yaml`` probes when no --gpu is given: a hung driver tool costs at
    most its time-out, and the check still runs (hardware rules skipped, said so)."""
    env = fake_tools(tmp_path, "raise NVMLError('Driver Not Loaded')")
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "precheck", "--isolated", str(SEED)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        reap(tmp_path)
    assert time.monotonic() - started < 2 * probe_mod.TIMEOUT_S + 8
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
    assert "PC201" in result.stdout and "no GPU found" in result.stdout + result.stderr
