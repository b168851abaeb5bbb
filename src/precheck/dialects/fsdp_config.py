"""FSDP config files of the HF Trainer: ``fsdp_config: fsdp.json``, or a framework's ``--fsdp fsdp.json``.

Two shapes:

- a bare ``fsdp_config`` (transformers ``TrainingArguments(fsdp_config="fsdp.json")``): the JSON
  holds the settings themselves (``{"fsdp_version": 2, "reshard_after_forward": true, ...}``);
- a framework's wrapper of them (``... sft --fsdp fsdp2.json``; ``SftArguments._init_fsdp``
  in 4.x of the framework whose origin text names it): ``{"fsdp": "full_shard auto_wrap",
  "fsdp_config": {...}}`` — the ``fsdp`` options (default ``'full_shard auto_wrap'``) and the
  ``fsdp_config`` dict become the TrainingArguments of the same names; it also exports ``FSDP_VERSION`` from
  ``fsdp_config['fsdp_version']`` (default 2) and sets ``ACCELERATE_USE_FSDP``.

transformers 5.23.0 ``TrainingArguments._process_fsdp_args`` (only when ``fsdp`` is on: "if not
self.fsdp: return None"): a ``str`` ``fsdp_config`` is opened with ``json.load`` (JSON only,
even for a ``.yaml`` name); every ``fsdp_``-prefixed key loses the prefix; the ``fsdp`` option
string is translated by ``_apply_legacy_fsdp_to_config`` with ``setdefault`` (an explicit
``fsdp_config`` value wins): ``full_shard``/``shard_grad_op`` → ``reshard_after_forward``
True/False for FSDP2 (other strategies raise "`fsdp=hybrid_shard` is only available with
FSDP1..."), the strategy name for FSDP1; ``offload`` → ``cpu_offload``. Keys read: ``version``
(default 2), ``cpu_offload``, ``auto_wrap_policy``, ``transformer_layer_cls_to_wrap``,
``min_num_params``, ``cpu_ram_efficient_loading``, ``state_dict_type``,
``activation_checkpointing``, ``reshard_after_forward``; FSDP1 also ``forward_prefetch``,
``backward_prefetch``, ``use_orig_params``, ``sync_module_states``, ``limit_all_gathers``;
``xla*``. There is NO mixed-precision key: the Trainer passes ``mixed_precision`` (from
``bf16``/``fp16``) to ``Accelerator``, whose ``FullyShardedDataParallelPlugin.set_mixed_precision``
builds the policy (see :mod:`precheck.resolve.fsdp`). accelerate-config spellings that
transformers ignores (``offload_params``, ``sharding_strategy``,
``transformer_cls_names_to_wrap``, policy dtypes) get an unknown-key note naming the key it reads.

Versions (pip wheels read): ``version`` defaults to 1 up to 5.9.0 and to 2 from 5.11.0
(5.10.x not checked); ``cpu_offload`` in ``fsdp_config`` is read from 5.11.0 (before: only the
``offload`` option); 4.57.6 reads no ``version`` (the plugin's ``FSDP_VERSION``, default 1).
"""

from __future__ import annotations

from typing import Any

from ..config import TrainingConfig
from ..provenance import Origin, Sourced
from ..sources import Document, Node, SourceNote
from ..traits import Traits
from .base import Dialect, Priority, to_bool, to_str

#: the ``fsdp_config`` keys transformers 5.23.0 reads (after removing ``fsdp_``)
HF_FSDP_KEYS = frozenset(
    (
        "version",
        "reshard_after_forward",
        "cpu_offload",
        "activation_checkpointing",
        "cpu_ram_efficient_loading",
        "state_dict_type",
        "auto_wrap_policy",
        "transformer_layer_cls_to_wrap",
        "min_num_params",
        "forward_prefetch",
        "backward_prefetch",
        "use_orig_params",
        "sync_module_states",
        "limit_all_gathers",
        "xla",
        "xla_fsdp_settings",
        "xla_fsdp_v2",
        "xla_fsdp_grad_ckpt",
    )
)

#: accelerate-config / FullyShardedDataParallelPlugin spellings transformers does not read → advice
IGNORED_SPELLINGS = {
    "offload_params": "`cpu_offload: true` (transformers>=5.11) or `offload` in the `fsdp` options",
    "sharding_strategy": "`reshard_after_forward` (true: full shard, false: shard_grad_op) or a strategy in the "
    "`fsdp` options",
    "transformer_cls_names_to_wrap": "`transformer_layer_cls_to_wrap`",
    "mixed_precision": "nothing here: the FSDP policy follows the run's `bf16`/`fp16`",
    "mixed_precision_policy": "nothing here: the FSDP policy follows the run's `bf16`/`fp16`",
    "param_dtype": "nothing here: the FSDP policy follows the run's `bf16`/`fp16`",
    "reduce_dtype": "nothing here: the FSDP policy follows the run's `bf16`/`fp16`",
    "buffer_dtype": "nothing here: the FSDP policy follows the run's `bf16`/`fp16`",
}

#: keys the wrapping framework's own FSDP code reads from ``fsdp_config`` besides transformers' (examples)
WRAPPER_KEYS = frozenset(("activation_cpu_offload",))

FSDP_OPTIONS = ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2", "no_shard", "offload", "auto_wrap")
STRATEGIES = ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2", "no_shard")


def _name(key: str) -> str:
    return key[5:] if key.startswith("fsdp_") else key


