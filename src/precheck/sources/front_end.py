"""A YAML/JSON front-end whose block the repository's code (or Hydra) hands to ``TrainingArguments``.

Many repositories keep their run in a YAML of their own (``data_config:``, ``peft_config:``,
``training_args:`` ...) and build the HF arguments from one block of it:
``Seq2SeqTrainingArguments(**training_args)`` (THUDM GLM-4 / ChatGLM3 ``finetune.py``),
``SFTConfig(**cfg["trainer"])``. That block is then read with the HF Trainer's (or TRL's)
semantics, and the file's other keys are the repository's own.

Any top-level mapping of the file is a block the code may name (``SFTConfig(**config["training"])``,
easydistill's ``kd/train.py``); a bare name handed over is a block when it is one of
:data:`BLOCKS` or bound to one (``kwargs = cfg["training"]``). A launch that names the file by a
flag (``--config configs/kd.json``) takes the block the launched script hands over
(:mod:`.script_launch`). Test modules (``test_*.py``) are not the run's code.

The handoff is a fact only where precheck reads it: a Python file in the config's folder or a
folder above it (up to the repository's root, at most :data:`MAX_LEVELS` levels and
:data:`MAX_FILES` files each) that calls one of the HF/TRL argument classes with ``**`` of an
expression whose last name is the block's (``training_args``, ``config.training_args``,
``cfg["trainer"]``). Without that, the file stays as it was (not a known config).

A path the block names (``deepspeed: configs/ds_zero_2.json``) is resolved as the launched
code resolves it: from the folder of the code that hands the block over (where its README runs
it), when it is not found next to the YAML.

A Hydra config hands a block over by itself: a mapping whose ``_target_`` names one of these
classes (``config: {_target_: trl.trainer.GRPOConfig, fp16: false}``) is built by
``hydra.utils.instantiate`` as ``GRPOConfig(**the other keys)``: ``_target_``, ``_args_``,
``_recursive_``, ``_convert_``, ``_partial_`` are Hydra's own keys (``_instantiate2.py:20-24``) and
the class is called as ``_target_(*args, **kwargs)`` (``:92``), in ``hydra/_internal/instantiate/``
@1.3.2. That block is read the same way (a ``_partial_: true`` one is not: the code adds the rest
of its arguments). A value that refers to
a key of the same file (``fp16: ${training.fp16}``, resolved by OmegaConf when the block is
built) is that key's value, cited with it.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from .nodes import Document, Node
from .python_calls import TRL_CONFIGS

#: the blocks a front-end hands over by a bare name (``TrainingArguments(**training_args)``); a block
#: the code names itself (``SFTConfig(**config["training"])``, ``GRPOConfig(**cfg.train)``) may have
#: any name: every top-level mapping of the file (at most :data:`MAX_BLOCK_KEYS`) is a candidate
BLOCKS = ("training_args", "trainer", "args")
MAX_BLOCK_KEYS = 64
#: the classes the block is handed to: transformers' and TRL's argument classes
HF_CLASSES = ("TrainingArguments", "Seq2SeqTrainingArguments")
#: the call: keyword arguments before the ``**`` (``output_dir=out_dir,``), and the block as it is
#: or through a conversion that keeps its keys (``**OmegaConf.to_container(cfg.training, resolve=True)``,
#: ``**dict(cfg.training)``)
_HANDOFF = re.compile(
    r"\b(?P<cls>" + "|".join(sorted({*HF_CLASSES, *TRL_CONFIGS})) + r")\s*\(\s*"
    r"(?:[A-Za-z_]\w*\s*=\s*[^(),=]{1,200},\s*){0,8}"
    r"\*\*\s*(?:(?:OmegaConf\.to_container|dict|asdict)\(\s*)?(?P<expr>[^(),]{1,200})[,)]"
)
_LAST = re.compile(r"""[A-Za-z_]\w*|["'][A-Za-z_]\w*["']""")
#: how far up from the config the code is looked for, and how many files a folder is read for
MAX_LEVELS = 3
MAX_FILES = 60
MAX_BYTES = 1_000_000
#: how deep the folders under the top one are searched, and how many files in all
SUBFOLDER_DEPTH = 2
MAX_BELOW = 200
#: folders that hold no repository code
_SKIPPED = frozenset(("node_modules", "venv", "env", "site-packages", "build", "dist", "tests", "test"))
#: a value that is one block of a loaded config, whole (``cfg["training_args"]``,
#: ``config.get("trainer", {})``, ``cfg.training_args``, optionally ``.copy()``/``dict(...)``)
_BLOCK_VALUE = re.compile(
    r"""^(?:dict\()?(?:[A-Za-z_][\w.]*(?:\[\s*["'](?P<b1>\w+)["']\s*\]|\.get\(\s*["'](?P<b2>\w+)["']\s*(?:,[^()]*)?\))"""
    r"""|(?!self\.)[A-Za-z_]\w*\.(?P<b3>\w+))(?:\.copy\(\))?\)?$"""
)
#: what marks a repository's root (the search stops there)
ROOTS = (".git", "pyproject.toml", "setup.py", "requirements.txt")
#: the block's keys that name a file the HF arguments read
PATH_KEYS = ("deepspeed",)


def blocks(document: Document) -> frozenset[str]:
    """The names of ``document``'s top-level mappings: the blocks its code may hand over."""
    root = document.mapping()
    names = list(root)[:MAX_BLOCK_KEYS]
    return frozenset(name for name in names if isinstance(root[name].value, dict) and root[name].value)


def front_end(document: Document, file: Path) -> Document | None:
    """The block of ``document`` that the repository's code hands to an argument class, as a
    document of its own (named for the class's framework); None when there is none."""
    present = blocks(document)
    root = document.mapping()
    if not present:
        return None
    found = _handoff(file.resolve().parent, frozenset(present), file.name)
    if found is None:
        return None
    block, cls, code, line = found
    node = root[block]
    mapping = dict(node.value)
    for key in PATH_KEYS:
        mapping[key] = _rebased(mapping.get(key), file.parent, code.parent)
    mapping = {k: v for k, v in mapping.items() if v is not None}
    label = f"`{block}:`, handed to {cls} by {_shown(code)}:{line}"
    dialect = "hf-trainer" if cls in HF_CLASSES else "trl"
    return replace(document, root=Node(mapping, node.line, node.column), label=label, dialect=dialect)


#: Hydra's own keys of a ``_target_`` mapping (not arguments of the class)
HYDRA_KEYS = frozenset(("_target_", "_args_", "_recursive_", "_convert_", "_partial_"))
#: the packages whose argument classes a ``_target_`` names
_TARGET_PACKAGES = ("transformers", "trl")
#: how deep a ``_target_`` block is looked for, and how many mappings are looked at
MAX_TARGET_DEPTH = 8
MAX_TARGET_NODES = 2000
_REFERENCE = re.compile(r"^\$\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}$")


def targeted(document: Document) -> Document | None:
    """The first mapping of ``document`` whose Hydra ``_target_`` is an HF/TRL argument class,
    as a document of its own (named for the class's framework); None when there is none."""
    budget = [MAX_TARGET_NODES]
    found = _target_node(document.root, 0, budget)
    if found is None:
        return None
    node, cls = found
    mapping = {}
    for key, child in node.value.items():
        if (key in HYDRA_KEYS and key != "_target_") or not isinstance(child, Node):
            continue
        # (`_target_` kept: where the block starts, which a default of the class is cited at)
        mapping[key] = _referred(document.root, child)
    # a default of the class (a key the block leaves out) is the class's: cited at `_target_:`
    target = node.get("_target_")
    line, column = target.anchor if target is not None else (node.line, node.column)
    label = f"`{node.key or 'the block'}:`, built by Hydra as {cls} (line {line})"
    dialect = "hf-trainer" if cls in HF_CLASSES else "trl"
    # the notes of the file's other parts (a `${oc.env:...}` elsewhere) are not the block's
    lines = {n for child in mapping.values() for n in _lines(child)}
    notes = [n for n in document.notes if n.line in lines]
    return replace(document, root=Node(mapping, line, column), label=label, dialect=dialect, notes=notes)


def _lines(node: Node, depth: int = 0) -> set[int]:
    """The lines ``node`` (and what it holds, and a key its value refers to) stands on."""
    out = {node.line, node.anchor[0], *(line for path, line in node.through if path is None)}
    if depth < MAX_TARGET_DEPTH and isinstance(node.value, (dict, list)):
        for child in node.value.values() if isinstance(node.value, dict) else node.value:
            if isinstance(child, Node):
                out |= _lines(child, depth + 1)
    return out


def _target_node(node: Node, depth: int, budget: list[int]) -> tuple[Node, str] | None:
    value = node.value
    if depth > MAX_TARGET_DEPTH or budget[0] <= 0 or not isinstance(value, (dict, list)):
        return None
    budget[0] -= 1
    if isinstance(value, dict):
        target = value.get("_target_")
        cls = _argument_class(target.value) if isinstance(target, Node) else None
        partial = value.get("_partial_")
        if cls is not None and not (isinstance(partial, Node) and partial.value is True):
            return node, cls
    children = value.values() if isinstance(value, dict) else value
    for child in children:
        if isinstance(child, Node):
            found = _target_node(child, depth + 1, budget)
            if found is not None:
                return found
    return None


def _argument_class(target: object) -> str | None:
    """The HF/TRL argument class a ``_target_`` names (``trl.trainer.GRPOConfig``), or None."""
    if not isinstance(target, str):
        return None
    parts = target.strip().split(".")
    if len(parts) < 2 or parts[0] not in _TARGET_PACKAGES:
        return None
    last = parts[-1]
    if last in HF_CLASSES and parts[0] == "transformers":
        return last
    return last if last in TRL_CONFIGS and parts[0] == "trl" else None


def _referred(root: Node, node: Node) -> Node:
    """``node`` with the value of the same-file key its ``${a.b}`` names (that key's line cited)."""
    match = _REFERENCE.match(node.value) if isinstance(node.value, str) else None
    if match is None:
        return node
    referred: Node | None = root
    for part in match.group(1).split("."):
        referred = referred.get(part) if referred is not None else None
    if referred is None or isinstance(referred.value, (dict, list)):
        return node
    return replace(
        node,
        value=referred.value,
        raw=referred.raw,
        quoted=referred.quoted,
        through=(*node.through, (None, referred.anchor[0])),
    )


def _rebased(node: Node | None, config_folder: Path, code_folder: Path) -> Node | None:
    """A path value found from the code's folder (the run's working folder) when it is not
    next to the YAML: the value rewritten relative to the YAML's folder, as written otherwise."""
    if node is None or not isinstance(node.value, str) or not node.value.strip():
        return node
    given = Path(node.value)
    if given.is_absolute() or (config_folder / given).exists() or not (code_folder / given).is_file():
        return node
    rebased = os.path.relpath(code_folder / given, config_folder)
    return replace(node, value=rebased, raw=node.raw if node.raw is not None else node.value)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@lru_cache(maxsize=256)
def _handoff(folder: Path, blocks: frozenset[str], name: str = "") -> tuple[str, str, Path, int] | None:
    """(block, class, file, line) of the first handoff found from ``folder`` upwards; then in the
    folders under the top one reached (``src/``, ``scripts/``... beside the config's ``configs/``),
    from code that names the config file (``name``: its file name)."""
    current = folder
    for _ in range(MAX_LEVELS):
        for code in sorted(current.glob("*.py"))[:MAX_FILES]:
            hit = _in_file(code, blocks)
            if hit is not None:
                return hit
        if any((current / marker).exists() for marker in ROOTS) or current.parent == current:
            break
        current = current.parent
    return _below(current, folder, blocks, name) if name else None


def _below(top: Path, seen: Path, blocks: frozenset[str], name: str) -> tuple[str, str, Path, int] | None:
    """A handoff in the folders under ``top`` (at most :data:`SUBFOLDER_DEPTH` deep, not the
    chain from ``seen`` already read), by code that names the config file."""
    chain = {seen, *seen.parents}
    read = 0
    for current, codes in _code_below(top):
        if current in chain:
            continue
        for code in codes:
            read += 1
            if read > MAX_BELOW:
                return None
            hit = _in_file(code, blocks, name)
            if hit is not None:
                return hit
    return None


@lru_cache(maxsize=64)
def _code_below(top: Path) -> tuple[tuple[Path, tuple[Path, ...]], ...]:
    """The folders under ``top``, level by level (at most :data:`SUBFOLDER_DEPTH` deep), each with
    its ``.py`` files: listed once per folder, however many configs below it ask."""
    out: list[tuple[Path, tuple[Path, ...]]] = []
    listed = 0
    folders = [top]
    for _ in range(SUBFOLDER_DEPTH):
        below: list[Path] = []
        for parent in folders:
            try:
                children = sorted(p for p in parent.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
            except OSError:
                continue
            below.extend(c for c in children[:MAX_FILES] if c.name not in _SKIPPED)
        for current in below:
            codes = tuple(sorted(current.glob("*.py"))[:MAX_FILES])
            out.append((current, codes))
            listed += len(codes)
            if listed > MAX_BELOW + MAX_FILES * SUBFOLDER_DEPTH:
                # more than a search reads: MAX_BELOW files beside the (at most SUBFOLDER_DEPTH)
                # folders of the config's own chain, which it skips
                return tuple(out)
        folders = below
    return tuple(out)


def handoffs(code: Path) -> tuple[tuple[tuple[str, str, int], ...], frozenset[str]]:
    """The (block, class, line) handoffs of the Python file ``code`` (see :func:`_handoffs`)."""
    return _handoffs(code.resolve())


def _in_file(code: Path, blocks: frozenset[str], name: str = "") -> tuple[str, str, Path, int] | None:
    if code.name.startswith("test_") or code.name.endswith("_test.py") or code.name == "conftest.py":
        return None  # a test module (pytest's names) checks the code; it does not run the training
    handoffs, mentioned = _handoffs(code)
    if name and name not in mentioned:
        return None
    for block, cls, line in handoffs:
        if block in blocks:
            return block, cls, code, line
    return None


_MENTIONED = re.compile(r"[\w.-]+\.(?:ya?ml|json)\b")


@lru_cache(maxsize=1024)
def _handoffs(code: Path) -> tuple[tuple[tuple[str, str, int], ...], frozenset[str]]:
    """The (block, class, line) handoffs of one Python file, whatever the config's blocks are,
    and the config file names it mentions (read once per file, however many configs ask)."""
    try:
        if code.stat().st_size > MAX_BYTES:
            return (), frozenset()
        text = code.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (), frozenset()
    if "**" not in text:
        return (), frozenset()
    found: list[tuple[str, str, int]] = []
    for match in _HANDOFF.finditer(text):
        names = _LAST.findall(match.group("expr"))
        last = names[-1].strip("\"'") if names else None
        if last is not None and len(names) == 1:
            # a bare name: one bound to a block (`args = cfg["training"]`), or one of BLOCKS
            bound = _bound_block(text, last, match.start())
            last = bound if bound is not None else last if last in BLOCKS else None
        if last is not None:
            found.append((last, match.group("cls"), text.count("\n", 0, match.start()) + 1))
    mentioned = frozenset(m.rsplit("/", 1)[-1] for m in _MENTIONED.findall(text)) if found else frozenset()
    return tuple(found), mentioned


def _bound_block(text: str, name: str, before: int) -> str | None:
    """The block a name handed over is bound to, by the last assignment above the handoff
    (``training_args = config["training_args"]``, ``args = cfg.get("trainer", {}).copy()``);
    None when it is bound otherwise, or to one section of the block (``.get("training_args",
    {}).get(device)``: which one is known only at run time)."""
    found = None
    for assigned in re.finditer(rf"^[ \t]*{re.escape(name)}[ \t]*=[ \t]*(?P<value>[^\n]+)$", text[:before], re.M):
        found = assigned.group("value")
    if found is None:
        return None
    match = _BLOCK_VALUE.match(found.strip())
    return next((g for g in match.group("b1", "b2", "b3") if g), None) if match is not None else None


def clear() -> None:
    _handoff.cache_clear()
    _handoffs.cache_clear()
    _code_below.cache_clear()


__all__ = ["BLOCKS", "HYDRA_KEYS", "blocks", "clear", "front_end", "handoffs", "targeted"]
