"""The framework's one name, as its messages and version look-ups spell it (xtuner)."""

NAME = "xtuner"
