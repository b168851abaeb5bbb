"""The README is the way in and docs/ the reference: the README stays short, every relative link
resolves (file and heading), and every command output shown is what the command prints."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _transcripts() -> Any:
    spec = importlib.util.spec_from_file_location("doc_transcripts", ROOT / "scripts" / "doc_transcripts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_transcripts"] = module
    spec.loader.exec_module(module)
    return module


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file (headings outside code blocks)."""
    out, code = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            code = not code
        elif not code and re.match(r"#{1,6} ", line):
            text = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def test_the_readme_is_the_first_screen() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert "**Contents:**" in text
    for page in ("docs/usage.md", "docs/ci.md", "docs/frameworks.md", "docs/rules.md", "docs/performance.md"):
        assert f"]({page}" in text, page


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_transcript_reader_finds_the_shown_commands() -> None:
    module = _transcripts()
    blocks = [t for page in PAGES for t in module.transcripts(page)]
    assert len(blocks) >= 10
    assert any("precheck rules" in module.commands(t.text) for t in blocks)
    assert module.commands("$ a\nout\n$ b | head -n 2\n") == ["a", "b | head -n 2"]


def test_every_command_output_shown_is_current() -> None:
    """`python scripts/generate_docs.py` rewrites them; `--check` (in .ci/run) fails the same way."""
    assert _transcripts().stale(ROOT) == [], "run: python scripts/generate_docs.py"


def test_a_stale_output_is_found(tmp_path: Path) -> None:
    module = _transcripts()
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("x\n\n```\n$ echo fresh\nstale\n```\n", encoding="utf-8")
    assert module.stale(tmp_path) == ["README.md:4: echo fresh"]
    assert module.write(tmp_path) == ["README.md"]
    assert "$ echo fresh\nfresh\n```" in (tmp_path / "README.md").read_text(encoding="utf-8")
    assert module.stale(tmp_path) == []
