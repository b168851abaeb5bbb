"""The command-line schema of a training script a launch line starts, read with ``ast``.

A launch line (``python train.py --bf16 True``, ``torchrun ... train.py``, ``accelerate
launch train.py``) passes flags whose meaning only the script knows. This module reads the
script (never runs it) and the sibling modules it imports from the repository (``from utils
import ModelArguments``), and returns the options the script defines:

- ``HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))`` and TRL's
  ``TrlParser``: every field of the dataclasses (``x: int = field(default=...)`` or
  ``x: int = 1``), their bases followed through the modules; a base that is a
  transformers training-arguments class or a TRL config brings that framework's keys.
  A ``bool`` field is a flag (``--x`` alone is True; transformers ``hf_argparser.py``
  ``string_to_bool``).
- ``argparse``: ``add_argument("--x", default=..., type=..., action="store_true", choices=...)``.
- ``click``: ``@click.option("--x", default=..., is_flag=True)``.
- ``fire.Fire(main)``: the parameters of ``main`` and their defaults.
- ``jsonargparse.CLI(main)``: the parameters of ``main``, their defaults, and the choices of a
  ``Literal[...]`` annotation (read by :mod:`.release_schema`, which reads frameworks' released
  CLIs the same way).

The schema is **closed** (the parser refuses a flag it does not define) when the script
parses with ``parse_args()`` / ``parse_args_into_dataclasses()`` and every class was found;
``parse_known_args``, ``return_remaining_strings=True``, ``allow_extra_keys=True``, a class
precheck could not find or ``**kwargs`` leave it open. What the schema cannot know is left
unknown, never filled in.
"""

from __future__ import annotations

import ast
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import parsed, script_path
from .parsed import parse as parse_once
from .python_calls import TRL_CONFIGS
from .python_literals import (
    MISSING,
    _callee,
    _dotted,
    _field_default,
    _is_bool_text,
    _literal,
    _true,
    _tuple_names,
    _type_name,
    _type_name_text,
    _unparsed,
)
from .script_path import module_file
from .tree_facts import looked_up

#: transformers' training-arguments classes (a dataclass that extends one has all its keys)
HF_CLASSES = frozenset({"TrainingArguments", "Seq2SeqTrainingArguments"})
#: TRL's configs and parser dataclasses (``trl/trainer/*_config.py``, ``trl/scripts/utils.py``)
TRL_CLASSES = frozenset(
    {*TRL_CONFIGS, "ModelConfig", "ScriptArguments", "GRPOScriptArguments", "SFTScriptArguments", "DPOScriptArguments"}
)
#: TRL classes that are trainer configs (their defaults decide the precision: ``bf16 = not fp16``)
TRL_TRAINING = TRL_CLASSES - {"ModelConfig", "ScriptArguments", "GRPOScriptArguments", "SFTScriptArguments"}
#: at most this many modules are read for one script (the script and its sibling imports)
MAX_MODULES = 12
#: a module larger than this is not read (bytes)
MAX_BYTES = 2_000_000


@dataclass(slots=True, eq=False, repr=False)
class Option:
    """One option of the script: ``--name`` (dashes read as underscores)."""

    name: str
    #: the default, a plain value, or :data:`MISSING` when it is not a literal
    default: Any
    #: "bool" (HfArgumentParser bool field: ``--x`` alone or ``--x True``), "store_true",
    #: "store_false", "type_bool" (argparse ``type=bool``: any non-empty string is True) or "value"
    kind: str
    path: Path
    line: int
    choices: tuple[Any, ...] | None = None
    #: what the parser converts a value with: "str", "int", "float", "bool" or "other"
    type_name: str = "str"
    #: the lines that define it, for provenance: where its name is written (``"--x"``, the
    #: field) and where its ``default=`` is (the same line when written on one)
    name_line: int | None = None
    default_line: int | None = None
    #: argparse ``required=True``: the parser refuses a command line without it (its default is never used)
    required: bool = False


