"""The command line: ``precheck PATH...`` and its subcommands."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from . import __version__
from .errors import InputError, PrecheckError, UsageError
from .rules.base import Severity

if TYPE_CHECKING:
    from . import api
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
CheckFormatOpt = Annotated[str, typer.Option("--format", help="Output format: text, concise, json, sarif or github.")]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", help="Pass over matching files in folders (gitignore syntax, repeatable)."),
]
PythonOpt = Annotated[
    str | None,
    typer.Option("--python", help="Read installed framework versions from this interpreter's environment."),
]


def _hardware(gpu: list[str] | None, hardware_file: str | None):  # type: ignore[no-untyped-def]
    """The hardware the flags name, or None: the project's ``gpus``, else a probe, decide."""
    from .hardware import from_specs
    from .probe import load_hardware_file

    if gpu and hardware_file:
        raise UsageError("--gpu and --hardware are exclusive: name the hardware one way")
    if gpu:
        return from_specs(gpu, os.environ)
    if hardware_file:
        return load_hardware_file(hardware_file, os.environ)
    return None


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
    fmt: CheckFormatOpt = "text",
    select: Annotated[
        list[str] | None, typer.Option("--select", help="Rules to run: code, prefix, name or ALL.")
    ] = None,
    extend_select: Annotated[
        list[str] | None, typer.Option("--extend-select", help="Rules to run on top of the selection.")
    ] = None,
    ignore: Annotated[list[str] | None, typer.Option("--ignore", help="Rules to skip: code, prefix or name.")] = None,
    assume_version: AssumeOpt = None,
    python: PythonOpt = None,
    fail_on: Annotated[
        str | None,
        typer.Option("--fail-on", help="Lowest severity that fails: error (default), warning or info."),
    ] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with failing findings.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an internal error.")] = False,
    exclude: ExcludeOpt = None,
    fix: Annotated[
        bool, typer.Option("--fix", help="Apply the safe fixes in the files, then report the rest.")
    ] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Print the fixes as a unified diff; write nothing.")] = False,
    unsafe_fixes: Annotated[
        bool, typer.Option("--unsafe-fixes", help="With --fix or --diff, apply the unsafe fixes too.")
    ] = False,
    show_unused_suppressions: Annotated[
        bool,
        typer.Option("--show-unused-suppressions", help="Report `# precheck: ignore` comments that silence nothing."),
    ] = False,
    isolated: Annotated[
        bool, typer.Option("--isolated", help="Ignore pyproject.toml / .precheck.toml project configuration.")
    ] = False,
) -> None:
    """Check config files (the default command: `precheck PATH...`)."""
    from . import api
    from .report import FORMATS, emit

    _check_format(fmt, FORMATS)
    if fail_on is not None:
        try:
            Severity.parse(fail_on)
        except KeyError:
            raise UsageError(f"--fail-on {fail_on!r}: choose error, warning or info") from None
    extend = [*(extend_select or []), *(["PC907"] if show_unused_suppressions else [])]
    target = _hardware(gpu, hardware)

    def run() -> api.Report:
        return api.check(
            paths or ["."],
            target,
            select=select,
            extend_select=extend,
            ignore=ignore,
            exclude=exclude,
            fail_on=fail_on,
            assume_versions=assume_version or [],
            python=python,
            use_project=not isolated,
            debug=debug,
        )

    report = run()
    if fix or diff:
        report = _fix(report, diff, unsafe_fixes, run)
    emit(report, fmt)
    _report_internal(report)
    code = report.exit_code()
    raise typer.Exit(0 if exit_zero and code == 1 else code)


def _fix(report: api.Report, diff: bool, unsafe: bool, run: Callable[[], api.Report]) -> api.Report:
    """``--fix``: write the fixes and check again; ``--diff``: print them and stop."""
    from .fix import apply, plan_fixes

    fixes = plan_fixes(report.findings, unsafe)
    for finding, why in fixes.skipped:
        print(f"precheck: not fixed: {finding.origin.location()}: {finding.rule}: {why}", file=sys.stderr)
    files = len(fixes.changes)
    counted = f"{fixes.fixed} finding{'' if fixes.fixed == 1 else 's'} in {files} file{'' if files == 1 else 's'}"
    if diff:
        for change in fixes.changes:
            sys.stdout.write(change.diff())
        print(f"precheck: would fix {counted}", file=sys.stderr)
        _report_internal(report)
        raise typer.Exit(2 if report.errors or report.internal_errors else 1 if fixes.changes else 0)
    apply(fixes)
    print(f"precheck: fixed {counted}", file=sys.stderr)
    return run() if fixes.changes else report


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
    from .api import resolve_hardware
    from .engine import check as run_check
    from .explain import render_json, render_text

    _check_format(fmt, ("text", "json"))
    target, _ = resolve_hardware(paths, _hardware(gpu, hardware), os.environ)
    report = run_check(
        paths,
        target,
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
