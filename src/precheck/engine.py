"""The pipeline, end to end: paths → sources → dialects → resolve → rules → report."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from . import frameworks, resolve, sources
from .bounded_read import Refused, read_ends
from .config import TrainingConfig
from .counts import MAX_DEVICES, decimal
from .discovery import iter_files
from .errors import FileTooLarge, InputError, InternalError
from .hardware import VISIBILITY_AMD, Hardware, cuda_order, env_order, with_count, with_visibility
from .paths import check_within, resolved
from .premises import at_run_time_values, judge, point_at_key, premises, rest_on_facts, within_schema
from .references import attach
from .resolve.plan import PrecisionPlan
from .rules import RULES
from .rules.base import Context, Finding, Rule, RuleStatus, Severity
from .suppression import account, comments_of
from .templates import HELM_NOTE, MARKERS_NOTE, config_format, has_markers, helm_template
from .unused import Unused, unused
from .versions import ProjectVersions, VersionInfo, Versions, check_interpreter, clear_caches, collect

DEVICE_VARIABLES = ("CUDA_DEVICE_ORDER", *VISIBILITY_AMD)

#: words a training config cannot do without; an unparsable file found by a folder
#: search that has none of them (a Helm template, a tsconfig with comments) is skipped
_CONFIG_WORDS = re.compile(r"fp16|bf16|torch_dtype|mixed_precision|precision|deepspeed|learning_rate|optim")


@dataclass
class FileResult:
    """One run of one checked file: its dialect, configuration, plan and findings, or why not."""

    path: str
    dialect: str | None = None
    #: which run of a file that holds several (a script's second launch command)
    label: str | None = None
    error: InputError | None = None
    #: a bug met while checking this file (reported, exit 2; other files still checked)
    internal: InternalError | None = None
    #: why a file found by a folder search was passed over
    skipped: str | None = None
    config: TrainingConfig | None = None
    plan: PrecisionPlan | None = None
    versions: Versions | None = None
    #: the hardware as this run sees it (its own files may set the device variables)
    hardware: Hardware | None = None
    #: the other files this run named and precheck read (a DeepSpeed JSON, a model's config.json)
    attached: list[str] = field(default_factory=list)
    #: given on the command line (not found by a folder search)
    named: bool = False
    #: the lone files named on the command line that this config names: it was found by
    #: searching the repository for the configs that name them, and checked with them
    names: list[str] = field(default_factory=list)
    #: set when this file was also named by another config of the same check: it was
    #: checked as part of that run, and its own findings are that run's
    part_of: str | None = None
    findings: list[Finding] = field(default_factory=list)
    #: ``--gpu`` named no count and the run's launch asked for this many devices
    devices_asked: int | None = None
    #: the precision settings its files write that precheck read but could not use
    unused: list[Unused] = field(default_factory=list)


@dataclass
class Report:
    """What a check found (:func:`precheck.check` returns it; the command line prints it)."""

    hardware: Hardware
    files: list[FileResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: set when hardware-dependent rules were skipped
    hardware_note: str | None = None
    #: how many selected rules need the target hardware and were skipped (no GPU known)
    hardware_rules_skipped: int = 0
    #: the lowest severity that fails the run (``--fail-on``, else the project's ``fail-on``)
    fail_on: Severity = Severity.ERROR
    #: where the target hardware came from when not from an argument or a probe
    hardware_from: str | None = None
    #: findings silenced by ``# precheck: ignore`` comments or ``per-file-ignores``
    suppressed: int = 0

    @property
    def errors(self) -> list[InputError]:
        return [f.error for f in self.files if f.error is not None]

    @property
    def internal_errors(self) -> list[InternalError]:
        return [f.internal for f in self.files if f.internal is not None]

    def versions(self) -> dict[str, VersionInfo]:
        merged: dict[str, VersionInfo] = {}
        for result in self.files:
            if result.versions:
                for name, info in result.versions.known.items():
                    merged.setdefault(name, info)
        return merged

    def counts(self) -> dict[Severity, int]:
        out = {s: 0 for s in Severity}
        for finding in self.findings:
            out[finding.severity] += 1
        return out

    def exit_code(self, fail_on: Severity | None = None) -> int:
        """2: inputs that could not be read or checked; 1: a finding at or above ``fail_on``
        (default: the report's); else 0."""
        if self.errors or self.internal_errors:
            return 2
        threshold = self.fail_on if fail_on is None else fail_on
        return 1 if any(f.severity >= threshold for f in self.findings) else 0


def run(
    paths: Iterable[str],
    hardware: Hardware,
    *,
    env: Mapping[str, str] | None = None,
    rules: Iterable[Rule] | None = None,
    assumed_versions: dict[str, VersionInfo] | None = None,
    python: str | None = None,
    debug: bool = False,
    exclude: list[str] | None = None,
    deep: bool = False,
    on_file: Callable[[FileResult], None] | None = None,
    command: list[str] | None = None,
    grouped: bool = True,
    project_versions: ProjectVersions | None = None,
) -> Report:
    """Run the pipeline on config files against ``hardware``, with ``rules`` (default: every
    rule) and no project configuration: :func:`precheck.check` runs it with the project's
    settings and the options'.

    ``deep``: also ask the installed transformers/accelerate (:mod:`precheck.deep`).
    ``on_file`` is called with each file's result as soon as the file is checked, in order
    (the API applies the project settings there, then drops what it no longer needs).
    ``grouped=False`` leaves ``report.findings`` empty and no result ``part_of`` another: the
    API groups the results it keeps itself (:func:`group_runs`)."""
    clear_caches()  # a long-lived process sees edited pins and installs
    sources.clear_caches()  # and edited scripts
    paths = list(paths)
    check_within(paths if command is None else ["."])  # no file outside them is shown (paths.within_checked)
    environment = dict(os.environ if env is None else env)
    active = list(RULES.values() if rules is None else rules)
    report = Report(hardware)
    if not hardware.known and any(r.hardware for r in active):
        report.hardware_rules_skipped = sum(1 for r in active if r.hardware)
        report.hardware_note = (
            "no GPU found: rules that need the target hardware were skipped; "
            "name it with --gpu (e.g. --gpu A100-80GB) or --hardware FILE"
        )
    if python is not None:  # a bad --python is one error, before any file
        check_interpreter(python)
    settled = 0
    #: files other configs name that could not be read: reported once each, at the end
    broken: list[InputError] = []
    # ``command``: a command line instead of files (``precheck -- CMD``), shown as ``<command line>``
    items = iter_files(paths, exclude) if command is None else iter(_command_line())
    checking = _Checking(
        hardware, environment, active, assumed_versions or {}, python, debug, deep, command, broken, project_versions
    )
    for file, shown, named in items:
        settled = _settle(report, settled, on_file)
        checking.file(report, file, shown, named)
    if command is None:
        _check_referrers(report, checking, exclude)
    reported = {str(e) for e in report.errors}
    for named_error in broken:
        if str(named_error) not in reported:
            reported.add(str(named_error))
            report.files.append(FileResult(named_error.path, error=named_error))
    _settle(report, settled, on_file)
    _note_counts(report)
    if not grouped:
        return report
    group_runs(report)
    report.findings.sort(key=lambda f: (f.origin.path or "", f.origin.line or 0, f.origin.column or 0, f.rule))
    return report


def _note_counts(report: Report) -> None:
    """Said once, in the summary: ``--gpu A100`` named a card and no count, so the runs
    whose launch asks for N devices were checked on N of them."""
    hardware = report.hardware
    if not hardware.known or hardware.count_known:
        return
    counts = sorted({r.devices_asked for r in report.files if r.devices_asked is not None})
    if not counts:
        return
    model = hardware.all_devices[0].model
    card = model.aliases[0] if model.aliases else model.name
    sizes = ", ".join(str(c) for c in counts)
    note = (
        f"--gpu named a card and no count: runs whose launch says how many devices it needs were checked on "
        f"that many {card} ({sizes}); the others on one (state the machine with e.g. --gpu {counts[-1]}x{card})"
    )
    report.hardware_note = f"{report.hardware_note}; {note}" if report.hardware_note else note


# internal, never compared or printed: no methods to compile at import
@dataclass(eq=False, repr=False)
class _Checking:
    """What every file of one check is checked with."""

    hardware: Hardware
    environment: Mapping[str, str]
    active: list[Rule]
    assumed: dict[str, VersionInfo]
    python: str | None
    debug: bool
    deep: bool
    command: list[str] | None
    #: files other configs name that could not be read: reported once each, at the end
    broken: list[InputError]
    #: the project configuration's ``versions`` for a folder (None: none is read)
    project_versions: ProjectVersions | None

    def file(self, report: Report, file: Path, shown: str, named: bool) -> None:
        """Check one file into ``report`` (one result per run the file holds)."""
        result = FileResult(shown, named=named)
        report.files.append(result)
        try:
            if os.path.isdir(file):
                if not named:  # below discovery.MAX_DEPTH
                    result.skipped = "a folder too deep to search"
                    return
                raise InputError(shown, "this folder cannot be read")
            if self.command is None and "templates" in Path(os.path.abspath(file)).parts and helm_template(file):
                result.skipped = HELM_NOTE
                return
            documents = (
                sources.load_runs(file, shown, self.hardware) if self.command is None else _command_runs(self.command)
            )
            if not documents:
                result.skipped = "holds no training launch command or training call"
                return
            for index, document in enumerate(documents):
                if index:  # a script with several runs: one result each
                    result = FileResult(shown, named=named)
                    report.files.append(result)
                result.label = document.label
                result.findings = _check_document(
                    file,
                    document,
                    result,
                    self.hardware,
                    self.environment,
                    self.active,
                    self.assumed,
                    self.python,
                    deep=self.deep,
                    broken=self.broken,
                    project_versions=self.project_versions,
                )
        except InputError as error:
            if error.line is not None and _template(file):
                result.skipped = MARKERS_NOTE
            elif _passed_over(file, error, named):
                where = f"{error.line}:{error.column}: " if error.line and error.column else ""
                result.skipped = f"not parsable and not a training config ({where}{error.message})"
            else:
                result.error = error
        except MemoryError:  # not a bug: the file is too much for the memory precheck may use
            result.findings = []
            result.error = InputError(shown, "not enough memory to read this file; not checked")
        except Exception as error:  # a bug: name the file, keep checking the others
            if self.debug:
                raise
            result.internal = InternalError(shown, error)


def _passed_over(file: Path, error: InputError, named: bool) -> bool:
    """Whether a file that could not be read is skipped rather than reported.

    A folder search passes over scripts that do not parse, Python files too large (generated
    modules are common), and files without a training config's words that do not parse or
    are too large (a data file); a config or shell script refused for its size that has those
    words is reported (issue 30: a pull request must not hide a config by making it large).
    A file named on the command line (pre-commit names every staged
    YAML/JSON/TOML file) is passed over only when it does not parse and holds none of those
    words (a Helm template, a tsconfig.json with comments): a missing or unreadable file,
    one too large, or a script that does not parse is reported.
    """
    kind = sources.script_kind(file)
    if isinstance(error, FileTooLarge) and kind not in ("python", "notebook"):
        return not named and not _looks_like_training_config(file)
    if kind is not None or isinstance(error, FileTooLarge):  # Python: large generated modules are common
        return not named
    if named and (error.line is None or not os.path.isfile(file)):  # missing, unreadable: not a parse error
        return False
    return not _looks_like_training_config(file)


def _check_referrers(report: Report, checking: _Checking, exclude: list[str] | None) -> None:
    """A DeepSpeed, FSDP or accelerate file named alone (pre-commit staged only ``ds.json``)
    is checked as part of the runs that name it: the configs of its repository whose text
    mentions its file name and whose references lead to it."""
    if not any(r.named for r in report.files):  # a folder search: no file was named alone
        return
    from .referrers import NAMED_DIALECTS, candidates

    attached = {_key(p) for r in report.files for p in r.attached}
    lone = [r for r in report.files if r.named and r.dialect in NAMED_DIALECTS and r.error is None]
    targets = {_key(r.path): Path(r.path) for r in lone if _key(r.path) not in attached}
    if not targets:
        return
    checked = {_key(r.path) for r in report.files}
    for path, shown in candidates(list(targets.values()), checked, exclude):
        start = len(report.files)
        checking.file(report, path, shown, named=False)
        added = report.files[start:]
        names = {_key(p) for r in added for p in r.attached} & targets.keys()
        if not names or any(r.error or r.internal for r in added):
            del report.files[start:]  # mentions the name but runs another file, or does not read
            continue
        for result in added:
            result.names = sorted(str(targets[k]) for k in names)


def _merged_files(document: sources.Document) -> list[str]:
    """Files a script's launch command merged into its run (``... train cfg.yaml k=v``):
    checked as part of that run, not on their own."""
    found: dict[str, None] = {}
    node_type = sources.Node
    pending = [document.root, *document.env.values()]
    while pending:
        node = pending.pop()
        if node.path is not None:
            found[node.path] = None
        value = node.value
        if isinstance(value, dict):
            pending += [v for v in value.values() if isinstance(v, node_type)]
        elif isinstance(value, list):
            pending += [v for v in value if isinstance(v, node_type)]
    return list(found)


def _command_line() -> list[tuple[Path, str, bool]]:
    from .sources.shell_source import COMMAND_LINE

    return [(Path(COMMAND_LINE), COMMAND_LINE, True)]


def _command_runs(command: list[str]) -> list[sources.Document]:
    from .sources.shell_source import parse_command

    return parse_command(command)


def group_runs(report: Report) -> None:
    """A file another config of this check named is part of that run, not a run of its own.

    Its standalone findings are dropped (the run that names it reports them, with the
    settings it really runs with, e.g. DeepSpeed ``"auto"`` filled in); findings on the
    same place from two runs are reported once.
    """
    owners = {_key(p): r.path for r in report.files for p in r.attached}
    seen: set[tuple[str, str | None, int | None, int | None, str]] = set()
    for result in report.files:
        owner = owners.get(_key(result.path))
        if owner is not None and owner != result.path and result.error is None:
            result.part_of = owner
            continue
        for finding in result.findings:
            key = (finding.rule, finding.origin.path, finding.origin.line, finding.origin.column, finding.message)
            if key not in seen:
                seen.add(key)
                report.findings.append(finding)


def _key(path: str) -> str:
    return str(resolved(path))


def _settle(report: Report, done: int, on_file: Callable[[FileResult], None] | None) -> int:
    """Hand the results added since ``done`` to ``on_file``; how many are handed over now."""
    if on_file is not None:
        for result in report.files[done:]:
            on_file(result)
    return len(report.files)


def for_run(hardware: Hardware, config: TrainingConfig) -> Hardware:
    """The hardware as this run sees it when its own files set the device variables
    (a config's own ``ENV`` block): they beat the shell's, as they do at launch."""
    asked = devices_asked(config) if hardware.known and not hardware.count_known else None
    if asked is not None:  # `--gpu A100`: as many of the card as the launch asks for
        counted = with_count(hardware, asked)
        return with_visibility(counted, {k: v.value for k, v in config.env.items()})
    own = {k: v.value for k, v in config.env.items() if v.origin.in_file and k in DEVICE_VARIABLES}
    if not own or not hardware.known:
        return hardware
    env = {**{k: v.value for k, v in config.env.items()}, **own}
    devices, order = list(hardware.all_devices), hardware.order
    if "CUDA_DEVICE_ORDER" in own:
        order = env_order(env)
        if hardware.source != "profile":  # --gpu already lists CUDA's order; a probe knows PCI order
            devices = cuda_order(sorted(devices, key=lambda d: d.pci_index or 0), order)
    return with_visibility(Hardware(hardware.source, devices, devices, order, notes=list(hardware.notes)), env)


def devices_asked(config: TrainingConfig) -> int | None:
    """How many devices the run's launch needs on its machine: the highest index its
    ``CUDA_VISIBLE_DEVICES`` names (deepspeed ``--include``/``--num_gpus``, accelerate
    ``gpu_ids``), the workers it starts (torchrun ``--nproc_per_node``, accelerate
    ``num_processes``), the devices the framework's own config lists (``trainer.devices: 4``),
    or the GPUs Slurm gives its node (``#SBATCH --gres=gpu:N``); None
    when it does not say."""
    counts: list[int] = []
    visible = config.env.get("CUDA_VISIBLE_DEVICES")
    entries = [e.strip() for e in str(visible.value).split(",")] if visible is not None else []
    if entries and all(e.isdecimal() and len(e) <= 4 for e in entries):
        counts.append(max(int(e) for e in entries) + 1)
    for name in ("LOCAL_WORLD_SIZE", "SLURM_GPUS_ON_NODE"):
        workers = config.env.get(name)
        count = decimal(str(workers.value), MAX_DEVICES) if workers is not None else None
        if count is not None:
            counts.append(count)
    for source in (config, *config.attached.values()):
        # the framework's own device list (``devices: 4`` → "0,1,2,3")
        own = source.devices
        indices = [e.strip() for e in str(own.value).split(",")] if own is not None and own.origin.in_file else []
        if len(indices) > 1 and all(e.isdecimal() and len(e) <= 4 for e in indices):
            counts.append(max(int(e) for e in indices) + 1)  # one device is what a card without a count means
        machines = source.setting("num_machines")
        nodes = machines.value if machines is not None and isinstance(machines.value, int) else 1
        if source.num_processes is not None and isinstance(source.num_processes.value, int) and nodes > 0:
            counts.append(source.num_processes.value // nodes)  # accelerate: num_processes over all machines
    counts = [c for c in counts if 0 < c <= 1024]
    return max(counts) if counts else None


def _template(file: Path) -> bool:
    """A config-format file that did not parse and holds Go/Jinja template markers."""
    if not config_format(file):
        return False
    try:
        return has_markers(read_ends(file, 256 * 1024).decode("utf-8", errors="replace"))
    except (Refused, OSError):
        return False


def _looks_like_training_config(file: Path) -> bool:
    try:
        head = read_ends(file, 256 * 1024).decode("utf-8", errors="replace")  # the words may follow a long comment
    except Refused:  # a FIFO, a device, a kernel file: not a config
        return False
    except OSError:
        return True
    return bool(_CONFIG_WORDS.search(head))


def _check_document(
    file: Path,
    document: sources.Document,
    result: FileResult,
    hardware: Hardware,
    environment: Mapping[str, str],
    active: list[Rule],
    assumed: dict[str, VersionInfo],
    python: str | None,
    *,
    deep: bool = False,
    broken: list[InputError] | None = None,
    project_versions: ProjectVersions | None = None,
) -> list[Finding]:
    """One run's document through dialects → resolve → rules (``broken``: see :func:`attach`)."""
    dialect = frameworks.detect(document)
    if dialect is None:
        return []
    result.dialect = dialect.name
    config = dialect.read(document, environment)
    cd = Path(document.cd) if document.cd else None  # where the launch script `cd`-s to
    result.attached = [*_merged_files(document), *attach(config, file, environment, broken=broken, cd=cd)]
    asked = for_run(hardware, config)
    if not hardware.count_known and asked.count_known:
        result.devices_asked = len(asked.all_devices)
    hardware = asked
    wanted = {config.framework, *ALWAYS_ASKED, *_rule_packages()}
    versions = collect(str(file), wanted, assumed, python, project_versions)
    if deep:  # the only way into torch/transformers/accelerate
        from .deep import inspect

        result.attached += inspect(config, file, versions)
    config = resolve.with_launch_env(config)  # the run as launched: its environment's sharding
    plan = resolve.resolve(config, hardware, versions)
    result.config, result.plan, result.versions, result.hardware = config, plan, versions, hardware
    result.unused = unused(config)
    context = Context(config, plan, hardware, versions)
    findings = judge(run_rules(context, active), premises(document, config, context), context, active)
    return within_schema(point_at_key(at_run_time_values(findings, config), document), document)


#: libraries whose version changes what several frameworks do (rules' messages, resolution)
ALWAYS_ASKED = ("torch", "peft", "transformers")


@lru_cache(maxsize=1)
def _rule_packages() -> frozenset[str]:
    """The packages whose versions some rule's ranges name."""
    return frozenset(p.package for r in RULES.values() for p in r.versions)


def run_rules(context: Context, rules: Iterable[Rule]) -> list[Finding]:
    """The findings of ``rules`` on one run, in the rules' order. A rule declared with
    ``suppressions`` (PC907) runs after every other rule of the registry, reading which
    suppression comments their findings use (:func:`precheck.suppression.account`)."""
    chosen = list(rules)
    readers = [r for r in chosen if r.suppressions]
    if not readers:
        return _run_each(context, chosen)
    comments = comments_of(context.config)
    # the comments could silence any rule: with comments, every other rule runs (once)
    others = [r for r in RULES.values() if not r.suppressions] if comments else []
    ran = {r.code for r in others}
    others += [r for r in chosen if not r.suppressions and r.code not in ran]
    found: dict[str, list[Finding]] = {}
    for finding in _run_each(context, others):
        found.setdefault(finding.rule, []).append(finding)
    undecided = frozenset() if context.hardware.known else frozenset(r.code for r in others if r.hardware)
    every = [f for r in others for f in found.get(r.code, ())]
    known = account(context.config, comments, every, undecided, frozenset(RULES))
    after = replace(context, suppressions=known)
    out: list[Finding] = []
    for rule in chosen:
        out.extend(_run_each(after, [rule]) if rule.suppressions else found.get(rule.code, ()))
    return out


def _run_each(context: Context, rules: Iterable[Rule]) -> list[Finding]:
    out: list[Finding] = []
    known, framework, removed = context.hardware.known, context.config.framework, RuleStatus.REMOVED
    for rule in rules:
        if (rule.hardware and not known) or (rule.frameworks and framework not in rule.frameworks):
            continue
        if rule.status is removed:
            continue
        for finding in rule.check(context):
            fix = finding.fix
            if fix is not None and fix.applicability is None:  # as the rule declares
                fix = replace(fix, applicability=rule.fix_safety)
            placed = replace(finding, rule=rule.code, name=rule.name, severity=rule.severity, fix=fix)
            judged = judge_versions(rule, rest_on_facts(placed), context.versions)
            if judged is not None:
                out.append(judged)
    return out


def judge_versions(rule: Rule, finding: Finding, versions: Versions) -> Finding | None:
    """Apply a version-dependent rule's ranges (see README, "Framework versions")."""
    if not rule.versions:
        return finding
    unknown = []
    known = []
    partly = []
    ranged = ""
    for span in rule.versions:
        info = versions.get(span.package)
        if info is None:
            unknown.append(span)
            continue
        cover = span.coverage(info.version)
        if cover == "none":
            return None
        if cover == "some" and span.contains(info.version):
            # the newest release the range allows behaves so: what a fresh install gets (DESIGN.md,
            # "Findings rest on facts": a range is judged by its newest allowed release)
            known.append(f"{info.name}{info.version} ({info.source}): its newest allowed release")
        elif cover == "some":
            partly.append(f"{info.name}{info.version} ({info.source})")
            ranged = ranged or info.name
        else:
            known.append(f"{info.name} {info.version} ({info.source})")
    if partly:
        spans = ", ".join(str(s) for s in rule.versions)
        note = (
            f"only {spans} behave so, and {', '.join(partly)} allows releases on both sides: "
            f"pin the exact release ({ranged}==VERSION) or pass --assume-version {ranged}==VERSION"
        )
        severity = min(rule.severity, Severity.WARNING)
        return replace(finding, severity=severity, message=f"{finding.message} [{note}]", note=note)
    if not unknown:
        return replace(finding, message=f"{finding.message} [{', '.join(known)}]")
    spans = ", ".join(str(s) for s in rule.versions)
    packages = ", ".join(sorted({s.package for s in unknown}))
    hint = f"pin it or pass --assume-version {unknown[0].package}==VERSION"
    if rule.affects_latest:
        note = f"holds for {spans}; the {packages} version is not known ({hint})"
        return replace(finding, message=f"{finding.message} [{note}]", note=note)
    severity = min(rule.severity, Severity.WARNING)
    note = f"only {spans} behave so, and the {packages} version is not known: {hint}"
    return replace(finding, severity=severity, message=f"{finding.message} [{note}]", note=note)
