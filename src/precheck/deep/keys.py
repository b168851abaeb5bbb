"""``--deep``: a TrainingArguments / TRL file's keys against the *installed* dataclasses.

transformers reads these files with ``HfArgumentParser.parse_yaml_file``/``parse_json_file``
(``hf_argparser.py``), whose ``parse_dict`` ends with::

    if not allow_extra_keys and unused_keys:
        raise ValueError(f"Some keys are not used by the HfArgumentParser: {sorted(unused_keys)}")

and code that builds ``TrainingArguments(**kwargs)`` gets Python's dataclass error,
``TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'KEY'``. So
what counts is the field set of the ``TrainingArguments`` (and ``Seq2SeqTrainingArguments``)
the run imports, and of TRL's ``*Config`` / ``ModelConfig`` / ``ScriptArguments`` where TRL
is installed. Each top-level key gets one verdict:

- a field of the installed dataclasses whose help says it is deprecated → PC922, with the
  replacement the help names (transformers 5.23.0: ``gradient_checkpointing`` is a
  "Deprecated alias of `activation_checkpointing`, will be removed in v6.");
- a field of other releases only (:mod:`precheck.deep.history`) → PC920, with the release
  that removed (or added) it and what replaces it; with TRL installed, the same for TRL's
  ``ModelConfig`` (``torch_dtype``, removed in trl 0.27.0; TRL's ``TrlParser`` refuses it with
  ``ValueError: Unknown arguments from config file: [...]``, ``trl/scripts/utils.py``);
- no field anywhere but a likely misspelling of one (:func:`typo_of`) → PC921, did-you-mean;
- anything else is a script's own argument (model, data keys) and is left alone.

The deep verdict replaces the static ``unknown-key`` notes (PC905) of the same file: the
installed library knows its own fields better than precheck's list.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from collections.abc import Mapping
from functools import lru_cache

from ..config import TrainingConfig
from ..facts import quote
from ..frameworks import BY_NAME
from ..frameworks.hf_trainer.dialect import MODEL_KEYS, TRL_FIELDS
from ..versions import Versions, allows, is_exact, version_key
from .history import TRAINING_ARGUMENTS, TRL_MODEL_CONFIG, KeyHistory, describe
from .notes import DEPRECATED_KEY, REMOVED_KEY, UNKNOWN_KEY, DeepNote

#: keys another rule already reports in full (PC204 half-precision-backend-removed)
COVERED = frozenset({"half_precision_backend"})

#: a help text that deprecates the field itself ("Deprecated alias of ...", "This argument is
#: deprecated ..."), not one of its values (TRL's truncation_mode: "The 'keep_end' value is deprecated")
_DEPRECATED = re.compile(r"^\W*(?:this (?:argument|parameter) is )?deprecated\b", re.IGNORECASE)
_INSTEAD = re.compile(r"alias of `-*(\w+)`|use `-*(\w+)` instead|`--(\w+)` is preferred", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class Schema:
    """The installed dataclasses' fields, name → help text."""

    transformers: str
    training_arguments: Mapping[str, str]
    trl: str | None = None
    trl_fields: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def help(self, key: str) -> str | None:
        if key in self.training_arguments:
            return self.training_arguments[key]
        return self.trl_fields.get(key)


def _fields(cls: type) -> dict[str, str]:
    return {f.name: str(f.metadata.get("help", "")) for f in dataclasses.fields(cls) if f.init}


@lru_cache(maxsize=1)
def installed_schema() -> Schema:
    """Read the fields from the installed transformers (and TRL, when installed)."""
    import transformers
    from transformers import Seq2SeqTrainingArguments

    trl_version, trl_fields = _trl_schema()
    return Schema(transformers.__version__, _fields(Seq2SeqTrainingArguments), trl_version, trl_fields)


def _trl_schema() -> tuple[str | None, dict[str, str]]:
    """Every TRL config dataclass (``SFTConfig``, ``DPOConfig``, ``GRPOConfig``..., ``ModelConfig``,
    ``ScriptArguments``): which trainer a file feeds is not written in it, so a key any of them
    has is a TRL key."""
    if importlib.util.find_spec("trl") is None:
        return None, {}
    import trl

    out: dict[str, str] = {}
    for name in sorted(dir(trl)):
        if not (name.endswith("Config") or name.endswith("Arguments")):
            continue
        try:
            cls = getattr(trl, name)
        except Exception:  # a config whose optional dependency is missing
            continue
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            out.update(_fields(cls))
    return str(getattr(trl, "__version__", "unknown")), out


