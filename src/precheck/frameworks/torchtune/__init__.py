"""torchtune (pytorch/torchtune): ``tune run RECIPE --config CFG`` recipes."""

from ...dialects.base import Priority
from ...sources.launchers import Entry
from ...traits import Traits
from ..base import Framework
from . import dialect, launch, resolve

FRAMEWORK = Framework(
    name="torchtune",
    distribution="torchtune",
    traits=Traits(),
    dialect_class=dialect.Torchtune,
    resolver=resolve.resolve,
    priority=Priority.OWN_SCHEMA,
    launchers=(Entry(("tune", "run"), launch.command),),
)
