"""The command line: ``precheck PATH...`` and its subcommands, declared for typer.

:func:`main` (:mod:`precheck.entry`) runs it; a plain ``precheck check`` command line is read
there without typer and runs :func:`precheck.check_command.run_check`, as :func:`check` does.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer
import typer.core

from . import __version__
from .check_command import check_format as _check_format
from .check_command import hardware_from_flags as _hardware
from .check_command import report_internal as _report_internal
from .check_command import run_check
from .entry import main

_display_type = typer.core.TyperOption.display_type


def _metavar_only(self: typer.core.TyperOption, ctx: typer.Context) -> str:
    """typer shows every parameter's Python type next to it (``<list[str]>``, ``<bool>``);
    the metavar (``SPEC``, ``FILE``) says what to give, and a flag takes nothing."""
    if getattr(self, "is_flag", False) or self.metavar is not None:
        return ""
    return _display_type(self, ctx)


typer.core.TyperOption.display_type = _metavar_only  # type: ignore[method-assign,assignment]
typer.core.TyperArgument.display_type = _metavar_only  # type: ignore[assignment]

app = typer.Typer(
    add_completion=True,
    pretty_exceptions_enable=False,
    no_args_is_help=False,
    help="Catch mixed-precision misconfigurations in training configs before they burn GPU hours.\n\n"
    "`precheck PATH...` is `precheck check PATH...`: see `precheck check --help` for its options "
    "(--gpu, --format, --select, --fix...).",
    context_settings={"help_option_names": ["-h", "--help"]},
)

GpuOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--gpu",
        metavar="SPEC",
        help="Target GPU, repeatable, in CUDA order: V100, 8xA100-80GB, 'GTX 1080 Ti', sm_86:48GB.",
    ),
]
HardwareOpt = Annotated[
    str | None, typer.Option("--hardware", metavar="FILE", help="Hardware file written by `precheck probe --json`.")
]
AssumeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--assume-version",
        metavar="NAME==VERSION",
        help="The version of a framework the run uses (repeatable); beats pins and installs.",
    ),
]
FormatOpt = Annotated[str, typer.Option("--format", metavar="FORMAT", help="Output format: text or json.")]
CheckFormatOpt = Annotated[
    str,
    typer.Option("--format", metavar="FORMAT", help="Output format: text, concise, json, sarif or github."),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude", metavar="PATTERN", help="Pass over matching files in folders (gitignore syntax, repeatable)."
    ),
]
PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python", metavar="PATH", help="Read installed framework versions from this interpreter's environment."
    ),
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show the traceback of an internal error.")]


def _assumed(values: list[str] | None):  # type: ignore[no-untyped-def]
    from .versions import parse_assumptions

    return parse_assumptions(values or [])


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", "-V", help="Print the version and exit.")] = False,
) -> None:
    if version:
        print(f"precheck {__version__}")
        raise typer.Exit(0)


@app.command()
def check(
    paths: Annotated[
        list[str] | None,
        typer.Argument(metavar="PATH", help="Config files or folders (default: .); `-`: standard input."),
    ] = None,
    gpu: GpuOpt = None,
    hardware: HardwareOpt = None,
    fmt: CheckFormatOpt = "text",
    select: Annotated[
        list[str] | None, typer.Option("--select", metavar="RULES", help="Rules to run: code, prefix, name or ALL.")
    ] = None,
    extend_select: Annotated[
        list[str] | None,
        typer.Option("--extend-select", metavar="RULES", help="Rules to run on top of the selection."),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", metavar="RULES", help="Rules to skip: code, prefix or name.")
    ] = None,
    assume_version: AssumeOpt = None,
    python: PythonOpt = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on", metavar="LEVEL", help="Lowest severity that fails: error (default), warning or info."
        ),
    ] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even with failing findings.")] = False,
    debug: DebugOpt = False,
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
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also ask the installed transformers, TRL and accelerate: keys against their dataclasses, "
            "exact parameter counts on the meta device (needs precheck-ml\\[hf]).",
        ),
    ] = False,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="The project configuration to use (.precheck.toml keys, or a pyproject.toml with "
            "\\[tool.precheck]) instead of the closest one.",
        ),
    ] = None,
    stdin_filename: Annotated[
        str | None,
        typer.Option(
            "--stdin-filename",
            metavar="NAME",
            help="Check standard input (path `-`) as the file NAME: its suffix is the format, its folder "
            "holds the files it names.",
        ),
    ] = None,
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Count the findings by rule instead of listing them.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print the findings only: no summary or info lines.")
    ] = False,
    color: Annotated[
        str | None,
        typer.Option(
            "--color",
            metavar="WHEN",
            help="Colour the text output: auto (default: on a terminal, unless NO_COLOR is set; "
            "FORCE_COLOR forces it), always or never.",
        ),
    ] = None,
) -> None:
    """Check config files (the default command: `precheck PATH...`)."""
    code = run_check(
        paths=paths,
        gpu=gpu,
        hardware=hardware,
        fmt=fmt,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        assume_version=assume_version,
        python=python,
        fail_on=fail_on,
        exit_zero=exit_zero,
        debug=debug,
        exclude=exclude,
        fix=fix,
        diff=diff,
        unsafe_fixes=unsafe_fixes,
        show_unused_suppressions=show_unused_suppressions,
        isolated=isolated,
        deep=deep,
        config=config,
        stdin_filename=stdin_filename,
        statistics=statistics,
        quiet=quiet,
        color=color,
    )
    raise typer.Exit(code)


@app.command()
def explain(
    paths: Annotated[list[str], typer.Argument(metavar="PATH", help="Config files or folders.")],
    gpu: GpuOpt = None,
    hardware: HardwareOpt = None,
    fmt: FormatOpt = "text",
    assume_version: AssumeOpt = None,
    python: PythonOpt = None,
    debug: DebugOpt = False,
    exclude: ExcludeOpt = None,
) -> None:
    """Print each run's precision plan: the precision flow and memory as pictures, every value with
    where it came from, what was overridden, and the findings in full."""
    from . import api
    from .explain import render_json, render_text
    from .report import use_color

    _check_format(fmt, ("text", "json"))
    report = api.check(
        paths,
        _hardware(gpu, hardware),
        assume_versions=assume_version or [],
        python=python,
        debug=debug,
        exclude=exclude,
    )
    if fmt == "json":
        print(render_json(report))
    elif use_color():
        from .explain_view import print_rich

        print_rich(report)
    else:
        print(render_text(report))
    _report_internal(report)
    raise typer.Exit(2 if report.errors or report.internal_errors else 0)


@app.command()
def smoke(
    paths: Annotated[list[str], typer.Argument(metavar="PATH", help="Config files or folders.")],
    gpu: GpuOpt = None,
    hardware: HardwareOpt = None,
    device: Annotated[
        str | None,
        typer.Option(
            "--device", metavar="DEVICE", help="Where the step runs: cpu or cuda (default: cuda when present)."
        ),
    ] = None,
    fmt: FormatOpt = "text",
    assume_version: AssumeOpt = None,
    python: PythonOpt = None,
    debug: DebugOpt = False,
    exclude: ExcludeOpt = None,
) -> None:
    """Run one real training step of a tiny model with each config's resolved precision plan (needs torch)."""
    from .api import resolve_hardware
    from .smoke.run import smoke as run_smoke

    _check_format(fmt, ("text", "json"))
    target, _ = resolve_hardware(paths, _hardware(gpu, hardware), os.environ)
    report = run_smoke(
        paths,
        target,
        device=device,
        assumed_versions=_assumed(assume_version),
        python=python,
        debug=debug,
        exclude=exclude,
    )
    print(report.json() if fmt == "json" else report.text())
    _report_internal(report.check)
    raise typer.Exit(report.exit_code())


@app.command(
    "run",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=True,
)
def run(ctx: typer.Context) -> None:
    """Check a launch command, then run it only if the check passes.

    precheck run [CHECK OPTIONS] -- CMD ARGS...

    The options are those of `precheck check` (--gpu, --fail-on, --format...). The report goes to stderr;
    when the check passes precheck becomes the command (exec), so its exit code and signals are its own.
    `precheck [CHECK OPTIONS] -- CMD ARGS...` only checks.
    """
    from .errors import UsageError

    raise UsageError("precheck run needs `--` before the command: precheck run [options] -- CMD ARGS...")


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
def show_rule(code: Annotated[str, typer.Argument(metavar="CODE", help="A rule code or name, e.g. PC101.")]) -> None:
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


__all__ = ["app", "main"]
