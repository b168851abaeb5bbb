"""Property-based fuzzing: whatever a file holds, precheck answers with findings or an
input error at a position, never an exception (issue 8).

Each example goes through the real pipeline (``engine.run``: sources → dialects →
attached files → resolve → rules) with ``debug=True``, so any exception but
:class:`InputError` escapes and fails the test with its traceback, and then through every
output format and ``explain``, whose text must encode as UTF-8 (what stdout needs).

Inputs: config trees drawn from the keys and values of real configs (the corpus beside
this checkout and ``examples/configs``) serialised as YAML, JSON, TOML and env files;
real configs with their values replaced, keys deleted and values swapped; and real
configs with bytes flipped, cut, inserted and lines shuffled. Runs are derandomised (the
same examples each time) so CI is reproducible; ``PRECHECK_FUZZ_EXAMPLES=5000`` and
``PRECHECK_FUZZ_RANDOM=1`` search further locally.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from precheck import engine
from precheck.errors import InputError
from precheck.explain import render_json, render_text
from precheck.hardware import Hardware, from_specs, no_hardware
from precheck.report import FORMATS, render
from precheck.sources import FORMATS as SUFFIXES
from precheck.sources import parse, script_kind
from precheck.sources.yaml_source import _depth_bound

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = int(os.environ.get("PRECHECK_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    deadline=None,
    derandomize=not os.environ.get("PRECHECK_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def examples(default: int) -> settings:
    return settings(FUZZ, max_examples=EXAMPLES or default)


@lru_cache(maxsize=1)
def seeds() -> list[Path]:
    """Real configs: the corpus (when beside this checkout) and the examples."""
    found = [p for p in sorted((ROOT / "examples" / "configs").rglob("*")) if p.suffix in SUFFIXES]
    if CORPUS.is_dir():
        found += [p for p in sorted(CORPUS.rglob("*")) if p.suffix in SUFFIXES]
    return found


def _walk(value: Any) -> Iterator[tuple[str | None, Any]]:
    stack = [(None, value)]
    while stack:
        key, item = stack.pop()
        yield key, item
        if isinstance(item, dict):
            stack.extend((str(k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((None, v) for v in item)


def _plain(path: Path) -> Any:
    try:
        return parse(str(path), path.read_text(encoding="utf-8-sig"), SUFFIXES[path.suffix]).root.plain()
    except InputError:
        return None


@lru_cache(maxsize=1)
def vocabulary() -> tuple[list[str], list[Any]]:
    """Every key and scalar value of the seeds, plus the spellings precision settings take."""
    keys: set[str] = set()
    values: set[Any] = set()
    for path in seeds():
        for key, value in _walk(_plain(path)):
            if key is not None:
                keys.add(key)
            if isinstance(value, (str, int, float, bool)) and not (isinstance(value, str) and len(value) > 60):
                values.add(value)
    values.update(PRECISION_VALUES)
    return sorted(keys), sorted(values, key=repr)


#: the values precision settings take across the frameworks, and near misses
PRECISION_VALUES = [
    "fp16", "bf16", "fp32", "fp8", "no", "auto", "float16", "bfloat16", "float32", "half", "float", "double",
    "torch.float16", "torch.bfloat16", "16-mixed", "bf16-mixed", "32-true", "bf16-true", "16-true", "64", "16",
    "32", "O1", "O2", "O3", "apex", "amp", "cpu_amp", "int8", "int4", "nf4", "fp4", "4bit", "8bit", "true",
    "false", "yes", "off", "None", "null", "~", "", "e4m3", "hybrid", "DEEPSPEED", "FSDP", "MULTI_GPU", "NO",
    "ds_config.json", "zero3.json", "../x.json", "/dev/null", "/", ".", "cuda", "cpu", "0,1", "-1",
]  # fmt: skip

#: the keys the dialects read precision, distribution and memory from
PRECISION_KEYS = [
    "fp16", "bf16", "tf32", "fp8", "torch_dtype", "dtype", "mixed_precision", "precision", "pure_bf16",
    "half_precision_backend", "fp16_opt_level", "amp", "use_fp16", "gradient_precision", "base_model_precision",
    "quantization_bit", "quantization_bits", "load_in_4bit", "load_in_8bit", "bnb_4bit_compute_dtype",
    "quant_compute_dtype", "deepspeed", "deepspeed_config", "deepspeed_config_file", "zero_optimization", "stage",
    "enabled", "loss_scale", "initial_scale_power", "offload_optimizer", "offload_param", "fsdp", "fsdp_config",
    "fsdp_version", "sharding_strategy", "mixed_precision_policy", "distributed_type", "num_processes", "gpu_ids",
    "downcast_bf16", "fp8_config", "optim", "optimizer", "learning_rate", "model_name_or_path", "base_model",
    "model", "trainer", "strategy", "devices", "train_type", "finetuning_type", "adapter", "lora_r", "output_dir",
    "per_device_train_batch_size", "micro_batch_size", "gradient_accumulation_steps", "gradient_checkpointing",
    "attn_implementation", "flash_attention", "max_grad_norm", "ENV", "CUDA_VISIBLE_DEVICES", "_component_",
    "compute_environment", "train_micro_batch_size_per_gpu", "model_family", "pretrained_model_name_or_path",
]  # fmt: skip

SPECIAL_SCALARS = [
    0, 1, -1, 2, 3, 16, 2**31, 2**63, -(2**64), 10**30, 10**4000, -(10**400), 0.0, -0.0, 1e-300, 1e300, 1e-5,
    math.inf, -math.inf, math.nan, True, False, None, "²", "٣", "１６", "1e400", "9" * 5000, "-0",
]  # fmt: skip

HARDWARE: list[Hardware] = [
    from_specs(["V100"], {}),
    from_specs(["8xA100-80GB"], {}),
    from_specs(["TITAN RTX", "GTX 1080 Ti"], {}),
    no_hardware("none"),
]


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(vocabulary()[1]),
        st.sampled_from(SPECIAL_SCALARS),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=12),
    )


def keys() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(PRECISION_KEYS), st.sampled_from(vocabulary()[0]), st.text(min_size=1, max_size=10)
    )


def values() -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys(), inner, max_size=5),
        max_leaves=25,
    )


def trees() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(keys(), values(), min_size=1, max_size=12)


@st.composite
def skeletons(draw: st.DrawFn) -> dict[str, Any]:
    """A real config's keys, every value drawn anew (so the dialects recognise it)."""
    tree = _plain(draw(st.sampled_from(seeds())))
    if not isinstance(tree, dict):
        return draw(trees())

    def refill(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: refill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [refill(v) for v in value]
        return draw(st.one_of(scalars(), values()) if draw(st.booleans()) else scalars())

    return dict(refill(tree))


# --- writing trees in each format -------------------------------------------------------


def to_yaml(tree: Any, flow: bool | None) -> str:
    return yaml.safe_dump(tree, default_flow_style=flow, sort_keys=False, allow_unicode=True)


def to_json(tree: Any, indent: int | None) -> str:
    return json.dumps(tree, indent=indent)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        items = (f"{_toml_string(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None)
        return "{" + ", ".join(items) + "}"
    return _toml_string(str(value))


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes, but never a surrogate pair and DEL escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def to_toml(tree: dict[str, Any]) -> str:
    """TOML as people write it: scalars first, then a ``[table]`` per mapping."""
    lines = [f"{_toml_string(str(k))} = {_toml_value(v)}" for k, v in tree.items() if not isinstance(v, dict | None)]
    for key, value in tree.items():
        if isinstance(value, dict):
            lines.append(f"[{_toml_string(str(key))}]")
            lines.extend(f"{_toml_string(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None)
    return "\n".join(lines) + "\n"


def to_env(tree: dict[str, Any]) -> str:
    return "".join(f"export {re.sub(r'[^A-Za-z0-9_]', '_', str(k)) or 'X'}={v}\n" for k, v in tree.items())


def serialise(tree: dict[str, Any], fmt: str, style: int) -> str:
    if fmt == "yaml":
        return to_yaml(tree, (None, False, True)[style % 3])
    if fmt == "json":
        return to_json(tree, (None, 2, 4)[style % 3])
    if fmt == "toml":
        return to_toml(tree)
    return to_env(tree)


# --- the property ------------------------------------------------------------------------


def check_file(name: str, data: bytes, hardware: Hardware) -> engine.Report:
    """Check one file as ``precheck`` does; anything but an input error fails the test."""
    with tempfile.TemporaryDirectory() as scratch:
        file = Path(scratch) / name
        file.write_bytes(data)
        report = engine.run([str(file)], hardware, env={}, debug=True)
        for error in report.errors:
            assert str(error).startswith(str(file)) and error.message, error
        outputs = [render(report, fmt) for fmt in FORMATS] + [render_text(report), render_json(report)]
        for output in outputs:
            output.encode("utf-8")  # stdout must be able to print it (no lone surrogates)
        event("input error" if report.errors else f"read as {report.files[0].dialect}")
        event("with findings" if report.findings else "no finding")
        return report


FORMAT_NAMES = ["yaml", "json", "toml", "env"]
SUFFIX = {"yaml": "config.yaml", "json": "config.json", "toml": "config.toml", "env": "config.env"}


@examples(150)
@given(
    tree=trees() | skeletons(), fmt=st.sampled_from(FORMAT_NAMES), style=st.integers(0, 2), hw=st.sampled_from(HARDWARE)
)
def test_generated_configs_never_crash(tree: dict[str, Any], fmt: str, style: int, hw: Hardware) -> None:
    check_file(SUFFIX[fmt], serialise(tree, fmt, style).encode("utf-8"), hw)


def _mutate_tree(tree: Any, data: st.DataObject) -> Any:
    """Replace, delete, swap and insert values at random places of a real config."""
    for _ in range(data.draw(st.integers(1, 6), label="edits")):
        places = [item for _, item in _walk(tree) if isinstance(item, dict | list) and item]
        if not places:
            break
        place = data.draw(st.sampled_from(places), label="place")
        slots = list(place) if isinstance(place, dict) else list(range(len(place)))
        slot = data.draw(st.sampled_from(slots), label="slot")
        action = data.draw(st.sampled_from(["set", "delete", "swap", "insert", "nest"]), label="action")
        if action == "set":
            place[slot] = data.draw(scalars(), label="value")
        elif action == "delete":
            del place[slot]
        elif action == "swap":
            other = data.draw(st.sampled_from(slots), label="other")
            place[slot], place[other] = place[other], place[slot]
        elif action == "insert" and isinstance(place, dict):
            place[data.draw(keys(), label="key")] = data.draw(scalars(), label="value")
        elif action == "nest":
            place[slot] = data.draw(st.sampled_from([[place[slot]], {"x": place[slot]}, {}, []]), label="nested")
    return tree


@examples(300)
@given(data=st.data(), hw=st.sampled_from(HARDWARE))
def test_real_configs_with_values_changed_never_crash(data: st.DataObject, hw: Hardware) -> None:
    seed = data.draw(st.sampled_from(seeds()), label="seed")
    tree = _plain(seed)
    if not isinstance(tree, dict):
        return
    mutated = _mutate_tree(tree, data)
    fmt = SUFFIXES[seed.suffix]
    if data.draw(st.booleans(), label="other format"):
        fmt = data.draw(st.sampled_from(FORMAT_NAMES), label="format")
    check_file(SUFFIX[fmt], serialise(mutated, fmt, data.draw(st.integers(0, 2))).encode("utf-8"), hw)


def _mutate_bytes(raw: bytes, data: st.DataObject) -> bytes:
    out = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        where = data.draw(st.integers(0, max(len(out) - 1, 0)), label="at")
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "truncate", "line"]), label="action")
        if action == "flip" and out:
            out[where] ^= 1 << data.draw(st.integers(0, 7))
        elif action == "cut":
            del out[where : where + data.draw(st.integers(1, 40))]
        elif action == "insert":
            chunk = data.draw(
                st.binary(max_size=8) | st.sampled_from([b"[", b"{", b"- ", b": ", b"\t", b"&a ", b"*a", b"\n  "])
            )
            out[where:where] = chunk
        elif action == "truncate":
            del out[where:]
        else:
            lines = bytes(out).splitlines(keepends=True)
            if len(lines) > 1:
                i, j = data.draw(st.integers(0, len(lines) - 1)), data.draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
                out = bytearray(b"".join(lines))
    return bytes(out)


