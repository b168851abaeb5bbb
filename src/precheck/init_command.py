"""``precheck init``: state the target hardware once, in the repository.

CI runners and laptops have no training GPU, so a check that probes the machine checks
different things on each. ``precheck init`` writes ``gpus = [...]`` into the project
configuration, from ``--gpu`` or, where none is given, from this machine's GPUs; from then on
every check in the repository (CI, pre-commit, a laptop) uses it and gives the same result.

Where it writes: ``pyproject.toml``'s ``[tool.precheck]`` when the folder has a
``pyproject.toml``, else ``.precheck.toml`` (the same keys, without the table header), unless
``--config FILE`` names the file. Only the ``gpus`` line is written: an existing one is
replaced, the rest of the file stays byte for byte.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from .errors import UsageError
from .hardware import Device, Hardware, expand_specs

_TABLE = re.compile(r"^\[tool\.precheck\]\s*(?:#.*)?$", re.MULTILINE)
_NEXT_TABLE = re.compile(r"^\s*\[", re.MULTILINE)
_GPUS = re.compile(r"^gpus\s*=.*$", re.MULTILINE)


def specs_for(hardware: Hardware) -> list[str]:
    """``--gpu`` specs that name these devices, in CUDA order: ``["8xNVIDIA H100 80GB HBM3"]``."""
    out: list[tuple[str, int]] = []
    for device in hardware.all_devices:
        name = _spec(device)
        if out and out[-1][0] == name:
            out[-1] = (name, out[-1][1] + 1)
        else:
            out.append((name, 1))
    return [f"{n}x{name}" for name, n in out]


def _spec(device: Device) -> str:
    model = device.model
    try:
        expand_specs([model.name])
        return model.name
    except UsageError:  # a card the database lacks: by capability and memory
        major, minor = model.sm.removeprefix("sm_")[:1], model.sm.removeprefix("sm_")[1:]
        return f"sm_{major}{minor}:{device.memory_gib:g}GB"


def gpus_line(specs: Sequence[str]) -> str:
    return "gpus = [" + ", ".join(_toml_string(s) for s in specs) + "]"


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def target(folder: Path, config: str | None) -> Path:
    if config is not None:
        return Path(config)
    if (folder / ".precheck.toml").is_file():
        return folder / ".precheck.toml"
    if (folder / "pyproject.toml").is_file():
        return folder / "pyproject.toml"
    return folder / ".precheck.toml"


def updated(text: str, line: str, pyproject: bool) -> str:
    """``text`` with its precheck ``gpus`` set to ``line`` (the table added where missing)."""
    if not pyproject:
        if _GPUS.search(_top_level(text)):
            return _GPUS.sub(lambda _: line, text, count=1)
        return line + "\n" + text
    table = _TABLE.search(text)
    if table is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}[tool.precheck]\n{line}\n"
    start = table.end() + 1 if table.end() < len(text) else len(text)
    after = _NEXT_TABLE.search(text, start)
    end = after.start() if after else len(text)
    body = text[start:end]
    body = _GPUS.sub(lambda _: line, body, count=1) if _GPUS.search(body) else line + "\n" + body
    head = text[:start] if text[:start].endswith("\n") else text[:start] + "\n"
    return head + body + text[end:]


def _top_level(text: str) -> str:
    """The keys before a .precheck.toml's first table header."""
    first = _NEXT_TABLE.search(text)
    return text[: first.start()] if first else text


def run_init(gpu: Sequence[str] | None, config: str | None, folder: Path | None = None) -> int:
    from .hardware import from_specs

    here = folder or Path()
    if gpu:
        hardware = from_specs(list(gpu), {})  # a bad name is a usage error here
        specs = list(gpu)
        source = "--gpu"
    else:
        from .probe import probe_hardware

        hardware = probe_hardware({k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"})
        if not hardware.known:
            raise UsageError(
                "no GPU found on this machine: name the machine the runs train on, "
                "e.g. `precheck init --gpu 8xA100-80GB` (`precheck gpus` lists the names)"
            )
        specs = specs_for(hardware)
        source = "this machine's GPUs"
    path = target(here, config)
    from .bounded_read import read_text

    text = read_text(str(path)) if path.exists() else ""
    line = gpus_line(specs)
    new = updated(text, line, path.name == "pyproject.toml")
    if new != text:
        tmp = path.with_name(path.name + ".precheck-tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)
    from .escape import printable

    where = f"[tool.precheck] in {path}" if path.name == "pyproject.toml" else str(path)
    # GPU names come from nvidia-smi, paths from the folder: printed escaped
    print(printable(f"wrote `{line}` ({source}: {hardware.describe()}) to {where}"))
    print("every check in this repository now targets it; commit the file")
    return 0
