"""Origin and Sourced set their slots directly in __init__: the generated dataclass's in every way."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from precheck.provenance import Origin, Sourced


@dataclasses.dataclass(frozen=True, slots=True)
class _Origin:  # the generated __init__, for comparison
    kind: Any
    path: Any = None
    line: Any = None
    column: Any = None
    key: Any = None
    detail: Any = None
    written: Any = dataclasses.field(default=None, compare=False)
    format: Any = dataclasses.field(default=None, compare=False)
    through: Any = dataclasses.field(default=(), compare=False)
    option: Any = dataclasses.field(default=None, compare=False)


@dataclasses.dataclass(frozen=True, slots=True)
class _Sourced:
    value: Any
    origin: Any


def _parameters(cls: type) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("file",), {}),
    (("file", "a.yaml", 3, 7, "fp16"), {"written": "yes", "format": "yaml"}),
    (("default",), {"detail": "the framework's default"}),
    ((), {"kind": "env", "key": "CUDA_VISIBLE_DEVICES"}),
    (("derived", "a.json", 1, 1, "k", "from x", "1", "json"), {}),
    (("file", "a.py", 4, 1, "dtype"), {"through": (("a.py", 9),)}),
    (("file", "a.py", 21, 59), {"option": "--precision"}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_origin_is_built_as_the_generated_init_builds_it(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    mine, generated = Origin(*args, **kwargs), _Origin(*args, **kwargs)
    assert [getattr(mine, f.name) for f in dataclasses.fields(mine)] == [
        getattr(generated, f.name) for f in dataclasses.fields(generated)
    ]
    assert repr(mine).replace("Origin(", "_Origin(", 1) == repr(generated)
    assert mine == Origin(*args, **kwargs) and hash(mine) == hash(Origin(*args, **kwargs))
    assert dataclasses.replace(mine, line=99).line == 99 and dataclasses.replace(mine, line=99).kind == mine.kind
    assert pickle.loads(pickle.dumps(mine)) == mine
    with pytest.raises(dataclasses.FrozenInstanceError):
        mine.line = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del mine.line  # type: ignore[misc]


def test_the_signatures_and_refusals_are_the_generated_ones() -> None:
    assert _parameters(Origin) == _parameters(_Origin)
    assert _parameters(Sourced) == _parameters(_Sourced)
    for bad_args, bad_kwargs in [((), {}), (("file",) * 11, {}), (("file",), {"nope": 1}), (("file",), {"kind": "x"})]:
        with pytest.raises(TypeError):
            Origin(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError):
            _Origin(*bad_args, **bad_kwargs)
    with pytest.raises(TypeError):
        Sourced(1)  # type: ignore[call-arg]
    origin = Origin("file", "a.yaml", 1, 2)
    value = Sourced(True, origin)
    assert (value.value, value.origin) == (True, origin) and value == Sourced(True, origin)
    assert hash(value) == hash(Sourced(True, origin)) and repr(value).replace("Sourced(", "_Sourced(", 1) == repr(
        _Sourced(True, origin)
    )
    assert dataclasses.replace(value, value=False) == Sourced(False, origin)
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.value = False  # type: ignore[misc]
