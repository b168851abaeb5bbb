"""The command line: ``precheck PATH...`` and its subcommands, declared for typer.

``check`` and ``probe`` are generated from the options :mod:`precheck.options` declares;
:func:`main` (:mod:`precheck.entry`) runs the app, and reads a plain ``precheck check``
command line itself, from the same declaration, without typer: both then run
:func:`precheck.check_command.run_check`.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
import typer.core

from . import __version__
from .check_command import check_format as _check_format
from .check_command import report_internal as _report_internal
from .check_command import run_check
from .entry import main
from .options import CHECK, CheckOptions, Option, ProbeOptions, build, declared

T = TypeVar("T", bound=tuple[Any, ...])

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


def _escaped(text: str) -> str:
    return text.replace("[", "\\[")  # rich markup: `[hf]` is text


def _annotation(option: Option) -> Any:
    """The option's parameter type for typer, with its ``typer.Option`` (or ``Argument``)."""
    if option.kind == "arguments":
        return Annotated[list[str] | None, typer.Argument(metavar=option.metavar, help=_escaped(option.help))]
    taken: Any = {"flag": bool, "values": list[str] | None}.get(option.kind) or (
        str if option.default is not None else str | None
    )
    info = typer.Option(*option.flags, metavar=option.metavar, help=_escaped(option.help), envvar=option.env)
    return Annotated[taken, info]


def command(options: type[T], run: Callable[[T], int | None]) -> Callable[..., None]:
    """A typer command with one parameter per option ``options`` declares, which runs
    ``run`` on the options given (its exit code)."""

    def invoke(**given: Any) -> None:
        raise typer.Exit(run(build(options, given)) or 0)

    parameters = [
        inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=_annotation(o))
        for o in declared(options)
    ]
    invoke.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return invoke


_OPTION = {o.name: o for o in CHECK}

if TYPE_CHECKING:
    GpuOpt = list[str] | None
    HardwareOpt = str | None
    AssumeOpt = list[str] | None
    ExcludeOpt = list[str] | None
    PythonOpt = str | None
    DebugOpt = bool
else:  # the other commands share these options with check
    GpuOpt = _annotation(_OPTION["gpu"])
    HardwareOpt = _annotation(_OPTION["hardware"])
    AssumeOpt = _annotation(_OPTION["assume_version"])
    ExcludeOpt = _annotation(_OPTION["exclude"])
    PythonOpt = _annotation(_OPTION["python"])
    DebugOpt = _annotation(_OPTION["debug"])
FormatOpt = Annotated[str, typer.Option("--format", metavar="FORMAT", help="Output format: text or json.")]


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


check = app.command("check", help="Check config files (the default command: `precheck PATH...`).")(
    command(CheckOptions, lambda options: run_check(options))
)


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
    given = dict(paths=paths, gpu=gpu, hardware=hardware, assume_version=assume_version, python=python, debug=debug)
    report = api.check(build(CheckOptions, {**given, "exclude": exclude}))
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
    from .api import hardware_from_flags, resolve_hardware
    from .smoke.run import smoke as run_smoke

    _check_format(fmt, ("text", "json"))
    target, _ = resolve_hardware(paths, hardware_from_flags(gpu, hardware), os.environ)
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


def _probe(options: ProbeOptions) -> None:
    from .probe_report import print_probe

    print_probe(options.json, options.torch)


probe = app.command("probe", help="Show this machine's GPUs in the order a training run sees them.")(
    command(ProbeOptions, _probe)
)


@app.command("init")
def init(
    gpu: GpuOpt = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="The file to write (default: .precheck.toml, else pyproject.toml, else a new .precheck.toml).",
        ),
    ] = None,
) -> None:
    """State the target hardware once: write `gpus = [...]` into the project configuration, from
    --gpu or this machine's GPUs, so every check (CI, pre-commit, a laptop) gives the same result."""
    from .init_command import run_init

    raise typer.Exit(run_init(gpu, config))


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
