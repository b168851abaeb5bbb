"""This framework's entry: ``python -m`` its ``finetuning`` module, or the cookbook's wrapper
script (``getting-started/finetuning/finetuning.py``, formerly
``recipes/quickstart/finetuning/finetuning.py``), which calls ``finetuning.main`` through
python-fire: ``--key value`` flags typed as Python literals."""

from __future__ import annotations

from ...sources.launch_args import Field, flag_mapping, split_options
from ...sources.launchers import Found, Launch


def module(launch: Launch, args: list[Field]) -> Found | None:
    parsed = split_options(args, greedy=False)
    return Found(None, flag_mapping(launch.builder, parsed.options, "python"))
