"""llm-foundry (mosaicml/llm-foundry) on Composer: ``composer train.py yamls/....yaml``.

Its YAML's keys are llm-foundry's ``TrainConfig``; what ``precision`` and
``fsdp_config.mixed_precision`` do is Composer's. Their defaults and accepted values come from
the release data (``precheck/data/schemas/llm-foundry.json``, written by
``scripts/extract_schema.py`` from the wheels).
"""

from ...dialects.base import Priority
from ...traits import Traits
from ..base import Framework, LazyResolver
from . import dialect
from .label import NAME

FRAMEWORK = Framework(
    name=NAME,
    distribution=NAME,
    aliases=("llmfoundry", "composer"),
    traits=Traits(label=NAME),
    dialect_class=dialect.TrainYaml,
    resolver=LazyResolver(f"{__name__}.resolve"),
    priority=Priority.OWN_SCHEMA,
    launch=f"{__name__}.launch",
    signature=frozenset(("global_train_batch_size", "device_train_microbatch_size", "train_loader")),
    rules=(f"{__name__}.rules",),
)
