"""``precheck --deep``: ask the installed transformers and accelerate what they make of a run.

The static checks reason about what the frameworks will do; with ``--deep`` (the ``hf``
extra: ``pip install 'precheck-ml[hf]'``) precheck also asks the libraries installed where it
runs:

- :mod:`.keys`: every TrainingArguments / TRL key against the installed dataclasses
  (PC920 removed or not yet added, PC921 did-you-mean, PC922 deprecated), with the release
  that changed each key (:mod:`.history`);
- :mod:`.accelerate_check`: an accelerate config through accelerate's own loader and
  launch checks (PC923, PC924), quoting accelerate's error;
- :mod:`.meta_count`: the model built on the meta device from its local ``config.json`` (a
  folder, or the local Hugging Face cache: never a download) for exact parameter and
  trainable-parameter counts (:mod:`.lora`), which the memory rules (PC801/PC802) prefer.

Nothing here is imported by the default check path: :func:`inspect` imports the libraries
only when called, and this module itself imports neither torch nor transformers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ..config import TrainingConfig
from ..distribution import INSTALL_HF
from ..errors import UsageError
from ..versions import Versions

#: the distributions ``--deep`` imports (the ``hf`` extra)
NEEDED = ("torch", "transformers", "accelerate")


def missing() -> list[str]:
    """The distributions of :data:`NEEDED` that cannot be imported here (found, not imported)."""
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


def require() -> None:
    """Raise a :class:`UsageError` naming the extra when ``--deep`` cannot run."""
    absent = missing()
    if absent:
        raise UsageError(
            f"--deep needs {', '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} not installed in "
            f"this environment: {INSTALL_HF}"
        )


def inspect(config: TrainingConfig, file: Path, versions: Versions | None = None) -> list[str]:
    """Ask the installed libraries about ``config`` (read from ``file``) and the files it named.

    Adds :class:`~precheck.deep.notes.DeepNote` s to the configs and the exact parameter
    counts to ``config``; returns the files it read besides them (a cached config.json).
    """
    from .accelerate_check import check_accelerate
    from .keys import check_keys, installed_schema
    from .model import exact_counts

    require()
    for item, path in _run_files(config, file):
        if item.dialect == "accelerate" and path is not None:
            check_accelerate(item, path)
        elif item.dialect in ("hf-trainer", "trl"):
            check_keys(item, installed_schema(), versions)
    return exact_counts(config, file)


def _run_files(config: TrainingConfig, file: Path) -> list[tuple[TrainingConfig, Path | None]]:
    """The run's config and every config it named, each with its file when it is a plain
    YAML/JSON file (not a launch script that embeds it)."""
    out: list[tuple[TrainingConfig, Path | None]] = []
    pending: list[tuple[TrainingConfig, Path]] = [(config, file)]
    while pending:
        item, path = pending.pop(0)
        plain = path.suffix.lower() in (".yaml", ".yml", ".json") and path.is_file()
        out.append((item, path if plain else None))
        # an inline block (``deepspeed: {...}``) is part of its parent's file, not a file of its own
        pending.extend((child, Path(child.path)) for child in item.attached.values() if child.path != item.path)
    return out
