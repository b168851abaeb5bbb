"""Instance attributes a class sets once to a constant in ``__init__`` (``self.use_amp = True``),
read as that value by the class's other methods (:mod:`precheck.sources.python_instance`), and
a dtype imported from torch by name (``from torch import bfloat16``). Real code: STORM's
``sub_models/world_models.py`` (weipu-zhang/STORM, the fresh report case 317) and a GNN
classifier's training class (``Classifier`` with ``amp.GradScaler(device, enabled=self.use_amp)``
and ``autocast(self._device, dtype=bfloat16, enabled=self.use_amp)``), trimmed."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from precheck import engine
from precheck.hardware import from_specs
from precheck.sources.python_instance import instance_constants

WORLD_MODEL = """
import torch
import torch.nn as nn


class WorldModel(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.use_amp = True
        self.tensor_dtype = torch.bfloat16 if self.use_amp else torch.float32
        self.encoder = nn.Linear(in_channels, 64)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-4)
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

    def update(self, obs):
        self.train()
        with torch.autocast(device_type='cuda', dtype=torch.bfloat16, enabled=self.use_amp):
            total_loss = self.encoder(obs).pow(2).mean()
        self.scaler.scale(total_loss).backward()
        self.scaler.unscale_(self.optimizer)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
"""

CLASSIFIER = """
from torch import optim, no_grad, float16, bfloat16, float32, autocast, amp
import torch.nn as nn


class Classifier:
    def __init__(self, net, optimizer, criterion = nn.BCELoss(), device='cuda'):
        net.to(device)
        self._device = 'cuda'
        self.net = net
        self.optimizer = optimizer
        self.criterion = criterion.to(self._device)
        self.use_amp = True
        self.scaler = amp.GradScaler(device, enabled=self.use_amp)

    def loss(self, features, labels):
        with autocast(
                self._device,
                dtype=bfloat16,
                enabled=self.use_amp):
            prediction = self.net(features.to(self._device))
        return self.criterion(prediction.to(float32), labels.to(self._device).to(float32))

    def epoch(self, data):
        self.net.train()
        for features, labels in data:
            loss = self.loss(features, labels)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def findings(path: Path, gpu: str) -> set[tuple[str, str, int]]:
    report = engine.run([str(path)], from_specs([gpu], {}), env={})
    assert not report.errors, report.errors
    return {(f.rule, str(f.severity), f.origin.line or 0) for f in report.findings}


def test_a_constant_set_in_init_is_read_by_the_other_methods(tmp_path: Path) -> None:
    """STORM on a P100: `use_amp = True` in __init__ enables the bf16 autocast of `update`."""
    script = write(tmp_path, "world_models.py", WORLD_MODEL)
    assert ("PC101", "error", 16) in findings(script, "P100")  # the autocast line
    assert not any(s == "error" for _, s, _ in findings(script, "A100"))
    off = write(tmp_path, "off.py", WORLD_MODEL.replace("self.use_amp = True", "self.use_amp = False"))
    assert not any(rule == "PC101" for rule, _, _ in findings(off, "P100"))


def test_an_attribute_written_twice_or_in_a_branch_stays_unknown(tmp_path: Path) -> None:
    again = WORLD_MODEL + "\nmodel = WorldModel(3)\nmodel.use_amp = False\n"
    assert not any(rule == "PC101" for rule, _, _ in findings(write(tmp_path, "again.py", again), "P100"))
    branch = WORLD_MODEL.replace(
        "        self.use_amp = True\n", "        if in_channels > 3:\n            self.use_amp = True\n"
    )
    assert not any(rule == "PC101" for rule, _, _ in findings(write(tmp_path, "branch.py", branch), "P100"))


def test_a_classifier_with_an_imported_dtype_and_a_constant_switch(tmp_path: Path) -> None:
    """`from torch import bfloat16` is torch.bfloat16; `enabled=self.use_amp` is True."""
    script = write(tmp_path, "classifier.py", CLASSIFIER)
    assert ("PC101", "error", 18) in findings(script, "V100")


def test_which_methods_see_the_constants() -> None:
    tree = ast.parse(textwrap.dedent(WORLD_MODEL) + "\n    @staticmethod\n    def helper(x):\n        return x\n")
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    constants = instance_constants(classes, ast.unparse(tree))
    methods = {m.name: id(m) for m in classes[0].body if isinstance(m, ast.FunctionDef)}
    assert constants[methods["update"]] == {"use_amp": True}
    assert methods["__init__"] not in constants and methods["helper"] not in constants
