"""The objects the Python API hands out (README "Python API": the report, each file's result,
its configuration, precision plan and hardware) keep a dataclass's value equality and repr:
internal dataclasses skip generating them to import faster, these must not."""

from __future__ import annotations

import dataclasses

import pytest

from precheck.config import TrainingConfig
from precheck.engine import FileResult, Report
from precheck.hardware import Hardware
from precheck.plan import Override, PrecisionPlan
from precheck.traits import Traits

PUBLIC = [TrainingConfig, PrecisionPlan, Override, Hardware, FileResult, Report, Traits]


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_value_semantics(cls: type) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.eq and params.repr
    assert "__eq__" in vars(cls) and "__repr__" in vars(cls)
    assert dataclasses.is_dataclass(cls)


def test_equal_configs_compare_equal_and_show_their_fields() -> None:
    import precheck

    first = precheck.check(["examples/configs/clean"], hardware=["A100"], use_project=False)
    second = precheck.check(["examples/configs/clean"], hardware=["A100"], use_project=False)
    configs = [f.config for f in first.files if f.config is not None]
    assert configs
    assert configs == [f.config for f in second.files if f.config is not None]
    assert "TrainingConfig(" in repr(configs[0]) and "framework=" in repr(configs[0])
