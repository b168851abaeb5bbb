"""Errors that end a run with exit code 2: bad usage or unreadable input."""

from __future__ import annotations


class PrecheckError(Exception):
    """Base class: a problem precheck reports as a message and exit code 2."""


class UsageError(PrecheckError):
    """Bad command-line usage (an unknown GPU name, an unknown rule code...)."""


class InternalError(Exception):
    """A bug in precheck met while checking ``path``; the CLI reports it briefly (exit 2)."""

    def __init__(self, path: str, error: BaseException):
        self.path = path
        self.error = error
        super().__init__(f"{type(error).__name__}: {error}")


class InputError(PrecheckError):
    """A file that cannot be read or parsed.

    ``str(error)`` is ``path:line:col: message`` (line and column 1-based, omitted when
    unknown), the form every editor and CI annotator understands.
    """

    def __init__(self, path: str, message: str, line: int | None = None, column: int | None = None):
        self.path = path
        self.message = message
        self.line = line
        self.column = column
        super().__init__(self.location() + ": " + message)

    def location(self) -> str:
        if self.line is None:
            return self.path
        if self.column is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"


class DataFile(InputError):
    """A file that is not one configuration as it stands: records (JSON Lines, a JSON object or
    array on each line, the format of datasets and evaluation sets, often named ``*.json``) or a
    template whose placeholders a script fills in (``"batch": BATCH_SIZE``). A folder search
    passes it over with a note; a file named is reported."""


class FileTooLarge(InputError):
    """A file over :data:`precheck.sources.MAX_BYTES`, or holding more than
    :data:`precheck.sources.nodes.MAX_VALUES` values: no training config is that large, so a
    folder search passes it over (a dataset, a tokenizer); a file named is reported."""
