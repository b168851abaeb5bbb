"""TRL's command line: ``trl sft|dpo|... [--config cfg.yaml] --flag value`` (``TrlParser``: the
YAML sets defaults the flags override), and its ``trl.scripts.*`` modules."""

from __future__ import annotations

import re

from ...sources.launch_args import Field, flag_mapping, split_options
from ...sources.launchers import Entry, Found, Launch, ModuleEntry, last_option, merged_config

#: the trainer subcommands
COMMANDS = ("sft", "dpo", "grpo", "kto", "rloo", "reward")


def trl_flags(launch: Launch, args: list[Field]) -> Found:
    parsed = split_options(args)
    config = last_option(parsed, "config")
    root = merged_config(launch, config[1] if config else None, "--config")
    options = [o for o in parsed.options if o[1] != "config"]
    flag_mapping(launch.builder, options, "hf", into=root)
    return Found(None, root)


def command(launch: Launch) -> Found:
    return trl_flags(launch, launch.args)


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = tuple(Entry(("trl", sub), command) for sub in COMMANDS)
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = (ModuleEntry(re.compile(r"(^|\.)trl\.scripts\.\w+$"), trl_flags),)
