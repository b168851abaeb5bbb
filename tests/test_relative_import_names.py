"""A name imported from the repository's own module (``from .config import PPOConfig``) is that
module's, not a library's class of the same name: EasyR1's ``verl/trainer/main.py`` builds its own
``PPOConfig()`` (an OmegaConf dataclass), which was read as TRL's PPOConfig with TRL's bf16 default,
a false V100 PC101 at line 1 (hiyouga/EasyR1, tests/fixtures/fresh/README.md). The same import opens
many RL repositories' trainers (``find_string "from .config import PPOConfig"``: 10 of 10 are
repositories' own classes). An absolute ``from trl import PPOConfig`` stays TRL's."""

from __future__ import annotations

from pathlib import Path

import pytest

from precheck import api

MAIN = Path(__file__).parent / "fixtures" / "fresh" / "EasyR1" / "verl" / "trainer" / "main.py"


def _errors(path: Path) -> list[str]:
    report = api.check(str(path), "V100", use_project=False)
    return [f.rule for f in report.findings if f.severity.name == "ERROR"]


def test_easyr1_own_ppo_config_is_not_trl() -> None:
    assert "from .config import PPOConfig" in MAIN.read_text(encoding="utf-8")
    assert _errors(MAIN) == []


@pytest.mark.parametrize(
    ("imports", "read_as_trl"),
    [
        ("from .configs import SFTConfig", False),
        ("from ..training.configs import SFTConfig as SFTConfig", False),
        ("from trl import SFTConfig", True),
    ],
)
def test_where_the_name_comes_from_decides(tmp_path: Path, imports: str, read_as_trl: bool) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    script = package / "train.py"
    script.write_text(
        f"{imports}\nfrom trl import SFTTrainer\n\n"
        'args = SFTConfig(output_dir="out", bf16=True)\n'
        "SFTTrainer(model=model, args=args, train_dataset=data).train()\n",
        encoding="utf-8",
    )
    assert (_errors(script) == ["PC101"]) is read_as_trl
