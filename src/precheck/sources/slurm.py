"""Slurm: how many GPUs a node gets, from ``#SBATCH`` lines or ``srun`` options.

``--gres=gpu:N`` (or ``gpu:TYPE:N``) and ``--gpus-per-node=N`` give each node N GPUs;
``--gpus=N`` (``-G N``) counts over the job, so it is a node's only on one node. Slurm then
sets ``SLURM_GPUS_ON_NODE`` (and ``CUDA_VISIBLE_DEVICES``) for the job's processes. sbatch
reads ``#SBATCH`` lines up to the script's first command.
"""

from __future__ import annotations

import re

_GPU_COUNT = re.compile(r"^(?:gpu|gres/gpu)(?::[A-Za-z0-9_.-]+)?:(\d+)$")


def slurm_gpus_per_node(words: list[tuple[str, int]]) -> tuple[int, int] | None:
    """GPUs a node gets from Slurm options (words with their offsets), and where they are said;
    None when the options do not say (or say it only over several nodes)."""
    options: dict[str, tuple[str, int]] = {}
    i = 0
    while i < len(words):
        text, at = words[i]
        if not text.startswith("-") or text == "--":
            break
        name, eq, value = text.partition("=")
        if not eq and name in ("-N", "-G", "--nodes", "--gres", "--gpus", "--gpus-per-node") and i + 1 < len(words):
            value, i = words[i + 1][0], i + 1
        elif not eq and len(name) > 2 and name[:2] in ("-N", "-G") and not name.startswith("--"):
            name, value = name[:2], name[2:]
        options[name] = (value, at)
        i += 1
    nodes = options.get("--nodes") or options.get("-N")
    for name in ("--gpus-per-node", "--gres"):
        if name in options:
            for part in options[name][0].split(","):
                match = _GPU_COUNT.match(part.strip()) or re.match(r"^(?:[A-Za-z0-9_.-]+:)?(\d+)$", part.strip())
                if match and (name == "--gpus-per-node" or part.strip().startswith(("gpu", "gres/gpu"))):
                    return int(match.group(1)), options[name][1]
    total = options.get("--gpus") or options.get("-G")
    if total is not None and (nodes is None or nodes[0].strip() == "1"):
        match = re.match(r"^(?:[A-Za-z0-9_.-]+:)?(\d+)$", total[0].strip())
        if match:
            return int(match.group(1)), total[1]
    return None


def sbatch_words(text: str) -> list[tuple[str, int]]:
    """The options of a batch script's ``#SBATCH`` lines (sbatch reads them up to the first
    command), each with its offset in the file."""
    words: list[tuple[str, int]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if stripped.startswith("#SBATCH") and stripped[7:8].isspace():
            start = line.index("#SBATCH") + len("#SBATCH")
            for word in re.finditer(r"\S+", line[start:]):
                if word.group(0).startswith("#"):  # a comment after the options
                    break
                words.append((word.group(0), offset + start + word.start()))
        offset += len(line)
    return words
