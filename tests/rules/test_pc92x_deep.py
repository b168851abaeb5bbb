"""PC92x: the installed transformers / accelerate judge the file (``--deep``).

The cases run through the real engine with ``deep=True``, so they need the ``hf`` extra;
each case says which installed releases its expectation holds for (the verdicts depend on
them by design), and is skipped elsewhere.
"""

from __future__ import annotations

import importlib.metadata
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import Case, hardware_for, write
from precheck import engine
from precheck.rules import RULES
from precheck.versions import VersionRange

HF = """
output_dir: out
learning_rate: 2.0e-5
per_device_train_batch_size: 4
"""

ACCELERATE = """
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
machine_rank: 0
num_machines: 1
num_processes: 2
"""


@dataclass
class DeepCase(Case):
    """A case whose verdict holds for these installed releases (empty: any)."""

    holds: tuple[VersionRange, ...] = ()


CASES = [
    DeepCase(
        "evaluation_strategy, removed in transformers 4.51.0",
        "PC920",
        HF + "evaluation_strategy: steps\n",
        expect={(4, 1)},
        holds=(VersionRange("transformers", "4.51.0"),),
    ),
    DeepCase(
        "no_cuda, removed in 5.0.0",
        "PC920",
        HF + "no_cuda: false\n",
        expect={(4, 1)},
        holds=(VersionRange("transformers", "5.0.0"),),
    ),
    DeepCase(
        "fixed: eval_strategy and use_cpu",
        "PC920",
        HF + "eval_strategy: steps\nuse_cpu: false\n",
        holds=(VersionRange("transformers", "4.41.0"),),
    ),
    DeepCase(
        "half_precision_backend is PC204's",
        "PC920",
        HF + "half_precision_backend: auto\n",
        holds=(VersionRange("transformers", "5.0.0"),),
    ),
    DeepCase("bf_16: a typo of bf16", "PC921", HF + "bf_16: true\n", expect={(4, 1)}),
    DeepCase("learning_rat: one letter short", "PC921", HF + "learning_rat: 1.0e-5\n", expect={(4, 1)}),
    DeepCase(
        "fixed: bf16; script arguments close to fields are not typos",
        "PC921",
        HF + "bf16: true\ndataset_mixture: {}\nlora_rank: 8\nmax_length: 512\n",
    ),
    DeepCase(
        "gradient_checkpointing, a deprecated alias in 5.23.0",
        "PC922",
        HF + "gradient_checkpointing: true\n",
        expect={(4, 1)},
        holds=(VersionRange("transformers", "5.23.0", "6"),),
    ),
    DeepCase(
        "fixed: activation_checkpointing",
        "PC922",
        HF + "activation_checkpointing: true\n",
        holds=(VersionRange("transformers", "5.23.0"),),
    ),
    DeepCase(
        "a misspelt key accelerate's ClusterConfig lacks",
        "PC923",
        ACCELERATE + "mixed_precison: bf16\n",
        expect={(6, 1)},
    ),
    DeepCase(
        "a distributed_type accelerate does not know",
        "PC923",
        ACCELERATE.replace("MULTI_GPU", "MULTIGPU") + "mixed_precision: bf16\n",
        expect={(2, 1)},
    ),
    DeepCase("fixed: mixed_precision spelt right", "PC923", ACCELERATE + "mixed_precision: bf16\n"),
    DeepCase(
        "a mixed_precision mode accelerate does not know",
        "PC924",
        ACCELERATE + "mixed_precision: float16\n",
        expect={(6, 1)},
    ),
    DeepCase(
        "FSDP RAM-efficient loading without module-state sync",
        "PC924",
        ACCELERATE.replace("MULTI_GPU", "FSDP")
        + "mixed_precision: bf16\nfsdp_config:\n  fsdp_cpu_ram_efficient_loading: true\n"
        "  fsdp_sync_module_states: false\n  fsdp_version: 1\n",
        expect={(8, 3)},
    ),
    DeepCase("fixed: fp16", "PC924", ACCELERATE + "mixed_precision: fp16\n"),
]


def run_deep(case: Case) -> set[tuple[str, int, int]]:
    """(rule, line, column) of ``case.code``'s findings, through the engine with ``deep=True``."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name, text in case.files.items():
            write(folder, name, text)
        path = write(folder, f"config.{case.fmt}", case.text)
        report = engine.run(
            [str(path)], hardware_for(case.gpus, case.env), env=case.env, rules=[RULES[case.code]], deep=True
        )
    assert not report.errors and not report.internal_errors, case.name
    return {(f.rule, f.origin.line or 0, f.origin.column or 0) for f in report.findings}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case(case: DeepCase) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    for span in case.holds:
        installed = importlib.metadata.version(span.package)
        if not span.contains(installed):
            pytest.skip(f"holds for {span}; {span.package} {installed} is installed")
    assert run_deep(case) == {(case.code, line, column) for line, column in case.expect}, case.name


def test_without_deep_the_rules_find_nothing() -> None:
    from helpers import findings_for

    for case in CASES:
        assert not findings_for(case), case.name
