#!/usr/bin/env python3
"""Check every fact in src/precheck/data/facts.json against the released artifacts.

Maintainer script, not part of the test run: it downloads each release a fact names with
``pip download --no-deps`` (a wheel, or the sdist where the project ships only that) and checks
that the fact's pattern is present in the file of every release under ``present_in`` and absent
from every release under ``absent_in``. Prints a table; exits 1 when a fact does not hold or a
release cannot be read.

An sdist whose metadata pip cannot prepare here (DeepSpeed's needs ``wheel``; flash-attn's
``setup.py`` imports torch) is fetched as the file itself from PyPI's simple index, unbuilt; when
that fails too, the row says why (``install wheel``, ``needs torch``) instead of "file not found".

A fact with ``repo`` (``owner/name``) is read from that GitHub repository at the tag
``tag`` (``v{version}``) rather than from PyPI: FlashAttention-3's ``hopper/`` build is not in the
flash-attn sdist. The tag is read from a local mirror (``--git-mirror DIR``: ``DIR/owner+name``
or ``DIR/owner+name/repo``, a bare clone) or downloaded from codeload.github.com; a tag that can
be read neither way is reported as not checked, with the reason, and does not fail the run.

    python scripts/verify_facts.py [--cache DIR] [--git-mirror DIR] [FACT_ID_PREFIX ...]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

FACTS = Path(__file__).resolve().parent.parent / "src" / "precheck" / "data" / "facts.json"
ARCHIVES = ("*.whl", "*.tar.gz", "*.zip")


class Unreadable(Exception):
    """A source this environment cannot read; the message says why and what would fix it."""


def _found(folder: Path) -> Path | None:
    found = [p for pattern in ARCHIVES for p in sorted(folder.glob(pattern))]
    return found[0] if found else None


def _why_pip_failed(stderr: str) -> str:
    """What pip's output says went wrong, as a hint a maintainer can act on."""
    if "bdist_wheel" in stderr:
        return "pip cannot prepare the sdist's metadata without `wheel` (pip install wheel)"
    if re.search(r"No module named '?torch'?|import torch|install torch", stderr, re.IGNORECASE):
        return "the sdist's setup.py imports torch (install torch, or read the tagged source)"
    if "No matching distribution" in stderr or "Could not find a version" in stderr:
        return "no such release on PyPI"
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and "Location" not in line]
    return lines[-1] if lines else "pip download failed"


def _simple_index_file(package: str, version: str, folder: Path) -> Path | None:
    """The release's sdist (else a wheel), downloaded as is from PyPI's simple index: no build."""
    request = urllib.request.Request(
        f"https://pypi.org/simple/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        files: list[dict[str, str]] = json.load(answer)["files"]
    stem = re.sub(r"[-_.]+", "_", package).lower()
    wanted = [f"{stem}-{version}.tar.gz", f"{package}-{version}.tar.gz"]
    chosen = next((f for f in files if f["filename"].lower() in wanted), None)
    chosen = chosen or next((f for f in files if f["filename"].lower().startswith(f"{stem}-{version}-")), None)
    if chosen is None:
        return None
    target: Path = folder / str(chosen["filename"])
    with urllib.request.urlopen(chosen["url"], timeout=600) as answer:
        target.write_bytes(answer.read())
    return target


def download(
    package: str, version: str, cache: Path, extra: list[str] | None = None, env: dict[str, str] | None = None
) -> Path:
    """The release's wheel or sdist, downloaded once into ``cache``."""
    folder = cache / f"{package}-{version}"
    found = _found(folder) if folder.is_dir() else None
    if found:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-build-isolation"]
    command += [*(extra or []), f"{package}=={version}", "-d", str(folder)]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=600, env={**os.environ, **(env or {})}
    )
    found = _found(folder)
    if found:
        return found
    why = _why_pip_failed(done.stderr)
    if not extra:  # a platform-specific wheel (``pip``) is not fetched by hand
        try:
            direct = _simple_index_file(package, version, folder)
        except (OSError, ValueError, KeyError) as error:
            why += f"; PyPI's simple index: {error}"
        else:
            if direct is not None:
                return direct
    raise Unreadable(why)


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


