"""This framework's command line: ``tune run [torchrun flags] RECIPE --config CFG [key=value ...]``
(``_cli/run.py``; ``config/_utils.py`` ``_merge_yaml_and_cli_args``: ``key=value`` through
``OmegaConf.from_dotlist``, ``~key`` removes, ``None`` is null)."""

from __future__ import annotations

from ...sources.launch_args import Field, locate
from ...sources.launchers import TORCHRUN_FLAGS, Entry, Found, Launch, ModuleEntry, dotlist_overrides, launcher_options
from ...sources.nodes import Node
from .label import NAME


def command(launch: Launch) -> Found | None:
    _, index = launcher_options(launch.args, TORCHRUN_FLAGS, short={"-m": "module", "-r": "redirects", "-t": "tee"})
    rest = launch.args[index:]
    if not rest:
        return None
    recipe_args = rest[1:]
    texts = [a.text for a in recipe_args]
    config: Field | None = None
    overrides = list(recipe_args)
    for i, text in enumerate(texts):
        if text == "--config" and i + 1 < len(recipe_args):
            config = recipe_args[i + 1]
            overrides = recipe_args[:i] + recipe_args[i + 2 :]
            break
        if text.startswith("--config="):
            config = recipe_args[i].tail(len("--config="))
            overrides = recipe_args[:i] + recipe_args[i + 1 :]
            break
    root: dict[str, Node] = {}
    builder = launch.builder
    if config is not None and (
        config.text.endswith((".yaml", ".yml")) or locate(config.text, launch.bases) is not None
    ):
        root = launch.load(config, "--config") or {}
    elif config is not None:
        builder.note(
            "not-followed",
            f"`--config {config.text}` names a {NAME} built-in config, which precheck does not have: only the "
            "command-line overrides are checked (`tune cp` the config to check it whole)",
            config.offset(),
            "--config",
        )
    words = [w for w in overrides if not w.looks_like_option()]
    dotlist_overrides(launch, root, words, "omegaconf-none", components=True)
    if not root:
        return None
    return Found(None, root)


#: the command lines that start it, each with its parser (bound to the framework by its ``Framework``)
ENTRIES: tuple[Entry, ...] = (Entry(("tune", "run"), command),)
#: the Python modules that start it, each with its parser
MODULES: tuple[ModuleEntry, ...] = ()
