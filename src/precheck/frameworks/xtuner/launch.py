"""xtuner's command line: ``xtuner train CONFIG [--deepspeed NAME|FILE] [...]`` (and
``python xtuner/tools/train.py CONFIG ...``), as ``xtuner/tools/train.py``@0.2.0 reads it.

- ``CONFIG`` is an mmengine Python config (read by :mod:`precheck.sources.mmengine_config`);
  a bare name is one of xtuner's own configs (``cfgs_name_path``, ``xtuner/configs/__init__.py:5-19``),
  which is not in the repository checked: such a launch is not read.
- ``--deepspeed`` names a DeepSpeed JSON, a file when ``osp.isfile`` says so, else one of the
  files xtuner bundles by name (``deepspeed_zero1``, ``deepspeed_zero2``,
  ``deepspeed_zero2_offload``, ``deepspeed_zero3``, ``deepspeed_zero3_offload``:
  ``train.py:296-301``@0.2.0; copies of ``xtuner/configs/deepspeed/*.json``@0.2.0, unchanged
  from 0.1.23 to 1.0.1, in ``precheck/data/xtuner/``). The config's ``optim_wrapper`` is
  then replaced by a ``DeepSpeedOptimWrapper`` (``train.py:367-370``): the DeepSpeed file,
  its ``"auto"`` dtypes filled by ``auto_dtype_of_deepspeed_config`` (``tools/utils.py:157-175``),
  decides the precision (:mod:`.resolve`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ...config import TrainingConfig
from ...sources.launch_args import Field, locate, shown, with_path
from ...sources.launchers import Entry, Found, Launch, ModuleEntry
from ...sources.nodes import Node

#: the DeepSpeed files xtuner bundles, by the name ``--deepspeed`` takes
BUNDLED = (
    "deepspeed_zero1",
    "deepspeed_zero2",
    "deepspeed_zero2_offload",
    "deepspeed_zero3",
    "deepspeed_zero3_offload",
)
#: where precheck keeps their copies
DATA = Path(__file__).resolve().parents[2] / "data" / "xtuner"
#: ``train.py``'s options that take a value (``parse_args``@0.2.0)
VALUED = frozenset({"--work-dir", "--deepspeed", "--resume", "--seed", "--launcher", "--cfg-options", "--local_rank"})


def bundled(name: str) -> dict[str, Node] | None:
    """The mapping of one of xtuner's bundled DeepSpeed files, each node marked as read from
    ``xtuner/configs/deepspeed/NAME.json``; None for any other name."""
    if name not in BUNDLED:
        return None
    from ...sources.reading import parse  # lazily, as the launch readers do

    text = (DATA / f"{name}.json").read_text(encoding="utf-8")
    document = parse(f"<xtuner>/configs/deepspeed/{name}.json", text, "json")
    root = document.mapping()
    for node in root.values():
        with_path(node, document.path)
    return dict(root)


def with_deepspeed(config: TrainingConfig) -> TrainingConfig:
    """``config`` as ``xtuner train CONFIG --deepspeed deepspeed_zero2`` runs it (the launch its
    README gives): the run a config checked on its own may be, whose precision the DeepSpeed
    file decides instead of the ``AmpOptimWrapper`` (:func:`precheck.premises.premises`). Its
    ZeRO stage and offload are left unknown: the bundled files differ there and the launch
    picks one (``deepspeed_zero3`` in the 70B/100B configs' READMEs)."""
    from ...dialects import registered  # the registry's table (the registry imports this module)
    from ...sources.nodes import Document

    root = bundled("deepspeed_zero2")
    assert root is not None
    name = "<xtuner>/configs/deepspeed/deepspeed_zero2.json"
    text = (DATA / "deepspeed_zero2.json").read_text(encoding="utf-8")
    deepspeed = registered.by_name["deepspeed"].read(Document(name, "json", Node(root, 1, 1), text), {})
    # the README's file stands for whichever the launch names: every bundled file has the same
    # `"auto"` fp16/bf16, but their ZeRO stage and offload differ (70B configs are run with
    # deepspeed_zero3): those are the launch's, not known here
    deepspeed = replace(deepspeed, zero_stage=None, offload_optimizer=None, offload_param=None)
    return replace(config, attached={**config.attached, "deepspeed": deepspeed})


def _config(launch: Launch, value: Field) -> dict[str, Node] | None:
    """The mmengine config a launch names, or None (a bundled name, a file not there: noted)."""
    if not value.text.endswith(".py"):
        return None  # one of xtuner's own configs by name: not in the repository checked
    target = locate(value.text, launch.bases)
    if target is None:
        return launch.load(value, "config")  # notes the missing file
    from ...sources.mmengine_config import config_document
    from ...sources.reading import read_text

    name = shown(target)
    document = config_document(name, read_text(target, name))
    if document is None:
        return None
    root = document.mapping()
    for node in root.values():
        with_path(node, name)
    return dict(root)


def _deepspeed(launch: Launch, flag: Field, value: Field) -> Node | None:
    """``--deepspeed VALUE`` as the node of its DeepSpeed settings (a file first, as
    ``osp.isfile`` does, then a bundled name)."""
    if value.text.lower().endswith(".json") or "/" in value.text:
        found = launch.load(value, "deepspeed")
    else:
        found = bundled(value.text)
        if found is None:
            launch.builder.note(
                "missing-reference",
                f"`--deepspeed {value.text}` is neither a file nor one of xtuner's bundled DeepSpeed configs "
                f"({', '.join(BUNDLED)}): xtuner raises FileNotFoundError",
                value.offset(),
                "deepspeed",
            )
    if found is None:
        return None
    line, column = launch.builder.where(flag.offset())
    return Node(found, line, column, "deepspeed", line, column)


def command(launch: Launch, args: list[Field] | None = None) -> Found | None:
    words = list(launch.args if args is None else args)
    positional: list[Field] = []
    deepspeed: tuple[Field, Field] | None = None
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, _ = word.text.partition("=")
        if word.looks_like_option():
            if name == "--deepspeed":
                value = word.tail(len(name) + 1) if eq else (words[i + 1] if i + 1 < len(words) else None)
                deepspeed = (word, value) if value is not None else None
            if name == "--cfg-options" and not eq:  # nargs="+": key=value words up to the next option
                i += 1
                while i < len(words) and not words[i].looks_like_option():
                    i += 1
                continue
            i += 2 if name in VALUED and not eq else 1
            continue
        positional.append(word)
        i += 1
    if not positional:
        return None
    root = _config(launch, positional[0])
    if root is None:
        return None
    if deepspeed is not None:
        node = _deepspeed(launch, *deepspeed)
        if node is not None:
            root["deepspeed"] = node
    return Found(None, root)


def _module(launch: Launch, args: list[Field]) -> Found | None:
    return command(launch, args)


#: ``xtuner train ...`` (``xtuner/entry_point.py``: ``train`` runs ``tools/train.py``)
ENTRIES: tuple[Entry, ...] = (Entry(("xtuner", "train"), command),)
#: ``python xtuner/tools/train.py ...``, ``torchrun xtuner/tools/train.py ...``
MODULES: tuple[ModuleEntry, ...] = (ModuleEntry(re.compile(r"(^|\.)xtuner\.tools\.train$"), _module),)
