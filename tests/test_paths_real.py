"""``paths.real`` (what the bounded reader checks against the kernel's pseudo file systems)
is ``os.path.realpath``, with the folder part resolved once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from precheck import paths
from precheck.bounded_read import Refused, read_bytes


def test_real_is_realpath(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "file.yaml").write_text("a: 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "dir")
    (tmp_path / "dir" / "to_file").symlink_to(tmp_path / "dir" / "file.yaml")
    (tmp_path / "proc_link").symlink_to("/proc/self")
    (tmp_path / "dir" / "zero").symlink_to("/dev/zero")
    monkeypatch.chdir(tmp_path)
    paths.clear()
    cases = [
        "dir/file.yaml",
        "linked/file.yaml",
        "linked/to_file",
        "dir/to_file",
        "proc_link/status",
        "dir/zero",
        "linked/zero",
        "linked/../dir/file.yaml",
        "dir/.",
        "dir/..",
        "dir/",
        "file.yaml",
        "missing/nothing",
        str(tmp_path / "linked" / "file.yaml"),
        "/proc/self/status",
    ]
    for case in cases:
        assert paths.real(case) == os.path.realpath(case), case


def test_a_folder_linked_into_proc_is_refused(tmp_path: Path) -> None:
    (tmp_path / "proc_link").symlink_to("/proc/self")
    paths.clear()
    with pytest.raises(Refused):
        read_bytes(tmp_path / "proc_link" / "status")
