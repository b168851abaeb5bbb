"""Write a framework's option schema, read from its released wheels, into precheck's data.

For each version given, ``pip download --no-deps NAME==VERSION`` fetches the wheel; it is
unpacked and read with precheck's own static reader (:func:`precheck.sources.release_schema.extract`,
never imported or run). Consecutive versions whose schema is the same (line numbers aside) are
one release range. The result goes to ``src/precheck/data/schemas/<framework>.json``, with the
``spec`` it was read by, so that the tests re-read a checked-in copy of the sources the same way.

    python scripts/extract_schema.py litgpt 0.5.11 0.5.12 0.5.13
    python scripts/extract_schema.py llm-foundry 0.22.0
    python scripts/extract_schema.py --table          # the summary of every data file

Maintainers only: it needs the network (the package index); the check path reads the data.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "precheck" / "data" / "schemas"

#: what to read in each framework's release, and which distributions hold it
SPECS: dict[str, dict[str, Any]] = {
    "litgpt": {
        "distribution": "litgpt",
        "program": "litgpt",
        "wheels": ["litgpt"],
        "spec": {
            "cli": {
                "module": "litgpt.__main__",
                "command_prefixes": ["finetune", "pretrain"],
                "precision_options": ["precision", "quantize"],
            },
        },
    },
    "llm-foundry": {
        "distribution": "llm-foundry",
        "program": "composer",
        # the YAML's keys are llm-foundry's; what `precision` and `mixed_precision` do is Composer's
        "wheels": ["llm-foundry", "mosaicml"],
        "spec": {
            "config_class": {
                "module": "llmfoundry.utils.config_utils",
                "class": "TrainConfig",
                "flow_modules": ["llmfoundry.command_utils.train"],
                "precision_options": ["precision", "fsdp_config"],
            },
            "enums": {"precision": "composer.core.precision:Precision"},
            "compared": {
                "fsdp_config.mixed_precision": (
                    "composer.distributed.mosaic_parallelism:get_mixed_precision:mixed_precision"
                )
            },
        },
    },
}


def _without_lines(value: Any) -> Any:
    """``value`` without its line numbers and annotations' spelling (``Optional[str]`` and
    ``str | None`` read alike): two releases differ in them more than in anything."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k not in ("line", "type")}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def download(distribution: str, version: str, into: Path) -> Path:
    """The wheel of ``distribution==version`` unpacked under ``into``."""
    wheels = into / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"{distribution}=={version}", "-d", str(wheels)],
        check=True,
    )
    normalised = distribution.replace("-", "_").lower()
    wheel = next(w for w in sorted(wheels.glob("*.whl")) if w.name.lower().startswith(f"{normalised}-{version}"))
    target = into / "tree"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def extract_version(framework: str, version: str, companions: dict[str, str]) -> dict[str, Any]:
    from precheck.sources.release_schema import extract

    spec = SPECS[framework]
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder)
        for distribution in spec["wheels"]:
            wanted = version if distribution == spec["distribution"] else companions[distribution]
            download(distribution, wanted, tree)
        return extract(tree / "tree", spec["spec"])


def write(framework: str, versions: list[str], companions: dict[str, str]) -> Path:
    spec = SPECS[framework]
    releases: list[dict[str, Any]] = []
    for version in versions:
        schema = extract_version(framework, version, companions)
        if releases and _without_lines(releases[-1]["schema"]) == _without_lines(schema):
            releases[-1]["versions"].append(version)
            releases[-1]["schema"] = schema  # the newest release's lines
        else:
            releases.append({"versions": [version], "schema": schema})
    for release in releases:
        release["read_from"] = {
            spec["distribution"]: release["versions"][-1],
            **{d: companions[d] for d in spec["wheels"] if d != spec["distribution"]},
        }
    document = {
        "framework": framework,
        "distribution": spec["distribution"],
        "program": spec["program"],
        "generated_by": "scripts/extract_schema.py",
        "spec": spec["spec"],
        "releases": releases,
    }
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{framework}.json"
    path.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path


def table() -> str:
    """framework | releases | entry points | #options | precision options → where they flow."""
    rows = [
        "| framework | releases | entry points | #options | precision options → where they flow |",
        "|---|---|---|---|---|",
    ]
    for path in sorted(DATA.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        for release in document["releases"]:
            schema = release["schema"]
            versions = release["versions"]
            span = versions[0] if len(versions) == 1 else f"{versions[0]}–{versions[-1]}"
            parts: list[tuple[str, dict[str, Any]]] = []
            if "entry_points" in schema:
                parts += [(f"{document['program']} {c}", e) for c, e in schema["entry_points"].items()]
            if "config_class" in schema:
                parts.append((schema["config_class"]["class"], schema["config_class"]))
            for name, part in parts:
                flows = "; ".join(f"`{o}` → {', '.join(f['calls']) or '—'}" for o, f in part["flows"].items())
                rows.append(f"| {document['framework']} | {span} | {name} | {len(part['options'])} | {flows} |")
            for label, found in schema.get("values", {}).items():
                rows.append(
                    f"| {document['framework']} | {span} | `{label}` values ({found['from']}) | "
                    f"{len(found['values'])} | {', '.join(map(str, found['values']))} |"
                )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework", nargs="?", choices=sorted(SPECS))
    parser.add_argument("versions", nargs="*", help="releases to read, oldest first")
    parser.add_argument(
        "--with",
        dest="companions",
        action="append",
        default=[],
        metavar="DIST==VER",
        help="the version of a companion wheel the spec reads (mosaicml==0.32.1)",
    )
    parser.add_argument("--table", action="store_true", help="print the summary table of the data files")
    args = parser.parse_args()
    if args.framework is not None:
        if not args.versions:
            parser.error("name at least one version")
        companions = dict(c.split("==", 1) for c in args.companions)
        missing = [d for d in SPECS[args.framework]["wheels"][1:] if d not in companions]
        if missing:
            parser.error(f"name the companion wheels' versions: {', '.join(f'--with {d}==VER' for d in missing)}")
        print(write(args.framework, args.versions, companions))
    if args.table or args.framework is None:
        print(table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
