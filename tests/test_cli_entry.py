"""The entry point's typer-free reading of a plain ``precheck check`` command line.

precheck.entry reads ``precheck --gpu V100 train.yaml`` itself and leaves everything else
to the typer app; these tests hold it to reading every option exactly as typer does, and
to what the check path then imports.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from precheck import cli, probe_report
from precheck.entry import PLAIN, SUBCOMMANDS, plain_args, plain_check_args, plain_options, route

ROOT = Path(__file__).resolve().parents[1]
SWIFT = "examples/configs/ms-swift-v100/fp16-false-ignored.yaml"


def _typer_kwargs(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The keyword arguments typer's parser hands to run_check for ``precheck check ARGV``."""
    seen: dict[str, Any] = {}

    def capture(**kwargs: Any) -> int:
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(cli, "run_check", capture)
    with pytest.raises(SystemExit) as done:
        cli.app(args=["check", *argv], prog_name="precheck")
    assert done.value.code == 0, f"typer refused {argv}"
    return seen


def _normalised(kwargs: dict[str, Any]) -> dict[str, Any]:
    # typer hands an empty tuple or None for an unused list option: both mean "not given"
    return {k: (None if v in ((), []) else list(v) if isinstance(v, tuple) else v) for k, v in kwargs.items()}


CHECK_LINES = [
    [],
    [SWIFT],
    ["--gpu", "V100", SWIFT],
    ["--gpu=V100", "--gpu", "8xA100-80GB", "a.yaml", "b.json"],
    ["a.yaml", "--format", "json", "--exit-zero", "b.yaml"],
    ["--select", "PC1", "--select=PC9", "--ignore", "PC907", "--extend-select", "PC907", "."],
    ["--assume-version", "trl==0.19.0", "--python", "/usr/bin/python3", "--fail-on", "warning", "x"],
    ["--format", "sarif", "--format", "github", "--isolated", "--debug", "--exclude", "runs/*"],
    ["--fix", "--unsafe-fixes", "--diff", "--show-unused-suppressions", "--hardware", "probe.json"],
    ["--", "--weird-name.yaml", "-"],
    ["-", "--deep"],
]


@pytest.mark.parametrize("argv", CHECK_LINES, ids=[" ".join(a) or "(none)" for a in CHECK_LINES])
def test_plain_command_lines_read_as_typer_reads_them(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ours = plain_check_args(argv)
    assert ours is not None
    assert _normalised(ours) == _normalised(_typer_kwargs(argv, monkeypatch))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--gpuu", "V100"],  # misspelt: typer says so
        ["--no-debug"],
        ["--gpu"],  # a missing value
        ["--gpu", "--debug"],
        ["--debug=1"],
        ["--format=json", "-x"],
    ],
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert plain_check_args(argv) is None


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_every_option_of_the_typer_command_is_read_the_same_way(name: str) -> None:
    """The typer declaration (precheck.cli.check, precheck.cli.probe) and the function that
    does the command take the same options, spelt and typed alike, with the same defaults:
    an option added to one is added to the other."""
    from typer.utils import get_params_from_function

    plain = PLAIN[name]
    options, defaults = plain_options(plain)
    declared = get_params_from_function(getattr(cli, name))
    assert set(declared) == set(inspect.signature(plain.target()).parameters)
    spelt = set()
    for param, meta in declared.items():
        info = meta.default
        assert info.default == defaults[param], param
        if param == plain.positional:
            continue
        spellings = [d for d in info.param_decls or () if d.startswith("-")]
        assert spellings, param
        for spelling in spellings:
            assert options[spelling][0] == param
            spelt.add(spelling)
    assert spelt == set(options)


def test_probe_flags_read_as_typer_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bool, ...]] = []
    monkeypatch.setattr(probe_report, "print_probe", lambda *a: seen.append(a))
    for argv in ([], ["--json"], ["--torch", "--json"]):
        seen.clear()
        with pytest.raises(SystemExit):
            cli.app(args=["probe", *argv], prog_name="precheck")
        ours = plain_args(PLAIN["probe"], argv)
        assert ours is not None and seen == [(ours["as_json"], ours["use_torch"])]
    assert plain_args(PLAIN["probe"], ["x.yaml"]) is None  # probe takes no paths: typer says so


def test_subcommands_are_the_typer_apps_commands() -> None:
    registered = {c.name or c.callback.__name__ for c in cli.app.registered_commands if c.callback is not None}
    assert registered == SUBCOMMANDS
    assert route(["explain", "x.yaml"]) == ["explain", "x.yaml"]
    assert route(["x.yaml"]) == ["check", "x.yaml"] and route([]) == ["check"]


def _loaded_after(args: list[str], entry: str) -> tuple[int, list[str], str]:
    watched = ("torch", "transformers", "accelerate", "typer", "pydantic", "rich", "importlib.metadata")
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('LOADED', sorted(m for m in {watched!r} if m in sys.modules)))\n"
        f"from {entry} import main\n"
        f"main({args!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    loaded = next(line for line in done.stdout.splitlines() if line.startswith("LOADED"))
    return done.returncode, eval(loaded.removeprefix("LOADED ")), done.stdout + done.stderr


def test_the_check_path_imports_only_what_it_needs() -> None:
    """Output piped (not a terminal): no rich; a plain command line: no typer, no pydantic;
    versions read from dist-info folders: no importlib.metadata; never torch & co."""
    code, loaded, output = _loaded_after(["--gpu", "V100", "--format", "json", "examples/configs"], "precheck.entry")
    assert code == 1, output
    assert loaded == [], output
    code, loaded, output = _loaded_after(["--gpu", "V100", "examples/configs"], "precheck.cli")
    assert code == 1 and loaded == ["typer"], output  # precheck.cli is typer's declaration
    code, loaded, output = _loaded_after(["--gpu", "V100", "--no-isolated", "examples/configs"], "precheck.entry")
    assert code == 2 and "typer" in loaded and "torch" not in loaded, output  # typer reads it, and refuses it
    code, loaded, output = _loaded_after(["probe", "--json"], "precheck.entry")
    assert code == 0 and loaded == [], output
