"""PC9xx: input that parses but does not mean what it seems to."""

from __future__ import annotations

from collections.abc import Iterator

from ..provenance import Origin
from .base import Context, Finding, Fix, Severity, rule


def _notes(ctx: Context, kind: str) -> Iterator[tuple[Origin, str]]:
    for note in ctx.config.notes:
        if note.kind == kind:
            yield Origin("file", ctx.config.path, note.line, note.column, note.key), note.message


@rule("PC901", "duplicate-key", Severity.WARNING)
def duplicate_key(ctx: Context) -> Iterator[Finding]:
    """
    Finds a key written twice in one mapping.

    ## What it does
    Reports the second occurrence of a key in the same YAML mapping or JSON object.

    ## Why is this bad?
    YAML and JSON loaders keep the last value silently: `fp16: false` near the top and
    `fp16: true` further down trains in fp16, whatever the reader of the first line
    believes.

    ## Example
    ```yaml
    fp16: false
    learning_rate: 2.0e-5
    fp16: true
    ```
    Use instead: one `fp16` key.

    ## Fix
    Delete the copy that should not win.
    """
    for origin, message in _notes(ctx, "duplicate-key"):
        yield Finding(origin, message, Fix("keep one of the two keys"))


@rule("PC902", "yaml11-boolean", Severity.WARNING)
def yaml11_boolean(ctx: Context) -> Iterator[Finding]:
    """
    Finds YAML 1.1 booleans (`yes`, `no`, `on`, `off`).

    ## What it does
    Reports scalars that PyYAML (YAML 1.1) reads as booleans although they are not
    spelled `true` or `false`.

    ## Why is this bad?
    `fp16: on` is True for PyYAML but the string "on" for YAML 1.2 parsers and for
    tools that read the file differently; `off` silently means False. Configs read by
    more than one tool should say `true`/`false`.

    ## Example
    ```yaml
    bf16: yes
    ```
    Use instead:
    ```yaml
    bf16: true
    ```

    ## Fix
    Write `true` or `false`.
    """
    for origin, message in _notes(ctx, "yaml11-boolean"):
        yield Finding(origin, message, Fix("write true or false"))


@rule("PC903", "multiple-documents", Severity.WARNING)
def multiple_documents(ctx: Context) -> Iterator[Finding]:
    """
    Finds a YAML file that holds more than one document.

    ## What it does
    Reports the second `---` document of a training config.

    ## Why is this bad?
    Training frameworks load one document (`yaml.safe_load` raises "expected a single
    document in the stream" on more; others read the first and drop the rest), so
    settings after the `---` never reach the run. precheck checks the first document only.

    ## Example
    ```yaml
    bf16: true
    ---
    fp16: true
    ```
    Use instead: one document per file.

    ## Fix
    Merge the documents, or split them into separate files.
    """
    for origin, message in _notes(ctx, "multiple-documents"):
        yield Finding(origin, message, Fix("keep one YAML document per config file"))