@examples(400)
@given(data=st.data(), hw=st.sampled_from(HARDWARE))
def test_real_configs_with_bytes_broken_never_crash(data: st.DataObject, hw: Hardware) -> None:
    seed = data.draw(st.sampled_from(seeds()), label="seed")
    check_file("config" + seed.suffix, _mutate_bytes(seed.read_bytes(), data), hw)


@lru_cache(maxsize=1)
def scripts() -> list[Path]:
    """Launch scripts and training code: shell, Python (read by their own sources)."""
    return sorted(p for p in (ROOT / "examples").rglob("*") if script_kind(p) is not None and p.is_file())


#: what launch lines and training code hold, to splice into scripts
SCRIPT_PIECES = [
    b" --fp16", b" --bf16 True", b" --mixed_precision fp16", b" torch_dtype=torch.float16", b" fp16=True",
    b" key=[[[[", b" seed=" + b"9" * 5000, b" $(", b"`", b'"', b"'", b"\\\n", b"\n  ", b"(", b")", b"{", b"}",
    b" accelerate launch", b" deepspeed --num_gpus 2", b" torchrun --nproc_per_node 8", b" --deepspeed ds.json",
    b" export CUDA_VISIBLE_DEVICES=1", b" dtype=torch.bfloat16,", b"TrainingArguments(", b" **kwargs", b" # ",
]  # fmt: skip


