"""A function a CLI builder runs (``jsonargparse.CLI(setup)``, ``fire.Fire(main)``) takes the
launch's flags as its parameters, and their defaults where the launch gives none
(``python_calls._command_values``). Real code: lit-gpt's ``finetune/adapter_v2.py`` at
Lightning-AI/litgpt@d9be087 (``precision = precision or get_default_supported_precision(...)``,
``L.Fabric(precision=precision)``, ``CLI(setup)``; unchanged in ``tests/fixtures/fresh``) and the
``finetune/adapter.py`` of the fresh report case 203 (Lightning-AI/litgpt#221, ``if precision is
None: precision = ...``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs

HERE = Path(__file__).parent
ADAPTER_V2 = HERE / "fixtures" / "fresh" / "litgpt_d9be087" / "adapter_v2.py"
CASE_203 = HERE / "fixtures" / "fresh_reports" / "cases" / "203-litgpt-adapter-16-true-nan" / "finetune" / "adapter.py"


def repo(tmp_path: Path, script: Path, flags: str) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "finetune").mkdir()
    shutil.copy(script, tmp_path / "finetune" / script.name)
    launch = tmp_path / "train.sh"
    launch.write_text(f"#!/bin/bash\npython finetune/{script.name} {flags}\n", encoding="utf-8")
    return launch


def findings(path: Path, gpu: str) -> set[tuple[str, str]]:
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return {(f.rule, str(f.severity)) for f in report.findings}


def test_a_precision_flag_reaches_the_fabric_of_a_jsonargparse_setup(tmp_path: Path) -> None:
    """`--precision 16-true`: pure fp16 with no loss scaling (PC405); `bf16-true` on a T4: PC101."""
    launch = repo(tmp_path, ADAPTER_V2, "--precision 16-true --checkpoint_dir checkpoints/x")
    assert ("PC405", "warning") in findings(launch, "T4")
    launch.write_text("#!/bin/bash\npython finetune/adapter_v2.py --precision bf16-true\n", encoding="utf-8")
    assert ("PC101", "error") in findings(launch, "T4")
    assert not any(severity == "error" for _, severity in findings(launch, "A100"))


def test_a_default_decided_in_code_stays_unknown_when_no_flag_gives_it(tmp_path: Path) -> None:
    """No `--precision`: `get_default_supported_precision(training=True)` asks the hardware at run
    time, so precheck reports nothing it would have to guess."""
    launch = repo(tmp_path, ADAPTER_V2, "--checkpoint_dir checkpoints/x")
    assert not any(severity == "error" for _, severity in findings(launch, "V100"))


def test_the_second_file_an_if_none_default_over_the_flag(tmp_path: Path) -> None:
    """Case 203: `if precision is None: precision = ...` keeps the flag's `16-true`."""
    launch = repo(tmp_path, CASE_203, "--precision 16-true")
    assert ("PC405", "warning") in findings(launch, "T4")


def test_a_finding_a_flag_decides_is_keyed_by_the_flag_and_cites_it(tmp_path: Path) -> None:
    """The finding stays at the `L.Fabric(precision=precision)` line the value reaches, keyed by
    the launch's `--precision` (its `Origin.option`), its origin citing the flag's line; a fix never
    edits the flag through the Python line (no edit names `--precision` in the script)."""
    launch = repo(tmp_path, ADAPTER_V2, "--precision 16-true --checkpoint_dir checkpoints/x")
    report = engine.run([str(launch)], from_specs(["T4"], {}), env={})
    (found,) = [f for f in report.findings if f.rule == "PC405"]
    assert found.origin.path is not None and found.origin.path.endswith("adapter_v2.py")
    assert found.origin.shown_key == "--precision" and found.origin.key is None
    assert "the launch's --precision at" in (found.origin.detail or "") and "train.sh:2" in (found.origin.detail or "")
    assert not any(e.key == "--precision" for e in (found.fix.edits if found.fix else ()))


def test_a_keyword_the_plan_reads_as_other_settings_keys_its_finding(tmp_path: Path) -> None:
    """No flag: `bf16-true` written in `L.Fabric(precision=...)` is keyed `precision` (the keyword)."""
    script = tmp_path / "finetune_lora.py"
    script.write_text(
        'import lightning as L\n\n\ndef main():\n    fabric = L.Fabric(devices=1, precision="bf16-true")\n'
        '    fabric.launch()\n\n\nif __name__ == "__main__":\n    main()\n',
        encoding="utf-8",
    )
    report = engine.run([str(script)], from_specs(["V100"], {}), env={})
    (found,) = [f for f in report.findings if f.rule == "PC101"]
    assert (found.origin.line, found.origin.shown_key) == (5, "precision")
