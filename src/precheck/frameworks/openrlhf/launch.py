"""This framework's entry modules read their flags with ``argparse`` (``cli/train_sft.py``
``parser.add_argument("--ds.zero_stage", type=int, default=2)``, ``action="store_true"``
switches), then ``utils/config.py`` ``hierarchize`` nests the dotted names
(``args.ds.zero_stage``): a dotted flag is a nested key here too. Where the checked
repository holds the entry module (OpenRLHF's own checkout), its ``default=`` values are read
from it (:mod:`precheck.sources.entry_defaults`).

The trainers: ``train_sft``, ``train_dpo``, ``train_rm`` (one DeepSpeed model each) and
``train_ppo_ray`` (0.11.2 ``cli/train_ppo_ray.py``: the actor, critic, reference and reward
models each built by ``trainer/ray/*.py`` with ``param_dtype=strategy.args.ds.param_dtype`` and
``attn_implementation=strategy.args.ds.attn_implementation``, trained through the same
``get_train_ds_config``), often started through ``ray job submit ... -- python3 -m ...``.
"""

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
MODULES: tuple[ModuleEntry, ...] = (
    ModuleEntry(re.compile(r"(^|\.)openrlhf\.cli\.train_(sft|dpo|rm|ppo_ray)$"), module, source_defaults=True),
)
