"""The framework's one name, as its messages spell it (LLaMA-Factory).

The package's dialect and resolver take it from here, so that only this module, the
package's ``__init__`` and its rule module spell it."""

LF = "LLaMA-Factory"
