"""The referring-config search is cheap (issue 32): the files of a git repository come from
its index, read directly (every index version git writes), the same files a folder search
finds; anything the reader does not know falls back to the walk."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from precheck import referrers
from precheck.bounded_read import Refused, read_head
from precheck.discovery import walk
from precheck.git_index import tracked

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
FILES = {
    "configs/train.yaml": "deepspeed: configs/ds.json\nbf16: true\n",
    "configs/ds.json": '{"bf16": {"enabled": "auto"}}\n',
    "src/pkg/train.py": "from transformers import TrainingArguments\n",
    "scripts/run.sh": "deepspeed train.py --deepspeed configs/ds.json\n",
    "Makefile": "train:\n\tpython train.py\n",
    "README.md": "# x\n",
    ".github/workflows/ci.yml": "on: [push]\n",
    ".hidden/secret.yaml": "bf16: true\n",
    "venv/lib/x.py": "x = 1\n",
    "a folder/with space.yaml": "a: 1\n",
    "ünïcode/config.yaml": "a: 1\n",
    ".env": "X=1\n",
}


def _git(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True).stdout.decode()


def _repo(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git("init", "-q", cwd=root)
    _git("add", "-A", cwd=root)
    return root


def _ls_files(root: Path) -> list[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, env=env, check=True, capture_output=True).stdout
    return out.split(b"\0")[:-1]


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_index_lists_what_git_ls_files_lists(tmp_path: Path, version: str) -> None:
    root = _repo(tmp_path)
    (root / "new.yaml").write_text("a: 1\n")
    _git("add", "-N", "new.yaml", cwd=root)  # intent to add: an extended-flags entry in version 3
    _git("update-index", "--index-version", version, cwd=root)
    assert tracked(root) == _ls_files(root)


def test_what_the_reader_does_not_know_falls_back(tmp_path: Path) -> None:
    assert tracked(tmp_path) is None  # no repository
    root = _repo(tmp_path / "repo")
    index = root / ".git" / "index"
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2])  # truncated
    assert tracked(root) is None
    index.write_bytes(data[:4] + b"\0\0\0\x09" + data[8:])  # a version it does not read
    assert tracked(root) is None
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: elsewhere\n")  # a worktree: the index is elsewhere
    assert tracked(worktree) is None


def test_the_search_lists_the_files_a_folder_search_reads(tmp_path: Path) -> None:
    root = _repo(tmp_path).resolve()
    from_index = referrers._files(root, None)
    walked, _, _ = walk(root)
    assert from_index == sorted(str(f) for f in walked)
    assert str(root / ".github" / "workflows" / "ci.yml") in from_index
    assert not any(".hidden" in f or "/venv/" in f or f.endswith("README.md") for f in from_index)
    assert referrers._files(root, ["configs/"]) == [f for f in from_index if "/configs/" not in f]


def test_a_staged_deepspeed_file_finds_the_configs_that_name_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "untracked.yaml").write_text("deepspeed: configs/ds.json\n")  # not in the index
    found = [f for f, _ in referrers.candidates([root / "configs" / "ds.json"], set())]
    assert sorted(p.relative_to(root).as_posix() for p in found) == ["configs/train.yaml", "scripts/run.sh"]


def test_the_head_reader_refuses_links_pipes_and_other_filesystems(tmp_path: Path) -> None:
    device = os.stat(tmp_path).st_dev
    (tmp_path / "a.yaml").write_bytes(b"x" * 100)
    assert read_head(str(tmp_path / "a.yaml"), 10, device) == b"x" * 10
    (tmp_path / "link.yaml").symlink_to(tmp_path / "a.yaml")
    with pytest.raises(OSError):
        read_head(str(tmp_path / "link.yaml"), 10, device)
    os.mkfifo(tmp_path / "fifo.yaml")
    with pytest.raises(Refused):
        read_head(str(tmp_path / "fifo.yaml"), 10, device)
    with pytest.raises(Refused):
        read_head(str(tmp_path / "a.yaml"), 10, device + 1)
