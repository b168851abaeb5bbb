"""This framework's entry modules read their flags with ``argparse`` (``cli/train_sft.py``
``parser.add_argument("--ds.zero_stage", type=int, default=2)``, ``action="store_true"``
switches), then ``utils/config.py`` ``hierarchize`` nests the dotted names
(``args.ds.zero_stage``): a dotted flag is a nested key here too."""

from __future__ import annotations

import re

from ...sources.launch_args import Field, flag_mapping, split_options
from ...sources.launchers import Entry, Found, Launch, ModuleEntry


def module(launch: Launch, args: list[Field]) -> Found | None:
    parsed = split_options(args)
    return Found(None, flag_mapping(launch.builder, parsed.options, "hf"))


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = ()
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = (ModuleEntry(re.compile(r"(^|\.)openrlhf\.cli\.train_(sft|dpo|rm)$"), module),)
