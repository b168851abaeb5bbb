"""Write what is generated from precheck's own declarations, or check that it is current.

- ``docs/rules/CODE.md`` (one page per rule) and ``docs/rules/README.md`` (the index), from
  the rule registry (:mod:`precheck.rule_pages`);
- ``schema/precheck-config.schema.json``, the JSON Schema of ``[tool.precheck]``, from the
  pydantic model (:mod:`precheck.config_model`).
- ``schema/precheck-report.schema.json``, the JSON Schema of the ``--format json`` report,
  from the pydantic model (:mod:`precheck.report_model`);
- every command output shown in ``README.md`` and ``docs/*.md`` (a fenced block whose lines
  start with ``$ COMMAND``), by running the command (``scripts/doc_transcripts.py``).

    python scripts/generate_docs.py           # write them
    python scripts/generate_docs.py --check   # exit 1 naming each file that is out of date
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def expected() -> dict[Path, str]:
    """Every generated file (relative to the repository root) → its content."""
    from precheck import config_model, report_model, rule_pages

    out = {Path(rule_pages.FOLDER) / name: text for name, text in rule_pages.pages().items()}
    out[Path(config_model.SCHEMA_FILE)] = config_model.render()
    out[Path(report_model.SCHEMA_FILE)] = report_model.render()
    return out


def stale(root: Path = ROOT) -> list[str]:
    """The generated files that differ from what they should be, and pages of removed rules."""
    wanted = expected()
    out = [str(p) for p, text in wanted.items() if not (root / p).is_file() or (root / p).read_text() != text]
    folder = root / "docs" / "rules"
    if folder.is_dir():
        out += [str(p.relative_to(root)) for p in sorted(folder.glob("*.md")) if p.relative_to(root) not in wanted]
    return out


def write(root: Path = ROOT) -> list[str]:
    wanted = expected()
    written = []
    for relative, text in wanted.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(str(relative))
    for page in sorted((root / "docs" / "rules").glob("*.md")):
        if page.relative_to(root) not in wanted:  # a rule that no longer exists
            page.unlink()
            written.append(f"{page.relative_to(root)} (removed)")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale() + [f"{where}: output differs" for where in _transcripts().stale(ROOT)]
        for name in out_of_date:
            print(f"{name}: out of date (python scripts/generate_docs.py)", file=sys.stderr)
        return 1 if out_of_date else 0
    for name in write() + _transcripts().write(ROOT):
        print(f"wrote {name}")
    return 0


def _transcripts() -> Any:
    """``scripts/doc_transcripts.py``, loaded from beside this file (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("doc_transcripts", Path(__file__).with_name("doc_transcripts.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_transcripts"] = module
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main())
