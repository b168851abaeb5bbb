"""The launched-script readers' fast paths find what a full walk finds, on real scripts and
odd code: a statement holding the source of an effect, the assignments of a function."""

from __future__ import annotations

import ast
import os
import sys
import warnings
from pathlib import Path

import pytest

from precheck.sources import script_path, script_schema
from precheck.sources.python_index import walk
from precheck.sources.script_effects import _holds_source, _source_of_effect
from precheck.sources.script_schema import _PARSER_WORDS, _names_a_parser, _unparsed, statements

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT.parent / "shared" / "projects"

ODD = """
global_x = 1
def f(args):
    global g
    nonlocal_like = {**kw, "torch_dtype": d, None: 1}
    m[("attn_implementation")] = 2
    x = lambda: Trainer(fp16=args.fp16)
    y = [LoraConfig(r=8) for _ in range(2)]
    z = f"{BitsAndBytesConfig(load_in_4bit=True)}"
    w = model_kwargs["torch_dtype"]
    async def g():
        async with a as b:
            v = await h(bf16=1)
    class C:
        q = 1
    try:
        t = 1
    except E as e:
        t = 2
    else:
        t = 3
    finally:
        u = 4
    match cmd:
        case {"k": 1} as mm if mm:
            r = 1
        case Point(x=0, y=[1, *rest]):
            r = 2
    while (n := next(it)):
        del k[0]
    for i in range(3):
        assert i, Accelerator(mixed_precision="bf16")
    with open(p) as fh:
        import os
        from a import b
    return dict(dtype=x)
"""


def _trees() -> list[ast.Module]:
    trees = [ast.parse(ODD)]
    if PROJECTS.is_dir():
        for path in sorted(PROJECTS.rglob("*.py"))[::2]:  # half of them: the whole set takes long
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    trees.append(ast.parse(path.read_text(encoding="utf-8", errors="replace")))
            except (SyntaxError, ValueError):
                continue
    return trees


@pytest.mark.shared  # its sample is too small without ../shared
def test_holds_source_is_any_source_of_effect_over_the_walk() -> None:
    found = 0
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt | ast.expr):
                expected = any(_source_of_effect(sub) for sub in walk(node))
                assert _holds_source(node) is expected, ast.dump(node)[:200]
                found += expected
    assert found > 100


def test_statements_are_the_statements_of_the_walk() -> None:
    kinds = (ast.stmt, ast.ExceptHandler, ast.match_case)
    for tree in _trees():
        for node in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]:
            expected = [n for n in walk(node) if isinstance(n, kinds) or n is node]
            assert sorted(map(id, statements(node))) == sorted(map(id, expected))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is Python 3.11's")
def test_statements_under_except_star() -> None:
    tree = ast.parse("try:\n    a = 1\nexcept* E:\n    b = 2\n")
    found = sorted(type(n).__name__ for n in statements(tree))
    assert found == ["Assign", "Assign", "ExceptHandler", "Module", "TryStar"]


@pytest.mark.shared  # its sample is too small without ../shared
def test_unparsed_is_ast_unparse() -> None:
    checked = 0
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Constant | ast.BinOp):
                assert _unparsed(node) == ast.unparse(node)
                checked += 1
    assert checked > 1000
    odd = ast.parse("(1).real; a.b.c; 'x'.y; f().g; a[1].b", mode="exec")
    for node in ast.walk(odd):
        if isinstance(node, ast.expr):
            assert _unparsed(node) == ast.unparse(node)


PARSER_TEXTS = [
    "",
    "option",
    "options = 1",
    "add_option(x)",
    "click.option('--x')",
    "éoption",
    "option²",
    "option\u0301 = 1",
    "x.Fire(main)",
    "Fire2",
    "_Fire",
    "Fire_",
    "HfArgumentParserX HfArgumentParser",
    "parse_args_into_dataclassesparse_args_into_dataclasses",
    "# add_argument\n",
    "٣add_argument",
    "add_argument٣ add_argumentK",
    "TrlParser",
]


@pytest.mark.shared  # its sample is too small without ../shared
def test_names_a_parser_is_the_pattern() -> None:
    texts = list(PARSER_TEXTS)
    if PROJECTS.is_dir():
        texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(PROJECTS.rglob("*.py"))]
    found = [_PARSER_WORDS.search(text) is not None for text in texts]
    assert [_names_a_parser(text) for text in texts] == found
    assert 10 < found.count(True) < len(found) - 10


def _projection(schema: script_schema.Schema) -> object:
    options = {name: (o.default, o.kind, o.path, o.line, o.choices, o.type_name) for name, o in schema.options.items()}
    modules = list(schema.modules)
    return options, schema.frameworks, schema.trl_configs, schema.closed, schema.parsers, schema.config_options, modules


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_module_lookups_from_listings_find_what_stat_calls_find(monkeypatch: pytest.MonkeyPatch) -> None:
    scripts = sorted(PROJECTS.rglob("*.py"))[::2]
    folders = sorted({p.parent for p in PROJECTS.rglob("*") if p.suffix in (".py", ".sh")})
    script_schema.clear()
    script_path.clear()
    listed = [_projection(script_schema.read_schema(path)) for path in scripts]
    roots = [script_path._roots(folder) for folder in folders]
    assert script_path._LISTINGS and any(names for names in script_path._LISTINGS.values())
    script_schema.clear()
    script_path.clear()
    monkeypatch.setattr(script_path, "may_hold", lambda folder, name: True)
    assert [_projection(script_schema.read_schema(path)) for path in scripts] == listed
    assert [script_path._roots(folder) for folder in folders] == roots
    script_schema.clear()
    script_path.clear()
    assert sum(len(p[-1]) for p in listed) > len(scripts)  # sibling modules were found
    assert sum(map(len, roots)) > 10  # and repositories' roots