@examples(200)
@given(data=st.data(), hw=st.sampled_from(HARDWARE))
def test_scripts_with_bytes_broken_never_crash(data: st.DataObject, hw: Hardware) -> None:
    seed = data.draw(st.sampled_from(scripts()), label="seed")
    raw = bytearray(seed.read_bytes())
    for _ in range(data.draw(st.integers(0, 4), label="pieces")):
        where = data.draw(st.integers(0, len(raw)), label="at")
        raw[where:where] = data.draw(st.sampled_from(SCRIPT_PIECES), label="piece")
    check_file(seed.name, _mutate_bytes(bytes(raw), data) if data.draw(st.booleans()) else bytes(raw), hw)


@examples(300)
@given(text=st.text(alphabet=st.sampled_from(list("[]{}-?:,&*!|>'\"# \n\tab01.")), max_size=80))
def test_yaml_depth_bound_is_never_below_the_real_depth(text: str) -> None:
    """The cheap bound decides whether the event stream is scanned before composing
    (libyaml's composer overflows the C stack on deep input): it must never be low."""
    try:
        events = list(yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return
    depth = deepest = 0
    for item in events:
        if isinstance(item, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(item, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            depth -= 1
    assert _depth_bound(text) >= deepest


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_the_serialisers_write_what_the_sources_read(fmt: str) -> None:
    """The fuzzer's writers are faithful, so generated trees reach the dialects."""
    tree = {"fp16": True, "mixed_precision": "bf16", "learning_rate": 1e-05, "deepspeed": {"zero_optimization": 1}}
    document = parse(SUFFIX[fmt], serialise(tree, fmt, 1), fmt)
    if fmt == "env":
        assert document.mapping()["mixed_precision"].value == "bf16"
    else:
        assert document.root.plain() == tree
