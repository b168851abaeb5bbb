"""Every version boundary and upstream quote a rule relies on comes from data/facts.json,
which scripts/verify_facts.py checks against the released artifacts."""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from precheck.facts import FACTS_FILE, all_facts, quote, span
from precheck.versions import version_key

SRC = Path(__file__).resolve().parent.parent / "src" / "precheck"
ACCESSORS = ("span", "quote", "fact")


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py"))]


def test_every_fact_is_checkable() -> None:
    facts = all_facts()
    assert facts, FACTS_FILE
    for item in facts.values():
        assert item.package and item.file and item.pattern, item.id
        by_hand = "not on PyPI" in item.cite or "read by hand" in item.cite
        assert item.present_in or item.absent_in or by_hand, f"{item.id}: nothing to check"
        for bound in (item.low, item.high, *item.present_in, *item.absent_in):
            if bound is not None:
                assert str(version_key(bound)) == bound or version_key(bound) > version_key("0"), (item.id, bound)
        fields = {name for _, name, _, _ in string.Formatter().parse(item.message) if name is not None}
        if all(name.isidentifier() for name in fields):  # a template (not a code excerpt): it formats
            assert HOLE not in quote(item.id, **dict.fromkeys(fields - {"_"} | {"x"}, HOLE)).replace(HOLE, ""), item.id


