"""What a dialect is, and the helpers every dialect uses to map keys with provenance."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property, lru_cache
from typing import Any

from ..config import TrainingConfig
from ..converters import to_bool as to_bool
from ..converters import to_float as to_float
from ..converters import to_int as to_int
from ..provenance import Origin, Sourced
from ..run_env import RUN_ENV as RUN_ENV
from ..sources import Document, Node, SourceNote
from ..traits import NO_TRAITS, Traits

Converter = Callable[[Any], Any]


def to_str(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)


def to_index_list(value: Any) -> str | None:
    """A list of device indices (``['0', '1']``) as ``"0,1"``."""
    if isinstance(value, list):
        return ",".join(str(item.value if isinstance(item, Node) else item) for item in value)
    return None


# a dialect's declaration, never compared or printed: fewer methods to compile at import
@dataclass(frozen=True, eq=False, repr=False)
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
    fmt = doc.format if node.path is None else None  # a node from another file: not its format
    path = node.path or doc.path
    through = _through(node, path) if node.through else ()
    return Origin("file", path, line, column, node.key, node.via, node.raw, fmt, through, node.option)


def _through(node: Node, path: str) -> tuple[tuple[str, int], ...]:
    """A node's :attr:`Node.through` with each place's file named (None: the node's own)."""
    own = (node.path, node.anchor[0])  # (not its own line again)
    return tuple((other or path, line) for other, line in node.through if (other or node.path, line) != own)


def _sourced_keys(doc: Document, root: Mapping[str, Node]) -> dict[str, Sourced[Any]]:
    """``{key: Sourced(node.value, origin_of(doc, node))}`` for every key of ``root``, the
    origin built in one loop (every document's every top-level key makes one)."""
    own_path, own_format = doc.path, doc.format
    out: dict[str, Sourced[Any]] = {}
    for key, node in root.items():
        line, column = node.anchor
        other = node.path
        fmt = own_format if other is None else None  # a node from another file: not its format
        path = other or own_path
        through = _through(node, path) if node.through else ()
        origin = Origin("file", path, line, column, node.key, node.via, node.raw, fmt, through, node.option)
        out[key] = Sourced(node.value, origin)
    return out


def lookup(root: Mapping[str, Node], path: tuple[str, ...], normalise: Callable[[str], str]) -> Node | None:
    """The node at ``path``: at each level the first key that ``normalise`` maps onto the part."""
    # keys as written (the base dialect's normalise_key): the one key equal to the part
    plain = getattr(normalise, "__func__", None) is Dialect.normalise_key
    current: Mapping[str, Node] | None = root
    node: Node | None = None
    for part in path:
        if current is None:
            return None
        if plain:
            node = current.get(part)
        else:
            node = next((child for key, child in current.items() if normalise(key) == part), None)
        if node is None:
            return None
        current = node.value if isinstance(node.value, dict) else None
    return node


class Priority(IntEnum):
    """Detection tiers: a dialect scores a document at its tier plus the distinctive keys it
    found there, and the highest score wins (:func:`precheck.frameworks.detect`). A file
    that several dialects could read goes to the most specific format.

    Each framework declares its tier once, in its :class:`~precheck.frameworks.base.Framework`
    (bound on its dialect as :attr:`Dialect.priority`); a dialect with a second kind of
    file names that kind's tier here.
    """

    #: never detected by keys: the source names it (a Python script's own calls)
    NAMED_ONLY = 0
    #: plain ``TrainingArguments`` keys: every wrapper of the HF Trainer shares them
    HF_ARGUMENTS = 10
    #: a framework whose own keys sit beside the HF Trainer's
    WRAPPER = 20
    #: an FSDP options block on its own (``fsdp_config`` keys)
    FSDP_OPTIONS = 22
    #: a DeepSpeed JSON, or a recipe made only of components (``_component_`` blocks)
    COMPONENTS = 25
    #: a framework's FSDP file wrapping the HF Trainer's options (``{"fsdp": ..., "fsdp_config": ...}``)
    FSDP_WRAPPER = 28
    #: a framework with its own closed schema (its keys name nothing else)
    OWN_SCHEMA = 30


class Dialect:
    """Recognise a framework's files and map them onto :class:`TrainingConfig`.

    Subclasses set ``fields`` and implement :meth:`score`; the framework's
    :class:`~precheck.frameworks.base.Framework` binds ``name``, ``framework`` (the
    distribution whose version decides the semantics), ``traits`` and ``priority``.
    """

    #: the framework's one name (the user-facing dialect name)
    name = ""
    #: the distribution whose version decides the semantics
    framework = ""
    #: what the framework is like; stamped on every config this dialect reads
    traits: Traits = NO_TRAITS
    #: the detection tier of the framework's files (see :class:`Priority`)
    priority: int = 0
    fields: tuple[Field, ...] = ()
    #: the framework's precision switches, normalised name → key as the framework spells it
    flag_keys: tuple[tuple[str, str], ...] = ()
    #: every top-level key the framework reads (normalised); empty: not known, no unknown-key lint
    known_keys: frozenset[str] = frozenset()
    #: the framework refuses unknown keys (accelerate config, HfArgumentParser): every unknown
    #: key is reported; otherwise only one close to a known key (a likely typo)
    closed_keys: bool = False

    def normalise_key(self, key: str) -> str:
        return key

    def score(self, doc: Document) -> int:
        """How sure this dialect is that it owns ``doc`` (0: not at all)."""
        raise NotImplementedError

    def root(self, doc: Document) -> dict[str, Node]:
        """The mapping that holds the framework's keys (the whole document by default)."""
        return doc.mapping()

    def keys(self, doc: Document) -> set[str]:
        if type(self).normalise_key is Dialect.normalise_key:  # keys as written
            return set(self.root(doc))
        return {self.normalise_key(k) for k in self.root(doc)}

    def read(self, doc: Document, env: Mapping[str, str]) -> TrainingConfig:
        values: dict[str, Any] = {}
        quoted: list[Node] = []
        root = self.root(doc)
        normalise = self.normalise_key
        for spec in self.fields:
            for path in spec.paths:
                node = lookup(root, path, normalise)
                if node is None:
                    continue
                converted = spec.convert(node.value)
                if converted is not None:
                    values[spec.name] = Sourced(converted, origin_of(doc, node))
                    if (
                        spec.convert is to_bool
                        and isinstance(node.value, str)
                        and doc.format in ("yaml", "json", "toml")
                    ):
                        quoted.append(node)
                    break
        config = TrainingConfig(
            dialect=self.name,
            framework=self.framework,
            path=doc.path,
            traits=self.traits,
            env=run_env(doc, env),
            keys=_sourced_keys(doc, root),
            notes=list(doc.notes),
            flag_keys=dict(self.flag_keys),
            format=doc.format,
            **values,
        )
        self.finish(doc, config)
        config.notes.extend(self.unknown_keys(doc))
        if not self.converts_string_booleans:
            config.notes.extend(_quoted_boolean(node) for node in quoted)
        return config

    def unknown_keys(self, doc: Document) -> list[SourceNote]:
        """Notes for top-level keys the framework does not read, with a did-you-mean."""
        known, closed = self.known_keys, self.closed_keys
        if doc.script_keys is not None:  # a launched script's own schema decides
            if not doc.script_closed:
                return []
            known, closed = doc.script_keys, True
        if not known:
            return []
        notes = []
        # a framework that accepts any key (scripts add their own) is only told of likely
        # typos of the keys precheck reads; a strict one of every key it would refuse
        read = self._read_keys
        if not closed:
            candidates = self._read_candidates
        elif known is self.known_keys:
            candidates = self._known_candidates
        else:
            candidates = tuple(sorted(known))
        for key, node in self.root(doc).items():
            name = self.normalise_key(key)
            if name in known or (name in read and doc.script_keys is None):
                continue
            found = close_key(name, candidates)
            close = [found] if found is not None else []
            if not close and not closed:
                continue
            hint = f"; did you mean `{close[0]}`?" if close else ""
            line, column = node.anchor
            # a keyword argument in a Python script: the config class's __init__ refuses it
            ignores = "raises TypeError (an unexpected keyword argument)" if doc.format == "python" else self.ignores
            message = f"`{key}` is not a {self.name} key, so the framework {ignores}{hint}"
            if doc.script_keys is not None:
                message = (
                    f"`{key}` is not an option the launched script defines, so its argument parser stops "
                    f"with an error (argparse: `unrecognized arguments`; HfArgumentParser: `Some specified "
                    f"arguments are not used by the HfArgumentParser`){hint}"
                )
            notes.append(SourceNote("unknown-key", message, line, column, key))
        return notes

    @cached_property
    def _read_keys(self) -> frozenset[str]:
        """The top-level keys the field table reads."""
        return frozenset(p[0] for f in self.fields for p in f.paths)

    @cached_property
    def _read_candidates(self) -> tuple[str, ...]:
        return tuple(sorted(self._read_keys))

    @cached_property
    def _known_candidates(self) -> tuple[str, ...]:
        return tuple(sorted(self.known_keys))

    #: what the framework does with a key it does not know (for the unknown-key message)
    ignores = "ignores it"
    #: the framework converts "true"/"false" strings itself (argparse, pydantic): quoted
    #: booleans mean what they say, so they are not reported
    converts_string_booleans = False

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        """Hook for what a field table cannot say (derived values, nested blocks)."""

    def read_model_loading(self, doc: Document, config: TrainingConfig) -> None:
        """``load_in_4bit``/``load_in_8bit`` (QLoRA) and TRL's ``use_peft`` (LoRA or a full
        fine-tune), as HF-style configs and scripts spell them."""
        self.quantization_switches(doc, config, "")
        peft = self.node(doc, "use_peft")
        if peft is not None and to_bool(peft.value) is not None:
            self.put(config, "train_type", "lora" if to_bool(peft.value) else "full", doc, peft)

    def quantization_switches(self, doc: Document, config: TrainingConfig, prefix: str) -> None:
        """``load_in_4bit``/``load_in_8bit`` under ``prefix``: the one set is the quantization;
        the other, written off beside it (``load_in_4bit=True, load_in_8bit=False``), is cited
        too (bitsandbytes refuses both on: both decide which one it is)."""
        nodes = {bits: self.node(doc, f"{prefix}load_in_{bits}bit") for bits in (4, 8)}
        off = [node for node in nodes.values() if node is not None and to_bool(node.value) is False]
        if off and not any(node is not None and to_bool(node.value) for node in nodes.values()):
            self.put(config, "quantization_off", True, doc, off[0])  # (`load_in_4bit=False`: not quantized)
            if len(off) > 1 and config.quantization_off is not None:
                turned = config.quantization_off
                config.quantization_off = Sourced(True, turned.origin.with_through(origin_of(doc, off[1]).places))
        for bits, node in nodes.items():
            if node is None or not to_bool(node.value):
                continue
            self.put(config, "quantization_bits", bits, doc, node)
            other = nodes[12 - bits]
            if other is not None and to_bool(other.value) is False and config.quantization_bits is not None:
                item = config.quantization_bits
                also = origin_of(doc, other)
                config.quantization_bits = Sourced(item.value, item.origin.with_through(also.places))

    def node(self, doc: Document, path: str) -> Node | None:
        """The node at a dotted key path, keys compared after :meth:`normalise_key`."""
        return lookup(self.root(doc), tuple(path.split(".")), self.normalise_key)

    def put(self, config: TrainingConfig, name: str, value: Any, doc: Document, node: Node) -> None:
        """Set a normalised field from a node the field table could not map."""
        setattr(config, name, Sourced(value, origin_of(doc, node)))


#: how close a key must be to a known one to be named as its likely intent
CLOSE = 0.75


@lru_cache(maxsize=256)
def close_key(word: str, candidates: tuple[str, ...]) -> str | None:
    """``difflib.get_close_matches(word, candidates, n=1, cutoff=CLOSE)``'s one answer, or None.
    Remembered (a bounded cache): the same unknown keys recur over a project's files, and the
    answer depends on the word and the candidates alone.

    get_close_matches passes over each candidate whose ``real_quick_ratio`` (an upper bound
    from the two lengths alone) is under the cutoff; it is asked only about the others, the
    candidates of the lengths that can reach it (its answer does not depend on their order:
    the best score wins, a tie the greater string). difflib loads on the first unknown key."""
    import difflib

    near = [c for length, group in _by_length(candidates) if _reaches(len(word), length) for c in group]
    found = difflib.get_close_matches(word, near, n=1, cutoff=CLOSE) if near else []
    return found[0] if found else None


def _reaches(a: int, b: int) -> bool:
    """``SequenceMatcher.real_quick_ratio() >= CLOSE`` for strings of lengths ``a`` and ``b``."""
    return (2.0 * min(a, b) / (a + b) if a + b else 1.0) >= CLOSE


@lru_cache(maxsize=64)
def _by_length(candidates: tuple[str, ...]) -> tuple[tuple[int, tuple[str, ...]], ...]:
    groups: dict[int, list[str]] = {}
    for candidate in candidates:
        groups.setdefault(len(candidate), []).append(candidate)
    return tuple((length, tuple(group)) for length, group in groups.items())


def run_env(doc: Document, env: Mapping[str, str]) -> dict[str, Sourced[str]]:
    """The variables of :data:`RUN_ENV` the run sees: the shell's, then the file's own."""
    out = {name: Sourced(env[name], Origin.env(name)) for name in RUN_ENV if name in env}
    for name, node in doc.env.items():
        if name in RUN_ENV and node.value is not None:
            value = str(node.value).lower() if isinstance(node.value, bool) else str(node.value)
            out[name] = Sourced(value, origin_of(doc, node))
    return out


def looks_like_path(value: Any) -> bool:
    """A value naming a file (``ds.json``, ``configs/fsdp.yaml``), not a built-in preset name."""
    if not isinstance(value, str) or not value.strip():
        return False
    text = value.strip()
    return "/" in text or "\\" in text or text.lower().endswith((".json", ".yaml", ".yml", ".toml"))


def read_attachments(
    dialect: Dialect, doc: Document, config: TrainingConfig, env: Mapping[str, str], keys: Mapping[str, str]
) -> None:
    """For each ``key → role``: a path becomes a reference the engine follows; an inline
    mapping (``deepspeed: {...}``) is read at once by the role's dialect."""
    from . import registered  # the registry's table (the registry imports every dialect module)

    by_name = registered.by_name
    for key, role in keys.items():
        node = dialect.node(doc, key)
        if node is None:
            continue
        if isinstance(node.value, dict) and role in by_name:
            inline = Document(doc.path, doc.format, node, doc.text)
            config.attached[role] = by_name[role].read(inline, env)
        elif looks_like_path(node.value):
            config.references[role] = Sourced(str(node.value).strip(), origin_of(doc, node))


def _quoted_boolean(node: Node) -> SourceNote:
    line, column = node.anchor
    text = str(node.value)
    return SourceNote(
        "quoted-boolean",
        f'`{node.key}: "{text}"` is the string {text!r}, not a boolean: parsers that pass it '
        f"through unconverted (HfArgumentParser.parse_yaml_file/parse_json_file) treat any non-empty string "
        f"as true, so {text!r} can switch the setting on",
        line,
        column,
        node.key,
    )


def count_keys(keys: Iterable[str], wanted: Iterable[str]) -> int:
    present = set(keys)
    return sum(1 for k in wanted if k in present)
