"""The framework's names, as its messages and version look-ups spell them (H2O LLM Studio).

The package's other modules take them from here, so that only this module, the package's
``__init__`` and its rule modules spell them."""

#: as messages write it
LABEL = "H2O LLM Studio"
#: the distribution (versions, facts)
NAME = "h2o-llmstudio"
