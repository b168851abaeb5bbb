"""The framework's one name, as its messages and version look-ups spell it (ms-swift).

The package's other modules take it from here, so that only this module, the package's
``__init__`` and its rule modules spell it."""

NAME = "ms-swift"