@dataclass(slots=True, eq=False, repr=False)
class Schema:
    """What a script accepts on its command line."""

    script: Path
    options: dict[str, Option] = field(default_factory=dict)
    #: frameworks whose config classes the script parses into: "transformers", "trl"
    frameworks: set[str] = field(default_factory=set)
    #: the TRL trainer config classes it parses into (``SFTConfig``...)
    trl_configs: set[str] = field(default_factory=set)
    #: the parser refuses flags it does not define
    closed: bool = True
    #: "hf", "argparse", "click", "fire", "jsonargparse" (empty: no parser found)
    parsers: list[str] = field(default_factory=list)
    #: options that name a config file the script parses (``parser.parse_json_file(json_file=
    #: args.train_args_file)``): its keys are the run's settings
    config_options: set[str] = field(default_factory=set)
    #: every module read, path → tree (for :mod:`.script_effects`)
    modules: dict[Path, ast.Module] = field(default_factory=dict)
    #: what the options do (:func:`.script_effects.effects`), computed once
    effects: list[Any] | None = None
    #: what the code decides over the flags (:func:`.script_overrides.overrides`), computed once
    overrides: list[Any] | None = None
    #: functions whose parameters are the options themselves (a ``click`` command, the
    #: function ``fire.Fire`` is given): each parameter named as an option holds its value
    #: (name → its parser: "click" passes every option as a keyword, so its ``**kwargs`` holds them all)
    commands: dict[str, str] = field(default_factory=dict)
    #: each class ``HfArgumentParser`` is given → the fields it has (its own and its local
    #: bases'), and whether they are all of them (False: a base precheck did not read)
    dataclasses: dict[str, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    #: the classes ``HfArgumentParser`` is given that extend a framework's training arguments
    #: (``class TrainingArguments(transformers.TrainingArguments)``): that framework's fields are theirs
    framework_classes: set[str] = field(default_factory=set)
    #: the modules call a ``TrainingArguments`` class themselves (``TrainingArguments(...)``,
    #: ``Seq2SeqTrainingArguments(...)``, a subclass named so), not only parse into one
    builds_arguments: bool = False

    @property
    def known(self) -> bool:
        return bool(self.parsers)

    def defined(self) -> frozenset[str]:
        """Every key the script defines, its frameworks' keys included."""
        keys = set(self.options)
        # HfArgumentParser adds `--no_x` for a bool field defaulting to True; BooleanOptionalAction `--no-x`
        keys |= {f"no_{name}" for name, option in self.options.items() if option.kind == "bool"}
        if self.frameworks:
            from . import registered  # the registry's table (the registry imports the sources)

            keys |= registered.known_keys["trl" if "trl" in self.frameworks else "hf-trainer"]
        return frozenset(keys)


def read_schema(script: Path, root: Path | None = None) -> Schema:
    """The schema of ``script``; ``root``: the top folder imports may be found under.

    Several launch lines (and several shell scripts) often start the same script: it is
    read once per version of the file (the cache is keyed on its size and time)."""
    try:
        stat = script.stat()
        stamp: tuple[int, int] | None = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        stamp = None
    key = (script.resolve() if stamp is not None else script, root, stamp)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _Reader(script, root).read()
        if len(_CACHE) >= 64:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = cached
    return cached


_CACHE: dict[tuple[Path, Path | None, tuple[int, int] | None], Schema] = {}


#: a call of a training arguments class, in a module's text
_BUILDS = re.compile(r"TrainingArguments\s*\(")


def parse_file(path: Path) -> ast.Module | None:
    """A module's tree, or None when it cannot be read or parsed."""
    module = _module(path)
    return module.tree if module is not None else None


#: the words a call or decorator :meth:`_Reader._parsers_in` reads is named by (a module
#: without one is not walked for them: its classes and imports are all it gives)
_PARSER_NAMES = (
    *("add_argument", "HfArgumentParser", "TrlParser", "parse_known_args", "parse_known_intermixed_args"),
    *("parse_args_into_dataclasses", "parse_args_and_config", "parse_dict", "parse_json_file", "parse_yaml_file"),
    *("add_subparsers", "set_defaults", "Fire", "option", "add_config_arguments"),
    "CLI",
)
#: the same as one pattern (what :func:`_names_a_parser` answers, several times faster)
_PARSER_WORDS = re.compile(r"\b(?:" + "|".join(_PARSER_NAMES) + r")\b")


def _names_a_parser(text: str) -> bool:
    """``_PARSER_WORDS.search(text) is not None``: one of :data:`_PARSER_NAMES` as a whole
    word (no word character, ``\\w``, on either side), each looked for with ``str.find``."""
    size = len(text)
    for name in _PARSER_NAMES:
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            before = text[start - 1] if start else " "
            after = text[end] if end < size else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                return True
            start = text.find(name, start + 1)
    return False


@dataclass(slots=True, eq=False, repr=False)
class _Module:
    """A module read once per run, whichever scripts import it: its tree, and what the
    reader looks up in it, each in :func:`ast.walk`'s order."""

    tree: ast.Module
    classes: list[ast.ClassDef]
    imports: list[ast.Import | ast.ImportFrom]
    #: the text names a parser call (:data:`_PARSER_NAMES`)
    parses: bool
    #: the text calls a ``...TrainingArguments(`` class (see :attr:`Schema.builds_arguments`)
    builds: bool = False
    #: the calls, function definitions and assignments, once walked (only where ``parses``)
    walked: list[ast.AST] | None = None

    def nodes(self) -> list[ast.AST]:
        if self.walked is None:
            self.walked = looked_up(self.tree)  # (the walk the script's other readers share)
        return self.walked


#: the callees :meth:`_Reader._parsers_in` reads a call of
_PARSER_CALLS = frozenset(_PARSER_NAMES) - {"option"}


def _module(path: Path) -> _Module | None:
    """The module at ``path``, read and parsed once per version of the file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key in _MODULES:
        return _MODULES[key]
    module = None
    if stat.st_size <= MAX_BYTES:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = parse_once(text, str(path))  # a training script is also checked on its own
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            # Python reads identifiers NFKC-normalised: a non-ASCII text is searched as the parser sees it
            words = text if text.isascii() else unicodedata.normalize("NFKC", text)
            classes, imports = _statements(tree)
            module = _Module(tree, classes, imports, _names_a_parser(words), _BUILDS.search(words) is not None)
    if len(_MODULES) >= 256:
        _MODULES.pop(next(iter(_MODULES)))
    _MODULES[key] = module
    return module


_MODULES: dict[tuple[Path, int, int], _Module | None] = {}


def _statements(tree: ast.Module) -> tuple[list[ast.ClassDef], list[ast.Import | ast.ImportFrom]]:
    """The class definitions and imports of a module in :func:`ast.walk`'s (breadth-first)
    order, walking only statements: expressions hold none."""
    classes: list[ast.ClassDef] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    queue: list[ast.AST] = [tree]
    bodies = _BODIES
    for node in queue:  # a list read while it grows: breadth first
        if type(node) is ast.ClassDef:  # a parsed tree's nodes are of the ast classes themselves
            classes.append(node)
        elif type(node) is ast.Import or type(node) is ast.ImportFrom:
            imports.append(node)
        names = bodies.get(type(node))
        if names is not None:
            for name in names:
                queue.extend(getattr(node, name))
    return classes, imports


def statements(node: ast.AST) -> list[ast.AST]:
    """``node`` and the statements under it, nested blocks included (and their except
    handlers and match cases): the statements :func:`ast.walk` finds, in no promised order."""
    out = [node]
    for current in out:  # a list read while it grows
        for name in _BODIES.get(type(current), ()):
            out.extend(getattr(current, name))
    return out


#: the fields that hold statements (or except handlers, match cases), in each node's field order
_BODIES: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f in ("body", "orelse", "finalbody", "handlers", "cases"))
    for kind in (
        ast.Module,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
        ast.If,
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.With,
        ast.AsyncWith,
        ast.Try,
        ast.ExceptHandler,
        ast.Match,
        ast.match_case,
        *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
    )
}


class _Reader:
    def __init__(self, script: Path, root: Path | None):
        self.schema = Schema(script)
        self.root = root
        #: class name → (module path, definition)
        self.classes: dict[str, tuple[Path, ast.ClassDef]] = {}
        #: names imported from modules precheck could not read (their classes are unknown)
        self.foreign: set[str] = set()
        #: attribute names a parse_json_file/parse_yaml_file argument reads (options, once known)
        self.pending_config: set[str] = set()
        #: the script itself builds a parser (not only a module it imports)
        self.entry_parses = False
        #: every module read, path → what is looked up in it
        self.read_modules: dict[Path, _Module] = {}

    def read(self) -> Schema:
        module = _module(self.schema.script)
        if module is None:
            self.schema.closed = False
            return self.schema
        self._load(self.schema.script, module)
        for path in list(self.schema.modules):
            self._parsers(path, self.read_modules[path])
        self.schema.config_options = {n for n in self.pending_config if n in self.schema.options}
        if not self.schema.parsers or not self.entry_parses:
            # no parser, or one only in another module: the script may parse with one precheck cannot see
            self.schema.closed = False
        return self.schema

    # -- modules --------------------------------------------------------------------------------

    def _load(self, path: Path, module: _Module) -> None:
        self.schema.modules[path] = module.tree
        self.schema.builds_arguments = bool(self.schema.builds_arguments) or module.builds
        self.read_modules[path] = module
        for definition in module.classes:
            self.classes.setdefault(definition.name, (path, definition))
        for node in module.imports:
            if isinstance(node, ast.ImportFrom):
                target = module_file(path, node.module, node.level, self.root)
                if target is None:
                    self.foreign.update(a.asname or a.name for a in node.names)
                    continue
                self._follow(target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = module_file(path, alias.name, 0, self.root)
                    if target is not None:
                        self._follow(target)

    def _follow(self, target: Path) -> None:
        if target in self.schema.modules or len(self.schema.modules) >= MAX_MODULES:
            return
        module = _module(target)
        if module is not None:
            self._load(target, module)

    # -- parsers ---------------------------------------------------------------------------------

    def _parsers(self, path: Path, module: _Module) -> None:
        if not module.parses:
            return  # no parser call: nothing below applies
        before = len(self.schema.parsers), len(self.schema.options)
        self._parsers_in(path, module)
        if path == self.schema.script and (len(self.schema.parsers), len(self.schema.options)) != before:
            self.entry_parses = True

    def _parsers_in(self, path: Path, module: _Module) -> None:
        nodes = module.nodes()
        tuples: dict[str, ast.expr] | None = None
        for node in nodes:
            if isinstance(node, ast.Call):
                name = _callee(node.func)
                if name not in _PARSER_CALLS:
                    continue  # most calls: none of the branches below
                if name in ("HfArgumentParser", "TrlParser") and node.args:
                    if tuples is None:
                        tuples = _tuple_names(nodes)
                    self._hf(path, node.args[0], tuples)
                    if name == "TrlParser":  # trl scripts/utils.py: `--config FILE` (YAML) under the flags
                        self.schema.options["config"] = Option("config", None, "value", path, node.lineno)
                        self.pending_config.add("config")
                elif name == "add_argument":
                    self._argparse(path, node)
                elif name in ("parse_known_args", "parse_known_intermixed_args"):
                    self.schema.closed = False
                elif name in ("parse_args_into_dataclasses", "parse_args_and_config"):
                    if any(k.arg == "return_remaining_strings" and _true(k.value) for k in node.keywords):
                        self.schema.closed = False
                elif name in ("parse_dict", "parse_json_file", "parse_yaml_file"):
                    if any(k.arg == "allow_extra_keys" and _true(k.value) for k in node.keywords):
                        self.schema.closed = False
                    if name != "parse_dict":
                        self._config_file(nodes, node)
                elif name == "add_subparsers":
                    self.schema.closed = False
                elif name == "set_defaults":
                    self._set_defaults(path, node)
                elif name == "add_config_arguments":
                    self._deepspeed_arguments(path, node)
                elif name == "Fire" and path == self.schema.script:
                    self._fire(path, nodes, node)
                elif name == "CLI" and path == self.schema.script:
                    self._jsonargparse_cli(path, nodes, node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    if isinstance(decorator, ast.Call) and _dotted(decorator.func) in ("click.option", "option"):
                        self._click(path, decorator)
                        self.schema.commands[node.name] = "click"

    def _hf(self, path: Path, expr: ast.expr, tuples: dict[str, ast.expr]) -> None:
        if isinstance(expr, ast.Name) and expr.id in tuples:
            expr = tuples[expr.id]
        classes = expr.elts if isinstance(expr, (ast.Tuple, ast.List)) else [expr]
        self.schema.parsers.append("hf")
        for item in classes:
            name = _callee(item) if isinstance(item, (ast.Name, ast.Attribute)) else None
            if name is None:
                self.schema.closed = False
                continue
            fields: list[str] = []
            closed = self.schema.closed
            self.schema.closed = True
            frameworks = set(self.schema.frameworks)
            self.schema.frameworks.clear()
            self._dataclass(name, set(), isinstance(item, ast.Attribute), fields)
            if self.schema.frameworks:
                self.schema.framework_classes.add(name)
            self.schema.frameworks |= frameworks
            self.schema.dataclasses.setdefault(name, (tuple(dict.fromkeys(fields)), self.schema.closed))
            self.schema.closed = closed and self.schema.closed

    def _dataclass(self, name: str, seen: set[str], qualified: bool = False, fields: list[str] | None = None) -> None:
        """The fields of class ``name`` (``qualified``: written ``module.Name``, a library's),
        their names added to ``fields`` too."""
        local = None if qualified or name in seen else self.classes.get(name)
        seen.add(name)
        if local is None and name in HF_CLASSES:
            self.schema.frameworks.add("transformers")
            return
        if local is None and name in TRL_CLASSES:
            self.schema.frameworks.add("trl")
            if name in TRL_TRAINING:
                self.schema.trl_configs.add(name)
            return
        if local is None:
            self.schema.closed = False  # a class precheck cannot read: its fields are unknown
            return
        path, definition = local
        for base in definition.bases:
            base_name = _callee(base)
            if base_name is not None and base_name not in ("object", "Generic"):
                self._dataclass(base_name, seen, isinstance(base, ast.Attribute), fields)
        for statement in definition.body:
            if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
                continue
            written = _unparsed(statement.annotation)  # once for the three looks below
            if "ClassVar" in written:
                continue
            default = _field_default(statement.value)
            is_bool = _is_bool_text(written)
            self.schema.options[statement.target.id] = Option(
                statement.target.id,
                default,
                "bool" if is_bool else "value",
                path,
                statement.lineno,
                type_name=_type_name_text(written),
                name_line=statement.lineno,
                default_line=_default_line(statement.value),
            )
            if fields is not None:
                fields.append(statement.target.id)

    def _argparse(self, path: Path, call: ast.Call) -> None:
        if "argparse" not in self.schema.parsers:
            self.schema.parsers.append("argparse")
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        dest_node = keywords.get("dest")
        if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str):
            dest = dest_node.value
        else:
            long = next((n for n in names if n.startswith("--")), None)
            short = next((n for n in names if n.startswith("-")), None)
            chosen = long or short or (names[0] if names else None)
            if chosen is None:
                return
            dest = chosen.lstrip("-").replace("-", "_")
        action = keywords.get("action")
        action_name = action.value if isinstance(action, ast.Constant) else None
        kind = "value"
        default: Any = MISSING
        if action_name == "store_true":
            kind, default = "store_true", False
        elif action_name == "store_false":
            kind, default = "store_false", True
        elif action is not None and action_name is None:
            kind = "bool" if "BooleanOptionalAction" in _unparsed(action) else "value"
        type_node = keywords.get("type")
        type_name = "str" if type_node is None else _type_name(type_node)
        if type_name == "bool":
            kind = "type_bool"
        if "default" in keywords:
            default = _literal(keywords["default"])
        elif kind == "value" and names and names[0].startswith("-"):
            default = None  # argparse: an optional flag left out is None
        choices = _literal(keywords["choices"]) if "choices" in keywords else MISSING
        written = next(
            (a for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)), None
        )  # where the option's name is written (often a line below `add_argument(`)
        self.schema.options[dest] = Option(
            dest,
            default,
            kind,
            path,
            call.lineno,
            tuple(choices) if isinstance(choices, (list, tuple)) else None,
            type_name,
            name_line=written.lineno if written is not None else call.lineno,
            default_line=keywords["default"].lineno if "default" in keywords else None,
            required="required" in keywords and _true(keywords["required"]),
        )

    def _deepspeed_arguments(self, path: Path, call: ast.Call) -> None:
        """``deepspeed.add_config_arguments(parser)`` adds DeepSpeed's core options
        (``deepspeed/__init__.py`` ``_add_core_arguments``@0.19.6: ``--deepspeed`` and the
        deprecated ``--deepscale``, ``store_true``; ``--deepspeed_config`` and
        ``--deepscale_config``, a path, default None)."""
        if "argparse" not in self.schema.parsers:
            self.schema.parsers.append("argparse")
        for name, kind, default in _DEEPSPEED_ARGUMENTS:
            self.schema.options.setdefault(name, Option(name, default, kind, path, call.lineno))

    def _config_file(self, nodes: list[ast.AST], call: ast.Call) -> None:
        """``parse_json_file(json_file=args.train_args_file)`` (or through a name assigned
        ``args.train_args_file``): the option names the file the run's settings are in."""
        given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg), None)
        if given is None:
            return
        names = {n.id for n in ast.walk(given) if isinstance(n, ast.Name)}
        attributes = [n.attr for n in ast.walk(given) if isinstance(n, ast.Attribute)]
        for node in nodes:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)
                and isinstance(node.value, ast.Attribute)
            ):
                attributes.append(node.value.attr)
        self.pending_config.update(attributes)

    def _set_defaults(self, path: Path, call: ast.Call) -> None:
        for keyword in call.keywords:
            if keyword.arg is None:
                continue
            option = self.schema.options.get(keyword.arg)
            if option is not None:
                option.default = _literal(keyword.value)
                option.default_line = keyword.value.lineno if option.path == path else None

    def _click(self, path: Path, call: ast.Call) -> None:
        if "click" not in self.schema.parsers:
            self.schema.parsers.append("click")
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        long = next((n.split("/")[0] for n in names if n.startswith("--")), None)
        if long is None:
            return
        dest = long.lstrip("-").replace("-", "_")
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        flag = ("is_flag" in keywords and _true(keywords["is_flag"])) or any("/" in n for n in names)
        default = _literal(keywords["default"]) if "default" in keywords else (False if flag else None)
        self.schema.options[dest] = Option(dest, default, "store_true" if flag else "value", path, call.lineno)

    def _fire(self, path: Path, nodes: list[ast.AST], call: ast.Call) -> None:
        target = call.args[0] if call.args else None
        name = target.id if isinstance(target, ast.Name) else None
        function = next(
            (n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
            None,
        )
        self.schema.parsers.append("fire")
        if function is None:
            self.schema.closed = False
            return
        self.schema.commands[function.name] = "fire"
        arguments = function.args
        if arguments.kwarg is not None:
            self.schema.closed = False
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults: list[Any] = [MISSING] * (len(positional) - len(arguments.defaults)) + [
            _literal(d) for d in arguments.defaults
        ]
        pairs = [*zip(positional, defaults, strict=True)]
        pairs += [
            (a, _literal(d) if d is not None else MISSING)
            for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        ]
        for argument, default in pairs:
            self.schema.options[argument.arg] = Option(argument.arg, default, "value", path, argument.lineno)

    def _jsonargparse_cli(self, path: Path, nodes: list[ast.AST], call: ast.Call) -> None:
        """``jsonargparse.CLI(main)``: ``main``'s parameters are the options, typed by their
        annotations (``Literal[...]`` gives the choices; ``bool`` takes ``--x true``); the parser
        refuses others. ``CLI({...})`` or ``CLI([f, g])`` (subcommands) and ``**kwargs`` leave
        the schema open."""
        from .release_schema import choices_of, function_options

        target = call.args[0] if call.args else None
        name = target.id if isinstance(target, ast.Name) else None
        function = next((n for n in nodes if isinstance(n, ast.FunctionDef) and n.name == name), None)
        self.schema.parsers.append("jsonargparse")
        if function is None:
            self.schema.closed = False
            return
        if function.args.kwarg is not None:
            self.schema.closed = False
        arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        annotations = {a.arg: a.annotation for a in arguments}
        for option, spec in function_options(function).items():
            default = spec.get("default", MISSING)
            type_name = spec.get("converts_to", "other")
            kind = "bool" if type_name == "bool" else "value"
            choices = choices_of(annotations.get(option))
            self.schema.options[option] = Option(
                option, default, kind, path, spec["line"], tuple(choices) if choices is not None else None, type_name
            )


def _default_line(value: ast.expr | None) -> int | None:
    """The line of a dataclass field's default: ``field(default=...)``'s keyword, else the value."""
    if value is None:
        return None
    if isinstance(value, ast.Call) and _callee(value.func) == "field":
        return next((k.value.lineno for k in value.keywords if k.arg == "default"), None)
    return value.lineno


#: the options ``deepspeed.add_config_arguments`` adds: (name, kind, default)
_DEEPSPEED_ARGUMENTS = (
    ("deepspeed", "store_true", False),
    ("deepspeed_config", "value", None),
    ("deepscale", "store_true", False),
    ("deepscale_config", "value", None),
)


def clear() -> None:
    """Forget the modules, schemas and file lookups of earlier runs."""
    parsed.clear()
    script_path.clear()
    _MODULES.clear()
    _CACHE.clear()


__all__ = ["MISSING", "Option", "Schema", "clear", "parse_file", "read_schema", "statements"]
