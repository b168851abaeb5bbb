"""What a rule is, what it yields, and the context it reads."""

from __future__ import annotations

import enum
import inspect
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..provenance import Origin, Sourced
from ..versions import VersionRange

if TYPE_CHECKING:
    from ..config import TrainingConfig
    from ..hardware import Hardware
    from ..plan import PrecisionPlan
    from ..versions import Versions


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.strip().upper()]


class FixSafety(enum.Enum):
    """How a fix may be applied (ruff's ``Applicability``): a :class:`Fix` carries its own;
    a rule declares the one its fixes have unless a fix says otherwise."""

    #: ``precheck --fix`` applies it
    SAFE = "safe"
    #: ``precheck --fix --unsafe-fixes`` applies it: it changes what the run does
    UNSAFE = "unsafe"
    #: never applied: the message says what to change (one choice of several)
    MANUAL = "manual"


class RuleStatus(enum.Enum):
    """Where a rule is in its life (ruff's ``RuleGroup``); it decides when the rule runs."""

    #: runs by default
    STABLE = "stable"
    #: runs only when selected: by its code, name, a prefix or ``ALL`` (ruff's preview)
    OPT_IN = "opt-in"
    #: runs only when selected by its own code or name (prefixes and ``ALL`` pass it over)
    DEPRECATED = "deprecated"
    #: never runs; selecting it by its code or name is a usage error
    REMOVED = "removed"


#: the release a rule declared without ``since`` has had its status since (precheck's first)
FIRST_RELEASE = "0.1.0"


@dataclass(frozen=True, slots=True)
class Edit:
    """Set ``key`` in ``path`` to ``value`` (``None`` with ``remove`` deletes the key)."""

    path: str
    key: str
    value: Any = None
    line: int | None = None
    remove: bool = False
    #: the format of the document ``key`` was read from (its ``Document.format``: "yaml",
    #: "json", "toml", "env", "shell", "python"...), which picks the editor
    #: (:mod:`precheck.fix`); None for an edit built without its document
    format: str | None = field(default=None, compare=False)

    def describe(self) -> str:
        where = f" ({self.path}:{self.line})" if self.line else f" (in {self.path})"
        if self.remove:
            return f"remove `{self.key}`{where}"
        return f"set `{self.assignment()}`{where}"

    def assignment(self) -> str:
        """The edit in the file's own syntax: ``key: v`` (YAML), ``"key": v`` (JSON), ``key = v`` (TOML),
        ``KEY=v`` (shell env file), ``--key v`` / ``key=v`` (a script's launch command), ``key=v`` (a keyword
        argument in a Python script)."""
        suffix = self.path.rsplit(".", 1)[-1].lower()
        leaf = self.key.rsplit(".", 1)[-1] if suffix in ("json", "toml", "env") else self.key
        if suffix == "json":
            return f"{json.dumps(leaf)}: {json.dumps(self.value)}"
        if suffix == "env":
            return f"{leaf}={str(self.value).lower() if isinstance(self.value, bool) else self.value}"
        if suffix == "toml":
            rendered = json.dumps(self.value) if isinstance(self.value, (bool, int, float, str)) else str(self.value)
            return f"{leaf} = {rendered}"
        name = self.path.rsplit("/", 1)[-1].lower()
        if (
            suffix in ("sh", "bash", "slurm", "sbatch")
            or name == "makefile"
            or "workflows/" in self.path
            or self.path.startswith("<")
        ):
            # a launch command's flag (`--fp16 False`) or override (`bf16=False`), or an export.
            # Booleans are capitalised: python-fire (the entry points some frameworks launch with)
            # reads only `False` as false (`false` stays a truthy string), while
            # HfArgumentParser's string_to_bool and OmegaConf take either
            text = str(self.value)
            if self.key.startswith("-"):
                return f"{self.key} {text}"
            if self.line is None and not self.key.isupper():  # a flag to add to the command
                return f"--{self.key} {text}"
            return f"{self.key}={text}"  # an override (`bf16=False`) or a variable
        if suffix in ("py", "ipynb"):  # a keyword argument: fp16=False, dtype=torch.bfloat16
            dtype = self.key.endswith("dtype") and self.value in ("float16", "bfloat16", "float32")
            return f"{self.key}={'torch.' + str(self.value) if dtype else repr(self.value)}"
        return f"{self.key}: {str(self.value).lower() if isinstance(self.value, bool) else self.value}"


def written(setting: Sourced[Any], default_key: str = "") -> str:
    """A setting as its file spells it, for a message: ``torch_dtype: float16`` in YAML,
    ``--torch_dtype float16`` on a command line, ``torch_dtype=torch.float16`` in Python."""
    origin = setting.origin
    value = setting.value
    if isinstance(value, bool) and (origin.key or "").startswith("-"):
        return f"{origin.key} {str(value).lower()}"  # as command lines usually spell it
    return Edit(origin.path or "", origin.key or default_key, value, origin.line).assignment()


