"""The framework's one name, as its messages and version look-ups spell it (ms-swift).

The package's other modules take it from here, so that only this module, the package's
``__init__`` and its rule modules spell it."""

NAME = "ms-swift"
#: the console command that starts a run (``swift sft``)
PROGRAM = "swift"
#: the training modules ``python -m`` starts (``swift.cli.sft``), as a pattern over dotted names
ENTRY_MODULES = r"(^|\.)swift\.cli\.(sft|pt|rlhf)$"
