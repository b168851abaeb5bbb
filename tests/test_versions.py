from dataclasses import replace

import pytest

from precheck.engine import judge_versions
from precheck.errors import UsageError
from precheck.provenance import Origin
from precheck.rules import RULES
from precheck.rules.base import Finding, Severity
from precheck.versions import VersionInfo, VersionRange, Versions, collect, parse_assumptions


def test_range_bounds() -> None:
    span = VersionRange("ms-swift", "3.0.0", "3.3.1")
    assert span.contains("3.0.0") and span.contains("3.3.0.post1") and not span.contains("3.3.1")
    assert not span.contains("2.6.1") and str(span) == "ms-swift>=3.0.0,<3.3.1"


def test_pins_beside_the_config_and_flag_precedence(tmp_path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "configs"
    sub.mkdir()
    (tmp_path / "requirements.txt").write_text("# pins\ntrl>=0.18\nMS_Swift == 3.2.2 ; python_version > '3.8'\n")
    config = sub / "train.yaml"
    config.write_text("model: m\n")
    found = collect(str(config), ["ms-swift", "trl"], {})
    assert found.get("ms-swift") == VersionInfo("ms-swift", "3.2.2", found.get("ms-swift").source)  # type: ignore[union-attr]
    assert found.get("ms-swift").source.endswith("requirements.txt:3")  # type: ignore[union-attr]
    trl = found.get("trl")
    assert trl is not None and (trl.version == ">=0.18" or trl.source.startswith("installed, within"))
    flagged = collect(str(config), ["ms-swift"], parse_assumptions(["ms-swift==3.3.1"]))
    assert flagged.get("ms-swift").source == "flag"  # type: ignore[union-attr]


def test_bad_assumption_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        parse_assumptions(["trl>=0.19"])


def test_installed_distribution_metadata(tmp_path, monkeypatch) -> None:
    dist = tmp_path / "simpletuner-3.1.6.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: simpletuner\nVersion: 3.1.6\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = collect(str(tmp_path / "c.json"), ["simpletuner"], {})
    assert found.get("simpletuner") == VersionInfo("simpletuner", "3.1.6", "installed")


def _finding() -> Finding:
    return Finding(Origin("file", "c.yaml", 1, 1, "fp16"), "msg", rule="PC201", severity=Severity.ERROR)


def test_version_judgement() -> None:
    rule = RULES["PC201"]
    inside = Versions({"ms-swift": VersionInfo("ms-swift", "3.2.2", "flag")})
    outside = Versions({"ms-swift": VersionInfo("ms-swift", "3.3.1", "flag")})
    kept = judge_versions(rule, _finding(), inside)
    assert kept is not None and kept.severity == Severity.ERROR
    assert judge_versions(rule, _finding(), outside) is None
    unknown = judge_versions(rule, _finding(), Versions())
    assert unknown is not None and unknown.severity == Severity.WARNING and "not known" in unknown.message
    latest = replace(rule, affects_latest=True)
    still = judge_versions(latest, _finding(), Versions())
    assert still is not None and still.severity == Severity.ERROR


def test_pin_file_formats(tmp_path) -> None:
    from precheck.pins import pins_in

    (tmp_path / "pyproject.toml").write_text(
        '[project]\ndependencies = [\n  "trl==0.18.2",\n  "peft>=0.10",\n]\n\n[tool.poetry.dependencies]\n'
        'python = "^3.10"\nms-swift = "3.2.2"\naccelerate = {version = "==1.2.0", extras = ["x"]}\n'
    )
    (tmp_path / "uv.lock").write_text(
        '[[package]]\nname = "trl"\nversion = "0.19.0"\n\n[[package]]\nname = "peft"\nversion = "0.13.2"\n'
    )
    (tmp_path / "poetry.lock").write_text('[[package]]\nname = "simpletuner"\nversion = "3.1.6"\ndescription = "x"\n')
    (tmp_path / "environment.yml").write_text(
        "dependencies:\n  - python=3.11\n  - pytorch=2.4.0\n  - pip:\n    - trl==0.18.2\n"
    )
    (tmp_path / "requirements.txt").write_text("-r requirements-dev.txt\ntorch @ https://x/y.whl\ntrl>=0.18\n")
    (tmp_path / "requirements-dev.txt").write_text("-r requirements.txt\npeft==0.12.0 ; python_version > '3.8'\n")

    def read(name: str) -> set[tuple[str, str, str, int]]:
        return {(p.name, n, v, line) for p, n, v, line in pins_in(tmp_path / name)}

    assert read("pyproject.toml") == {
        ("pyproject.toml", "trl", "0.18.2", 3),
        ("pyproject.toml", "peft", ">=0.10", 4),
        ("pyproject.toml", "ms-swift", "3.2.2", 9),
        ("pyproject.toml", "accelerate", "1.2.0", 10),
    }
    assert read("uv.lock") == {("uv.lock", "trl", "0.19.0", 3), ("uv.lock", "peft", "0.13.2", 7)}
    assert read("poetry.lock") == {("poetry.lock", "simpletuner", "3.1.6", 3)}
    assert ("environment.yml", "trl", "0.18.2", 5) in read("environment.yml")
    assert read("requirements.txt") == {  # -r loop, URL skipped, range kept
        ("requirements-dev.txt", "peft", "0.12.0", 2),
        ("requirements.txt", "trl", ">=0.18", 3),
    }


def test_broken_pin_files_never_crash(tmp_path) -> None:
    from precheck.pins import pins_in

    (tmp_path / "uv.lock").write_bytes(b"\xff\xfe[[package]\nname = ")
    (tmp_path / "pyproject.toml").write_text("[project\ndependencies = [")
    (tmp_path / "requirements.txt").write_text("-r missing.txt\n===\n")
    for name in ("uv.lock", "pyproject.toml", "requirements.txt"):
        assert list(pins_in(tmp_path / name)) == []


def test_project_config_rejects_unknown_keys_with_line(tmp_path) -> None:
    from precheck.errors import InputError
    from precheck.project import load

    path = tmp_path / ".precheck.toml"
    path.write_text('versions = { trl = "0.18.2" }\nselcet = ["PC1"]\n')
    with pytest.raises(InputError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:2:1: unknown key `selcet`")