def test_no_version_boundary_outside_the_facts_table() -> None:
    """``VersionRange("pkg", "1.2.0")`` with a literal release anywhere but in facts.py is a
    boundary nobody verifies: take it from :func:`precheck.facts.span`."""
    found = []
    for path, tree in _modules():
        if path.name in ("facts.py", "versions.py"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "VersionRange":
                literal = [a for a in node.args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if literal:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_every_fact_a_rule_names_exists() -> None:
    facts = all_facts()
    named = set()
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ACCESSORS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    assert first.value in facts, f"{path.relative_to(SRC)}:{node.lineno}: {first.value}"
                    named.add(first.value)
    assert named, "no rule reads the facts table"


def test_quotes_are_not_copied_beside_the_table() -> None:
    """An upstream message the table holds is used through quote(), never pasted in code."""
    patterns = [f.pattern.strip() for f in all_facts().values() if len(f.pattern.strip()) >= 30]
    patterns += [
        part.strip()
        for f in all_facts().values()
        for part in re.split(r"\{\w*\}", f.message)
        if len(part.strip()) >= 30
    ]
    copies = []
    for path, tree in _modules():
        docs = {
            id(owner.body[0].value)
            for owner in ast.walk(tree)
            if isinstance(owner, ast.Module | ast.FunctionDef | ast.ClassDef)
            and owner.body
            and isinstance(owner.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                copies += [f"{path.relative_to(SRC)}:{node.lineno}" for p in patterns if p in node.value]
    assert copies == []


@pytest.mark.parametrize(
    ("fact_id", "inside", "outside"),
    [
        ("deepspeed.bf16_fp32_accum_refused", "0.18.5", "0.18.4"),
        ("deepspeed.amp_removed", "0.19.8", "0.19.7"),
        ("deepspeed.loss_scale_negative", "0.18.8", "0.18.7"),
        ("deepspeed.loss_scale_window", "0.19.3", "0.19.2"),
        ("ms-swift.overrides_flags", "3.3.0.post1", "3.3.1"),
        ("peft.adapters_upcast", "0.12.0", "0.11.1"),
    ],
)
def test_boundaries_as_verified(fact_id: str, inside: str, outside: str) -> None:
    assert span(fact_id).contains(inside) and not span(fact_id).contains(outside)


def test_quote_is_the_printed_message() -> None:
    assert quote("deepspeed.amp_removed").endswith("'torch_autocast' instead.")


#: where code quotes an upstream message: ``ValueError: text``, ``ValueError("text``, or a verb
#: followed by a double-quoted text (``raises "...``, ``warns that "...``)
QUOTE_SHAPE = re.compile(
    r"""\b[A-Z]\w*(?:Error|Exception|Warning)(?::\s|\(\s*["']?)|\b(?:raises|asserts|warns|refuses)\b[^"\n]{0,60}?\""""
)
HOLE = "\x00"
#: the Python interpreter's own messages (not a framework's, nothing to verify in a release)
PYTHON_MESSAGES = (
    "got an unexpected keyword argument",
    "object has no attribute",
    "not supported between instances of",
)


def _string(node: ast.AST) -> str | None:
    """A string constant, or an f-string with each ``{...}`` as :data:`HOLE`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
    return None


def hand_written_quotes(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, text) of each upstream message spelled out in code (not in a docstring): the text
    after a :data:`QUOTE_SHAPE` up to the first ``{...}`` or closing quote, when it holds words."""
    docs = {
        id(owner.body[0].value)
        for owner in ast.walk(tree)
        if isinstance(owner, ast.Module | ast.FunctionDef | ast.ClassDef)
        and owner.body
        and isinstance(owner.body[0], ast.Expr)
    }
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        text = _string(node) if id(node) not in docs | parts else None
        for match in QUOTE_SHAPE.finditer(text or ""):
            literal = re.match(r"[^\x00\"`]*", text[match.end() :])  # type: ignore[index]
            quoted = literal.group(0) if literal else ""
            words = len(re.findall(r"[A-Za-z]", quoted)) >= 8 and " " in quoted.strip()
            if words and not any(python in quoted for python in PYTHON_MESSAGES):
                found.append((getattr(node, "lineno", 0), quoted))
        # any sentence in double quotes inside a message (``stops with "..."``), spelled out
        for quoted in re.findall(r'"([A-Za-z`*][^"\x00]{15,})"', text or ""):
            if quoted.count(" ") >= 2 and not any(python in quoted for python in PYTHON_MESSAGES):
                found.append((getattr(node, "lineno", 0), quoted))
    return found


def test_no_upstream_message_typed_by_hand() -> None:
    """Every framework message precheck quotes in a finding, a plan origin or a fix comes from
    the facts table through ``quote()``; a message typed into code is one nobody verifies."""
    found = [
        f"{path.relative_to(SRC)}:{line}: {text!r}"
        for path, tree in _modules()
        if path.name != "facts.py"
        for line, text in hand_written_quotes(tree)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("code", "typed"),
    [
        ("""x = f'{a} raises "ValueError: Quantization and mixed precision is not supported."'""", True),
        ("""x = 'DeepSpeed warns that "BF16 gradient accumulation is not safe numerically"'""", True),
        ("""x = f'accelerate raises ValueError("When using the file the keys are {k}")'""", True),
        ("""x = '(NaN losses; H2O LLM Studio stops with "NaN caught in loss during training")'""", True),
        ("""x = f'H2O LLM Studio stops with "{quote("h2o-llmstudio.nan_loss")}"'""", False),
        ("""x = f'{a} raises "ValueError: {quote("litgpt.quantize_mixed")}"'""", False),
        ("""x = f"Trainer raises TypeError: Trainer.__init__() got an unexpected keyword argument {k!r}\"""", False),
        ('''def f():\n    """Raises `ValueError: a message the docs spell out`."""''', False),
    ],
)
def test_the_typed_message_scan_can_fail(code: str, typed: bool) -> None:
    assert bool(hand_written_quotes(ast.parse(code))) is typed


def test_templates_fill_as_the_release_prints() -> None:
    assert quote("transformers.unused_keys", keys=["bf_16"]) == (
        "Some keys are not used by the HfArgumentParser: ['bf_16']"
    )
    assert quote("transformers.flash_attention_4_capability", version=4, major=9).endswith(
        "error: FlashAttention4 requires compute capability >= 9"
    )


#: in a docstring: ``ValueError: text`` / ``AssertionError("text`` or ``raises "text``
DOC_QUOTE_SHAPE = re.compile(
    r"""\b[A-Z]\w*(?:Error|Exception|Warning)(?::\s+|\(\s*["']?)|\b(?:raises|asserts|warns|refuses)\b[^"\n`]{0,40}?\""""
)
#: Python's own wording (an enum value, a missing attribute): nothing a release prints
DOC_PYTHON_MESSAGES = (*PYTHON_MESSAGES, "is not a valid")


def _starts_a_message(text: str, parts: list[str], matched: int = 0, need: int | None = None) -> bool:
    """``text`` is how a message (``parts``: its literal pieces between ``{fields}``) begins
    when printed, a field standing for up to 40 characters; at least 12 literal characters
    must agree (all of ``text`` when it is shorter)."""
    need = min(12, len(text)) if need is None else need
    head = parts[0]
    if len(text) <= len(head):
        return head.startswith(text) and matched + len(text) >= need
    if not text.startswith(head):
        return False
    if len(parts) == 1:
        return matched + len(head) >= need
    rest = text[len(head) :]
    return any(_starts_a_message(rest[k:], parts[1:], matched + len(head), need) for k in range(min(len(rest), 40) + 1))


def docstring_quotes(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, first 40 characters) of each upstream message a docstring quotes."""
    found = []
    for owner in ast.walk(tree):
        if not isinstance(owner, ast.Module | ast.FunctionDef | ast.ClassDef) or not owner.body:
            continue
        first = owner.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
            continue
        if not isinstance(first.value.value, str):
            continue
        doc = re.sub(r"\s+", " ", first.value.value)
        for match in DOC_QUOTE_SHAPE.finditer(doc):
            whole = re.match(r"(?:[A-Z]\w*(?:Error|Exception|Warning): )?([^`\"]*)", doc[match.end() :])
            text = whole.group(1) if whole else ""
            words = len(re.findall(r"[A-Za-z]", text[:40])) >= 8 and " " in text[:40].strip()
            if words and not any(python in text for python in DOC_PYTHON_MESSAGES):
                found.append((first.value.lineno, text[:40]))
    return found


def test_docstrings_quote_the_table() -> None:
    """A message a rule's documentation (or a module's notes) quotes is one the table holds,
    as the release prints it: the start of some fact's message, fields filled in."""
    messages = [re.split(r"\{\w*=?(?:![rs])?\}", re.sub(r"\s+", " ", f.message)) for f in all_facts().values()]
    unknown = [
        f"{path.relative_to(SRC)}:{line}: {text!r}"
        for path, tree in _modules()
        for line, text in docstring_quotes(tree)
        if not any(_starts_a_message(text, parts) for parts in messages)
    ]
    assert unknown == []


@pytest.mark.parametrize(
    ("doc", "known"),
    [
        ("raises `ValueError: --half_precision_backend apex: GPU bf16 is not supported by apex.`", False),
        ('asserts "AssertionError: only bfloat 16 is supported." at the first step', True),
        ("raises `ValueError: Dtype bfloat16 must be one of fp16, bf16, fp32, fp64 for finetuning.`", True),
        ("raises `ValueError: Dtype bfloat16 must be among fp16, bf16, fp32, fp64 for finetuning.`", False),
    ],
)
def test_the_docstring_scan_can_fail(doc: str, known: bool) -> None:
    messages = [re.split(r"\{\w*=?(?:![rs])?\}", re.sub(r"\s+", " ", f.message)) for f in all_facts().values()]
    found = docstring_quotes(ast.parse(f'"""{doc}"""'))
    assert found
    assert all(any(_starts_a_message(text, parts) for parts in messages) for _, text in found) is known


def _verifier() -> ModuleType:
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "verify_facts.py"
    spec = importlib.util.spec_from_file_location("verify_facts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_verifier_says_why_pip_could_not_prepare_an_sdist() -> None:
    """DeepSpeed's sdist needs `wheel`, flash-attn's setup.py imports torch: the row says so
    (and the verifier then fetches the sdist unbuilt) instead of "file not found"."""
    why: Callable[[str], str] = _verifier()._why_pip_failed
    assert "wheel" in why("      error: invalid command 'bdist_wheel'\n  error: metadata-generation-failed")
    assert "torch" in why("ModuleNotFoundError: No module named 'torch'")
    assert why("ERROR: No matching distribution found for deepspeed==9.9") == "no such release on PyPI"


def test_facts_read_at_a_tag_name_their_repository() -> None:
    """flash-attention's hopper/ build and H2O LLM Studio are read at git tags, not from PyPI."""
    import json

    data = json.loads(FACTS_FILE.read_text(encoding="utf-8"))["facts"]
    tagged = {f["id"]: f for f in data if f.get("repo")}
    assert {"flash-attn.fa3_needs_ampere", "flash-attn.needs_ampere", "h2o-llmstudio.lora_default"} <= set(tagged)
    assert all("pip_env" not in f for f in tagged.values())
