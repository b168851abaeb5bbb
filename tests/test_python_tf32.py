"""TF32 matmuls switched in a hand-written loop's own code (:mod:`precheck.sources.python_tf32`):
at module level or in a function the script calls, never under a branch on something else."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import precheck.frameworks  # noqa: F401 (the registry the readers consult)
from precheck.sources import Document, load_runs


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def only_run(tmp_path: Path, text: str) -> Document:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    (document,) = load_runs(Path("train.py"))
    assert document.dialect == "pytorch"
    return document


#: excerpt of karpathy/nanoGPT train.py (master): module-level switches, a bf16 autocast loop
NANOGPT = """
import torch
from contextlib import nullcontext

dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
device = 'cuda'
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True # allow tf32 on matmul
torch.backends.cudnn.allow_tf32 = True # allow tf32 on cudnn
device_type = 'cuda' if 'cuda' in device else 'cpu' # for later use in torch.autocast
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
model = torch.nn.Linear(8, 8).to(device)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = torch.optim.AdamW(model.parameters())
while True:
    with ctx:
        loss = model(torch.randn(4, 8, device=device)).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""

#: excerpt of a public DDP training script (GitHub, code index id 17645771539): the switches
#: set in ``train(args)``, which the main block calls
DDP_TRAIN = """
import argparse
import torch
import torch.nn.functional as F


def train(args):
    device = torch.device("cuda:0")
    # Global performance flags
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    model = torch.nn.Linear(8, 8).to(device)
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(torch.randn(4, 8, device=device)), torch.zeros(4, 8, device=device))
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    train(parser.parse_args())
"""


def test_module_level_allow_tf32(tmp_path: Path) -> None:
    tf32 = only_run(tmp_path, NANOGPT).root.value["tf32"]  # type: ignore[index]
    assert (tf32.value, tf32.line, tf32.key) == (True, 7, "allow_tf32")


def test_switches_in_a_function_the_script_calls(tmp_path: Path) -> None:
    tf32 = only_run(tmp_path, DDP_TRAIN).root.value["tf32"]  # type: ignore[index]
    assert (tf32.value, tf32.line, tf32.key) == (True, 12, "set_float32_matmul_precision")


def test_highest_precision_is_no_tf32(tmp_path: Path) -> None:
    text = DDP_TRAIN.replace("    torch.backends.cuda.matmul.allow_tf32 = True\n", "").replace('"high"', '"highest"')
    assert only_run(tmp_path, text).root.value["tf32"].value is False  # type: ignore[index]


def test_a_branch_or_an_uncalled_function_sets_nothing(tmp_path: Path) -> None:
    branch = NANOGPT.replace(
        "torch.backends.cuda.matmul.allow_tf32 = True",
        "if device_type == 'cuda':\n    torch.backends.cuda.matmul.allow_tf32 = True",
    )
    assert "tf32" not in only_run(tmp_path, branch).root.value  # type: ignore[operator]
    uncalled = DDP_TRAIN.replace("    train(parser.parse_args())\n", "    parser.parse_args()\n")
    assert "tf32" not in only_run(tmp_path, uncalled.replace("def train(args)", "def setup(args)")).root.value  # type: ignore[operator]


def test_two_places_that_disagree_are_left_out(tmp_path: Path) -> None:
    text = DDP_TRAIN.replace('"high"', '"highest"')
    document = only_run(tmp_path, text)
    assert "tf32" not in document.root.value  # type: ignore[operator]
    assert any(n.kind == "unresolved-value" and n.key == "tf32" for n in document.notes)