def deprecation(help_text: str) -> tuple[str, str | None] | None:
    """(the help text, its replacement) when the field's help says it is deprecated."""
    if not _DEPRECATED.search(help_text):
        return None
    match = _INSTEAD.search(help_text)
    return help_text, next((g for g in match.groups() if g), None) if match else None


def _accepted_in(key: str, installed: str, table: dict[str, KeyHistory] = TRAINING_ARGUMENTS) -> bool | None:
    """Whether ``table`` says release ``installed`` has ``key`` (None: the table does not know)."""
    item = table.get(key)
    if item is None or (item.added is None and item.removed is None):
        return None
    version = version_key(installed)
    if item.added is not None and version < version_key(item.added):
        return False
    return not (item.removed is not None and version >= version_key(item.removed))


def check_keys(config: TrainingConfig, schema: Schema, versions: Versions | None = None) -> None:
    """Judge every top-level key of a TrainingArguments/TRL ``config``; add the notes to it."""
    if not config.traits.arguments_for_user_script:
        return
    pinned = _pin_note(schema, versions)
    known = {*schema.training_arguments, *schema.trl_fields}
    script_keys = _script_keys(config.dialect, schema)
    candidates = sorted(known)
    notes: list[DeepNote] = []
    for key, item in config.keys.items():
        if key in COVERED:
            continue
        origin = item.origin
        where = (origin.line or 1, origin.column or 1, key, origin.path if origin.path != config.path else None)
        help_text = schema.help(key)
        if help_text is not None:
            old = deprecation(help_text) or _trl_deprecation(key, schema)
            if old is not None:
                notes.append(_deprecated(key, old, schema, *where))
            continue
        if key in TRAINING_ARGUMENTS and _accepted_in(key, schema.transformers) is False:
            notes.append(_not_installed(key, schema, pinned, *where))
            continue
        if schema.trl and key in TRL_MODEL_CONFIG and _accepted_in(key, schema.trl, TRL_MODEL_CONFIG) is False:
            notes.append(_not_in_trl(key, item.value, schema, *where))
            continue
        if key in script_keys:
            continue
        close = typo_of(key, candidates)
        if close is not None:
            notes.append(_unknown(key, close, schema, *where))
    judged = set(config.keys)
    config.notes[:] = [n for n in config.notes if not (n.kind == "unknown-key" and n.key in judged)]
    config.notes.extend(notes)


def _script_keys(dialect_name: str, schema: Schema) -> frozenset[str]:
    """Keys the recipes put beside TrainingArguments (TRL ModelConfig / ScriptArguments, the
    keys the dialect reads): precheck's static list, where TRL is not installed to ask."""
    dialect = BY_NAME[dialect_name]
    read = {path[0] for spec in dialect.fields for path in spec.paths}
    static = frozenset(MODEL_KEYS) | read
    return static if schema.trl else static | frozenset(TRL_FIELDS)