@dataclass(frozen=True, slots=True)
class Fix:
    """The concrete change, in the user's own key and file."""

    description: str
    edits: tuple[Edit, ...] = ()
    #: how ``--fix`` may apply it; None: as its rule declares (the engine fills it in)
    applicability: FixSafety | None = None

    def text(self) -> str:
        if not self.edits:
            return self.description
        return self.description + ": " + "; ".join(e.describe() for e in self.edits)


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule yields; the engine fills in the rule's code, name and severity."""

    origin: Origin
    message: str
    fix: Fix | None = None
    #: other places that take part (the key that overrode, the env var...)
    related: tuple[Origin, ...] = ()
    #: set by the engine
    rule: str = ""
    name: str = ""
    severity: Severity = Severity.ERROR
    #: why the engine changed the severity (versions not known, config override)
    note: str | None = None
    #: premises the finding rests on that precheck could not read (a script it could not
    #: follow, a runtime value, an unknown training method or device count), each naming
    #: how to state it; the engine caps such a finding at a warning (DESIGN.md, "Findings
    #: rest on facts")
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SuppressionComment:
    """A ``# precheck: ignore`` comment of one of the run's files, and which rules' findings it covers."""

    #: where the comment starts
    origin: Origin
    #: as precheck writes it: ``# precheck: ignore[PC101, PC202]``
    comment: str
    #: ``ignore-file``: the whole file; else the comment's own line
    file_wide: bool
    #: the codes it names, as written (empty: every rule)
    codes: tuple[str, ...]
    #: the rules with a finding it covers
    used: frozenset[str]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Suppressions:
    """The run's suppression comments after every other rule reported (ruff's ``noqa``
    checker): set by the engine on the context of the rules declared with ``suppressions``."""

    comments: tuple[SuppressionComment, ...] = ()
    #: comments that start like a suppression but are not one: where, and what is wrong
    malformed: tuple[tuple[Origin, str], ...] = ()
    #: rules that could not run (they need the devices, none known): any comment may be theirs
    undecided: frozenset[str] = frozenset()
    #: every rule's code: a code outside it is no rule
    codes: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Context:
    """Everything a rule may read. Rules never read files, probe, or print."""

    config: TrainingConfig
    plan: PrecisionPlan
    hardware: Hardware
    versions: Versions
    #: what the other rules' findings made of the suppression comments; only for the rules
    #: declared with ``suppressions=True`` (None for every other rule)
    suppressions: Suppressions | None = None


Check = Callable[[Context], Iterator[Finding]]

_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CODE = re.compile(r"^PC\d{3}$")
_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")
DOC_SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Fix")


@dataclass(frozen=True, eq=False, repr=False)
class Rule:
    """One rule: its code, name, severity and check."""

    code: str
    name: str
    severity: Severity
    check: Check
    #: needs to know the devices (skipped when no GPU is known)
    hardware: bool = False
    #: the applicability of the rule's fixes, unless a fix declares its own
    fix_safety: FixSafety = FixSafety.MANUAL
    #: where the behaviour holds; empty: every version
    versions: tuple[VersionRange, ...] = ()
    #: whether the newest release of the framework still behaves so
    affects_latest: bool = True
    #: the frameworks (distribution names) whose runs this rule reads
    frameworks: tuple[str, ...] = ()
    doc: str = field(default="", repr=False)
    status: RuleStatus = RuleStatus.STABLE
    #: the precheck release since which the rule has had its ``status``
    since: str = FIRST_RELEASE
    #: reads ``Context.suppressions``: runs after every other rule of the registry reported
    suppressions: bool = False

    @property
    def family(self) -> str:
        return self.code[:3] + "xx"

    @property
    def summary(self) -> str:
        for line in self.doc.splitlines():
            if line.strip() and not line.startswith("#"):
                return line.strip()
        return ""


def rule(
    code: str,
    name: str,
    severity: Severity,
    *,
    hardware: bool = False,
    fix_safety: FixSafety = FixSafety.MANUAL,
    versions: tuple[VersionRange, ...] = (),
    affects_latest: bool = True,
    frameworks: tuple[str, ...] = (),
    status: RuleStatus = RuleStatus.STABLE,
    since: str = FIRST_RELEASE,
    suppressions: bool = False,
) -> Callable[[Check], Rule]:
    """Declare a rule; the function's docstring is its documentation."""
    if not _CODE.match(code):
        raise ValueError(f"bad rule code {code!r}")
    if not _SLUG.match(name):
        raise ValueError(f"rule name {name!r} is not kebab-case")
    if not _RELEASE.match(since):
        raise ValueError(f"rule {code}: since {since!r} is not a release (MAJOR.MINOR.PATCH)")

    def wrap(check: Check) -> Rule:
        return Rule(
            code,
            name,
            severity,
            check,
            hardware,
            fix_safety,
            versions,
            affects_latest,
            frameworks,
            inspect.cleandoc(check.__doc__ or ""),
            status,
            since,
            suppressions,
        )

    return wrap


def edits_for(item: Any, config_path: str, value: Any = None, *, remove: bool = False) -> tuple[Edit, ...]:
    """The edit of a value the user's file set (``Sourced``): none when it came from elsewhere."""
    origin = getattr(item, "origin", None)
    if not isinstance(origin, Origin) or not origin.in_file or origin.key is None:
        return ()
    return (Edit(origin.path or config_path, origin.key, value, origin.line, remove, origin.format),)


def anchor(config_path: str, *origins: Origin) -> Origin:
    """Where a finding points: the first origin in a file, else the top of the config."""
    return next((o for o in origins if o.in_file), Origin("file", config_path, 1, 1))


def unknown_version_note(*origins: Any) -> str:
    """`` [PKG version not known: ...]`` when a premise came from a framework default whose
    version precheck took as the newest release; empty otherwise."""
    for origin in origins:
        found = re.search(r"([A-Za-z0-9_.-]+) version not known", str(getattr(origin, "detail", None) or ""))
        if found:
            name = found.group(1)
            hint = f"pin it or pass --assume-version {name}==VERSION"
            return f" [{name} version not known: taken as the newest release; {hint}]"
    return ""
