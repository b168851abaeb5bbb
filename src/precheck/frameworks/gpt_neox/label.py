"""The framework's one name, as its messages and version look-ups spell it."""

NAME = "gpt-neox"
