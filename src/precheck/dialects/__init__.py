"""Stage 2: recognise each file's framework and map it onto ``TrainingConfig``.

Adding a framework means adding a module here and its class to ``DIALECTS``.
"""

from __future__ import annotations

from ..sources import Document
from .accelerate_config import AccelerateConfig
from .axolotl import Axolotl
from .base import Dialect
from .deepspeed import DeepSpeed
from .fsdp_config import FsdpConfig
from .h2o_llmstudio import H2oLlmStudio
from .hf_trainer import HfTrainer, Trl
from .lightning import Lightning
from .llama_factory import LlamaFactory
from .llama_recipes import LlamaRecipes
from .ms_swift import MsSwift
from .pytorch_loop import PytorchLoop
from .simpletuner import SimpleTuner
from .torchtune import Torchtune

DIALECTS: tuple[Dialect, ...] = (
    DeepSpeed(),
    AccelerateConfig(),
    FsdpConfig(),
    MsSwift(),
    SimpleTuner(),
    H2oLlmStudio(),
    LlamaRecipes(),
    LlamaFactory(),
    Axolotl(),
    Lightning(),
    Torchtune(),
    Trl(),
    HfTrainer(),
    PytorchLoop(),  # named by Python scripts only (score 0)
)

BY_NAME = {d.name: d for d in DIALECTS}


def detect(doc: Document) -> Dialect | None:
    """The dialect that scores highest on ``doc``, or None (not a training config).

    A document whose source knows its framework (a launch command) names it."""
    if doc.dialect is not None:
        return BY_NAME[doc.dialect]
    if not doc.mapping():
        return None
    best, best_score = None, 0
    for dialect in DIALECTS:
        score = dialect.score(doc)
        if score > best_score:
            best, best_score = dialect, score
    return best


__all__ = ["BY_NAME", "DIALECTS", "Dialect", "detect"]
