#!/usr/bin/env python3
"""Check every fact in src/precheck/data/facts.json against the released artifacts.

Maintainer script, not part of the test run: it downloads each release a fact names with
``pip download --no-deps`` (a wheel, or the sdist where the project ships only that; sdists
are fetched with ``--no-build-isolation``, so run it from an environment with torch for
DeepSpeed) and checks that the fact's pattern is present in the file of every release under
``present_in`` and absent from every release under ``absent_in``. Prints a table; exits 1
when a fact does not hold or a release cannot be read.

    python scripts/verify_facts.py [--cache DIR] [FACT_ID_PREFIX ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

FACTS = Path(__file__).resolve().parent.parent / "src" / "precheck" / "data" / "facts.json"


def download(
    package: str, version: str, cache: Path, extra: list[str] | None = None, env: dict[str, str] | None = None
) -> Path | None:
    """The release's wheel or sdist, downloaded once into ``cache``."""
    folder = cache / f"{package}-{version}"
    found = sorted(folder.glob("*.whl")) + sorted(folder.glob("*.tar.gz")) + sorted(folder.glob("*.zip"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-build-isolation"]
    command += [*(extra or []), f"{package}=={version}", "-d", str(folder)]
    subprocess.run(command, capture_output=True, check=False, timeout=600, env={**os.environ, **(env or {})})
    found = sorted(folder.glob("*.whl")) + sorted(folder.glob("*.tar.gz")) + sorted(folder.glob("*.zip"))
    return found[0] if found else None


def read_member(artifact: Path, inner: str) -> str | None:
    """The text of ``inner`` (a path inside the package) in a wheel or an sdist."""
    if artifact.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(artifact) as archive:
            for name in archive.namelist():
                if name == inner or name.endswith("/" + inner):
                    return archive.read(name).decode("utf-8", errors="replace")
        return None
    with tarfile.open(artifact) as archive:
        for member in archive.getmembers():
            if member.name.endswith("/" + inner) and member.name.count("/") - inner.count("/") <= 2:
                handle = archive.extractfile(member)
                return handle.read().decode("utf-8", errors="replace") if handle else None
    return None


#: where the source continues a string literal on the next line (implicit concatenation)
_JOIN = re.compile(r"""(?<!\\)["']\s*\n\s*[rbfRBF]*["']""")
#: a ``{field}`` in a message: the part the release computes at run time
_FIELD = re.compile(r"\{\w*(?:![rs])?\}")


def message_gaps(message: str, text: str) -> list[str]:
    """The parts of ``message`` (split at its ``{fields}``) the release's source does not spell,
    after joining string literals continued over lines; ``\\n`` in the source is a newline."""
    joined = _JOIN.sub("", text).replace("\\n", "\n")
    return [part for part in _FIELD.split(message) if len(part.strip()) >= 3 and part not in joined]


def verify(fact: dict[str, object], cache: Path) -> tuple[bool | None, str]:
    """(True, notes) when the fact holds in every listed release; None when no listed
    release is on PyPI (a fact read by hand in the project's repository)."""
    pattern = str(fact["pattern"])
    notes: list[str] = []
    ok = True
    if not fact.get("present_in") and not fact.get("absent_in"):
        return None, str(fact.get("cite", ""))
    extra = [str(a) for a in fact.get("pip", [])]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in dict(fact.get("pip_env", {})).items()}  # type: ignore[call-overload]
    message = str(fact.get("message", pattern))
    for expect, versions in ((True, fact.get("present_in", [])), (False, fact.get("absent_in", []))):
        for version in versions:  # type: ignore[attr-defined]
            artifact = download(str(fact["package"]), str(version), cache, extra, env)
            text = read_member(artifact, str(fact["file"])) if artifact else None
            if text is None and not expect and artifact:
                notes.append(f"{version}:no file")  # the release dropped the whole file
                continue
            if text is None:
                ok = False
                notes.append(f"{version}: file not found")
                continue
            at = text.find(pattern)
            line = text.count("\n", 0, at) + 1 if at >= 0 else None
            gaps = message_gaps(message, text) if expect else []
            if (line is not None) != expect:
                ok = False
                notes.append(f"{version}: {'missing' if expect else 'still present'}")
            elif gaps:
                ok = False
                notes.append(f"{version}: message differs at {gaps[0]!r}")
            else:
                notes.append(f"{version}:{line}" if line else f"{version}:absent")
    return ok, " ".join(notes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "precheck-facts")
    parser.add_argument("only", nargs="*", help="fact id prefixes to check")
    args = parser.parse_args()
    facts = json.loads(FACTS.read_text(encoding="utf-8"))["facts"]
    failed = 0
    print(f"| {'fact':<40} | {'holds for':<22} | {'file':<45} | result |")
    print(f"|{'-' * 42}|{'-' * 24}|{'-' * 47}|--------|")
    for fact in facts:
        if args.only and not any(str(fact["id"]).startswith(p) for p in args.only):
            continue
        ok, notes = verify(fact, args.cache)
        failed += ok is False
        bounds = (f">={fact['low']}" if fact.get("low") else "", f"<{fact['high']}" if fact.get("high") else "")
        span = ",".join(p for p in bounds if p)
        held = f"{fact['package']}{span or ' (all)'}"
        result = "ok" if ok else "FAIL" if ok is False else "SKIP"
        print(f"| {fact['id']:<40} | {held:<22} | {fact['file']:<45} | {result} {notes} |")
    print(f"\n{len(facts) if not args.only else 'selected'} facts, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
