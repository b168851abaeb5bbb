"""The framework's names, as its messages and version look-ups spell them (SimpleTuner).

The package's other modules take them from here, so that only this module, the package's
``__init__`` and its rule modules spell them."""

#: as messages write it
LABEL = "SimpleTuner"
#: the distribution (versions, facts)
NAME = "simpletuner"
