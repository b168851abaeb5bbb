"""The entry point's typer-free reading of a plain ``precheck check`` command line.

precheck.entry reads ``precheck --gpu V100 train.yaml`` itself, from the options
precheck.options declares, and leaves everything else to the typer app generated from the
same declaration; these tests hold the two to reading every declared option alike (the
cases are generated from the declaration), and to what the check path then imports.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated, NamedTuple

import pytest
import typer

from precheck import cli, probe_report
from precheck.entry import SUBCOMMANDS, route
from precheck.options import CHECK, PROBE, CheckOptions, Option, ProbeOptions, build, declared, flag, parse, value

ROOT = Path(__file__).resolve().parents[1]
SWIFT = "examples/configs/ms-swift-v100/fp16-false-ignored.yaml"


def _typer_reads(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> CheckOptions:
    """The options typer's generated ``check`` command hands to run_check for ``precheck check ARGV``."""
    seen: list[CheckOptions] = []
    monkeypatch.setattr(cli, "run_check", lambda options: seen.append(options) or 0)
    with pytest.raises(SystemExit) as done:
        cli.app(args=["check", *argv], prog_name="precheck")
    assert done.value.code == 0, f"typer refused {argv}"
    (options,) = seen
    return options


def _ours(argv: list[str]) -> CheckOptions:
    given = parse(CHECK, argv)
    assert given is not None, f"the fast path left {argv} to typer"
    return CheckOptions(**given)


def _lines(option: Option) -> list[list[str]]:
    """Command lines that give ``option``, generated from its declaration: every spelling,
    ``--name=VALUE``, repeated, and between paths."""
    if option.kind == "arguments":
        return [["a.yaml", "b.json"], ["--", "--weird-name.yaml", "-"], ["-"]]
    lines: list[list[str]] = []
    for spelling in option.flags:
        if option.kind == "flag":
            lines += [[spelling], ["x.yaml", spelling, "y.yaml"], [spelling, spelling]]
        else:
            lines += [[spelling, "one"], [spelling, "one", spelling, "two"], ["x.yaml", spelling, "one", "y.yaml"]]
    if option.kind != "flag":
        lines += [[f"{option.flags[0]}=one"], [f"{option.flags[0]}=one", option.flags[0], "t=w=o"]]
    return lines


CASES = [(o.name, line) for o in CHECK for line in _lines(o)]


@pytest.mark.parametrize(("name", "argv"), CASES, ids=[" ".join(a) for _, a in CASES])
def test_every_declared_option_is_read_as_typer_reads_it(
    name: str, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Generated from the declaration (a case per option and per kind: flag, value,
    repeatable value, paths): the fast path and typer's generated command agree."""
    ours = _ours(argv)
    assert ours == _typer_reads(argv, monkeypatch)
    default = {o.name: o.default for o in CHECK}[name]
    assert getattr(ours, name) != default, "the line gives the option"


def test_every_kind_of_option_is_declared() -> None:
    assert {o.kind for o in CHECK} == {"flag", "value", "values", "arguments"}
    assert any(len(o.flags) > 1 for o in CHECK)  # a short spelling (-q)


MIXED = [
    [],
    [SWIFT],
    ["--gpu=V100", "--gpu", "8xA100-80GB", "a.yaml", "b.json"],
    ["a.yaml", "--format", "json", "--exit-zero", "b.yaml"],
    ["--select", "PC1", "--select=PC9", "--ignore", "PC907", "--extend-select", "PC907", "."],
    ["--assume-version", "trl==0.19.0", "--python", "/usr/bin/python3", "--fail-on", "warning", "x"],
    ["--fix", "--unsafe-fixes", "--diff", "--show-unused-suppressions", "--hardware", "probe.json", "-q"],
]


@pytest.mark.parametrize("argv", MIXED, ids=[" ".join(a) or "(none)" for a in MIXED])
def test_whole_command_lines_read_as_typer_reads_them(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _ours(argv) == _typer_reads(argv, monkeypatch)


def _refused(option: Option) -> list[list[str]]:
    if option.kind == "arguments":
        return []
    first = option.flags[0]
    if option.kind == "flag":
        return [[f"{first}=1"], [f"--no-{first[2:]}"]]
    return [[first], [first, "--debug"], ["x.yaml", first, "-q"]]


REFUSED = [line for o in CHECK for line in _refused(o)]
REFUSED += [["--help"], ["-h"], ["--gpuu", "V100"], ["-x"], ["--format=json", "-qq"]]


@pytest.mark.parametrize("argv", REFUSED, ids=[" ".join(a) for a in REFUSED])
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert parse(CHECK, argv) is None


def test_the_typer_command_is_generated_from_the_declaration() -> None:
    """typer's ``check`` and ``probe`` take exactly the declared options, spelt alike, with
    the same defaults and help."""
    from typer.utils import get_params_from_function

    for function, options in ((cli.check, CHECK), (cli.probe, PROBE)):
        params = get_params_from_function(function)
        assert list(params) == [o.name for o in options]
        for option in options:
            info = params[option.name].default
            assert info.default == option.default, option.name
            assert tuple(info.param_decls or ()) == option.flags, option.name
            assert (info.help or "").replace("\\[", "[") == option.help, option.name


def test_probe_flags_read_as_typer_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bool, ...]] = []
    monkeypatch.setattr(probe_report, "print_probe", lambda *a: seen.append(a))
    for argv in ([], ["--json"], ["--torch", "--json"]):
        seen.clear()
        with pytest.raises(SystemExit):
            cli.app(args=["probe", *argv], prog_name="precheck")
        ours = parse(PROBE, argv)
        assert ours is not None
        options = ProbeOptions(**ours)
        assert seen == [(options.json, options.torch)]
    assert parse(PROBE, ["x.yaml"]) is None  # probe takes no paths: typer says so


class _WithEnvironment(NamedTuple):
    level: Annotated[str | None, value("--level", metavar="LEVEL", help="A level.", env="PRECHECK_TEST_LEVEL")] = None
    loud: Annotated[bool, flag("--loud", help="Loud.")] = False


def test_an_option_set_in_the_environment_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A declared environment variable: typer reads it (as click does); the fast path,
    which does not, leaves such a command line to typer."""
    seen: list[_WithEnvironment] = []
    app = typer.Typer()
    app.command()(cli.command(_WithEnvironment, lambda options: seen.append(options) or 0))
    options = declared(_WithEnvironment)
    monkeypatch.delenv("PRECHECK_TEST_LEVEL", raising=False)
    for argv in (["--level", "high"], ["--loud"]):
        seen.clear()
        with pytest.raises(SystemExit):
            app(args=argv)
        given = parse(options, argv)
        assert given is not None and seen == [build(_WithEnvironment, given)]
    monkeypatch.setenv("PRECHECK_TEST_LEVEL", "low")
    assert parse(options, ["--loud"]) is None
    assert parse(options, ["--level", "high"]) == {"level": "high"}  # given beats the environment
    seen.clear()
    with pytest.raises(SystemExit):
        app(args=["--loud"])
    assert seen == [_WithEnvironment(level="low", loud=True)]


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
