"""Findings rest on facts: an assumed premise caps a finding at a warning and is named
(DESIGN.md, "Findings rest on facts"); ``--gpu CARD`` without a count takes the count the
launch asks for."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import write
from precheck import engine
from precheck.hardware import from_specs
from precheck.provenance import Origin
from precheck.report import json_report
from precheck.rules.base import Finding, Severity

FULL_7B = """\
model_name_or_path: meta-llama/Llama-2-7b-hf
torch_dtype: float32
output_dir: out
learning_rate: 2.0e-5
per_device_train_batch_size: 1
max_seq_length: 1024
"""


def _memory(report: engine.Report) -> list[Finding]:
    return [f for f in report.findings if f.rule == "PC801"]


def test_an_assumption_caps_a_finding_at_a_warning_and_names_it() -> None:
    finding = Finding(Origin("file", "a.yaml", 1, 1), "boom", severity=Severity.ERROR, assumptions=("x: say y",))
    capped = engine.rest_on_facts(finding)
    assert capped.severity is Severity.WARNING
    assert capped.message == "boom [assumed: x: say y]"
    fact = Finding(Origin("file", "a.yaml", 1, 1), "boom", severity=Severity.ERROR)
    assert engine.rest_on_facts(fact) is fact


def test_memory_error_needs_the_method_and_the_device_count(tmp_path: Path) -> None:
    guessed = write(tmp_path, "guessed.yaml", FULL_7B)
    stated = write(tmp_path, "stated.yaml", FULL_7B + "use_peft: false\n")
    # the method unknown (the script decides), the count unknown: a warning naming both
    (finding,) = _memory(engine.run([str(guessed)], from_specs(["RTX 4090"], {}), env={}))
    assert finding.severity is Severity.WARNING
    assert "a full fine-tune" in finding.assumptions[0] and "use_peft" in finding.assumptions[0]
    assert "--gpu '1xRTX 4090'" in finding.assumptions[1]
    # the method known, the count not: still a warning, naming only the count
    (finding,) = _memory(engine.run([str(stated)], from_specs(["RTX 4090"], {}), env={}))
    assert finding.severity is Severity.WARNING and len(finding.assumptions) == 1
    # both stated: an error resting on facts
    (finding,) = _memory(engine.run([str(stated)], from_specs(["1xRTX 4090"], {}), env={}))
    assert finding.severity is Severity.ERROR and finding.assumptions == ()
    # the method unknown but not even QLoRA would fit: the method is no premise
    huge = write(tmp_path, "huge.yaml", FULL_7B.replace("Llama-2-7b-hf", "Llama-2-70b-hf"))
    (finding,) = _memory(engine.run([str(huge)], from_specs(["1xT4"], {}), env={}))
    assert finding.severity is Severity.ERROR and finding.assumptions == ()


def test_json_findings_list_their_assumptions(tmp_path: Path) -> None:
    config = write(tmp_path, "guessed.yaml", FULL_7B)
    report = engine.run([str(config)], from_specs(["RTX 4090"], {}), env={})
    (finding,) = [f for f in json.loads(json_report.render(report))["findings"] if f["rule"] == "PC801"]
    assert finding["severity"] == "warning" and len(finding["assumptions"]) == 2


DEEPSPEED_8 = """\
deepspeed --include localhost:0,1,2,3,4,5,6,7 train.py \\
    --model_name_or_path meta-llama/Llama-2-7b-hf \\
    --output_dir out --learning_rate 1e-5 --bf16 true
"""


def test_a_card_without_a_count_takes_the_launch_s_device_count_and_says_so_once(tmp_path: Path) -> None:
    write(tmp_path, "a.sh", DEEPSPEED_8)
    write(tmp_path, "b.sh", DEEPSPEED_8.replace("--include localhost:0,1,2,3,4,5,6,7", "--include localhost:1"))
    torchrun = DEEPSPEED_8.replace("deepspeed --include localhost:0,1,2,3,4,5,6,7", "torchrun --nproc_per_node 4")
    write(tmp_path, "c.sh", torchrun)
    report = engine.run([str(tmp_path)], from_specs(["A100"], {}), env={})
    assert not [f for f in report.findings if f.rule == "PC502"]  # not "entry '1' names no device"
    asked = {Path(r.path).name: r.devices_asked for r in report.files}
    assert asked == {"a.sh": 8, "b.sh": 2, "c.sh": 4}
    assert report.hardware_note is not None and report.hardware_note.count("--gpu named a card and no count") == 1
    # a count on the command line is the machine: index 1 of one card is an error again
    stated = engine.run([str(tmp_path / "b.sh")], from_specs(["1xA100"], {}), env={})
    assert "PC502" in [f.rule for f in stated.findings if f.severity is Severity.ERROR]
    assert stated.hardware_note is None


def test_the_shell_s_cuda_visible_devices_is_a_count_too(tmp_path: Path) -> None:
    script = write(tmp_path, "a.sh", DEEPSPEED_8.replace("deepspeed --include localhost:0,1,2,3,4,5,6,7", "torchrun"))
    environment = {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    report = engine.run([str(script)], from_specs(["A100"], environment), env=environment)
    assert not [f for f in report.findings if f.rule == "PC502"]
    assert report.files[0].devices_asked == 4
