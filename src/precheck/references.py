"""Follow the files a config names: a DeepSpeed JSON, an accelerate or FSDP config, a local model.

A relative path is found as the launch resolves it (:mod:`precheck.sources.script_path`): in
the folder the launch script ``cd``-s to, the repository root, the naming file's folder, then
the folders between; never relative to the current folder, so the report is the same from
any folder. Where it was found is kept (``TrainingConfig.found_in``; ``precheck explain``
shows it). Only local files are read: a model name that is not a local folder is a hub id,
and precheck never downloads anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import dialects, sources
from .config import TrainingConfig
from .dialects.base import origin_of
from .dtypes import parse_dtype
from .errors import InputError
from .paths import resolved, within_checked, working_folder
from .provenance import Sourced
from .sources import SourceNote
from .sources.script_path import OWN_FOLDER, find_file, searched

#: an accelerate config names a DeepSpeed file, which names nothing: two levels suffice
MAX_DEPTH = 3


def locate(value: str, base: Path, cd: Path | None = None) -> Path | None:
    """The file or folder ``value`` names, named in a file in ``base`` (``cd``: the folder the
    launch script ``cd``-s to), as the launch resolves it."""
    found = find_file(value, base, cd, folders=True)
    return found[0] if found is not None else None


def _display(path: Path) -> str:
    try:  # both resolved once per run (the current folder, and the folders of the files named)
        return str(resolved(path).relative_to(working_folder()))
    except ValueError:
        return str(path)


def read_model_folder(config: TrainingConfig, folder: Path) -> str | None:
    """Fill the model_* fields from a local checkpoint's config.json; its path, or None."""
    file = folder / "config.json"
    if not file.is_file():
        return None
    shown = _display(file)
    doc = sources.load(file, shown)
    root = doc.mapping()
    for key in ("torch_dtype", "dtype"):  # transformers 5 writes "dtype", 4.x "torch_dtype"
        node = root.get(key)
        dtype = parse_dtype(node.value) if node is not None else None
        if node is not None and dtype is not None:
            config.model_dtype = Sourced(dtype, origin_of(doc, node))
            break
    arch = root.get("architectures")
    if arch is not None and isinstance(arch.value, list) and arch.value:
        config.model_arch = Sourced(str(arch.value[0].value), origin_of(doc, arch))
    elif (kind := root.get("model_type")) is not None:
        config.model_arch = Sourced(str(kind.value), origin_of(doc, kind))
    for key, node in root.items():  # sizes and kinds, for the memory estimate and kernel limits
        if isinstance(node.value, (int, float, str, bool)):
            config.model_dims[key] = Sourced(node.value, origin_of(doc, node))
    return shown


def attach(
    config: TrainingConfig,
    file: Path,
    env: Mapping[str, str],
    depth: int = 0,
    broken: list[InputError] | None = None,
    cd: Path | None = None,
) -> list[str]:
    """Read the files ``config`` names into ``config.attached``; the paths read (as shown).

    A named file that cannot be found becomes a ``missing-reference`` note; one that
    cannot be parsed raises :class:`~precheck.errors.InputError` naming that file, or,
    given ``broken``, is added to it and passed over (the config's own findings stay).
    ``cd``: the folder the launch script ``cd``-s to before the launch (None: it does not).
    """
    read: list[str] = []
    if config.model is not None and isinstance(config.model.value, str) and config.model.value:
        folder = locate(config.model.value, file.parent, cd)
        # a folder outside the repository checked is not read (a hub id, as far as precheck goes)
        if folder is not None and folder.is_dir() and within_checked(folder / "config.json"):
            try:
                shown = read_model_folder(config, folder)
            except InputError as error:  # a broken config.json: that file's error
                if broken is None:
                    raise
                broken.append(error)
                shown = None
            if shown:
                read.append(shown)
    for role, ref in config.references.items():
        if role in config.attached:
            continue
        # relative to the file that names it: a script's launch command may name a YAML
        # file whose own keys name a DeepSpeed file next to it
        naming = Path(ref.origin.path) if ref.origin.path and ref.origin.path != config.path else file
        found = find_file(str(ref.value), naming.parent, cd)
        if found is None:
            origin = ref.origin
            config.notes.append(
                SourceNote(
                    "missing-reference",
                    f"`{origin.key}` names `{ref.value}`, which is not a file (looked in "
                    f"{searched(naming.parent, cd)}): precheck could not check it, and the launch will fail "
                    "if it is missing there too",
                    origin.line or 1,
                    origin.column or 1,
                    origin.key,
                    origin.path if origin.path != config.path else None,
                )
            )
            continue
        target, why = found
        if not within_checked(target):  # its lines would be printed: never read (paths.within_checked)
            origin = ref.origin
            config.notes.append(
                SourceNote(
                    "missing-reference",
                    f"`{origin.key}` names `{ref.value}`, which is outside the repository checked: precheck "
                    "reads no file outside it (its content could end up in a public log), so it could not "
                    "check it; keep the file in the repository, or check its own folder",
                    origin.line or 1,
                    origin.column or 1,
                    origin.key,
                    origin.path if origin.path != config.path else None,
                )
            )
            continue
        dialect = dialects.BY_NAME.get(role)
        if dialect is None:
            continue
        shown = _display(target)
        try:
            doc = sources.load(target, shown)  # an unparsable file raises InputError naming it
        except InputError as error:
            if broken is None:
                raise
            broken.append(error)
            continue
        attached = dialect.read(doc, env)
        # where it was found, when that is not simply beside the file that names it
        attached.found_in = None if why.endswith(OWN_FOLDER) else why
        if depth + 1 < MAX_DEPTH:
            read.extend(attach(attached, target, env, depth + 1, broken, cd))
        config.attached[role] = attached
        read.append(shown)
    return read