def read_tagged(repo: str, tag: str, inner: str, cache: Path, mirrors: list[Path]) -> str | None:
    """``inner`` at ``tag`` of the GitHub repository ``repo``: from a local bare mirror, else
    from the tag's tarball on codeload.github.com (kept in ``cache``). None: no such file there."""
    folder = repo.replace("/", "+")
    for root in mirrors:
        for git_dir in (root / folder / "repo", root / folder):
            if not (git_dir / "HEAD").is_file():
                continue
            shown = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"{tag}:{inner}"], capture_output=True, check=False
            )
            if shown.returncode == 0:
                return shown.stdout.decode("utf-8", errors="replace")
            known = subprocess.run(
                ["git", "--git-dir", str(git_dir), "rev-parse", "-q", "--verify", f"{tag}^{{commit}}"],
                capture_output=True,
                check=False,
            )
            if known.returncode == 0:
                return None  # the tag is there, the file is not
    tarball = cache / f"{folder}-{tag}.tar.gz"
    if not tarball.is_file():
        url = f"https://codeload.github.com/{repo}/tar.gz/refs/tags/{tag}"
        try:
            with urllib.request.urlopen(url, timeout=120) as answer:
                data = answer.read()
        except OSError as error:
            raise Unreadable(
                f"{repo}@{tag}: no local mirror (--git-mirror) and codeload.github.com: {error}"
            ) from error
        tarball.parent.mkdir(parents=True, exist_ok=True)
        tarball.write_bytes(data)
    with tarfile.open(fileobj=io.BytesIO(tarball.read_bytes())) as archive:
        for member in archive.getmembers():
            if member.name.split("/", 1)[-1] == inner:
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


def verify(fact: dict[str, object], cache: Path, mirrors: list[Path]) -> tuple[bool | None, str]:
    """(True, notes) when the fact holds in every listed release; None when it could not be
    checked here (a fact read by hand, or a source this environment cannot read: notes say why)."""
    pattern = str(fact["pattern"])
    notes: list[str] = []
    ok: bool | None = True
    if not fact.get("present_in") and not fact.get("absent_in"):
        return None, str(fact.get("cite", ""))
    extra = [str(a) for a in fact.get("pip", [])]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in dict(fact.get("pip_env", {})).items()}  # type: ignore[call-overload]
    message = str(fact.get("message", pattern))
    repo = fact.get("repo")
    for expect, versions in ((True, fact.get("present_in", [])), (False, fact.get("absent_in", []))):
        for version in versions:  # type: ignore[attr-defined]
            try:
                if repo:
                    tag = str(fact.get("tag", "v{version}")).format(version=version)
                    text = read_tagged(str(repo), tag, str(fact["file"]), cache, mirrors)
                    artifact: Path | None = None
                else:
                    artifact = download(str(fact["package"]), str(version), cache, extra, env)
                    text = read_member(artifact, str(fact["file"]))
            except Unreadable as error:
                ok = None if ok is not False else ok
                notes.append(f"{version}: not checked: {error}")
                continue
            if text is None and not expect:
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
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "precheck-facts")
    parser.add_argument(
        "--git-mirror",
        type=Path,
        action="append",
        default=[Path(p) for p in os.environ.get("PRECHECK_GIT_MIRRORS", "").split(os.pathsep) if p],
        help="folder of bare GitHub mirrors (owner+name) for facts read from a tag",
    )
    parser.add_argument("only", nargs="*", help="fact id prefixes to check")
    args = parser.parse_args()
    facts = json.loads(FACTS.read_text(encoding="utf-8"))["facts"]
    failed = unchecked = by_hand = checked = 0
    print(f"| {'fact':<40} | {'holds for':<22} | {'file':<45} | result |")
    print(f"|{'-' * 42}|{'-' * 24}|{'-' * 47}|--------|")
    for fact in facts:
        if args.only and not any(str(fact["id"]).startswith(p) for p in args.only):
            continue
        ok, notes = verify(fact, args.cache, args.git_mirror)
        checked += 1
        failed += ok is False
        manual = not fact.get("present_in") and not fact.get("absent_in")
        by_hand += ok is None and manual
        unchecked += ok is None and not manual
        bounds = (f">={fact['low']}" if fact.get("low") else "", f"<{fact['high']}" if fact.get("high") else "")
        span = ",".join(p for p in bounds if p)
        held = f"{fact['package']}{span or ' (all)'}"
        result = "ok" if ok else "FAIL" if ok is False else "BY HAND" if manual else "NOT CHECKED"
        print(f"| {fact['id']:<40} | {held:<22} | {fact['file']:<45} | {result} {notes} |")
    print(
        f"\n{checked} facts: {checked - failed - unchecked - by_hand} hold, {failed} failed, "
        f"{unchecked} not checked here (reason in the row), {by_hand} read by hand (cite only)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
