"""gpt-neox's command line: ``python ./deepy.py train.py CONF [CONF ...]`` (``deepy.py`` calls
``NeoXArgs.consume_deepy_args``, ``megatron/neox_arguments/arguments.py:298``@ea7aefd).

Its parser: the user script first, then ``conf_file`` (``nargs="+"``); ``--conf_dir``/``-d``
is prefixed to every config path and a name without ``.yml``/``.json`` gets ``.yml``
(``:414-422``; a ``.yaml`` name that exists, with no ``.yaml.yml`` beside it, is read as written:
forks take ``.yaml``). ``from_ymls`` (``:225``) loads the files in order into one dict and raises
``ValueError`` on a key two files both set (``:245``), so no file overrides another.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

from ...sources.launch_args import Field, locate
from ...sources.launchers import Entry, Found, Launch, ModuleEntry
from ...sources.nodes import Node

#: deepy's options that take one value (``consume_deepy_args``@ea7aefd)
VALUED = frozenset(
    {
        *("--conf_dir", "-d", "--wandb_group", "--wandb_run_name", "--wandb_team", "--iteration"),
        *("--eval_results_prefix", "-H", "--hostfile", "-i", "--sample_input_file", "-o"),
        *("--sample_output_file", "--autotuning"),
    }
)
#: options that take one or more values
MANY = frozenset({"--eval_tasks"})


def command(launch: Launch, args: list[Field]) -> Found | None:
    positional: list[Field] = []
    conf_dir: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        name, eq, value = word.text.partition("=")
        if word.looks_like_option():
            if name in ("--conf_dir", "-d"):
                conf_dir = value if eq else (args[i + 1].text if i + 1 < len(args) else None)
            if name in MANY and not eq:
                i += 1
                while i < len(args) and not args[i].looks_like_option():
                    i += 1
                continue
            i += 2 if name in VALUED and not eq else 1
            continue
        positional.append(word)
        i += 1
    if len(positional) < 2:
        return None
    root: dict[str, Node] = {}
    for conf in positional[1:]:
        text = os.path.join(conf_dir, conf.text) if conf_dir else conf.text
        if not text.endswith((".yml", ".json")) and not _fork_yaml(text, launch):
            text += ".yml"
        loaded = launch.load(replace(conf, text=text), "conf_file") or {}
        for key, node in loaded.items():
            root.setdefault(re.sub("-", "_", key), node)
    return Found(None, root) if root else None


def _fork_yaml(text: str, launch: Launch) -> bool:
    """A ``.yaml`` name read as written: upstream would look for ``NAME.yaml.yml`` (and fail), but
    a repository whose launch names ``.yaml`` files that exist, and no ``.yaml.yml`` ones, runs a
    fork whose parser takes them (forks' READMEs: ``deepy.py train.py -d configs 125M.yaml
    local_setup.yaml``)."""
    return (
        text.endswith(".yaml")
        and locate(text + ".yml", launch.bases) is None
        and locate(text, launch.bases) is not None
    )


#: nothing starts it by a program name of its own
ENTRIES: tuple[Entry, ...] = ()
#: ``deepy.py`` (``python ./deepy.py``, ``python deepy.py``)
MODULES: tuple[ModuleEntry, ...] = (ModuleEntry(re.compile(r"(^|\.)deepy$"), command),)
