"""This framework's command line: ``... train cfg.yml [--key=value]`` (``cli/main.py``: click
options from the config schema, ``--flag/--no-flag`` for booleans), and ``python -m`` its
``cli.train`` module (``fire.Fire(do_cli)``; ``load_cfg`` sets each kwarg over the file)."""

from __future__ import annotations

import re

from ...sources.launch_args import Field, flag_mapping, split_options
from ...sources.launchers import Entry, Found, Launch, ModuleEntry

#: the ``train`` subcommand's options that steer the CLI, not the config (``cli/main.py``)
CLI_OPTIONS = {
    "launcher",
    "accelerate",
    "cloud",
    "sweep",
    "debug",
    "debug_text_only",
    "debug_num_examples",
    "prompter",
    "download",
    "shard",
    "merge_lora",
    "inference",
}


def command(launch: Launch) -> Found | None:
    return config_and_flags(launch, launch.args, style="pydantic", negatable=True)


def config_and_flags(launch: Launch, args: list[Field], *, style: str, negatable: bool) -> Found | None:
    if not args or args[0].looks_like_option():
        return None
    root = launch.load(args[0], "config") or {}
    rest = args[1:]
    if "--" in [a.text for a in rest]:
        rest = rest[: [a.text for a in rest].index("--")]  # after `--`: the launcher's own arguments
    parsed = split_options(rest, greedy=False)
    options = [o for o in parsed.options if o[1].replace("-", "_") not in CLI_OPTIONS]
    flag_mapping(launch.builder, options, style, negatable=negatable, into=root)
    return Found(None, root)


def module(launch: Launch, args: list[Field]) -> Found | None:
    """``python -m`` the ``cli.train`` module: python-fire reads the flags."""
    return config_and_flags(launch, args, style="pydantic", negatable=False)


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = (Entry(("axolotl", "train"), command),)
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = (ModuleEntry(re.compile(r"(^|\.)axolotl\.cli\.train$"), module),)
