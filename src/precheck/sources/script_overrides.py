"""Where a launched script's own code decides a setting over its launch flags.

:mod:`.script_effects` reads what the code makes of the script's options; this module reads
the places where the code does not ask the options at all, on the statements that run
whenever the script runs (module level, its ``if __name__ == "__main__":`` block, function
bodies, loops and ``with`` blocks; not under another ``if``, not in ``except`` or a class):

- :data:`HARD_CODED`: a literal keyword of the call that builds the setting
  (``TrainingArguments(fp16=True)``, ``from_pretrained(torch_dtype=torch.float16)``,
  ``BitsAndBytesConfig(load_in_4bit=True)``, ``Accelerator(mixed_precision="bf16")``). It is
  the run's value, whatever a flag of the same name says, where it is the one place the
  script sets that key (a second loader call for a reference model leaves it to the code).
- :data:`ASSIGNED`: a setting set again on what ``parse_args()`` returned
  (``args.bf16 = True``): the option holds that value for its later uses.
- :data:`AFTER_INIT`: a ``TrainingArguments`` switch set again on a dataclass
  ``HfArgumentParser`` built (``training_args.bf16 = True`` after
  ``parse_args_into_dataclasses()``). Its ``__post_init__`` has already turned the parsed
  ``fp16``/``bf16`` into ``self.mixed_precision`` (transformers ``training_args.py:1614-1618``
  @5.24.0; 4.x exported ``ACCELERATE_MIXED_PRECISION`` there), which the Trainer hands to
  ``Accelerator`` (``trainer.py:744``@5.24.0): the run keeps the flags' precision, and the
  line is read and not used.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .python_calls import TRL_CONFIGS
from .python_index import walk
from .script_effects import NOTHING, literal
from .tree_facts import calls, remembered

#: a literal the call that builds the setting always passes
HARD_CODED = "hard-coded"
#: the parsed option set again after ``parse_args()``
ASSIGNED = "assigned"
#: a ``TrainingArguments`` switch set again after ``__post_init__`` has read it
AFTER_INIT = "after-init"


class Unread:
    """A value the code computes: set, but not known."""

    def __repr__(self) -> str:
        return "UNREAD"


UNREAD = Unread()


@dataclass(frozen=True, slots=True)
class Override:
    """``key`` is ``value`` (or the option ``source``'s value) from the code at ``path:line``."""

    key: str
    value: Any
    source: str | None
    kind: str
    path: Path
    line: int
    column: int


#: which calls build each key from a literal keyword: the model's loader for its dtype and
#: attention, the quantization config, Accelerator (a trainer's switches: :func:`_arguments_class`)
_BUILDERS: dict[str, tuple[str, ...]] = {
    "torch_dtype": ("from_pretrained", "from_config"),
    "dtype": ("from_pretrained", "from_config"),
    "attn_implementation": ("from_pretrained", "from_config"),
    "load_in_4bit": ("BitsAndBytesConfig", "from_pretrained"),
    "load_in_8bit": ("BitsAndBytesConfig", "from_pretrained"),
    "bnb_4bit_compute_dtype": ("BitsAndBytesConfig",),
    "mixed_precision": ("Accelerator",),
}
#: the settings a script may set again on what it parsed
_REASSIGNED = frozenset({"fp16", "bf16", "tf32", "torch_dtype", "attn_implementation", "load_in_4bit", "load_in_8bit"})
#: the parser calls whose result holds the parsed options (argparse, HfArgumentParser, TrlParser)
_PARSE_CALLS = frozenset(
    {"parse_args", "parse_known_args", "parse_args_into_dataclasses", "parse_args_and_config"}
    | {"parse_json_file", "parse_yaml_file", "parse_dict"}
)
#: the parse calls that return ``HfArgumentParser``'s dataclasses (their ``__post_init__`` has run)
_DATACLASS_PARSES = frozenset({"parse_args_into_dataclasses", "parse_json_file", "parse_yaml_file", "parse_dict"})
#: ``TrainingArguments`` switches its ``__post_init__`` turns into the run's settings
_POST_INIT_SWITCHES = frozenset({"fp16", "bf16", "tf32"})


def overrides(modules: dict[Path, ast.Module], options: set[str]) -> list[Override]:
    """Every place the modules' code decides a setting itself (see the module's docstring).
    A literal is kept only where its call is the one call of its kind in the modules (one
    model loaded, one quantization config, one Accelerator): a second one (a reward or
    reference model, loaded by a helper precheck may not read) could be the run's."""
    out: list[Override] = []
    builders: Counter[str] = Counter()
    for path, tree in modules.items():
        for found in remembered(tree, "overrides", partial(_places, tree)):
            key, value, kind, line, column = found
            source = None
            if kind != HARD_CODED:
                value, source = _value(value, options)
            out.append(Override(key, value, source, kind, path, line, column))
        builders.update(remembered(tree, "builders", partial(_builders, tree)))
    return [o for o in out if o.kind != HARD_CODED or all(builders[k] == 1 for k in _NEEDS.get(o.key, ()))]


#: a place :func:`_read` finds: key, value (a literal; for a setting set again, its expression),
#: kind, line, column
_Place = tuple[str, Any, str, int, int]


def _places(tree: ast.Module) -> list[_Place]:
    """What :func:`overrides` reads in one module, before the options are known (once per tree)."""
    out: list[_Place] = []
    for statements in _scopes(tree):
        parsed = _parsed_names(statements)
        for statement in statements:
            _read(statement, parsed, out)
    return out


def _builders(tree: ast.Module) -> Counter[str]:
    """How many calls of each kind (:func:`_kind`) the module writes."""
    return Counter(_kind(call) for call in calls(tree))


#: the calls that must each be the only one of their kind for a literal of the key to be the run's
_NEEDS: dict[str, tuple[str, ...]] = {
    "torch_dtype": ("loader",),
    "attn_implementation": ("loader",),
    "load_in_4bit": ("loader",),
    "load_in_8bit": ("loader",),
    "bnb_4bit_compute_dtype": ("loader", "quantization"),
    "mixed_precision": ("accelerator",),
    "fp16": ("arguments",),
    "bf16": ("arguments",),
    "tf32": ("arguments",),
}


def _kind(call: ast.Call) -> str:
    """What a call builds, for counting: a model loader, a quantization config, an Accelerator,
    a trainer's arguments; "" for anything else."""
    callee = _callee(call.func)
    if callee in ("from_pretrained", "from_config"):
        receiver = ast.unparse(call.func.value) if isinstance(call.func, ast.Attribute) else ""
        return "" if any(word in receiver for word in _NOT_MODELS) else "loader"
    if callee == "BitsAndBytesConfig":
        return "quantization"
    if callee == "Accelerator":
        return "accelerator"
    return "arguments" if _arguments_class(callee) else ""


#: ``X.from_pretrained`` that loads no model
_NOT_MODELS = ("Tokenizer", "Processor", "Config", "FeatureExtractor", "ImageProcessor", "tokenizer")


def _arguments_class(callee: str) -> bool:
    """A trainer's arguments: ``TrainingArguments`` and subclasses named so, TRL's configs."""
    return callee.endswith("Arguments") or callee in TRL_CONFIGS


def _scopes(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    """The module and each function: the statements of each that run whenever it runs."""
    yield list(_running(tree.body))
    for node in walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield list(_running(node.body))


def _running(statements: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The simple statements of a block that run when it runs (not a nested function's)."""
    for node in statements:
        if isinstance(node, ast.If):
            if _main_guard(node.test):
                yield from _running(node.body)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            yield from _running(node.body)
        elif isinstance(node, ast.Try):
            yield from _running(node.body)
            yield from _running(node.finalbody)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node


def _read(node: ast.stmt, parsed: dict[str, str], out: list[_Place]) -> None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.attr in _REASSIGNED
            and target.value.id in parsed
        ):
            late = parsed[target.value.id] in _DATACLASS_PARSES and target.attr in _POST_INIT_SWITCHES
            kind = AFTER_INIT if late else ASSIGNED
            out.append((target.attr, node.value, kind, node.lineno, node.col_offset + 1))
            return
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            callee = _callee(sub.func)
            for keyword in sub.keywords:
                if keyword.arg is None or not _builds(callee, keyword.arg):
                    continue
                constant = _constant(keyword.value)
                if constant is not None:
                    key = "torch_dtype" if keyword.arg == "dtype" else keyword.arg
                    line, column = keyword.lineno, keyword.col_offset + 1
                    out.append((key, constant, HARD_CODED, line, column))


def _value(expr: ast.expr, options: set[str]) -> tuple[Any, str | None]:
    """A literal, the option an expression is (``args.x``), or :data:`UNREAD`."""
    constant = _constant(expr)
    if constant is not None:
        return constant, None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.attr in options:
        return None, expr.attr
    return UNREAD, None


def _constant(expr: ast.expr) -> Any:
    """A literal (not None), or a torch dtype by name (``torch.bfloat16`` → "bfloat16")."""
    value = literal(expr)
    return None if value is NOTHING else value


def _parsed_names(statements: list[ast.stmt]) -> dict[str, str]:
    """The names a scope binds to what a parser returns, each with its parse call."""
    out: dict[str, str] = {}
    for node in statements:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        call = _callee(node.value.func)
        if call not in _PARSE_CALLS:
            continue
        for target in node.targets:
            names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            out.update({n.id: call for n in names if isinstance(n, ast.Name)})
    return out


def _builds(callee: str, key: str) -> bool:
    """Whether a literal ``key=`` keyword of ``callee`` decides the run's ``key``."""
    if key in ("fp16", "bf16", "tf32"):
        return _arguments_class(callee)
    return bool(callee) and any(callee.endswith(end) for end in _BUILDERS.get(key, ()))


def _callee(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return ""


def _main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"``: true in the script the launch runs."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


__all__ = ["AFTER_INIT", "ASSIGNED", "HARD_CODED", "UNREAD", "Override", "overrides"]
