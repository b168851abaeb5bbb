"""Where a value came from: a key in a file, an environment variable, a default."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T", covariant=True)

OriginKind = Literal["file", "env", "default", "derived"]


@dataclass(frozen=True, slots=True, init=False)
class Origin:
    """Where a value came from: a file position, the environment, a default or a derivation."""

    kind: OriginKind
    path: str | None = None
    line: int | None = None
    column: int | None = None
    #: the key as the user spelled it (``--gradient_precision``, ``use_fp16``)
    key: str | None = None
    #: for defaults and derived values: whose default, what it was derived from
    detail: str | None = None
    #: the value as the file spells it (``yes`` for True in YAML), for messages
    written: str | None = field(default=None, compare=False)
    #: the format of the document the key is in (``Document.format``), for fixes
    format: str | None = field(default=None, compare=False)
    #: the other places (file, line) the value flows through on its way here: the keyword
    #: that passes a name decided above (``load_in_4bit=load_in_4bit``), the branch of an
    #: ``x if c else y`` taken, a launched script's line that turns a flag into a setting
    through: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    #: the setting the user spells to change the value, as spelled where it is set, when the
    #: origin's place holds it under no key an edit may set: the launch's flag a Python line
    #: receives (``--precision`` reaching ``L.Fabric(precision=precision)``), the keyword of a
    #: call whose value the plan reads as other keys (``Fabric(precision=...)`` as autocast and
    #: weights dtype). Findings show it as their key (:attr:`shown_key`); fixes never edit it.
    option: str | None = field(default=None, compare=False)

    def __init__(
        self,
        kind: OriginKind,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
        detail: str | None = None,
        written: str | None = None,
        format: str | None = None,
        through: tuple[tuple[str, int], ...] = (),
        option: str | None = None,
    ) -> None:
        # the generated frozen __init__'s, through the slots themselves rather than
        # object.__setattr__ (a third of the time; every key read makes one)
        _set_kind(self, kind)
        _set_path(self, path)
        _set_line(self, line)
        _set_column(self, column)
        _set_key(self, key)
        _set_detail(self, detail)
        _set_written(self, written)
        _set_format(self, format)
        _set_through(self, through)
        _set_option(self, option)

    @classmethod
    def env(cls, name: str) -> Origin:
        return cls("env", key=name)

    @classmethod
    def default(cls, detail: str) -> Origin:
        return cls("default", detail=detail)

    def derived(self, detail: str) -> Origin:
        """The same place, read as the source of a value derived from it (a file value's own
        detail, where it came from before this place, is kept after it)."""
        if self.kind == "file" and self.detail:
            detail = f"{detail} ({self.detail})"
        return Origin(
            "derived",
            self.path,
            self.line,
            self.column,
            self.key,
            detail,
            self.written,
            self.format,
            self.through,
            self.option,
        )

    def with_through(self, places: tuple[tuple[str, int], ...]) -> Origin:
        """The same origin, citing ``places`` too (each once, not its own place)."""
        own = (self.path, self.line)
        added = tuple(p for p in dict.fromkeys((*self.through, *places)) if p != own)
        if added == self.through:
            return self
        return Origin(
            self.kind,
            self.path,
            self.line,
            self.column,
            self.key,
            self.detail,
            self.written,
            self.format,
            added,
            self.option,
        )

    @property
    def shown_key(self) -> str | None:
        """The key a finding at this origin shows (JSON ``key``): the key as spelled at its
        place, else the setting that decided the value there (:attr:`option`)."""
        return self.key if self.key is not None else self.option

    @property
    def places(self) -> tuple[tuple[str, int], ...]:
        """Its own place in a file (when it has one) and the places it flows through."""
        own = ((self.path, self.line),) if self.path is not None and self.line is not None else ()
        return (*own, *self.through)

    @property
    def in_file(self) -> bool:
        return self.path is not None and self.line is not None

    def location(self) -> str:
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}:{self.column}" if self.line else self.path

    def __str__(self) -> str:
        if self.kind == "env":
            return f"env:{self.key}"
        if self.kind == "default":
            return self.detail or "default"
        where = f"{self.location()} ({self.key})" if self.key else self.location()
        if self.kind == "derived" and self.detail:
            return f"{self.detail}, from {where}" if where else self.detail
        if self.kind == "file" and self.detail:  # a value read where it is used, from elsewhere (an option)
            return f"{where}: {self.detail}" if where else self.detail
        return where


@dataclass(frozen=True, slots=True, init=False)
class Sourced(Generic[T]):
    """A value and where it came from."""

    value: T
    origin: Origin

    def __init__(self, value: T, origin: Origin) -> None:
        _set_value(self, value)  # as Origin's: through the slots
        _set_origin(self, origin)


#: the slots' own setters: a frozen dataclass's __init__ without object.__setattr__'s dispatch
_set_kind = Origin.__dict__["kind"].__set__
_set_path = Origin.__dict__["path"].__set__
_set_line = Origin.__dict__["line"].__set__
_set_column = Origin.__dict__["column"].__set__
_set_key = Origin.__dict__["key"].__set__
_set_detail = Origin.__dict__["detail"].__set__
_set_written = Origin.__dict__["written"].__set__
_set_format = Origin.__dict__["format"].__set__
_set_through = Origin.__dict__["through"].__set__
_set_option = Origin.__dict__["option"].__set__
_set_value = Sourced.__dict__["value"].__set__
_set_origin = Sourced.__dict__["origin"].__set__
