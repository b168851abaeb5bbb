"""This framework's command line (``cli/main.py`` of the package: the subcommand runs ``cli/sft.py``
/``rlhf.py``, through ``torchrun`` when ``NPROC_PER_NODE``/``NNODES`` is set;
``utils/utils.py`` ``parse_args``: ``HfArgumentParser``, or a ``.json`` first argument read
with ``parse_json_file``). The found run's dialect is bound by the framework's registration.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...sources.launch_args import Field, flag_mapping, split_options
from ...sources.launchers import CONFIG_SUFFIXES, Entry, Found, Launch, ModuleEntry
from ...sources.nodes import Node
from .label import ENTRY_MODULES, PROGRAM

#: the training subcommands
TRAINING = ("sft", "pt", "rlhf", "dpo", "orpo", "simpo")


def command(launch: Launch) -> Found | None:
    args = launch.args
    root: dict[str, Node] = {}
    if args and not args[0].looks_like_option() and args[0].text.lower().endswith(CONFIG_SUFFIXES):
        # ``<cli> sft args.json [--overrides]``: parse_args reads the file (3.x/4.x)
        root = launch.load(args[0], "config") or {}
        args = args[1:]
    parsed = split_options(args)
    flag_mapping(launch.builder, parsed.options, "hf", into=root)
    return Found(None, root)


def module(launch: Launch, args: list[Field]) -> Found | None:
    """``python -m`` the CLI's training module, with its own flags."""
    return command(replace(launch, args=args))


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = tuple(Entry((PROGRAM, sub), command) for sub in TRAINING)
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = (ModuleEntry(re.compile(ENTRY_MODULES), module),)
