"""``--deep``: an accelerate config file through accelerate's own loader and launch checks.

Runs, in the installed accelerate, what ``accelerate launch --config_file FILE train.py`` runs
before it starts any process (read in accelerate 1.15.0, ``commands/launch.py``
``launch_command``), and needs no GPU:

1. ``commands.config.config_args.load_config_from_file``: ``BaseConfig.process_config`` and
   ``from_yaml_file``/``from_json_file`` (missing ``distributed_type``, unknown keys, an
   invalid ``distributed_type`` or ``compute_environment``). Its errors are PC923: no launch
   flag gets past them.
2. ``commands.launch._validate_launch_command`` on ``launch_command_parser()``'s arguments
   with no flag but ``--config_file`` (``--num_processes`` needed, fewer than two
   ``gpu_ids`` for ``MULTI_GPU``);
3. the launcher's environment: ``utils.launch.prepare_deepspeed_cmd_env``,
   ``prepare_multi_gpu_env`` or ``prepare_simple_launcher_cmd_env``, as ``launch_command``
   dispatches (the ``mixed_precision`` and dynamo backend names, FSDP
   ``cpu_ram_efficient_loading`` without ``sync_module_states``).

Errors of steps 2 and 3 are PC924: a flag on the launch command may supply what the file
lacks. Errors that depend on the machine precheck runs on rather than on the file (FP8
packages not installed here, ``mpirun`` not found, a busy port: ``RuntimeError`` and
``OSError``) are not findings. The messages quote accelerate's own exception text.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..config import TrainingConfig
from .notes import ACCELERATE_REFUSES, LAUNCH_REFUSES, DeepNote

#: exceptions that come from the file, not from this machine
CONFIG_ERRORS = (ValueError, TypeError, AttributeError, KeyError, AssertionError)
#: accelerate's message for keys its config dataclass lacks
_UNKNOWN = re.compile(r"had unknown keys \((\[.*?\])\)")


def version() -> str:
    import accelerate

    return str(accelerate.__version__)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """accelerate's launch warnings ("values were not passed ... defaults used") are not findings."""
    log = logging.getLogger("accelerate")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        log.setLevel(level)


def check_accelerate(config: TrainingConfig, file: Path) -> dict[str, str] | None:
    """Add accelerate's own objections to ``config`` (an accelerate config read from ``file``);
    return the environment accelerate's launcher would export, or None when it stops."""
    from accelerate.commands.config.config_args import load_config_from_file

    shown = config.path if Path(config.path).is_file() else str(file)
    with _quiet():
        try:
            defaults = load_config_from_file(shown)
        except CONFIG_ERRORS as error:
            _refused(config, error, ACCELERATE_REFUSES, "loads")
            return None
        _drop_static_unknown_keys(config)
        try:
            return launch_environment(shown, defaults)
        except CONFIG_ERRORS as error:
            _refused(config, error, LAUNCH_REFUSES, "launch")
            return None
        except (RuntimeError, OSError):  # FP8 packages, mpirun, ports: this machine, not the file
            return None


def launch_environment(path: str, defaults: Any) -> dict[str, str]:
    """``accelerate launch --config_file PATH train.py`` up to the environment it exports."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import (
        prepare_deepspeed_cmd_env,
        prepare_multi_gpu_env,
        prepare_simple_launcher_cmd_env,
    )

    args = launch_command_parser().parse_args(["--config_file", path, "train.py"])
    validated = _validate_launch_command(args)  # (args, defaults, mixed precision from config) in 1.x
    args, defaults = validated[0], validated[1]
    from_config = bool(validated[2]) if len(validated) > 2 else False
    if args.use_deepspeed and not args.cpu:  # as launch_command sets it before deepspeed_launcher
        fields = list(defaults.deepspeed_config.keys()) if defaults else []
        if from_config:
            fields.append("mixed_precision")
        args.deepspeed_fields_from_accelerate_config = ",".join(fields)
        _, env = prepare_deepspeed_cmd_env(args)
    elif (args.use_fsdp or args.use_megatron_lm or args.multi_gpu) and not args.cpu:
        env = prepare_multi_gpu_env(args)
    else:
        _, env = prepare_simple_launcher_cmd_env(args)
    return {str(k): str(v) for k, v in env.items()}


def _drop_static_unknown_keys(config: TrainingConfig) -> None:
    """accelerate judged the file's top-level keys: its verdict replaces precheck's list (PC905)
    for them. Nested keys (``fsdp_config.x``), which accelerate copies onto its launch
    arguments without a check, keep their static notes."""
    config.notes[:] = [n for n in config.notes if not (n.kind == "unknown-key" and n.key in config.keys)]


def _refused(config: TrainingConfig, error: BaseException, kind: str, step: str) -> None:
    text = f"{type(error).__name__}: {error}"
    what = "reading it" if step == "loads" else "`accelerate launch --config_file` with no other flag"
    message = f"accelerate {version()} refuses this file ({what}): {text}"
    unknown = _UNKNOWN.search(str(error))
    if unknown is not None:
        _drop_static_unknown_keys(config)
        for name in _literal_list(unknown.group(1)):
            line, column = _place(config, name)
            fix = f"remove `{name}` (or upgrade accelerate if a newer release reads it)"
            config.notes.append(DeepNote(kind, f"`{name}`: {message}", line, column, name, None, fix))
        return
    key, line, column = _mentioned(config, str(error))
    fix = f"fix `{key}` as accelerate says" if key else "fix the file as accelerate says"
    if kind == LAUNCH_REFUSES:
        fix += ", or pass the missing setting on the `accelerate launch` command line"
    config.notes.append(DeepNote(kind, message, line, column, key, None, fix))


def _literal_list(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _place(config: TrainingConfig, key: str) -> tuple[int, int]:
    item = config.keys.get(key)
    if item is None or item.origin.line is None:
        return 1, 1
    return item.origin.line, item.origin.column or 1


def _mentioned(config: TrainingConfig, text: str) -> tuple[str | None, int, int]:
    """The file's key the error names and where it is: a top-level key (``--num_processes``,
    `mixed_precision`) or a nested one (``--fsdp_sync_module_states`` is ``fsdp_config``'s
    ``sync_module_states`` or ``fsdp_sync_module_states``), the longest name winning; else
    the key whose value the error quotes."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    found: list[tuple[str, int, int]] = []
    for key, item in config.keys.items():
        if key in words and item.origin.line is not None:
            found.append((key, item.origin.line, item.origin.column or 1))
        if not isinstance(item.value, dict):
            continue
        prefix = key.removesuffix("_config") + "_"
        for child in item.value:
            if child in words or prefix + child in words:
                nested = config.setting(f"{key}.{child}")
                if nested is not None and nested.origin.line is not None:
                    found.append((f"{key}.{child}", nested.origin.line, nested.origin.column or 1))
    if not found:  # a value the error quotes ("'MULTIGPU' is not a valid DistributedType")
        found = [
            (key, item.origin.line, item.origin.column or 1)
            for key, item in config.keys.items()
            if isinstance(item.value, str) and item.origin.line is not None and f"'{item.value}'" in text
        ]
    if not found:
        return None, 1, 1
    return max(found, key=lambda hit: len(hit[0].rsplit(".", 1)[-1]))
