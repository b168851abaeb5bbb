"""gpt-neox (EleutherAI/gpt-neox): ``python ./deepy.py train.py configs/125M.yml configs/local_setup.yml``.

NeoXArgs reads the YAML/JSON config set in order (:mod:`.launch`), derives the run's precision
from ``precision`` and the DeepSpeed ``fp16``/``bf16`` sections (:mod:`.dialect`), and hands
the DeepSpeed engine the sections it built (:mod:`.resolve`).
"""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect
from .label import NAME

FRAMEWORK = Framework(
    name=NAME,
    distribution=NAME,
    aliases=("neox", "gpt_neox"),
    traits=Traits(label=NAME),
    dialect_class=dialect.NeoXConfig,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    signature=frozenset(("pipe_parallel_size", "model_parallel_size", "num_layers")),
    rules=(f"{__name__}.rules",),
)
