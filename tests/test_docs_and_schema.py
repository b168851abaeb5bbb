"""Documentation as data: rule pages and the configuration schema are generated and current;
SARIF links every rule to its page; the distribution name and address are said one way."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from precheck import config_model, project, rule_pages
from precheck.distribution import NAME, REPOSITORY, rule_url
from precheck.errors import InputError
from precheck.rules import RULES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / config_model.SCHEMA_FILE).read_text())


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_pages_and_schema_are_current() -> None:
    assert _generator().stale(ROOT) == [], "run: python scripts/generate_docs.py"


def test_the_generator_finds_a_stale_page(tmp_path: Path) -> None:
    generator = _generator()
    generator.write(tmp_path)
    assert generator.stale(tmp_path) == []
    page = tmp_path / "docs" / "rules" / "PC201.md"
    page.write_text(page.read_text().replace("ms-swift", "swift"))
    (tmp_path / "docs" / "rules" / "PC999.md").write_text("# a removed rule\n")
    assert generator.stale(tmp_path) == ["docs/rules/PC201.md", "docs/rules/PC999.md"]


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_has_a_page_with_what_why_example_fix_and_versions(code: str) -> None:
    text = (ROOT / "docs" / "rules" / f"{code}.md").read_text()
    assert text.splitlines()[1] == f"# {code} {RULES[code].name}"
    sections = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert sections == ["What it does", "Why is this bad?", "Example", "Fix", "Versions"]
    assert f"({code}.md)" in (ROOT / "docs" / "rules" / "README.md").read_text()


def test_a_version_bound_rule_page_names_its_range() -> None:
    text = rule_pages.page(RULES["PC201"])
    assert "Holds for `ms-swift>=3.0.0,<3.3.1`." in text and "at most a warning" in text


def test_sarif_links_every_rule_to_its_page() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "precheck", "--gpu", "V100", "--format", "sarif", "examples/configs"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    driver = json.loads(result.stdout)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == REPOSITORY
    assert len(driver["rules"]) >= 5
    for descriptor in driver["rules"]:
        assert descriptor["helpUri"] == rule_url(descriptor["id"])
        page = descriptor["helpUri"].removeprefix(f"{REPOSITORY}/blob/main/")
        assert (ROOT / page).is_file(), page


def test_pyproject_names_the_one_address_and_the_free_name() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] == NAME
    assert meta["urls"]["Repository"] == REPOSITORY
    assert all(url.startswith(REPOSITORY) for url in meta["urls"].values())
    assert meta["optional-dependencies"]["all"] == [f"{NAME}[nvml,hf]"]


#: `pip install precheck`, `precheck[hf]`, `precheck @ git+...`: the index's `precheck` is another project
OLD_NAME = re.compile(
    r"pip3? install +[\"']?precheck(?![\w-])|(?<![\w/.-])precheck\[(?=[a-z])|[\"'](?<![\w-])precheck @ "
)


def test_no_install_hint_names_the_other_project() -> None:
    files = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "src").rglob("*.py"))]
    files += sorted(p for p in (ROOT / "examples").rglob("*") if p.is_file())
    files += sorted((ROOT / "docs").rglob("*.md"))
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
        if OLD_NAME.search(line)
    ]
    assert hits == []
    assert OLD_NAME.search("pip install 'precheck[hf]'") and OLD_NAME.search("pip install precheck")
    assert OLD_NAME.search('pip install "precheck @ git+https://x"')
    assert not OLD_NAME.search(f"pip install '{NAME}[hf]'") and not OLD_NAME.search(f'"{NAME} @ git+https://x"')


def _readme_project_config() -> str:
    readme = (ROOT / "docs" / "configuration.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", readme, re.DOTALL)
    (block,) = [b for b in blocks if b.startswith("[tool.precheck]")]
    return block


def _tables() -> dict[str, tuple[Path, dict[str, Any]]]:
    """The project configurations the repository shows: name → (file, its precheck table)."""
    example = ROOT / "examples" / "project" / "pyproject.toml"
    golden = ROOT / "tests" / "fixtures" / "golden" / "project" / ".precheck.toml"
    return {
        "examples/project/pyproject.toml": (example, tomllib.loads(example.read_text())["tool"]["precheck"]),
        "golden .precheck.toml": (golden, tomllib.loads(golden.read_text())),
        "docs/configuration.md": (example, tomllib.loads(_readme_project_config())["tool"]["precheck"]),
    }


@pytest.mark.parametrize("name", ["examples/project/pyproject.toml", "golden .precheck.toml", "docs/configuration.md"])
def test_the_schema_validates_the_shown_project_configurations(name: str) -> None:
    path, table = _tables()[name]
    jsonschema.validate(table, SCHEMA, cls=jsonschema.Draft202012Validator)
    config_model.ProjectSettings.model_validate(table)
    assert project.load(path).path == str(path)  # and precheck reads it


def test_the_readme_example_is_the_examples_file() -> None:
    example = tomllib.loads((ROOT / "examples" / "project" / "pyproject.toml").read_text())["tool"]["precheck"]
    assert tomllib.loads(_readme_project_config())["tool"]["precheck"] == example


EXAMPLE = (ROOT / "examples" / "project" / "pyproject.toml").read_text()
#: [tool.precheck] bodies: the fast validator (project.load) and the model must agree on each
CASES = {
    "empty": "",
    "all keys": EXAMPLE.split("[tool.precheck]\n", 1)[1].replace("[tool.precheck.", "["),
    "codes, prefixes, names, any case": 'select = ["PC1", "pc201", "all", "fp16-on-bf16-model"]\n',
    "severity spelt loosely": 'fail-on = " Warning "\n[severity]\nPC201 = "INFO"\n',
    "unknown key": "gpu = ['A100']\n",
    "unknown rule": 'ignore = ["PC999"]\n',
    "unknown name": 'select = ["no-such-rule"]\n',
    "select not a list": 'select = "PC201"\n',
    "a number in a list": "extend-select = [201]\n",
    "bad severity": 'fail-on = "fatal"\n',
    "bad severity value": '[severity]\nPC201 = "loud"\n',
    "severity of an unknown rule": '[severity]\nPC999 = "error"\n',
    "per-file-ignores of an unknown rule": '[per-file-ignores]\n"*.json" = ["PC999"]\n',
    "per-file-ignores not a list": '[per-file-ignores]\n"*.json" = "PC601"\n',
    "a blank glob": 'exclude = [""]\n',
    "unknown gpu": 'gpus = ["Z9000"]\n',
    "gpus as a string": 'gpus = "A100"\n',
    "a version that is not one": 'versions = { trl = "latest" }\n',
    "a version as a number": "versions = { trl = 0.19 }\n",
    "versions not a table": 'versions = ["trl"]\n',
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_model_and_the_fast_validator_agree(case: str, tmp_path: Path) -> None:
    path = tmp_path / ".precheck.toml"
    path.write_text(CASES[case])
    try:
        project.load(path)
        fast = True
    except InputError:
        fast = False
    try:
        config_model.ProjectSettings.model_validate(tomllib.loads(CASES[case]))
        model = True
    except ValueError:  # pydantic's ValidationError
        model = False
    assert fast == model, (case, fast, model)
    assert fast == (case in ("empty", "all keys", "codes, prefixes, names, any case", "severity spelt loosely"))


def test_the_check_path_never_imports_pydantic_or_the_model() -> None:
    code = (
        "import sys\nfrom precheck.entry import main\n"
        "try:\n    main(['--gpu', 'V100', 'examples/project', 'examples/configs/ms-swift-v100'])\n"
        "except SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('pydantic', 'precheck.config_model') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "LOADED []" in result.stdout, result.stdout + result.stderr
