"""The command-line variant's command line: ``... finetune_lora|finetune|finetune_full|finetune_adapter[_v2]|pretrain``
and ``... finetune lora|qlora|full|...`` (``__main__.py``: jsonargparse; ``-c/--config`` is
applied where it stands, the first positional is ``checkpoint_dir``, or ``model_name`` for
``pretrain``).

The command that ran is left as an ``entry-point`` note (its key: the release schema's command
name, ``finetune_lora``), for the rules that read the entry point's options from the release
data (:mod:`precheck.release_schemas`)."""

from __future__ import annotations

import re
from dataclasses import replace

from ...sources.launch_args import Field, put
from ...sources.launchers import Entry, Found, Launch, ModuleEntry
from ...sources.nodes import Node
from .modes import ENTRY_NOTE, GPT_PROGRAM, NEMO2_PRECISION_PLUGINS, NEMO_PROGRAM

#: the training commands (every release's in the schema data: ``tests/test_release_schemas.py`` checks)
COMMANDS = {
    *("finetune", "finetune_lora", "finetune_lora_legacy", "finetune_full", "finetune_adapter"),
    *("finetune_adapter_v2", "pretrain"),
}

METHODS = {"lora", "qlora", "full", "adapter", "adapter_v2"}


def command(launch: Launch) -> Found | None:
    builder = launch.builder
    root: dict[str, Node] = {}
    args = list(launch.args)
    command = launch.head[-1].text
    entry = command
    if command == "finetune" and args and args[0].text in METHODS:
        method = args.pop(0)
        entry = "finetune_" + ("lora" if method.text == "qlora" else method.text)
        if method.text == "qlora":  # __main__: CLI defaults of ``finetune qlora``
            line, column = builder.where(method.offset())
            root["quantize"] = Node("bnb.nf4-dq", line, column, "qlora", line, column)
            root["precision"] = Node("bf16-true", line, column, "qlora", line, column)
    positional = "model_name" if command == "pretrain" else "checkpoint_dir"
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.looks_like_option():
            if positional not in root:
                node = builder.value(arg, positional, arg, "yaml")
                if node is not None:
                    node.key_line = node.key_column = None
                    node.key = positional
                    root[positional] = node
            i += 1
            continue
        name, eq, _ = arg.text.lstrip("-").partition("=")
        value = arg.tail(len(arg.text) - len(arg.text.lstrip("-")) + len(name) + 1) if eq else None
        step = 1
        if value is None and i + 1 < len(args) and not args[i + 1].looks_like_option():
            value, step = args[i + 1], 2
        if name in ("c", "config") and value is not None:
            for key, node in (launch.load(value, arg.text) or {}).items():
                root[key] = node  # jsonargparse: the file's values replace what came before it
        else:
            node = builder.value(arg, arg.text.partition("=")[0], value, "yaml")
            if node is not None:
                put(builder, root, name.replace("-", "_"), node, arg.offset(), "jsonargparse keeps the last value")
        i += step
    builder.note(ENTRY_NOTE, f"`{GPT_PROGRAM} {entry}`", launch.head[-1].offset(), entry)
    return Found(None, root)


#: the Megatron variant's 2.x CLI (``NEMO_PROGRAM llm pretrain|finetune``: ``pretrain``/``finetune`` are
#: ``@run.cli.entrypoint(namespace="llm")``, ``collections/llm/api.py:141``/``:192``, nemo_toolkit main@8cfedd7)
NEMO_COMMANDS = ("finetune", "pretrain")
#: the recipe factories that build no precision plugin (``hf_auto_model_for_causal_lm.py:109-120``)
_NO_PLUGIN = re.compile(r"^hf_auto_model")
_FACTORY_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\(.*\))?\s*$", re.S)


def nemo_command(launch: Launch) -> Found | None:
    """``NEMO_PROGRAM llm finetune|pretrain --factory RECIPE [KEY=VALUE ...]``: the recipe the factory names
    (``@run.cli.factory(target=finetune, name=NAME)`` on ``finetune_recipe``, ``llama3_8b.py:244``),
    whose trainer takes ``plugins=bf16_mixed()`` (``finetune_default.py:145``, ``llama3_8b.py:138``),
    changed by the overrides nemo_run applies after it: ``trainer.plugins=fp16_mixed`` (a factory
    by its name: ``mixed_precision.py:22``/``:39`` are ``@run.cli.factory``) and
    ``trainer.plugins.precision=...``. None without a factory (the run's parts are given one by one)."""
    builder = launch.builder
    args = list(launch.args)
    factory: Node | None = None
    plugin: tuple[str, Field] | None = None
    precision: tuple[str, Field] | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        text = arg.text
        if text in ("--factory", "-f") and i + 1 < len(args):
            name = _FACTORY_CALL.match(args[i + 1].text)
            if name is not None:
                factory = builder.value(arg, "factory", args[i + 1], "yaml")
                if factory is not None:
                    factory.value = name.group(1)
            i += 2
            continue
        if text.startswith(("--factory=", "-f=")):
            name = _FACTORY_CALL.match(text.partition("=")[2])
            if name is not None:
                factory = builder.value(arg, "factory", arg.tail(text.index("=") + 1), "yaml")
                if factory is not None:
                    factory.value = name.group(1)
        key, eq, value = text.partition("=")
        if eq and key.lstrip("-") in ("trainer.plugins", "trainer.plugins.precision"):
            found = (value.strip("'\""), arg.tail(len(key) + 1))
            if key.lstrip("-") == "trainer.plugins":
                plugin, precision = found, None
            else:
                precision = found
        i += 1
    if factory is None or not isinstance(factory.value, str) or _NO_PLUGIN.match(factory.value):
        return None
    chosen: Node | None = None
    if precision is not None:
        chosen = builder.value(None, "trainer.plugins.precision", precision[1], "yaml")
        if chosen is not None:
            chosen.value = precision[0]
    elif plugin is not None:
        implied = dict(NEMO2_PRECISION_PLUGINS).get(_FACTORY_CALL.sub(r"\1", plugin[0]))
        if implied is None:
            return None  # a plugin precheck does not know the precision of: the run is not read
        chosen = builder.value(None, "trainer.plugins", plugin[1], "yaml")
        if chosen is not None:
            chosen.value = implied
    else:  # the recipe's own plugin, cited at the factory that builds it
        chosen = replace(factory, value="bf16-mixed", raw=None, key="trainer.plugins")
    if chosen is None:
        return None
    # the trainer's MegatronMixedPrecision plugin (read as the dialect reads a `_target_` block)
    target = replace(chosen, value="MegatronMixedPrecision", raw=None, key="_target_")
    # (its precision keyed as the override that changes it: a fix says `trainer.plugins.precision=...`)
    block = {"_target_": target, "precision": replace(chosen, key="trainer.plugins.precision")}
    plugins = replace(chosen, value=block, raw=None, key="plugins")
    return Found(None, {"trainer": replace(chosen, value={"plugins": plugins}, raw=None, key="trainer")})


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = (
    *(Entry((GPT_PROGRAM, sub), command) for sub in sorted(COMMANDS)),
    *(Entry((NEMO_PROGRAM, "llm", sub), nemo_command) for sub in NEMO_COMMANDS),
)
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = ()
