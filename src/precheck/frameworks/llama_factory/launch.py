"""This framework's command line: ``... train cfg.yaml [key=value ...]`` or ``... train --key value``
(``hparams/parser.py`` ``read_args``: a ``.yaml``/``.yml``/``.json`` first argument is
``OmegaConf.load``-ed and merged with ``OmegaConf.from_cli`` of the rest; otherwise
``HfArgumentParser`` reads the flags)."""

from __future__ import annotations

from ...sources.launch_args import flag_mapping, split_options
from ...sources.launchers import CONFIG_SUFFIXES, Entry, Found, Launch, ModuleEntry, dotlist_overrides


def command(launch: Launch) -> Found | None:
    args = launch.args
    if args and args[0].text.lower().endswith(CONFIG_SUFFIXES):
        root = launch.load(args[0], "config") or {}
        dotlist_overrides(launch, root, args[1:], "omegaconf")
        return Found(None, root)
    parsed = split_options(args)
    return Found(None, flag_mapping(launch.builder, parsed.options, "hf"))


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = (Entry(("llamafactory-cli", "train"), command), Entry(("lmf", "train"), command))
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = ()
