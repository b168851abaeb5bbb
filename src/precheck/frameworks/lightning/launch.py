"""The command-line variant's command line: ``... finetune_lora|finetune|finetune_full|finetune_adapter[_v2]|pretrain``
and ``... finetune lora|qlora|full|...`` (``__main__.py``: jsonargparse; ``-c/--config`` is
applied where it stands, the first positional is ``checkpoint_dir``, or ``model_name`` for
``pretrain``).

The command that ran is left as an ``entry-point`` note (its key: the release schema's command
name, ``finetune_lora``), for the rules that read the entry point's options from the release
data (:mod:`precheck.release_schemas`)."""

from __future__ import annotations

from ...sources.launch_args import put
from ...sources.launchers import Entry, Found, Launch, ModuleEntry
from ...sources.nodes import Node
from .modes import ENTRY_NOTE, GPT_PROGRAM

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


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = tuple(Entry((GPT_PROGRAM, sub), command) for sub in sorted(COMMANDS))
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = ()
