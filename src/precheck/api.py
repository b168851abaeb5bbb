"""The Python API: ``precheck.check(paths, hardware=...)`` or ``precheck.check(CheckOptions(...))``,
the function the command line runs.

It runs the pipeline (:func:`precheck.engine.run`) with what a repository of configs needs:

- the project configuration (``[tool.precheck]`` in ``pyproject.toml`` or
  ``.precheck.toml``, :mod:`precheck.project`), found upward from each checked file:
  rule selection, ``per-file-ignores``, ``severity`` overrides, ``exclude`` and, for the
  whole run, ``gpus`` and ``fail-on`` (from the configuration that governs the first path);
- rule selection ruff's way: arguments beat the project configuration (``select``
  replaces its selection; ``extend_select`` and ``ignore`` add to and take from it);
- inline suppression comments (:mod:`precheck.suppression`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from . import engine, project
from .engine import Report
from .errors import InputError, InternalError, UsageError
from .hardware import Hardware, from_specs
from .options import CheckOptions
from .paths import clear as clear_paths
from .project import ProjectConfig
from .rules import RULES, resolve_selector, select_rules
from .rules.base import Context, Finding, Rule, Severity
from .suppression import Suppression, from_notes
from .versions import parse_assumptions

#: the rule that reports unused suppressions is never silenced by a bare comment
UNUSED_SUPPRESSION = "PC907"

#: the project configuration that governs a path
Settings = Callable[[str | Path], ProjectConfig]


class Selection(NamedTuple):
    """Rule selection given as arguments (the command line's flags)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def codes(self, config: ProjectConfig) -> frozenset[str]:
        """The rules that run on a file governed by ``config``."""
        if self.select is not None:
            return _codes(select_rules(list(self.select), list(self.ignore), list(self.extend_select)))
        chosen = set(
            _codes(
                select_rules(
                    list(config.select) if config.select is not None else None,
                    list(config.ignore),
                    list(config.extend_select),
                )
            )
        )
        chosen |= _expand(self.extend_select)
        chosen -= _expand(self.ignore)
        return frozenset(chosen)


def _codes(rules: Iterable[Rule]) -> frozenset[str]:
    return frozenset(r.code for r in rules)


def _expand(selectors: Iterable[str]) -> frozenset[str]:
    parts = [p for s in selectors for p in s.split(",") if p.strip()]
    return frozenset(r.code for p in parts for r in resolve_selector(p))


def hardware_from_flags(
    gpu: Sequence[str] | None, hardware_file: str | None, env: Mapping[str, str] | None = None
) -> Hardware | None:
    """The hardware the flags name, or None: the project's ``gpus``, else a probe, decide."""
    if gpu and hardware_file:
        raise UsageError("--gpu and --hardware are exclusive: name the hardware one way")
    environment = os.environ if env is None else env
    if gpu:
        return from_specs(list(gpu), environment)
    if hardware_file:
        from .probe import load_hardware_file  # not on the --gpu path: it imports subprocess, threading

        return load_hardware_file(hardware_file, environment)
    return None


def resolve_hardware(
    paths: Sequence[str],
    hardware: Hardware | Sequence[str] | str | None,
    env: Mapping[str, str],
    use_project: bool = True,
    settings: Settings | None = None,
) -> tuple[Hardware, str | None]:
    """The target hardware: the argument, else the project's ``gpus``, else this machine's GPUs."""
    if isinstance(hardware, Hardware):
        return hardware, None
    if isinstance(hardware, str) and hardware.strip():
        return from_specs([hardware], env), None
    if hardware and not isinstance(hardware, str):
        return from_specs(list(hardware), env), None
    config_for = settings or (project.for_path if use_project else _no_project)
    config = config_for(paths[0] if paths else ".")
    if config.gpus:
        return from_specs(list(config.gpus), env), f"{_shown(config.path)} gpus"
    from .probe import probe_hardware

    return probe_hardware(env), None


def _shown(path: str | None) -> str:
    if path is None:
        return ""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path


def check(
    paths: str | Iterable[str] | CheckOptions = (".",),
    hardware: Hardware | Sequence[str] | str | None = None,
    *,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    fail_on: str | Severity | None = None,
    assume_versions: Sequence[str] | Mapping[str, str] | None = None,
    python: str | None = None,
    env: Mapping[str, str] | None = None,
    use_project: bool = True,
    debug: bool = False,
    deep: bool = False,
    details: bool = True,
    command: Sequence[str] | None = None,
    config: str | Path | None = None,
) -> Report:
    """Check config files or folders and return the :class:`Report`: what ``precheck check``
    runs, on the :class:`~precheck.options.CheckOptions` its command line gives.

    ``paths``: the paths, or the options themselves (a ``CheckOptions``: then the keywords
    that are also options, ``select`` to ``config``, stay unset). ``hardware``: a
    :class:`~precheck.hardware.Hardware`, GPU specs as ``--gpu`` takes them
    (``["8xA100-80GB"]`` or one string), or None: ``--gpu``/``--hardware`` of the options,
    else the project configuration's ``gpus``, else this machine's GPUs.
    ``select``/``extend_select``/``ignore`` take codes, prefixes, names or ``ALL``;
    ``exclude`` passes over files in folder searches (gitignore syntax); ``assume_versions``
    maps a framework to the version the run uses. ``use_project=False`` ignores project
    configuration files. ``deep=True`` also asks the installed transformers, TRL and
    accelerate (the ``hf`` extra; :mod:`precheck.deep`): key checks against their
    dataclasses and exact parameter counts on the meta device. ``details=False`` drops each
    file's configuration and plan from ``report.files`` as soon as the file is checked: memory
    then stays flat however many files a run checks (the command line does so).
    ``command`` checks a command line instead of ``paths`` (``["torchrun", "train.py",
    "--fp16", "false"]``): findings point at columns of ``<command line>``, the words ``shlex.join``-ed.
    ``config`` names the project configuration file that governs every path (a
    ``.precheck.toml``-style file, or a ``pyproject.toml`` with ``[tool.precheck]``) instead
    of the closest one.
    """
    keywords = (select, extend_select, ignore, exclude, fail_on, assume_versions, python, config)
    if isinstance(paths, CheckOptions):
        given = any(k is not None for k in keywords) or not use_project or debug or deep
        if given or not isinstance(hardware, Hardware | None):
            raise TypeError("precheck.check: give the options in the CheckOptions or as keywords, not both")
        options = paths
    else:
        names = [paths] if isinstance(paths, str) else list(paths)
        options = CheckOptions(
            paths=tuple(names) or None,
            gpu=_specs(hardware),
            select=tuple(select) if select is not None else None,
            extend_select=tuple(extend_select) if extend_select else None,
            ignore=tuple(ignore) if ignore else None,
            exclude=tuple(exclude) if exclude else None,
            fail_on=str(fail_on) if fail_on is not None else None,
            assume_version=_assumptions(assume_versions),
            python=python,
            isolated=not use_project,
            debug=debug,
            deep=deep,
            config=str(config) if config is not None else None,
        )
    return _check(options, hardware if isinstance(hardware, Hardware) else None, env, details, command)


def _specs(hardware: Hardware | Sequence[str] | str | None) -> tuple[str, ...] | None:
    """GPU specs given as the API's ``hardware`` (one string or several), as ``--gpu`` gives them."""
    if isinstance(hardware, str):
        return (hardware,) if hardware.strip() else None
    if hardware is None or isinstance(hardware, Hardware):
        return None
    return tuple(hardware) or None


def _assumptions(values: Sequence[str] | Mapping[str, str] | None) -> tuple[str, ...] | None:
    """``--assume-version NAME==VERSION`` values, from a list of them or a name → version mapping."""
    if values is None:
        return None
    if isinstance(values, Mapping):
        return tuple(f"{name}=={version}" for name, version in values.items()) or None
    return tuple(values) or None


def _check(
    options: CheckOptions,
    hardware: Hardware | None,
    env: Mapping[str, str] | None,
    details: bool,
    command: Sequence[str] | None,
) -> Report:
    """:func:`check` on its options (``hardware``: given as an object, beats them)."""
    names = list(options.paths or ()) or ["."]
    if command is not None:  # a command line instead of paths: ``precheck -- CMD ARGS...``
        from .sources.shell_source import COMMAND_LINE

        names = [COMMAND_LINE]
    if options.fail_on is not None:
        _threshold(options.fail_on, ProjectConfig())  # a bad --fail-on before any work
    if options.deep:  # before any work: a clear message when the hf extra is missing
        from .deep import require

        require()
    environment = dict(os.environ if env is None else env)
    if hardware is None:
        hardware = hardware_from_flags(options.gpu, options.hardware, environment)
    use_project = not options.isolated
    clear_paths()  # a long-lived process sees moved files and links
    if use_project:
        project.clear_caches()  # a long-lived process sees edited configs
    settings: Settings = project.for_path if use_project else _no_project
    if options.config is not None:
        if not use_project:
            raise UsageError("--config and --isolated are exclusive: --isolated reads no configuration")
        explicit = explicit_config(options.config)
        settings = lambda _path: explicit  # noqa: E731
    target, hardware_from = resolve_hardware(names, hardware, environment, use_project, settings)
    base = settings(names[0])
    extend = (*(options.extend_select or ()), *((UNUSED_SUPPRESSION,) if options.show_unused_suppressions else ()))
    cli = Selection(options.select, extend, options.ignore or ())
    candidates = {c.path: c for c in [base, *(settings(n) for n in names)]}
    superset: frozenset[str] = frozenset().union(*(cli.codes(c) for c in candidates.values()))
    settle = _Settle(cli, superset, settings, options.debug, details)
    report = engine.run(
        names,
        target,
        env=environment,
        rules=[RULES[code] for code in sorted(superset)],
        assumed_versions=parse_assumptions(options.assume_version or ()),
        python=options.python,
        debug=options.debug,
        exclude=list(options.exclude) if options.exclude else None,
        deep=options.deep,
        on_file=settle,
        command=list(command) if command is not None else None,
        grouped=False,  # grouped below, once the settings have dropped what they exclude
        project_versions=_ProjectVersions(settings) if use_project else None,
    )
    report.fail_on = _threshold(options.fail_on, base)
    report.hardware_from = hardware_from
    report.suppressed = settle.suppressed
    report.files = settle.kept
    for error in project.broken():  # a project configuration that could not be read: its own error
        shown = InputError(_shown(error.path), error.message, error.line, error.column)
        report.files.append(engine.FileResult(shown.path, error=shown))
    engine.group_runs(report)
    report.findings.sort(key=lambda f: (f.origin.path or "", f.origin.line or 0, f.origin.column or 0, f.rule))
    return report


class _ProjectVersions:
    """A folder's ``versions`` from the settings in force (``--config``'s, or each folder's)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __call__(self, folder: Path) -> Mapping[str, str]:
        return self.settings(folder).versions


def _no_project(_path: str | Path) -> ProjectConfig:
    return ProjectConfig()


def explicit_config(path: str | Path) -> ProjectConfig:
    """The project configuration in a file named by ``--config``."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"--config {path}: no such file")
    loaded = project.load(file.resolve())
    if loaded.path is None:
        raise UsageError(f"--config {path}: {file.name} has no [tool.precheck] table")
    return loaded


def _threshold(fail_on: str | None, base: ProjectConfig) -> Severity:
    text = fail_on if fail_on is not None else base.fail_on or "error"
    try:
        return Severity.parse(text)
    except KeyError:
        raise UsageError(f"--fail-on {text!r}: choose error, warning or info") from None


def _suppressions(result: engine.FileResult) -> dict[str, list[Suppression]]:
    """Path → the suppression comments of the run's files (the config and the files it named)."""
    out: dict[str, list[Suppression]] = {}
    pending = [result.config] if result.config is not None else []
    while pending:
        config = pending.pop(0)
        out.setdefault(config.path, []).extend(from_notes(config.notes))
        pending.extend(config.attached.values())
    return out


def silenced(finding: Finding, comments: Iterable[Suppression]) -> bool:
    """Whether a comment silences ``finding`` (a bare one never silences PC907 itself)."""
    for item in comments:
        if finding.rule == UNUSED_SUPPRESSION and not item.codes:
            continue
        if item.covers(finding.origin.line, finding.rule):
            return True
    return False


def _with_severity(finding: Finding, level: str, where: str | None) -> Finding:
    wanted = Severity.parse(level)
    rule = RULES.get(finding.rule)
    # a finding the engine already lowered (versions not known) stays at most that low
    lowered = rule is not None and finding.severity < rule.severity
    severity = min(wanted, finding.severity) if lowered else wanted
    if severity == finding.severity:
        return finding
    note = finding.note or f"severity {severity} set by {where}"
    return replace(finding, severity=severity, note=note)


class _Settle:
    """Per file, as the engine hands each one over: excludes, selection, per-file-ignores,
    comments and severity overrides; then, unless ``details``, the file's configuration and
    plan are let go (the run streams)."""

    def __init__(self, cli: Selection, superset: frozenset[str], config_for: Settings, debug: bool, details: bool):
        self.cli, self.superset, self.config_for, self.debug, self.details = cli, superset, config_for, debug, details
        #: the results not excluded, in order
        self.kept: list[engine.FileResult] = []
        #: findings silenced by comments or per-file-ignores
        self.suppressed = 0
        #: a configuration's selectors → the codes that run on the files it governs (every
        #: file asks; one run reads few configurations)
        self._wanted: dict[tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]], frozenset[str]] = {}

    def __call__(self, result: engine.FileResult) -> None:
        config = self.config_for(result.path)
        if not config.exclude or not config.excludes(result.path):
            self.kept.append(result)
            self._apply(result, config)
        if not self.details:
            result.config = result.plan = result.hardware = None

    def _apply(self, result: engine.FileResult, config: ProjectConfig) -> None:
        key = (config.select, config.ignore, config.extend_select)
        wanted = self._wanted.get(key)
        if wanted is None:
            wanted = self._wanted[key] = self.cli.codes(config)
        _run_missing(result, wanted - self.superset, self.debug)
        comments = _suppressions(result)
        findings = []
        for finding in result.findings:
            if finding.rule not in wanted:
                continue
            where = finding.origin.path or result.path
            owner = config if where == result.path else self.config_for(where)
            if (owner.per_file_ignores and finding.rule in owner.ignored_codes(where)) or silenced(
                finding, comments.get(where, ())
            ):
                self.suppressed += 1
                continue
            level = owner.severity.get(finding.rule)
            findings.append(_with_severity(finding, level, _shown(owner.path)) if level else finding)
        result.findings = findings


def _run_missing(result: engine.FileResult, codes: frozenset[str], debug: bool) -> None:
    """Rules a nested project configuration turns on that the first pass did not run."""
    if not codes or result.config is None or result.plan is None:
        return
    if result.hardware is None or result.versions is None:
        return
    context = Context(result.config, result.plan, result.hardware, result.versions)
    try:
        result.findings.extend(engine.run_rules(context, [RULES[c] for c in sorted(codes)]))
    except Exception as error:
        if debug:
            raise
        result.internal = InternalError(result.path, error)


__all__ = ["CheckOptions", "Report", "Selection", "check", "hardware_from_flags", "resolve_hardware", "silenced"]
