"""A file the script itself writes before a command names it (``cat <<EOT > dpo_config.yaml``,
then ``accelerate launch ... run_dpo.py dpo_config.yaml``) exists when that command runs: it is
not a missing file. RLHFlow/Online-RLHF's ``run_loop.sh`` and ``run_loop2.sh`` write the DPO
settings of each iteration so, and had a false PC904 each (tests/fixtures/fresh/README.md).
bash(1) "REDIRECTION": ``>``, ``>>``, ``>|``, ``&>``, ``&>>`` create/open the file for writing;
``>&``/``<&`` duplicate a descriptor and write no file. A name no command wrote stays PC904."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

FRESH = Path(__file__).parent / "fixtures" / "fresh" / "Online-RLHF"


def _rules(path: Path) -> list[str]:
    report = api.check(str(path), "A100", use_project=False)
    return [f.rule for f in report.findings]


@pytest.mark.parametrize("name", ["run_loop.sh", "run_loop2.sh"])
def test_online_rlhf_heredoc_config_is_not_missing(name: str) -> None:
    text = (FRESH / name).read_text(encoding="utf-8")
    assert "cat <<EOT > dpo_config.yaml" in text and "run_dpo.py dpo_config.yaml" in text
    assert not (FRESH / "dpo_config.yaml").exists()
    assert "PC904" not in _rules(FRESH / name)


@pytest.mark.parametrize(
    ("writer", "missing"),
    [
        ("cat <<EOF > run.yaml\nbf16: true\nEOF\n", False),
        ("cat > run.yaml <<'EOF'\nbf16: true\nEOF\n", False),
        ('echo "bf16: true" >> "run.yaml"\n', False),
        ("python make_cfg.py &> ./run.yaml\n", False),
        ("python make_cfg.py > other.yaml 2>&1\n", True),
        ("", True),
    ],
)
@pytest.mark.parametrize("launch", ["train.py run.yaml", "train.py --config run.yaml"])
def test_written_before_the_launch(tmp_path: Path, writer: str, missing: bool, launch: str) -> None:
    script = tmp_path / "go.sh"
    script.write_text(writer + f"accelerate launch --mixed_precision bf16 {launch}\n", encoding="utf-8")
    assert ("PC904" in _rules(script)) is missing
