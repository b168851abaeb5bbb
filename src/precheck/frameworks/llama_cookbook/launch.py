"""This framework's entry: ``python -m`` its ``finetuning`` module, or the cookbook's wrapper
script (``getting-started/finetuning/finetuning.py``, formerly
``recipes/quickstart/finetuning/finetuning.py``), which calls ``finetuning.main`` through
python-fire: ``--key value`` flags typed as Python literals."""

from __future__ import annotations

import re

from ...sources.launch_args import Field, flag_mapping, split_options
from ...sources.launchers import Entry, Found, Launch, ModuleEntry


def module(launch: Launch, args: list[Field]) -> Found | None:
    parsed = split_options(args, greedy=False)
    return Found(None, flag_mapping(launch.builder, parsed.options, "python"))


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = ()
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = (
    ModuleEntry(
        re.compile(r"(^|\.)(llama_recipes|llama_cookbook)\.finetuning$|recipes\.finetuning$|finetuning\.finetuning$"),
        module,
    ),
)
