"""What a dialect is, and the helpers every dialect uses to map keys with provenance."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..config import TrainingConfig
from ..provenance import Origin, Sourced
from ..sources import Document, Node

#: environment variables any run may be steered by
RUN_ENV = (
    "ACCELERATE_MIXED_PRECISION",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)

Converter = Callable[[Any], Any]


def to_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def to_str(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)


def to_index_list(value: Any) -> str | None:
    """A list of device indices (``['0', '1']``) as ``"0,1"``."""
    if isinstance(value, list):
        return ",".join(str(item.value if isinstance(item, Node) else item) for item in value)
    return None


def to_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Field:
    """A normalised field read from one of several key paths (first present wins)."""

    name: str
    paths: tuple[tuple[str, ...], ...]
    convert: Converter


def field(name: str, *paths: str, convert: Converter = to_str) -> Field:
    """``field("fp16", "fp16", "training.fp16", convert=to_bool)``"""
    return Field(name, tuple(tuple(p.split(".")) for p in paths), convert)


def origin_of(doc: Document, node: Node) -> Origin:
    line, column = node.anchor
    return Origin("file", doc.path, line, column, node.key)


def lookup(root: Mapping[str, Node], path: tuple[str, ...], normalise: Callable[[str], str]) -> Node | None:
    current: Mapping[str, Node] | None = root
    node: Node | None = None
    for part in path:
        if current is None:
            return None
        node = next((child for key, child in current.items() if normalise(key) == part), None)
        if node is None:
            return None
        current = node.value if isinstance(node.value, dict) else None
    return node


class Dialect:
    """Recognise a framework's files and map them onto :class:`TrainingConfig`.

    Subclasses set ``name``, ``framework`` (the distribution whose version decides the
    semantics), ``fields`` and implement :meth:`score`.
    """

    name = ""
    framework = ""
    fields: tuple[Field, ...] = ()
    #: the framework's precision switches, normalised name → key as the framework spells it
    flag_keys: tuple[tuple[str, str], ...] = ()

    def normalise_key(self, key: str) -> str:
        return key

    def score(self, doc: Document) -> int:
        """How sure this dialect is that it owns ``doc`` (0: not at all)."""
        raise NotImplementedError

    def root(self, doc: Document) -> dict[str, Node]:
        """The mapping that holds the framework's keys (the whole document by default)."""
        return doc.mapping()

    def keys(self, doc: Document) -> set[str]:
        return {self.normalise_key(k) for k in self.root(doc)}

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        values: dict[str, Any] = {}
        for spec in self.fields:
            for path in spec.paths:
                node = lookup(self.root(doc), path, self.normalise_key)
                if node is None:
                    continue
                converted = spec.convert(node.value)
                if converted is not None:
                    values[spec.name] = Sourced(converted, origin_of(doc, node))
                    break
        config = TrainingConfig(
            dialect=self.name,
            framework=self.framework,
            path=doc.path,
            env={name: Sourced(env[name], Origin.env(name)) for name in RUN_ENV if name in env},
            keys={k: Sourced(n.value, origin_of(doc, n)) for k, n in self.root(doc).items()},
            notes=list(doc.notes),
            flag_keys=dict(self.flag_keys),
            **values,
        )
        self.finish(doc, config)
        return config

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        """Hook for what a field table cannot say (derived values, nested blocks)."""

    def node(self, doc: Document, path: str) -> Node | None:
        """The node at a dotted key path, keys compared after :meth:`normalise_key`."""
        return lookup(self.root(doc), tuple(path.split(".")), self.normalise_key)

    def put(self, config: TrainingConfig, name: str, value: Any, doc: Document, node: Node) -> None:
        """Set a normalised field from a node the field table could not map."""
        setattr(config, name, Sourced(value, origin_of(doc, node)))


def count_keys(keys: Iterable[str], wanted: Iterable[str]) -> int:
    present = set(keys)
    return sum(1 for k in wanted if k in present)
