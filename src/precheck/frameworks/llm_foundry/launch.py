"""This framework's command line: ``composer [LAUNCHER OPTIONS] train.py YAML [key=value ...]``
(Composer's launcher, ``composer/cli/launcher.py``, starts the training script once per GPU;
llm-foundry's ``scripts/train/train.py`` loads the YAML with OmegaConf and merges the
``key=value`` overrides after it: ``om.from_cli(args_list)``)."""

from __future__ import annotations

from ...sources.launch_args import Field
from ...sources.launchers import Entry, Found, Launch, ModuleEntry, dotlist_overrides
from ...sources.nodes import Node

#: the launcher's options that take a value (``composer/cli/launcher.py`` ``_parse_args``@0.32.1)
VALUED = frozenset(
    {
        *("-n", "--nproc", "--world_size", "--base_rank", "--node_rank", "--master_addr", "--master_port"),
        *("--stdout", "--stderr", "--nnodes"),
    }
)


def command(launch: Launch) -> Found | None:
    args = list(launch.args)
    i = 0
    while i < len(args) and args[i].looks_like_option():  # the launcher's own options
        name = args[i].text.partition("=")[0]
        i += 2 if name in VALUED and "=" not in args[i].text else 1
    rest = args[i:]
    if len(rest) < 2 or not rest[0].text.endswith(".py"):
        return None
    config: Field = rest[1]
    if not config.text.endswith((".yaml", ".yml")):
        return None
    root: dict[str, Node] = launch.load(config, "yaml") or {}
    words = [w for w in rest[2:] if not w.looks_like_option()]
    dotlist_overrides(launch, root, words, "yaml")
    return Found(None, root) if root else None


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = (Entry(("composer",), command),)
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = ()