def test_a_listing_never_answers_no_for_a_file_there(tmp_path: Path) -> None:
    (tmp_path / "Utils.py").write_text("x = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("y = 2\n")
    script_path.clear()
    folder = str(tmp_path)
    assert script_path.may_hold(folder, "Utils.py") and script_path.may_hold(folder, "utils.py")
    assert script_path.may_hold(folder, "pkg") and script_path.may_hold(folder, "PKG")
    assert not script_path.may_hold(folder, "torch.py") and not script_path.may_hold(folder, "torch")
    assert script_path.may_hold(folder, "tørch.py")  # not ASCII: stat decides
    assert script_path.may_hold(str(tmp_path / "missing"), "torch.py")  # not listed: stat decides
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "\u212aeras.py").write_text("")  # KELVIN SIGN: `keras.py` on a case-folding system
    assert script_path._listing(str(tmp_path / "other")) is None
    assert script_path.may_hold(str(tmp_path / "other"), "keras.py")
    deep = tmp_path / ("d" * 120) / ("e" * 120)
    deep.mkdir(parents=True)
    assert script_path._listing(str(deep)) is None  # a long path: stat decides
    script_path.clear()


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="POSIX permissions, not as root")
def test_a_folder_that_cannot_be_searched_is_not_listed(tmp_path: Path) -> None:
    folder = tmp_path / "closed"
    folder.mkdir()
    (folder / "setup.py").write_text("")
    folder.chmod(0o444)  # readable (listed by scandir), not searchable (a name under it is refused)
    try:
        assert script_path._listing(str(folder)) is None
    finally:
        folder.chmod(0o755)


def test_a_script_is_found_once_per_run(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("")
    script_path.clear()
    first = script_path.resolve_script("train.py", False, [tmp_path])
    (tmp_path / "train.py").unlink()
    assert script_path.resolve_script("train.py", False, [tmp_path]) is first == tmp_path / "train.py"
    assert script_path.resolve_script("train.py", False, [tmp_path / "."]) == first  # the same folder, written alike
    script_path.clear()
    assert script_path.resolve_script("train.py", False, [tmp_path]) is None


def test_classes_and_imports_in_the_order_of_the_walk() -> None:
    for tree in _trees():
        classes, imports = script_schema._statements(tree)
        assert classes == [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        assert imports == [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


ODD_PARSERS = [
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--bf16', action='store_true')\n"
    "p.set_defaults(bf16=True)\nargs = p.parse_args()\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--x')\nargs, _ = p.parse_known_args()\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--x')\np.add_subparsers()\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--x')\nargs = p.parse_known_intermixed_args()\n",
    "from transformers import HfArgumentParser, TrainingArguments\np = HfArgumentParser((TrainingArguments,))\n"
    "a = p.parse_args_into_dataclasses(return_remaining_strings=True)\n",
    "from transformers import HfArgumentParser, TrainingArguments\np = HfArgumentParser((TrainingArguments,))\n"
    "a = p.parse_json_file(json_file=args.cfg, allow_extra_keys=True)\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--cfg')\nargs = p.parse_args()\n"
    "b = HfArgumentParser((TrainingArguments,)).parse_yaml_file(args.cfg)\n",
    "from transformers import HfArgumentParser, TrainingArguments\np = HfArgumentParser((TrainingArguments,))\n"
    "c = p.parse_dict({}, allow_extra_keys=True)\n",
    "from transformers import HfArgumentParser, TrainingArguments\np = HfArgumentParser((TrainingArguments,))\n"
    "d = p.parse_args_and_config(return_remaining_strings=True)\n",
    "from trl import TrlParser, SFTConfig\np = TrlParser((SFTConfig,))\n",
    "import fire\ndef main(lr=1e-4, bf16=False, **kw):\n    pass\nfire.Fire(main)\n",
    "import click\n@click.option('--bf16/--no-bf16', default=True)\ndef main(bf16):\n    pass\n",
]


class _Everything:
    def __contains__(self, item: object) -> bool:
        return True


@pytest.mark.skipif(not PROJECTS.is_dir(), reason="../shared/projects not present")
def test_calls_passed_over_by_name_give_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every call the parser reader passes over by name is one no branch of it reads."""
    for number, code in enumerate(ODD_PARSERS):
        (tmp_path / f"s{number}.py").write_text(code)
    scripts = sorted(tmp_path.glob("*.py")) + sorted(PROJECTS.rglob("*.py"))
    script_schema.clear()
    fast = [_projection(script_schema.read_schema(path)) for path in scripts]
    script_schema.clear()
    monkeypatch.setattr(script_schema, "_PARSER_CALLS", _Everything())
    assert [_projection(script_schema.read_schema(path)) for path in scripts] == fast
    script_schema.clear()
    assert sum(1 for p in fast if p[0]) > 20  # scripts with options
