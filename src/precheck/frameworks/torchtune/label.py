"""The framework's one name, as its messages, version look-ups and Python package spell it
(torchtune).

The package's other modules take it from here, so that only this module, the package's
``__init__`` and its rule module spell it."""

NAME = "torchtune"
