"""The command line: ``precheck PATH...`` and its subcommands."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from . import __version__
from .errors import InputError, PrecheckError, UsageError
from .rules.base import Severity

if TYPE_CHECKING:
    from .engine import Report

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=False,
    help="Catch mixed-precision misconfigurations in training configs before they burn GPU hours.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

SUBCOMMANDS = {"check", "explain", "probe", "rules", "rule", "gpus"}

GpuOpt = Annotated[
    list[str] | None,
    typer.Option("--gpu", help="Target GPU, repeatable, in CUDA order: V100, 8xA100-80GB, 'GTX 1080 Ti', sm_86:48GB."),
]
HardwareOpt = Annotated[
    str | None, typer.Option("--hardware", help="Hardware file written by `precheck probe --json`.")
]
AssumeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--assume-version", help="NAME==VERSION of a framework the run uses (repeatable); beats pins and installs."
    ),
]
FormatOpt = Annotated[str, typer.Option("--format", help="Output format: text or json.")]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", help="Pass over matching files in folders (gitignore syntax, repeatable)."),
]
PythonOpt = Annotated[
    str | None,
    typer.Option("--python", help="Read installed framework versions from this interpreter's environment."),
]


def _hardware(gpu: list[str] | None, hardware_file: str | None):  # type: ignore[no-untyped-def]
    from .hardware import from_specs
    from .probe import load_hardware_file, probe_hardware

    if gpu and hardware_file:
        raise UsageError("--gpu and --hardware are exclusive: name the hardware one way")
    if gpu:
        return from_specs(gpu, os.environ)
    if hardware_file:
        return load_hardware_file(hardware_file, os.environ)
    return probe_hardware(os.environ)


def _assumed(values: list[str] | None):  # type: ignore[no-untyped-def]
    from .versions import parse_assumptions

    return parse_assumptions(values or [])


def _report_internal(report: Report) -> None:
    for error in report.internal_errors:
        print(
            f"precheck: internal error while checking {error.path}: {error}\n"
            "This is a bug in precheck; please report it with that file "
            "(run again with --debug for the traceback).",
            file=sys.stderr,
        )


def _check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise UsageError(f"--format {fmt!r}: choose one of {', '.join(allowed)}")


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        print(f"precheck {__version__}")
        raise typer.Exit(0)


@app.command()
def check(
    paths: Annotated[list[str] | None, typer.Argument(help="Config files or folders (default: .).")] = None,
    gpu: GpuOpt = None,
    hardware: HardwareOpt = None,
    fmt: FormatOpt = "text",
    select: Annotated[
        list[str] | None, typer.Option("--select", help="Rules to run: code, prefix, name or ALL.")
    ] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Rules to skip: code, prefix or name.")] = None,
    assume_version: AssumeOpt = None,
    python: PythonOpt = None,
    fail_on: Annotated[
        str, typer.Option("--fail-on", help="Lowest severity that fails: error, warning or info.")
    ] = "error",
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with failing findings.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an internal error.")] = False,
    exclude: ExcludeOpt = None,
) -> None:
    """Check config files (the default command: `precheck PATH...`)."""
    from .engine import check as run_check
    from .report import FORMATS, emit
    from .rules import select_rules

    _check_format(fmt, FORMATS)
    try:
        threshold = Severity.parse(fail_on)
    except KeyError:
        raise UsageError(f"--fail-on {fail_on!r}: choose error, warning or info") from None
    rules = select_rules(select, ignore)
    report = run_check(
        paths or ["."],
        _hardware(gpu, hardware),
        rules=rules,
        assumed_versions=_assumed(assume_version),
        python=python,
        debug=debug,
        exclude=exclude,
    )
    emit(report, fmt)
    _report_internal(report)
    code = report.exit_code(threshold)
    raise typer.Exit(0 if exit_zero and code == 1 else code)


@app.command()
def explain(
    paths: Annotated[list[str], typer.Argument(help="Config files or folders.")],
    gpu: GpuOpt = None,
    hardware: HardwareOpt = None,
    fmt: FormatOpt = "text",
    assume_version: AssumeOpt = None,
    python: PythonOpt = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an internal error.")] = False,
    exclude: ExcludeOpt = None,
) -> None:
    """Print the resolved precision plan: each value and where it came from."""
    from .engine import check as run_check
    from .explain import render_json, render_text

    _check_format(fmt, ("text", "json"))
    report = run_check(
        paths,
        _hardware(gpu, hardware),
        rules=[],
        assumed_versions=_assumed(assume_version),
        python=python,
        debug=debug,
        exclude=exclude,
    )
    print(render_json(report) if fmt == "json" else render_text(report))
    _report_internal(report)
    raise typer.Exit(2 if report.errors or report.internal_errors else 0)


@app.command()
def probe(
    as_json: Annotated[bool, typer.Option("--json", help="Write the versioned document `--hardware` reads.")] = False,
    use_torch: Annotated[bool, typer.Option("--torch", help="Ask torch first (imports it; slower).")] = False,
) -> None:
    """Show this machine's GPUs in the order a training run sees them."""
    from .probe_report import print_probe

    print_probe(as_json, use_torch)


@app.command("rules")
def list_rules(fmt: FormatOpt = "text") -> None:
    """List every rule: code, name, severity, summary."""
    from .rule_docs import print_rules

    _check_format(fmt, ("text", "json"))
    print_rules(fmt)


@app.command("rule")
def show_rule(code: Annotated[str, typer.Argument(help="A rule code or name, e.g. PC101.")]) -> None:
    """Print one rule's documentation."""
    from .rule_docs import print_rule

    print_rule(code)


@app.command()
def gpus() -> None:
    """List the GPUs precheck knows by name (for --gpu)."""
    from .gpu_db import database

    for model in database().models:
        caps = [
            c
            for c, ok in (
                ("bf16", model.bf16),
                ("tf32", model.tf32),
                ("fp8", model.fp8),
                ("fa2", model.flash_attention_2),
            )
            if ok
        ]
        print(
            f"{model.name:<38} {model.arch:<13} {model.compute_capability:<7} "
            f"{model.memory_gib:>5g} GB  {' '.join(caps)}"
        )


def _route(args: list[str]) -> list[str]:
    """``precheck PATH...`` means ``precheck check PATH...``."""
    if not args:
        return ["check"]
    if args[0] in SUBCOMMANDS or args[0] in ("-h", "--help", "--version"):
        return args
    return ["check", *args]


def main(argv: list[str] | None = None) -> None:
    args = _route(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    try:
        app(args=args, prog_name="precheck")
    except InputError as error:
        print(f"precheck: {error}", file=sys.stderr)
        sys.exit(2)
    except PrecheckError as error:
        print(f"precheck: error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # the last line of defence: a message, not a traceback
        if debug:
            raise
        print(
            f"precheck: internal error: {type(error).__name__}: {error}\n"
            "This is a bug in precheck; please report it with the config that caused it "
            "(run again with --debug for the traceback).",
            file=sys.stderr,
        )
        sys.exit(2)