def _normal(key: str) -> str:
    return key.lower().replace("_", "").replace("-", "")


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one inserted, deleted, replaced or swapped character; a
    replaced first letter of a word is a different word (``use_lora``, ``use_dora``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return diff[0] > 0 and a[diff[0] - 1] != "_"
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def typo_of(key: str, fields: list[str]) -> str | None:
    """The field ``key`` is a likely misspelling of, or None.

    Strict on purpose: the files also hold the script's own arguments (``dataset_mixture``,
    ``lora_rank``), which a loose did-you-mean would take for fields (``dataset_mixer``,
    ``local_rank``). A typo here is the same name but for case, ``_`` and ``-`` (``bf_16``);
    one character inserted, deleted, replaced within a word or swapped (``learning_rat``); or a field's
    name cut short by at most a fifth (``gradient_checkpoint``).
    """
    norm = _normal(key)
    for field in fields:
        if _normal(field) == norm or _one_edit(key, field):
            return field
    for field in fields:
        if len(key) >= 8 and field.startswith(key) and len(key) >= 0.8 * len(field):
            return field
    return None


def _where(schema: Schema) -> str:
    trl = f", nor of the installed TRL {schema.trl}'s configs" if schema.trl else ""
    return f"TrainingArguments of the installed transformers {schema.transformers}{trl}"


def _refusal(key: str) -> str:
    return (
        f'HfArgumentParser stops with "ValueError: {quote("transformers.unused_keys", keys=[key])}" '
        f'and TrainingArguments(...) with "TypeError: TrainingArguments.__init__() got an '
        f"unexpected keyword argument '{key}'\""
    )


def _not_installed(
    key: str, schema: Schema, pinned: str, line: int, column: int, name: str, path: str | None
) -> DeepNote:
    item = TRAINING_ARGUMENTS[key]
    history = describe(key)
    message = f"`{key}` is not a field of {_where(schema)} ({history}): {_refusal(key)}{pinned}"
    if item.added is not None and version_key(schema.transformers) < version_key(item.added):
        fix = f"upgrade transformers to {item.added} or later, or remove `{key}`"
    elif item.instead and not item.instead.startswith("nothing"):
        fix = f"replace `{key}` with {item.instead}"
    else:
        fix = f"remove `{key}`" + (f" ({item.instead})" if item.instead else "")
    return DeepNote(REMOVED_KEY, message, line, column, name, path, fix)


def _not_in_trl(
    key: str, value: object, schema: Schema, line: int, column: int, name: str, path: str | None
) -> DeepNote:
    item = TRL_MODEL_CONFIG[key]
    message = (
        f"`{key}` is not a field of the installed TRL {schema.trl}'s ModelConfig "
        f"({describe(key, TRL_MODEL_CONFIG)}): TrlParser stops with "
        f'"ValueError: {quote("trl.unknown_config_args", args=[f"--{key}", str(value)])}", HfArgumentParser with '
        f'"ValueError: {quote("transformers.unused_keys", keys=[key])}"'
    )
    if item.added is not None and version_key(str(schema.trl)) < version_key(item.added):
        fix = f"upgrade trl to {item.added} or later, or remove `{key}`"
    else:
        fix = f"replace `{key}` with {item.instead}" if item.instead else f"remove `{key}`"
    return DeepNote(REMOVED_KEY, message, line, column, name, path, fix)


def _unknown(key: str, close: str, schema: Schema, line: int, column: int, name: str, path: str | None) -> DeepNote:
    message = (
        f"`{key}` is not a field of {_where(schema)}, nor of any release since 4.40.0; did you mean `{close}`? "
        f"{_refusal(key)}; a script that parses with allow_extra_keys=True ignores it instead"
    )
    return DeepNote(UNKNOWN_KEY, message, line, column, name, path, f"rename `{key}` to `{close}`")


def _trl_deprecation(key: str, schema: Schema) -> tuple[str, str | None] | None:
    """A TRL field deprecated by a warning in ``__post_init__`` rather than in its help
    (``ModelConfig.torch_dtype`` from 0.23.0): the warning's text, and the replacement."""
    item = TRL_MODEL_CONFIG.get(key)
    if key in schema.training_arguments or not schema.trl or item is None or item.deprecated is None:
        return None
    if version_key(schema.trl) < version_key(item.deprecated) or not item.instead:
        return None
    warning = f"`{key}` is deprecated and will be removed in version {item.removed}, please use {item.instead} instead."
    return warning, item.instead.strip("`")


def _deprecated(
    key: str, old: tuple[str, str | None], schema: Schema, line: int, column: int, name: str, path: str | None
) -> DeepNote:
    help_text, instead = old
    owner = "transformers" if key in schema.training_arguments else "TRL"
    version = schema.transformers if owner == "transformers" else schema.trl
    table = TRAINING_ARGUMENTS if owner == "transformers" else TRL_MODEL_CONFIG
    since = table[key].deprecated if key in table else None
    when = f", since {since}" if since else ""
    message = (
        f'`{key}` is deprecated in the installed {owner} {version}{when}: "{help_text.strip()}" '
        "It still works, with a FutureWarning at start-up, until the release that removes it"
    )
    fix = f"rename `{key}` to `{instead}`" if instead else f"stop using `{key}`"
    return DeepNote(DEPRECATED_KEY, message, line, column, name, path, fix)


def _pin_note(schema: Schema, versions: Versions | None) -> str:
    """A caution when the run's files pin another transformers than the one installed here."""
    info = versions.get("transformers") if versions is not None else None
    if info is None or info.source == "installed":
        return ""
    if is_exact(info.version):
        if version_key(info.version) == version_key(schema.transformers):
            return ""
    elif allows(info.version, schema.transformers):  # a range the installed release lies in
        return ""
    return (
        f" (the run says transformers {info.version} ({info.source}); --deep asked the installed "
        f"{schema.transformers}: run it in the training environment)"
    )