class FsdpConfig(Dialect):
    name = "fsdp"
    framework = "fsdp"
    traits = Traits(component=True)
    flag_keys = ()

    def score(self, doc: Document) -> int:
        root = self.root(doc)
        keys = [k for k in root if not k.startswith("_")]
        block = root.get("fsdp_config")
        if block is not None and isinstance(block.value, dict) and set(keys) <= {"fsdp", "fsdp_config"}:
            return Priority.FSDP_WRAPPER  # a framework's wrapper of the HF Trainer's options
        names = {_name(k) for k in keys}
        known = names & HF_FSDP_KEYS
        if len(known) >= 2 and names <= HF_FSDP_KEYS | IGNORED_SPELLINGS.keys() | WRAPPER_KEYS:
            return self.priority  # a bare fsdp_config
        return 0

    def settings(self, doc: Document) -> tuple[dict[str, Node], str]:
        """The ``fsdp_config`` entries and the dotted prefix of their key paths."""
        root = self.root(doc)
        block = root.get("fsdp_config")
        if block is not None and isinstance(block.value, dict):
            return block.value, "fsdp_config."
        return root, ""

    def finish(self, doc: Document, config: TrainingConfig) -> None:
        entries, prefix = self.settings(doc)
        by_name = {_name(k): (f"{prefix}{k}", n) for k, n in entries.items()}
        options = self.node(doc, "fsdp") if prefix else None
        tokens = _options(options.value) if options is not None else None
        if options is not None and tokens is not None:
            self._put(config, "fsdp", bool(tokens), doc, options, "fsdp")
        elif prefix:
            # the wrapper: fsdp_config_dict.get('fsdp', 'full_shard auto_wrap')
            config.fsdp = Sourced(True, Origin.default("ms-swift default fsdp options 'full_shard auto_wrap'"))
            tokens = ["full_shard", "auto_wrap"]
        version_entry = by_name.get("version")
        version = 2
        if version_entry is not None and str(version_entry[1].value).strip() in ("1", "2"):
            version = int(str(version_entry[1].value).strip())
        reshard = by_name.get("reshard_after_forward")
        strategy = next((t for t in tokens or () if t in STRATEGIES), None)
        if reshard is not None and version == 2 and to_bool(reshard[1].value) is not None:
            sharding = "full_shard" if to_bool(reshard[1].value) else "shard_grad_op"
            self._put(config, "fsdp_sharding", sharding, doc, reshard[1], reshard[0])
        elif reshard is not None and version == 1 and to_str(reshard[1].value) is not None:
            self._put(config, "fsdp_sharding", str(reshard[1].value).lower(), doc, reshard[1], reshard[0])
        elif strategy is not None and options is not None:
            self._put(config, "fsdp_sharding", strategy, doc, options, "fsdp")
        offload = by_name.get("cpu_offload")
        if offload is not None and to_bool(offload[1].value) is not None:
            self._put(
                config, "offload_param", "cpu" if to_bool(offload[1].value) else "none", doc, offload[1], offload[0]
            )
        elif tokens and "offload" in tokens and options is not None:
            self._put(config, "offload_param", "cpu", doc, options, "fsdp")
        checkpointing = by_name.get("activation_checkpointing")
        if checkpointing is not None and to_bool(checkpointing[1].value) is not None:
            self._put(
                config,
                "gradient_checkpointing",
                bool(to_bool(checkpointing[1].value)),
                doc,
                checkpointing[1],
                checkpointing[0],
            )
        config.notes.extend(_ignored(entries, prefix))

    def _put(self, config: TrainingConfig, name: str, value: Any, doc: Document, node: Node, path: str) -> None:
        line, column = node.anchor
        setattr(config, name, Sourced(value, Origin("file", doc.path, line, column, path, format=doc.format)))


def _options(value: Any) -> list[str] | None:
    """The ``fsdp`` options: a string of words, a list, or a bool (5.x ``fsdp=True``)."""
    if isinstance(value, bool):
        return ["full_shard"] if value else []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(item.value if isinstance(item, Node) else item) for item in value]
    return None


def _ignored(entries: dict[str, Node], prefix: str) -> list[SourceNote]:
    notes = []
    for key, node in entries.items():
        advice = IGNORED_SPELLINGS.get(_name(key))
        if advice is None:
            continue
        line, column = node.anchor
        notes.append(
            SourceNote(
                "unknown-key",
                f"`{key}` is not a transformers fsdp_config key (it is accelerate's spelling), so the Trainer "
                f"ignores it: TrainingArguments._process_fsdp_args never reads it; use {advice}",
                line,
                column,
                f"{prefix}{key}",
            )
        )
    return notes


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.plain() if isinstance(value, Node) else value


def fsdp_entries(config: TrainingConfig) -> dict[str, Sourced[Any]]:
    """An FSDP config's settings by transformers' name (``fsdp_`` removed), values as written."""
    block = config.keys.get("fsdp_config")
    out: dict[str, Sourced[Any]] = {}
    if block is not None and isinstance(block.value, dict):
        for key, node in block.value.items():
            line, column = node.anchor
            at = Origin("file", config.path, line, column, f"fsdp_config.{key}", format=config.format or None)
            out[_name(key)] = Sourced(node.plain(), at)
        return out
    for key, item in config.keys.items():
        if not key.startswith("_"):
            out[_name(key)] = Sourced(_plain(item.value), item.origin)
    return out


__all__ = ["FSDP_OPTIONS", "HF_FSDP_KEYS", "FsdpConfig", "fsdp_entries"]
